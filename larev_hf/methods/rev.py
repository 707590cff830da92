"""REV (Chen et al., 2023): REV(r) = log p_Φ(y | r ⊕ b) − log p_Φbase(y | b), conditional V-information in nats.

Φ_base is trained on the vacuous baseline b → y (REV's g′; thesis algorithm A.1 step 4) and Φ on r ⊕ b → y
(REV's g; A.1 step 5). :class:`ConditionalVMethod` is every metric of that shape — a rationale model scored against
the shared Φ_base (REV eq. 5-6; LAREV, thesis eq. 4.4) — and declares the shared stages :data:`PHI_BASE` and
:data:`PHI` once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from larev_hf.methods.base import Method, MethodResult, RunContext, RunSettings, Stage, choice_accuracy
from larev_hf.modeling.input_formats import get_input_format
from larev_hf.scores.stats import summarize_variants


def _train_phi_base(context: RunContext) -> None:
    """Φ_base on b → y (REV's g′; thesis A.1 step 4)."""
    fmt = get_input_format(context.config.model.input_format)
    context.train_evaluator("phi_base", lambda r: fmt.baseline_input(r["baseline"]))


def _train_phi(context: RunContext) -> None:
    """Φ on r ⊕ b → y with the training rationale (REV's g; thesis A.1 step 5)."""
    fmt = get_input_format(context.config.model.input_format)
    context.train_evaluator("phi", lambda r: fmt.rationale_input(r["rationale"], r["baseline"]))


#: Shared by REV and LAREV (and any method listing them): each runs once per run.
PHI_BASE = Stage("phi_base", _train_phi_base)
PHI = Stage("phi", _train_phi)


class CVIBundleScorer:
    """A bundle's scorer for a conditional-V-information method: Φ_base and the rationale model."""

    needs_baselines = True

    def __init__(self, models: Mapping[str, Any], tokenizer: Any, config: Any, batch_size: int) -> None:
        from larev_hf.scores.cvi import ConditionalVScorer

        self.scorer = ConditionalVScorer(models["baseline"], models["rationale"], tokenizer, config.input_format,
                                         config.reduction, batch_size)

    def score(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str], progress: bool = False) -> Any:
        """log p(y | r ⊕ b) − log p_Φbase(y | b) of each rationale, with its record's label y and baseline b."""
        return self.scorer.score(rationales=list(rationales), baselines=[r["baseline"] for r in records],
                                 labels=[r["label"] for r in records], progress=progress)

    def rationale_log_probs(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                            progress: bool = False) -> np.ndarray:
        """log p(y | r ⊕ b) of each rationale under the rationale model, without Φ_base's term."""
        return self.scorer.rationale_log_probs(list(rationales), [r["baseline"] for r in records],
                                               [r["label"] for r in records], progress)


def baseline_terms(context: RunContext, records: Sequence[dict[str, Any]], shared: dict[str, Any]) -> np.ndarray:
    """log p_Φbase(y | b) per record, computed once per scoring pass and shared by every CVI method."""
    if "log_p_baseline" not in shared:
        from larev_hf.scores.cvi import ConditionalVScorer

        cfg = context.config
        labels, baselines = [r["label"] for r in records], [r["baseline"] for r in records]
        base = context.model("phi_base")
        scorer = ConditionalVScorer(base, base, context.tokenizer(), get_input_format(cfg.model.input_format),
                                    cfg.model.reduction, cfg.evaluation.eval_batch_size)
        shared["log_p_baseline"] = scorer.baseline_log_probs(baselines, labels, context.progress)
    return shared["log_p_baseline"]


def phi_base_accuracy(context: RunContext, records: Sequence[dict[str, Any]], shared: dict[str, Any]) -> dict[str, float]:
    """Φ_base's accuracy on the baselines (``{"baseline": …}``), computed once per scoring pass for the report only:
    the pointwise scores never need it, and its three-choice pass costs more than the scores themselves."""
    if "phi_base_accuracy" not in shared:
        from larev_hf.modeling.scoring import predict_choices

        cfg = context.config
        fmt = get_input_format(cfg.model.input_format)
        labels, choices = [r["label"] for r in records], [r["choices"] for r in records]
        predictions = predict_choices(context.model("phi_base"), context.tokenizer(),
                                      [fmt.baseline_input(r["baseline"]) for r in records], choices,
                                      batch_size=cfg.evaluation.eval_batch_size, reduction=cfg.model.reduction)
        shared["phi_base_accuracy"] = {"baseline": choice_accuracy(predictions, choices, labels)}
    return shared["phi_base_accuracy"]


