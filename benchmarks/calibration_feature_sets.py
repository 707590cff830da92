"""Which text features should the calibrated score read? Feature sets compared under the recipe's rule.

For each ``--sets`` entry (comma-joined features, the method's score first) the robust calibration is refitted exactly
as ``larev-hf human --calibrate ... --robustness-statistic paired`` chooses it (fitted on the select half and the
training split's VARSuite rows, chosen on the validation split's paired win rates), and read on the held half
(Spearman, pairwise, select-1) and on the test split (the paired win rate of the gold over each family, overall and
within each gold label; :func:`calibration_per_label_rule.evaluate_rule`). A feature the build did not score is
computed here with the registered metric baseline of that name (a text feature: :mod:`larev_hf.methods.heuristics`)
on the judged explanations and every split's VARSuite rows, written beside copies of the build's score files in
``--work-dir``; the build's directory is only read.

Besides the library's features, text features tried and not kept can be named (:data:`TRIED`, :data:`EXCESS`):
``copied_coverage`` (the share of r's tokens inside a trigram copied from x), ``hypothesis_share`` (the share of r's
content words from the hypothesis and not the premise), ``input_recall`` (the share of x's content words in r), and
``coverage_excess`` / ``recall_excess`` (−max(0, the feature − its 0.95 quantile among the select half's acceptable
explanations)), and ``rationale_likelihood@rows=N``: the mean log-probability per token of r given x and the label
under a self-rationalizer (FRAME's F, :class:`~larev_hf.explain.task_model.SelfRationalizer`: MiniLM, bf16, the
backbone's training settings) trained on N training rows of ``--explanations-data-dir`` — an offline stand-in for the
generator's own likelihood, trained once into ``--work-dir``. For each feature of the sets that is not the method's
score, the JSON also holds its Spearman with acceptability on the select half and its mean on the test split's
entailment rows for the gold, the hypothesis copy and the input copy.

Reads a human directory whose attacks were scored on the train, validation and test splits (a named build with
``robustness_report_split="test"``, e.g. one of ``benchmarks/esnli_recipe_rows.py``):

    python benchmarks/calibration_feature_sets.py --human-dir runs/rows/rows-500/human --work-dir runs/featsets/500 \\
        --sets larev,explanation_lm,copied_span,grounding,copy_excess \\
               larev,explanation_lm,copied_span,grounding,copy_excess,premise_link \\
        --json benchmarks/results/calibration_feature_sets.json
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from calibration_per_label_rule import evaluate_rule
from rouge_score.tokenizers import DefaultTokenizer
from scipy.stats import spearmanr

from larev_hf.data import load_examples
from larev_hf.explain import SelfRationalizer, self_rationalization_target
from larev_hf.io import read_jsonl, write_json, write_jsonl
from larev_hf.meta import instance_half
from larev_hf.methods import (
    ExplanationLanguageModel,
    content_tokens,
    get_method,
    input_text,
    method_names,
    share_of_content_words_in,
)
from larev_hf.modeling import score_labels, task_text
from larev_hf.training import TrainSettings

SPLITS = ("train", "validation", "test")
#: the n-gram length of a copy in ``copied_coverage``
COPY_NGRAM = 3


def copied_coverage(records: list[dict], texts: list[str]) -> np.ndarray:
    """The share of each rationale's tokens inside an n-gram (:data:`COPY_NGRAM`) of x's tokens, in any order (ROUGE's
    stemming tokenizer, as ``copied_span``)."""
    tokenizer = DefaultTokenizer(use_stemmer=True)
    out = []
    for record, text in zip(records, texts, strict=True):
        r, x = tokenizer.tokenize(text), tokenizer.tokenize(input_text(record))
        grams = {tuple(x[i:i + COPY_NGRAM]) for i in range(len(x) - COPY_NGRAM + 1)}
        covered = np.zeros(len(r), dtype=bool)
        for i in range(len(r) - COPY_NGRAM + 1):
            if tuple(r[i:i + COPY_NGRAM]) in grams:
                covered[i:i + COPY_NGRAM] = True
        out.append(float(covered.mean()) if len(r) else 0.0)
    return np.array(out)


def hypothesis_share(records: list[dict], texts: list[str]) -> np.ndarray:
    """The share of each rationale's content words found in the hypothesis and not in the premise (NLI)."""
    own = [set(content_tokens(record["hypothesis"])) - set(content_tokens(record["premise"])) for record in records]
    return share_of_content_words_in(own, {"r": texts})["r"]


def input_recall(records: list[dict], texts: list[str]) -> np.ndarray:
    """The share of x's content words that each rationale contains (a copy of the input contains all of them)."""
    out = []
    for record, text in zip(records, texts, strict=True):
        words = set(content_tokens(input_text(record)))
        found = set(content_tokens(text))
        out.append(len(words & found) / len(words) if words else 0.0)
    return np.array(out)


#: text features tried and not kept (``coverage_excess`` and ``recall_excess`` are computed from ``copied_coverage``
#: and ``input_recall`` in :func:`prepare`)
TRIED = {"copied_coverage": copied_coverage, "hypothesis_share": hypothesis_share, "input_recall": input_recall}
#: the excess features: name → (the feature whose excess over its acceptable 0.95 quantile is penalised)
EXCESS = {"coverage_excess": "copied_coverage", "recall_excess": "input_recall"}


