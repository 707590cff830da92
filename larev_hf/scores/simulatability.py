"""Accuracy-based rationale metrics: LAS (Hase et al., 2020) and RQ (Wiegreffe et al., 2021).

Both compare a *simulator*'s accuracy with and without the rationale (REV eq. 1 with Perf = accuracy;
REV §3.3):

- **RQ** (Wiegreffe et al., 2021): ``RQ = mean_i(1[S(x_i, r_i) = y_i] − 1[S(x_i) = y_i])`` with gold labels y,
  over all examples.
- **LAS** (Hase et al., 2020): the same difference averaged separately over *leaking* examples — those where
  the simulator given the rationale **alone** predicts the label, ``1[S(r_i) = y_i] = 1`` — and non-leaking
  ones, then macro-averaged over the two groups: ``LAS = ½ (mean_{leaking} Δ_i + mean_{non-leaking} Δ_i)``.
  When one group is empty LAS is undefined (NaN), as RoRA reports for leaky rationales (RoRA §4.1, table 2;
  Pruthi et al., 2022).

Values lie in [−1, 1]; higher is better. The pure functions take correctness arrays, so predictions from any
simulator (or a human study) can be scored. :func:`larev_hf.training.simulator.train_simulator` /
:func:`~larev_hf.training.simulator.simulate` provide a seq2seq simulator on the evaluator backbone, trained on the gold labels.
Hase et al. train one simulator on x, r and (x, r) by dropping parts of the input at random; ours sees every
view of every training example (deterministic). Pass ``labels`` (e.g. a task model's predictions ŷ) to
simulate those instead of the gold labels, as Hase et al.'s original LAS does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from larev_hf.scores.stats import REFERENCE, degraded_variants, separation_keys

#: Simulator inputs: the task input with the rationale, the task input alone, the rationale alone.
SIMULATOR_VIEWS = ("x_r", "x", "r")


# ---------------------------------------------------------------------------------------------- pure metrics
def _as_bool(values: Sequence[bool] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of per-example correctness, got shape {array.shape}")
    if array.dtype != bool and not np.isin(array, (0, 1)).all():
        raise ValueError(f"{name} must hold booleans or 0/1 values (per-example correctness)")
    return array.astype(bool)


def _check_lengths(**arrays: np.ndarray) -> None:
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"per-example arrays must have one entry per example, got lengths {lengths}")


def rq_scores(correct_with: Sequence[bool], correct_without: Sequence[bool]) -> np.ndarray:
    """Per-example RQ terms ``1[S(x, r) = y] − 1[S(x) = y]`` ∈ {−1, 0, 1} (Wiegreffe et al., 2021)."""
    with_r, without_r = _as_bool(correct_with, "correct_with"), _as_bool(correct_without, "correct_without")
    _check_lengths(correct_with=with_r, correct_without=without_r)
    return with_r.astype(np.float64) - without_r.astype(np.float64)


def rq(correct_with: Sequence[bool], correct_without: Sequence[bool]) -> float:
    """RQ: the mean of :func:`rq_scores` over all examples (no leakage grouping); NaN for no examples."""
    scores = rq_scores(correct_with, correct_without)
    return float(scores.mean()) if len(scores) else float("nan")


def leaking_mask(correct_rationale_only: Sequence[bool]) -> np.ndarray:
    """Hase et al.'s leakage indicator: an example leaks when the simulator given the rationale alone is correct."""
    return _as_bool(correct_rationale_only, "correct_rationale_only")


@dataclass
class LASResult:
    """LAS and its parts: the mean Δ = 1[S(x, r)] − 1[S(x)] in each group and the group sizes (NaN for an empty group)."""

    las: float
    leaking: float
    nonleaking: float
    n_leaking: int
    n_nonleaking: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def las(
    correct_with: Sequence[bool], correct_without: Sequence[bool], correct_rationale_only: Sequence[bool]
) -> LASResult:
    """Leakage-adjusted simulatability (Hase et al., 2020): the macro average over leaking / non-leaking examples of
    the mean accuracy gain from the rationale. Undefined (NaN) when either group is empty."""
    delta = rq_scores(correct_with, correct_without)
    leaking = leaking_mask(correct_rationale_only)
    _check_lengths(correct_with=delta, correct_rationale_only=leaking)
    return _las(delta, leaking)


def las_contributions(correct_with: Sequence[bool], correct_without: Sequence[bool],
                      correct_rationale_only: Sequence[bool]) -> np.ndarray:
    """Each example's share of LAS: Δ_i · n / (2 n_g(i)), n_g(i) the size of its leakage group, so that the mean over
    examples is LAS whenever both groups are non-empty (with one group empty it is ½ RQ; LAS itself is undefined).

    Hase et al. (2020) define LAS only as a corpus score; this decomposition is the per-example score the
    meta-evaluation ranks (``docs/meta.md``). RQ's per-example score is Δ_i itself (:func:`rq_scores`).
    """
    delta = rq_scores(correct_with, correct_without)
    leaking = leaking_mask(correct_rationale_only)
    _check_lengths(correct_with=delta, correct_rationale_only=leaking)
    group_size = np.where(leaking, leaking.sum(), (~leaking).sum()).astype(np.float64)
    return delta * len(delta) / (2 * np.maximum(group_size, 1))


def _las(delta: np.ndarray, leaking: np.ndarray) -> LASResult:
    groups = [delta[leaking], delta[~leaking]]
    means = [float(g.mean()) if len(g) else float("nan") for g in groups]
    value = float(np.mean(means)) if all(len(g) for g in groups) else float("nan")
    return LASResult(value, means[0], means[1], int(leaking.sum()), int((~leaking).sum()))


