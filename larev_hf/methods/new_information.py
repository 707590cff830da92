"""LAREV-NI, the new information a rationale adds (our extension of the thesis's LAREV, docs/method.md, "New
information"):

    NI(r) = log p_ΦNI(y | τ(r) ⊕ b̃) − log p_ΦNI(y | ∅ ⊕ b̃)

b̃ is the baseline with the label's verbalization masked (the thesis's E2, table 4.2) and τ(r) what the rationale says
beyond the input and the label: its runs copied from the input masked (the input is already in b̃), its sentences that
name nothing of the input dropped, and every word that names a label masked
(:mod:`~larev_hf.leakage.rationale_leakage`). Pointwise, the thesis's
LAREV(r) = log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b) has no room: b states the label, so log p_Φbase(y | b) ≈ 0 and
LAREV(r) ≤ 0 for every r, and a label stated in r is read as information. NI changes both terms:

- **the reference leaves room**: Φ_NI itself with no rationale and the label masked in b, which it is trained to meet
  unsure, so NI(r) > 0 is what r adds and the most it can add is log |labels| nats;
- **the label stated in r pays nothing**: τ masks it before Φ_NI reads r, and Φ_NI is trained to stay unsure on
  rationales that carry nothing of their own — none, a label statement, a copy of the input, another instance's
  explanation (:func:`~larev_hf.leakage.rationale_leakage.uninformative_rationales`, each with b̃ and every label as
  the target: outlier exposure, Hendrycks et al. 2019) — beside the thesis's E1-E3 in every IRM group (eq. 4.10).

NI(r) > 0: r makes the evaluator more sure of the gold label than the input alone does (new, label-supporting
information); 0: nothing new (a copy of the input, a generic sentence, a label statement, no rationale); < 0: r points
away from the label.
The thesis's LAREV stays ``--method larev``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from larev_hf.defaults import UNINFORMATIVE_KINDS
from larev_hf.methods.base import RunContext, RunSettings, Stage
from larev_hf.methods.larev import ENVIRONMENTS_STAGE, IG, PROBE, AddedEnvironments, needs_probe, train_phi_la
from larev_hf.methods.rev import PHI, PHI_BASE, ConditionalVMethod
from larev_hf.methods.settings import comma_list, help_field
from larev_hf.modeling.input_formats import get_input_format

#: Φ_NI's model directory (``models/phi_ni``).
PHI_NI = "phi_ni"
#: The environment of the uninformative rationales in every IRM group of Φ_NI (further ones: ``uninformative_2``, ...).
UNINFORMATIVE = "uninformative"


def uninformative_environment_names(draws: int) -> tuple[str, ...]:
    """The names of Φ_NI's ``draws`` uninformative environments."""
    return (UNINFORMATIVE, *(f"{UNINFORMATIVE}_{k}" for k in range(2, draws + 1)))


