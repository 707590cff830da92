"""Help texts say what a setting does; measured figures live in docs/ and benchmarks/results/, and a help text that
needs one cites the doc section that holds it (``measured: docs/<page>.md, "<section>"``)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from transformers import Seq2SeqTrainingArguments

from larev_hf.cli.arguments import GlobalArguments
from larev_hf.cli.commands import command_arguments
from larev_hf.rora.evaluator import RoRAConfig
from larev_hf.training.irm_trainer import IRMProbeConfig

#: What a measured figure looks like in a help text (argparse's ``%%`` included). Thesis and paper values, defaults
#: and thresholds ("λ_probe 5e-4 (§5.3.3)", "the 95%% intervals", "below 80%%") do not match.
MEASURED_FIGURE = re.compile("|".join((
    r"\bmeasured\b[^.;:()]*?\d",                                   # "measured ... 0.82"
    r"(?<![\w.])[+−-]\d+(?:\.\d+)?\s?%",                           # a percent change: "+26.5%", "−3%"
    r"\d%{1,2}\s+(?:faster|slower|more|less|fewer|cheaper)\b",     # "20%% slower"
    r"\d(?:\.\d+)?\s?[×x](?!\w)",                                  # "8.4×", "8x"
    r"\d\s*→\s*[+−-]?\d",                                          # "0.800 → 0.787"
    r"\b(?:\d[\d,]*|one|two|three|four|five) of (?:\d[\d,]*|two|three|four|five|six)\b",  # "0 of 358"
    r"\d\s?(?:ms|s|min|minutes|seconds|hours)\b",                  # a time: "1,344 s", "22 minutes"
    r"\b(?:AUC|accuracy|Spearman|ρ|SUM)\s+(?:of\s+)?[+−-]?\d",     # a result: "AUC 0.02", "ρ 0.07"
)))

#: Fields a trainer config inherits from transformers: their help texts are transformers', not this library's.
INHERITED = {field.name: field.metadata.get("help") for field in dataclasses.fields(Seq2SeqTrainingArguments)}


def _settings_classes() -> list[type]:
    """Every dataclass whose fields are flags of ``larev-hf`` or of the trainers' ``HfArgumentParser``."""
    classes = [GlobalArguments, IRMProbeConfig, RoRAConfig]
    for sections in command_arguments().values():
        classes += [cls for cls, _ in sections]
    return list(dict.fromkeys(classes))


def _own_help_texts() -> list[tuple[str, str]]:
    texts = []
    for cls in _settings_classes():
        for field in dataclasses.fields(cls):
            help_text = field.metadata.get("help")
            if help_text and INHERITED.get(field.name) != help_text:
                texts.append((f"{cls.__name__}.{field.name}", help_text))
    return texts


def test_no_settings_help_text_carries_a_measured_figure() -> None:
    texts = _own_help_texts()
    assert len(texts) > 150  # every command's settings, not an empty walk
    offenders = [f"{name}: {match.group(0)!r} in {text!r}" for name, text in texts
                 if (match := MEASURED_FIGURE.search(text))]
    assert offenders == [], "cite the doc section instead (measured: docs/<page>.md, \"<section>\"):\n" + "\n".join(
        offenders)


@pytest.mark.parametrize("planted", [
    "probe term on every n-th step only (measured: +26.5% with the probe on every step)",
    "threads sleep when other jobs run (two demos took 8.4× one demo alone)",
    "chosen on the check half (t5-tiny e-SNLI: 0.800 → 0.787)",
    "IG misses the label: on StrategyQA it found 'yes' in 0 of 358 'yes' baselines",
    "the fit is gamed (AUC 0.02 against input_copy, where LAREV alone has 0.82)",
    "the build refuses the bundle after 22 minutes",
    "the 0.95 quantile of the copied span (measured 0.500 on the select half)",
    "with a 300-row split the choice failed a family on the test split in two of three seeds",
    "activation checkpointing costs ~20%% slower training",
])
def test_a_planted_figure_is_found(planted: str) -> None:
    assert MEASURED_FIGURE.search(planted)


@pytest.mark.parametrize("kept", [
    "weight λ_IRM of the IRMv1 penalty (LAREV eq. 4.10, RoRA eq. 7; 0 = ablation)",
    "the thesis's ECQA penalties (§5.3.3: lr 3e-5, batch 8, 8 epochs, λ_IRM 5, λ_probe 5e-4)",
    "bootstrap resamples for the 95%% intervals",
    "gold-rationale accuracy below 80%% or near chance",
    "LC-IG: share of r's words masked by IG (§3.2: 10%%)",
    "axioms measured (comma list of 1, 2, 3)",
    "IG misses the label (measured: docs/method.md, '5. ig: leakage terms by Integrated Gradients')",
])
def test_definitions_defaults_and_doc_citations_are_not_figures(kept: str) -> None:
    assert not MEASURED_FIGURE.search(kept)