@dataclass(frozen=True)
class FeatureInputs:
    """What the tried features read besides a row: the excess features' thresholds (:func:`excess_thresholds`) and
    the e-SNLI directory whose training explanations the explanation LM variants are fitted on."""

    thresholds: Mapping[str, float]
    explanations_data_dir: str | None = None
    #: where trained features keep their models (the work directory)
    model_root: Path | None = None


def feature_settings(name: str) -> dict[str, str]:
    """The settings a variant's name carries after ``@``: ``explanation_lm@order=4+copy=0.1`` → ``{"order": "4",
    "copy": "0.1"}``."""
    return dict(part.split("=", 1) for part in name.split("@", 1)[1].split("+"))


@functools.cache
def explanation_lm(data_dir: str, order: int) -> ExplanationLanguageModel:
    """The n-gram explanation LM of every training explanation of ``data_dir``, at ``order`` (fitted once)."""
    records = load_examples("esnli", data_dir, "train").to_list()
    return ExplanationLanguageModel([row["rationale"] for row in records], order)


def explanation_lm_variant(name: str, rows: list[dict], texts: list[str], data_dir: str | None) -> np.ndarray:
    """``explanation_lm@order=N+copy=L``: the explanation LM with another n-gram order and copy weight."""
    if data_dir is None:
        raise ValueError("an explanation_lm@order=N+copy=L feature needs --explanations-data-dir")
    settings = feature_settings(name)
    model = explanation_lm(data_dir, int(settings.get("order", 3)))
    copy = float(settings.get("copy", 0.2))
    return np.array([model.mean_log_probability(text, input_text(row), copy) for row, text in zip(rows, texts,
                                                                                                  strict=True)])


@functools.cache
def self_rationalizer(data_dir: str, rows: int, output_dir: Path) -> SelfRationalizer:
    """F trained on the first ``rows`` training rows of ``data_dir`` (the library's sample, seed 0), saved in
    ``output_dir`` (loaded from there when finished)."""
    records = load_examples("esnli", data_dir, "train", max_examples=rows, seed=0).to_list()
    settings = TrainSettings.for_backbone("minilm2minilm", bf16=True, seed=0, progress=False)
    return SelfRationalizer.train(records, output_dir, backbone="minilm2minilm", settings=settings)


def rationale_likelihood(name: str, rows: list[dict], texts: list[str], inputs: FeatureInputs) -> np.ndarray:
    """``rationale_likelihood@rows=N``: mean log p(r | x, "y explanation:") per token of r (its end token
    included) under F: the whole target's log-probability minus its forced label prefix's. The prefix depends on
    (x, y) only, so it is scored once per distinct pair (an input's explanations and attacks share it)."""
    if inputs.explanations_data_dir is None or inputs.model_root is None:
        raise ValueError("a rationale_likelihood@rows=N feature needs --explanations-data-dir")
    train_rows = int(feature_settings(name)["rows"])
    model = self_rationalizer(inputs.explanations_data_dir, train_rows,
                              inputs.model_root / f"self_rationalizer-{train_rows}")
    sources = [task_text(row) for row in rows]
    whole = score_labels(model.model, model.tokenizer, sources, [self_rationalization_target(row["label"], text)
                                                                 for row, text in zip(rows, texts, strict=True)],
                         max_label_length=96)
    keys = [(source, self_rationalization_target(row["label"], "").rstrip()) for source, row in zip(sources, rows, strict=True)]
    pairs = {key: k for k, key in enumerate(dict.fromkeys(keys))}
    prefix = score_labels(model.model, model.tokenizer, [source for source, _ in pairs],
                          [label_prefix for _, label_prefix in pairs], max_label_length=96, end_of_sequence=False)
    which = [pairs[key] for key in keys]
    return (whole.sum - prefix.sum[which]) / np.maximum(whole.n_tokens - prefix.n_tokens[which], 1)


def feature_scores(name: str, rows: list[dict], inputs: FeatureInputs) -> np.ndarray:
    """The text feature ``name`` of ``rows``' rationales: a registered metric baseline, one of :data:`TRIED` or
    :data:`EXCESS`, an explanation LM variant (``explanation_lm@order=4+copy=0.1``) or F's likelihood of r
    (``rationale_likelihood@rows=1000``)."""
    texts = [row["rationale"] for row in rows]
    if name.startswith("rationale_likelihood@"):
        return rationale_likelihood(name, rows, texts, inputs)
    if name.startswith("explanation_lm@"):
        return explanation_lm_variant(name, rows, texts, inputs.explanations_data_dir)
    if name in EXCESS:
        return -np.maximum(0.0, TRIED[EXCESS[name]](rows, texts) - inputs.thresholds[name])
    if name in TRIED:
        return TRIED[name](rows, texts)
    if name not in method_names():
        raise ValueError(f"--sets: {name!r} is neither a registered method nor one of "
                         f"{sorted([*TRIED, *EXCESS])}")
    return get_method(name).pointwise(None, rows, {"r": texts}, {})["r"]