@dataclass
class NewInformationSettings:
    """LAREV-NI's own settings; the penalty weights, groups per batch, warm-up and initialisation are LAREV's
    (:class:`~larev_hf.methods.larev.LarevSettings`)."""

    uninformative_kinds: list[str] = help_field(
        list(UNINFORMATIVE_KINDS), "the rationales Φ_NI is trained to stay unsure on, one drawn per training instance "
        "(comma list of empty, label, copy, other_instance)", stages=(PHI_NI,), type=comma_list)
    uninformative_draws: int = help_field(
        1, "uninformative environments per IRM group of Φ_NI, each with a different kind drawn per instance",
        stages=(PHI_NI,))
    mask_rationale_labels: bool = help_field(
        True, "mask the words of r that name a label before Φ_NI reads it (training and scoring)",
        flag="--no-mask-rationale-labels", stages=(PHI_NI,))
    input_copies: str = help_field(
        "mask", "the runs of at least --copy-run words that r copies from the input (or a whole input field): mask them "
        "before Φ_NI reads r (training and scoring; the input is already in b̃, a copy adds nothing) or keep them",
        choices=("mask", "keep"), stages=(PHI_NI,))
    copy_run: int = help_field(6, "the shortest run of words copied from the input that --input-copies masks",
                               stages=(PHI_NI,))
    ungrounded_sentences: str = help_field(
        "drop", "a sentence of r that names no content word of the input once its copies are masked (a generic "
        "sentence, another instance's explanation): drop it before Φ_NI reads r (training and scoring) or keep it",
        choices=("drop", "keep"), stages=(PHI_NI,))
    label_statements: str = help_field(
        "drop", "when scoring, a sentence of r that names a label and no content word of the input: drop it (a label "
        "statement adds nothing: it scores exactly as no rationale) or keep it with its label words masked",
        choices=("drop", "mask"), report_only=True)

    def validate(self, config: RunSettings) -> None:
        unknown = [kind for kind in self.uninformative_kinds if kind not in UNINFORMATIVE_KINDS]
        if unknown or not self.uninformative_kinds:
            raise ValueError(f"--uninformative-kinds {','.join(self.uninformative_kinds)}: expected a non-empty comma "
                             f"list of {', '.join(UNINFORMATIVE_KINDS)}")
        if self.copy_run < 1:
            raise ValueError(f"--copy-run {self.copy_run}: expected a positive number of words")
        if not 1 <= self.uninformative_draws <= len(self.uninformative_kinds):
            raise ValueError(f"--uninformative-draws {self.uninformative_draws}: expected 1 to "
                             f"{len(self.uninformative_kinds)} (one environment per kind of --uninformative-kinds)")


class NewInformationInputs:
    """What Φ_NI reads for a record and a rationale: τ(r) and b̃ (see the module docstring).

    Args:
        mask_token (`str`): the tokenizer's mask token, what τ and b̃ put in place of what they remove.
        mask_rationale_labels (`bool`): mask the words of r that name a label.
        drop_label_statements (`bool`): drop the sentences of r that name a label and nothing of the input (scoring).
        copy_run (`int` or `None`): mask the runs of at least this many words copied from the input (`None`: keep).
        drop_ungrounded (`bool`): drop the sentences that name no content word of the input, copies masked.
    """

    def __init__(self, mask_token: str, mask_rationale_labels: bool = True, drop_label_statements: bool = False,
                 copy_run: int | None = None, drop_ungrounded: bool = False) -> None:
        self.mask_token = mask_token
        self.mask_rationale_labels = mask_rationale_labels
        self.drop_label_statements = drop_label_statements
        self.copy_run = copy_run
        self.drop_ungrounded = drop_ungrounded

    @classmethod
    def from_settings(cls, mask_token: str, settings: Mapping[str, Any], scoring: bool = True) -> NewInformationInputs:
        """τ and b̃ as ``settings`` (a :class:`NewInformationSettings` as a dict, or a bundle's recorded training
        settings) declare them; a bundle made before ``input_copies`` and ``ungrounded_sentences`` records neither and
        is read without those steps, as it was trained. Training never drops label statements (Φ_NI learns them as
        uninformative), scoring does with ``label_statements="drop"``."""
        return cls(mask_token, bool(settings.get("mask_rationale_labels", True)),
                   scoring and settings.get("label_statements", "drop") == "drop",
                   int(settings.get("copy_run", 6)) if settings.get("input_copies", "keep") == "mask" else None,
                   settings.get("ungrounded_sentences", "keep") == "drop")

    def rationale(self, text: str, record: Mapping[str, Any]) -> str:
        """τ(r): ``text`` without its bare label statements (when scoring with ``label_statements="drop"``), its copies
        of the input masked, without the sentences that name nothing of the input, and with its label words masked —
        each step as the settings ask."""
        from larev_hf.leakage.rationale_leakage import (
            drop_label_statements,
            drop_ungrounded_sentences,
            mask_input_copies,
            mask_label_words,
        )

        if self.drop_label_statements:
            text = drop_label_statements(text, record)
        if self.copy_run is not None:
            text = mask_input_copies(text, record, self.mask_token, self.copy_run)
        if self.drop_ungrounded:
            text = drop_ungrounded_sentences(text, record, self.mask_token)
        return mask_label_words(text, record, self.mask_token) if self.mask_rationale_labels else text

    def baseline(self, record: Mapping[str, Any]) -> str:
        """b̃: the record's baseline with the label's verbalization masked."""
        from larev_hf.leakage.rationale_leakage import masked_baseline

        return masked_baseline(record, self.mask_token)