def cvi_variant_scores(context: RunContext, model_name: str, records: Sequence[dict[str, Any]],
                       variants: Mapping[str, Sequence[str]], base_log_probs: np.ndarray) -> dict[str, np.ndarray]:
    """Pointwise log p(y | r ⊕ b) − log p_Φbase(y | b) of every variant under ``models/<model_name>``."""
    from larev_hf.scores.cvi import ConditionalVScorer

    cfg = context.config
    scorer = ConditionalVScorer(context.model("phi_base"), context.model(model_name), context.tokenizer(),
                                get_input_format(cfg.model.input_format), cfg.model.reduction, cfg.evaluation.eval_batch_size)
    labels, baselines = [r["label"] for r in records], [r["baseline"] for r in records]
    return {variant: scorer.score(rationales=list(rationales), baselines=baselines, labels=labels,
                                  baseline_log_probs=base_log_probs, progress=context.progress).scores
            for variant, rationales in variants.items()}


class ConditionalVMethod(Method):
    """A rationale model ``roles["rationale"]`` scored against the shared Φ_base (REV eq. 5; thesis eq. 4.4)."""

    roles: ClassVar[Mapping[str, str]] = {"baseline": "phi_base", "rationale": "phi"}
    #: the key in a scoring pass's ``shared`` dict, and the report column, of the reference term the pointwise scores
    #: subtract (log p_Φbase(y | b) here; a method with another reference names its own)
    reference_column: ClassVar[str] = "log_p_baseline"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        """log p(y | r ⊕ b) − log p_Φbase(y | b) per record and variant (REV eq. 5; thesis eq. 4.4)."""
        return cvi_variant_scores(context, self.roles["rationale"], records, variants,
                                  baseline_terms(context, records, shared))

    def rationale_inputs(self, context: RunContext, records: Sequence[Mapping[str, Any]],
                         rationales: Sequence[str]) -> list[str]:
        """The rationale model's encoder text of each rationale with its record: r ⊕ b."""
        fmt = get_input_format(context.config.model.input_format)
        return [fmt.rationale_input(text, r["baseline"]) for text, r in zip(rationales, records, strict=True)]

    def score(self, context, records, variants, shared) -> MethodResult:
        from larev_hf.modeling.scoring import predict_choices

        cfg, model_name = context.config, self.roles["rationale"]
        scores = self.pointwise(context, records, variants, shared)
        reference = shared[self.reference_column]
        labels, choices = [r["label"] for r in records], [r["choices"] for r in records]
        accuracy = {}
        for variant, rationales in variants.items():
            predictions = predict_choices(context.model(model_name), context.tokenizer(),
                                          self.rationale_inputs(context, records, rationales), choices,
                                          batch_size=cfg.evaluation.eval_batch_size, reduction=cfg.model.reduction)
            accuracy[variant] = choice_accuracy(predictions, choices, labels)
        return MethodResult(
            summary=summarize_variants(scores, n_boot=cfg.evaluation.n_boot, seed=cfg.training.seed), scores=scores,
            columns={self.reference_column: [float(v) for v in reference],
                     **{f"{self.name}/{v}": [float(x) for x in values] for v, values in scores.items()}},
            accuracy={"phi_base": phi_base_accuracy(context, records, shared), model_name: accuracy},
        )

    def bundle_scorer(self, models, tokenizer, config, batch_size) -> CVIBundleScorer:
        return CVIBundleScorer(models, tokenizer, config, batch_size)


class REV(ConditionalVMethod):
    """REV (Chen et al., 2023, eq. 5-6)."""

    name = "rev"
    title = "REV"
    formula = "REV(r) = log p_Φ(y | r ⊕ b) − log p_Φbase(y | b)"
    citation_keys = ("chen-etal-2023-rev",)
    roles = {"baseline": "phi_base", "rationale": "phi"}
    model_titles = {"baseline": "Φ_base (b → y)", "rationale": "Φ (r ⊕ b → y)"}

    def stages(self, config: RunSettings) -> list[Stage]:
        return [PHI_BASE, PHI]