def select_half(judged: list[dict]) -> np.ndarray:
    """Which judged rows are in the select half (the library's split of the instances, seed 0)."""
    halves = instance_half([row["instance"] for row in judged], 0)
    return np.array([halves[row["instance"]] == "select" for row in judged])


def excess_thresholds(judged: list[dict]) -> dict[str, float]:
    """Per excess feature, the 0.95 quantile of its base feature among the select half's acceptable explanations."""
    acceptable = select_half(judged) & (np.array([row["numbers"]["acceptable"] for row in judged]) >= 0.5)
    texts = [row["rationale"] for row in judged]
    return {name: float(np.quantile(TRIED[base](judged, texts)[acceptable], 0.95)) for name, base in EXCESS.items()}


def add_feature(work: Path, name: str, inputs: FeatureInputs) -> None:
    """Score the text feature ``name`` on the judged rows and every split's VARSuite rows of ``work`` (in place)."""
    judged = [row for _, row in read_jsonl(work / "judged.jsonl")]
    scores = feature_scores(name, judged, inputs)
    write_jsonl(work / "scores" / f"{name}.jsonl", [{"id": row["id"], "instance": row["instance"], "score": float(s)}
                                                    for row, s in zip(judged, scores, strict=True)])
    for split in SPLITS:
        directory = work / "attacks" / split
        suite = [row for _, row in read_jsonl(directory / "suite.jsonl")]
        scores = feature_scores(name, suite, inputs)
        write_jsonl(directory / "scores" / f"{name}.jsonl", [{"id": row["id"], "family": row["family"],
                                                              "score": float(s)}
                                                             for row, s in zip(suite, scores, strict=True)])


def prepare(human_dir: Path, work: Path, features: set[str], explanations_data_dir: str | None = None) -> None:
    """Copy ``human_dir``'s rows and scores into ``work`` and score the features it lacks."""
    if not work.exists():
        shutil.copytree(human_dir, work, ignore=shutil.ignore_patterns("*.png", "stages", "*.md"))
    judged = [row for _, row in read_jsonl(work / "judged.jsonl")]
    inputs = FeatureInputs(excess_thresholds(judged) if features & set(EXCESS) else {}, explanations_data_dir, work)
    for name in sorted(features):
        if not (work / "scores" / f"{name}.jsonl").is_file():
            add_feature(work, name, inputs)


def describe(work: Path, name: str) -> dict:
    """``name``'s Spearman with acceptability on the select half, and its mean on the test split's entailment rows
    for the gold and the two copies."""
    judged = [row for _, row in read_jsonl(work / "judged.jsonl")]
    select = select_half(judged)
    values = np.array([row["score"] for _, row in read_jsonl(work / "scores" / f"{name}.jsonl")])
    human = np.array([row["numbers"]["acceptable"] for row in judged])
    suite = {(row["id"], row["family"]): row for _, row in read_jsonl(work / "attacks" / "test" / "suite.jsonl")}
    test = [row for _, row in read_jsonl(work / "attacks" / "test" / "scores" / f"{name}.jsonl")]
    means = {}
    for family in ("gold", "hypothesis_copy", "input_copy"):
        picked = [row["score"] for row in test if row["family"] == family
                  and suite[(row["id"], row["family"])]["gold_label"] == "entailment"]
        means[family] = float(np.mean(picked)) if picked else float("nan")
    return {"spearman_with_acceptable_select_half": float(spearmanr(values[select], human[select]).statistic),
            "test_entailment_mean": means}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--sets", nargs="+", required=True, help="feature sets, each comma-joined")
    parser.add_argument("--explanations-data-dir",
                        help="e-SNLI data for explanation_lm@order=N+copy=L and rationale_likelihood@rows=N")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sets = [tuple(entry.split(",")) for entry in args.sets]
    prepare(args.human_dir, args.work_dir, {name for features in sets for name in features},
            args.explanations_data_dir)
    described = {name: describe(args.work_dir, name) for name in dict.fromkeys(f for fs in sets for f in fs[1:])}
    for name, entry in described.items():
        print(f"{name}: Spearman with acceptable (select half) {entry['spearman_with_acceptable_select_half']:+.3f}; "
              f"test entailment means {({k: round(v, 3) for k, v in entry['test_entailment_mean'].items()})}")
    results = []
    for features in sets:
        result = {"features": list(features), **evaluate_rule(args.work_dir, per_label=False, paired=True,
                                                             features=features)}
        results.append(result)
        held = result["held"]
        print(f"{','.join(features)}: chosen {result['chosen']}; held ρ {held['spearman']:.3f} pairwise "
              f"{held['pairwise']:.3f} select-1 {held['select_1']:.3f}; test cells < 0.85: "
              f"{ {k: round(v, 3) for k, v in result['test_win_rate_cells_below_0.85'].items()} }", flush=True)
    if args.json:
        write_json(args.json, {"command": "python benchmarks/calibration_feature_sets.py --human-dir "
                                          f"{args.human_dir} --sets " + " ".join(args.sets), "features": described,
                               "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