def new_information_log_probs(model: Any, tokenizer: Any, inputs: NewInformationInputs, input_format: Any,
                              reduction: str, batch_size: int, records: Sequence[Mapping[str, Any]],
                              rationales: Sequence[str], progress: bool = False) -> np.ndarray:
    """log p_ΦNI(y | τ(r) ⊕ b̃) of ``rationales[i]`` as the rationale of ``records[i]``: one pass of Φ_NI, the
    reference term when every rationale is ``""``."""
    from larev_hf.scores.cvi import ConditionalVScorer

    scorer = ConditionalVScorer(model, model, tokenizer, input_format, reduction, batch_size)
    return scorer.rationale_log_probs([inputs.rationale(text, r) for text, r in zip(rationales, records, strict=True)],
                                      [inputs.baseline(r) for r in records], [r["label"] for r in records], progress)


def new_information_scores(model: Any, tokenizer: Any, inputs: NewInformationInputs, input_format: Any,
                          reduction: str, batch_size: int, records: Sequence[Mapping[str, Any]],
                          rationales: Sequence[str], reference: np.ndarray | None = None, progress: bool = False):
    """NI of ``rationales[i]`` as the rationale of ``records[i]`` (a :class:`~larev_hf.scores.cvi.CVIScores`: the
    score, log p_ΦNI(y | τ(r) ⊕ b̃) and the reference log p_ΦNI(y | ∅ ⊕ b̃)); pass ``reference`` to reuse that term."""
    from larev_hf.scores.cvi import CVIScores

    settings = (model, tokenizer, inputs, input_format, reduction, batch_size, records)
    if reference is None:
        reference = new_information_log_probs(*settings, [""] * len(records), progress)
    with_rationale = new_information_log_probs(*settings, rationales, progress)
    return CVIScores(scores=with_rationale - reference, log_p_with_rationale=with_rationale, log_p_baseline=reference)


class NewInformationBundleScorer:
    """A LAREV-NI bundle's scorer: Φ_NI against itself with no rationale."""

    needs_baselines = True

    def __init__(self, models: Mapping[str, Any], tokenizer: Any, config: Any, batch_size: int) -> None:
        from larev_hf.leakage import mask_token_of

        self.model, self.tokenizer, self.config, self.batch_size = models["rationale"], tokenizer, config, batch_size
        self.inputs = NewInformationInputs.from_settings(mask_token_of(tokenizer), config.training or {})

    def score(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str], progress: bool = False) -> Any:
        """NI(r) of each rationale with its record's label y and baseline b."""
        return new_information_scores(self.model, self.tokenizer, self.inputs, self.config.input_format,
                                      self.config.reduction, self.batch_size, records, rationales, progress=progress)

    def rationale_log_probs(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                            progress: bool = False) -> np.ndarray:
        """log p_ΦNI(y | τ(r) ⊕ b̃) of each rationale, without the reference term."""
        return new_information_log_probs(self.model, self.tokenizer, self.inputs, self.config.input_format,
                                         self.config.reduction, self.batch_size, records, rationales, progress)