def _percentiles(values: Sequence[float], level: float = 0.95) -> list[float]:
    """The central ``level`` interval of the finite ``values`` (NaN, NaN when there are none)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return [float("nan"), float("nan")]
    alpha = (1 - level) / 2
    return [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))]


def las_bootstrap_ci(
    correct_with: Sequence[bool], correct_without: Sequence[bool], correct_rationale_only: Sequence[bool],
    n_boot: int = 1000, seed: int = 0, level: float = 0.95,
) -> list[float]:
    """Percentile bootstrap interval of LAS (examples resampled); resamples where LAS is undefined are dropped."""
    delta = rq_scores(correct_with, correct_without)
    leaking = leaking_mask(correct_rationale_only)
    _check_lengths(correct_with=delta, correct_rationale_only=leaking)
    if len(delta) == 0:
        return [float("nan"), float("nan")]
    rng = np.random.default_rng(seed)
    samples = (rng.integers(0, len(delta), size=len(delta)) for _ in range(n_boot))
    return _percentiles([_las(delta[idx], leaking[idx]).las for idx in samples], level)


def _defined(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def correctness(predictions: Sequence[int], choices: Sequence[Sequence[str]], labels: Sequence[str]) -> np.ndarray:
    """``choices[i][predictions[i]] == labels[i]`` per example."""
    return np.array([options[p] == label for p, options, label in zip(predictions, choices, labels, strict=True)])


@dataclass
class SimulatabilityScores:
    """LAS, RQ and the simulator's per-view accuracies for one set of rationales."""

    las: LASResult
    rq: float
    accuracy: dict[str, float]
    correct: dict[str, np.ndarray]

    @classmethod
    def from_correctness(cls, correct: Mapping[str, np.ndarray]) -> SimulatabilityScores:
        """Scores from the correctness of the three views (``x_r``, ``x``, ``r``)."""
        missing = [view for view in SIMULATOR_VIEWS if view not in correct]
        if missing:
            raise ValueError(f"correctness for views {missing} is missing; LAS needs {SIMULATOR_VIEWS}")
        return cls(
            las=las(correct["x_r"], correct["x"], correct["r"]),
            rq=rq(correct["x_r"], correct["x"]),
            accuracy={view: float(np.mean(correct[view])) if len(correct[view]) else float("nan") for view in SIMULATOR_VIEWS},
            correct=dict(correct),
        )


def summarize_simulatability(
    correct: Mapping[str, Mapping[str, np.ndarray]], metric: str, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """The report entry of LAS or RQ over the rationale variants (``correct[variant][view]``).

    Keys: ``absolute`` (the metric per variant), ``separations`` (Gold − variant and their SUM), ``ci95`` (paired
    bootstrap over examples), ``win_rate`` (share of examples whose accuracy gain 1[S(x, r)] − 1[S(x)] is larger with
    the gold rationale than with the variant; the same for LAS and RQ, LAS having no per-example score), ``accuracy``
    (simulator accuracy per variant and view), ``unit`` (``"accuracy"``) and, for LAS, ``groups`` (the leaking /
    non-leaking parts per variant). An undefined value (LAS with an empty group, and every separation that uses it)
    is ``None`` so the entry stays valid JSON.
    """
    if metric not in ("las", "rq"):
        raise ValueError(f"metric must be 'las' or 'rq', got {metric!r}")
    if REFERENCE not in correct:
        raise ValueError(f"simulator correctness for the variant {REFERENCE!r} is missing (got {list(correct)})")
    variants, degraded, keys = list(correct), degraded_variants(correct), separation_keys(correct)
    scores = {variant: SimulatabilityScores.from_correctness(correct[variant]) for variant in variants}
    deltas = {variant: rq_scores(correct[variant]["x_r"], correct[variant]["x"]) for variant in variants}
    leaks = {variant: leaking_mask(correct[variant]["r"]) for variant in variants}

    def value(variant: str, idx: np.ndarray | slice = slice(None)) -> float:
        delta = deltas[variant][idx]
        if metric == "rq":
            return float(delta.mean()) if len(delta) else float("nan")
        return _las(delta, leaks[variant][idx]).las

    def separations(idx: np.ndarray | slice = slice(None)) -> dict[str, float]:
        gold = value(REFERENCE, idx)
        out = {f"gold_minus_{variant}": gold - value(variant, idx) for variant in degraded}
        out["sum"] = sum(out.values())
        return out

    n = len(deltas[REFERENCE])
    rng = np.random.default_rng(seed)
    resampled = [separations(rng.integers(0, n, size=n)) for _ in range(n_boot)] if n else []
    entry: dict[str, Any] = {
        "unit": "accuracy",
        "absolute": {variant: _defined(value(variant)) for variant in variants},
        "separations": {key: _defined(v) for key, v in separations().items()},
        "ci95": {key: [_defined(v) for v in _percentiles([sample[key] for sample in resampled])] for key in keys},
        "accuracy": {variant: scores[variant].accuracy for variant in variants},
    }
    # LAS has no per-example score, so for both metrics the win rate compares the per-example accuracy gains.
    entry["win_rate"] = {variant: float(np.mean(deltas[REFERENCE] > deltas[variant])) for variant in degraded}
    if metric == "las":
        entry["groups"] = {variant: {k: v if isinstance(v, int) else _defined(v)
                                     for k, v in scores[variant].las.to_dict().items()} for variant in variants}
    return entry

