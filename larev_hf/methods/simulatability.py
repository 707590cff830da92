"""LAS (Hase et al., 2020) and RQ (Wiegreffe et al., 2021): a simulator's accuracy with − without the rationale.

Both read one simulator trained on (x, r), x alone and r alone → the gold label (stage ``simulators``, declared once
and shared); its per-view correctness is computed once per scoring pass. The metric functions are in
:mod:`larev_hf.scores.simulatability`, the simulator in :mod:`larev_hf.training.simulator`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from larev_hf.methods.base import Method, MethodResult, RunContext, RunSettings, Stage
from larev_hf.scores.simulatability import las_contributions, rq_scores, summarize_simulatability


def _train_simulators(context: RunContext) -> None:
    """One simulator on (x, r), x alone and r alone → the gold label (Hase et al., 2020; Wiegreffe et al., 2021)."""
    from larev_hf.modeling.backbones import fresh_model
    from larev_hf.training.simulator import train_simulator

    train_simulator(fresh_model(context), context.tokenizer(), context.split_records("train"),
                    context.path("models", "simulator"), context.config.train_settings(context.progress))


SIMULATORS = Stage("simulators", _train_simulators)


def simulator_correctness(context: RunContext, records, variants, shared: dict[str, Any]) -> dict:
    """``correct[variant][view]`` for the views x_r, x and r (x once for all variants), computed once per pass."""
    if "simulator_correct" not in shared:
        from larev_hf.training.simulator import simulate

        cfg = context.config
        kwargs = {"batch_size": cfg.evaluation.eval_batch_size, "reduction": cfg.model.reduction}
        model, tokenizer = context.model("simulator"), context.tokenizer()
        without = simulate(model, tokenizer, records, [r["rationale"] for r in records], views=("x",), **kwargs)["x"]
        shared["simulator_correct"] = {
            variant: {"x": without, **simulate(model, tokenizer, records, list(rationales), views=("x_r", "r"), **kwargs)}
            for variant, rationales in variants.items()}
    return shared["simulator_correct"]


class SimulatabilityMethod(Method):
    """LAS or RQ from the shared simulator (the subclass names which)."""

    roles = {}
    unit = "accuracy"

    def stages(self, config: RunSettings) -> list[Stage]:
        return [SIMULATORS]

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        """Per-example scores whose mean is the metric: RQ's Δ_i = 1[S(x, r) = y] − 1[S(x) = y]; LAS's share of the
        leakage-group macro average (:func:`~larev_hf.scores.simulatability.las_contributions`)."""
        correct = simulator_correctness(context, records, variants, shared)
        return {variant: self.per_example(views) for variant, views in correct.items()}

    def per_example(self, correct: dict[str, np.ndarray]) -> np.ndarray:
        """The per-example score from the correctness of the views ``x_r``, ``x`` and ``r``."""
        raise NotImplementedError

    def score(self, context, records, variants, shared) -> MethodResult:
        cfg = context.config
        correct = simulator_correctness(context, records, variants, shared)
        columns: dict[str, list] = {}
        for variant in variants:
            for view in ("x_r", "r"):
                columns[f"simulator/{variant}/{view}"] = [bool(v) for v in correct[variant][view]]
        first = next(iter(correct.values()))
        columns["simulator/x"] = [bool(v) for v in first["x"]]
        accuracy = {"simulator": {"baseline": float(np.mean(first["x"])),
                                  **{v: float(np.mean(correct[v]["x_r"])) for v in variants}},
                    "simulator_rationale_only": {v: float(np.mean(correct[v]["r"])) for v in variants}}
        summary = summarize_simulatability(correct, self.name, n_boot=cfg.evaluation.n_boot, seed=cfg.training.seed)
        return MethodResult(summary, None, columns, accuracy)


class LAS(SimulatabilityMethod):
    """Leakage-adjusted simulatability (Hase et al., 2020): the accuracy gain macro-averaged over leaking and
    non-leaking examples."""

    name = "las"
    title = "LAS"
    formula = "LAS = ½ (mean_leaking Δ + mean_non-leaking Δ), Δ = 1[S(x, r) = y] − 1[S(x) = y]"
    citation_keys = ("hase-etal-2020-leakage",)

    def per_example(self, correct):
        return las_contributions(correct["x_r"], correct["x"], correct["r"])


class RQ(SimulatabilityMethod):
    """Rationale quality (Wiegreffe et al., 2021): the mean accuracy gain."""

    name = "rq"
    title = "RQ"
    formula = "RQ = mean(1[S(x, r) = y] − 1[S(x) = y])"
    citation_keys = ("wiegreffe-etal-2021-measuring",)

    def per_example(self, correct):
        return rq_scores(correct["x_r"], correct["x"])