def _uninformative_environment(settings: NewInformationSettings, seed: int, inputs: NewInformationInputs
                               ) -> AddedEnvironments:
    """Φ_NI's added environments: per instance ``uninformative_draws`` uninformative rationales of different kinds (τ
    applied), each with b̃ and every label as the target."""
    from larev_hf.leakage.rationale_leakage import uninformative_rationales

    names = uninformative_environment_names(settings.uninformative_draws)

    def add(train: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
        drawn = uninformative_rationales(train, seed=seed, kinds=settings.uninformative_kinds,
                                         draws=settings.uninformative_draws)
        for record, row, pairs in zip(train, rows, drawn, strict=True):
            row["rationales"] = {**row.get("rationales", {}),
                                 **{name: inputs.rationale(text, record) for name, (_, text) in zip(names, pairs,
                                                                                                    strict=True)}}
            row.update(dict.fromkeys(names, row["mask"]))

    return AddedEnvironments(names, add, unsure=names,
                             recorded={"uninformative_kinds": list(settings.uninformative_kinds),
                                       "uninformative_draws": settings.uninformative_draws,
                                       "mask_rationale_labels": settings.mask_rationale_labels,
                                       "input_copies": settings.input_copies, "copy_run": settings.copy_run,
                                       "ungrounded_sentences": settings.ungrounded_sentences})


def _inputs(context: RunContext, scoring: bool = True) -> NewInformationInputs:
    """τ and b̃ of a run: training masks copies and label words and drops ungrounded sentences; scoring also drops bare
    label statements (by default)."""
    from dataclasses import asdict

    from larev_hf.leakage import mask_token_of

    settings = asdict(context.config.method_settings(NewInformationSettings))
    return NewInformationInputs.from_settings(mask_token_of(context.tokenizer()), settings, scoring)


def train_phi_ni(context: RunContext) -> None:
    """Φ_NI: Φ_LA's objective (eq. 4.10) with the uninformative environment in every IRM group."""
    settings = context.config.method_settings(NewInformationSettings)
    train_phi_la(PHI_NI, context, _uninformative_environment(settings, context.config.training.seed,
                                                              _inputs(context, scoring=False)))


class NewInformation(ConditionalVMethod):
    """LAREV-NI (see the module docstring)."""

    name = "larev_ni"
    title = "LAREV-NI"
    formula = "NI(r) = log p_ΦNI(y | τ(r) ⊕ b̃) − log p_ΦNI(y | ∅ ⊕ b̃)"
    citation_keys = ("li-2026-larev", "chen-etal-2023-rev", "jiang-etal-2024-rora")
    roles = {"rationale": PHI_NI}
    model_titles = {"rationale": "Φ_NI (τ(r) ⊕ b̃ → y, leakage-aware, unsure without new information)"}
    settings_class = NewInformationSettings
    in_all = False  # an extension: asked by name (`--method larev_ni`), the `esnli` default's score
    reference_column = "log_p_reference_ni"
    score_meaning = (
        "A score is how many nats more (positive) or less (negative) log-probability the evaluator gives the label "
        "with the rationale than with no rationale, reading the input with the label masked and the rationale without "
        "its statements of the label: positive means the rationale adds information for the label beyond the input, "
        "0 means nothing new (no rationale, a bare label statement, a copy of the input: exactly 0), negative means it "
        "points away from the label; at most about log(number of labels) nats. Sentences that name nothing of the "
        "input are not read. Measured figures, and where it fails: the larev-hf docs, human.md, 'New information "
        "(LAREV-NI)'.")

    def stages(self, config: RunSettings) -> list[Stage]:
        return [PHI_BASE, PHI, IG, ENVIRONMENTS_STAGE, *([PROBE] if needs_probe(config) else []),
                Stage(PHI_NI, train_phi_ni)]

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        """NI per record and variant; the reference term is computed once per scoring pass."""
        cfg = context.config
        fmt, inputs = get_input_format(cfg.model.input_format), _inputs(context)
        model, tokenizer = context.model(PHI_NI), context.tokenizer()
        out = {}
        for variant, rationales in variants.items():
            result = new_information_scores(model, tokenizer, inputs, fmt, cfg.model.reduction,
                                            cfg.evaluation.eval_batch_size, records, rationales,
                                            shared.get(self.reference_column), context.progress)
            shared[self.reference_column] = result.log_p_baseline
            out[variant] = result.scores
        return out

    def rationale_inputs(self, context, records, rationales) -> list[str]:
        """Φ_NI's encoder text of each rationale with its record: τ(r) ⊕ b̃."""
        fmt, inputs = get_input_format(context.config.model.input_format), _inputs(context)
        return [fmt.rationale_input(inputs.rationale(text, r), inputs.baseline(r))
                for text, r in zip(rationales, records, strict=True)]

    def bundle_scorer(self, models, tokenizer, config, batch_size) -> NewInformationBundleScorer:
        return NewInformationBundleScorer(models, tokenizer, config, batch_size)
