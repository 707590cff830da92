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
simulator (or a human study) can be scored. :func:`train_simulator` / :func:`simulate` provide a seq2seq
simulator on the evaluator backbone, trained on the gold labels.
Hase et al. train one simulator on x, r and (x, r) by dropping parts of the input at random; ours sees every
view of every training example (deterministic). Pass ``labels`` (e.g. a task model's predictions ŷ) to
simulate those instead of the gold labels, as Hase et al.'s original LAS does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.io import DataError, where
from larev_hf.modeling.scoring import predict_choices
from larev_hf.rora.templates import RORA_FORMAT, task_text
from larev_hf.scores.stats import DEGRADED, SEPARATIONS, VARIANTS
from larev_hf.training.seq2seq import TrainSettings, train_seq2seq

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


# ---------------------------------------------------------------------------------------------- simulators
def simulator_input(record: Mapping[str, Any], rationale: str, view: str) -> str:
    """Encoder text of one simulator view: ``"{x} rationale: {r}"`` (x_r), ``"{x} rationale:"`` (x) or
    ``"rationale: {r}"`` (r); x is :func:`larev_hf.rora.task_text` (the RoRA evaluators' format)."""
    if view == "x_r":
        return RORA_FORMAT.rationale_input(rationale, task_text(record))
    if view == "x":
        return RORA_FORMAT.baseline_input(task_text(record))
    if view == "r":
        return f"rationale: {rationale.strip()}".strip()
    raise ValueError(f"unknown simulator view {view!r}; expected one of {SIMULATOR_VIEWS}")


def _labels(records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None) -> list[str]:
    if labels is None:
        return [r["label"] for r in records]
    if len(labels) != len(records):
        raise ValueError(f"got {len(labels)} labels for {len(records)} records; expected one label per record")
    for record, label in zip(records, labels, strict=True):
        if label not in record["choices"]:
            raise DataError(f"{where(example_id=record.get('id'))}: simulated label {label!r} is not one of its choices "
                            f"{list(record['choices'])}")
    return list(labels)


def train_simulator(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    views: Sequence[str] = SIMULATOR_VIEWS,
    rationales: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> PreTrainedModel:
    """Train a seq2seq simulator on every ``view`` of every record → its label (gold unless ``labels`` is given).

    Args:
        model (`PreTrainedModel`): a fresh seq2seq model (e.g. ``build_model(backbone, tokenizer)``).
        records (`Sequence[Mapping]`): training examples (schema fields).
        output_dir (`str` or `os.PathLike`): where the trained simulator is saved (atomically).
        settings (`TrainSettings`): optimiser settings.
        views (`Sequence[str]`, *optional*, defaults to `SIMULATOR_VIEWS`): which inputs the simulator learns; one
            simulator per view (Wiegreffe et al.'s two models) is ``views=("x_r",)`` and ``views=("x",)``.
        rationales (`Sequence[str]`, *optional*): training rationales (default: each record's ``rationale``).
        labels (`Sequence[str]`, *optional*): the labels to simulate (default: gold).
    """
    unknown = [view for view in views if view not in SIMULATOR_VIEWS]
    if unknown or not views:
        raise ValueError(f"views must be a non-empty subset of {SIMULATOR_VIEWS}, got {list(views)}")
    targets = _labels(records, labels)
    rationales = [r["rationale"] for r in records] if rationales is None else list(rationales)
    sources, outputs = [], []
    for record, rationale, label in zip(records, rationales, targets, strict=True):
        for view in views:
            sources.append(simulator_input(record, rationale, view))
            outputs.append(label)
    return train_seq2seq(model, tokenizer, sources, outputs, output_dir, settings)


def simulate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    rationales: Sequence[str],
    labels: Sequence[str] | None = None,
    views: Sequence[str] = SIMULATOR_VIEWS,
    **predict_kwargs: Any,
) -> dict[str, np.ndarray]:
    """Per-example correctness of the simulator's choice in each view (``predict_choices``, argmax over choices)."""
    targets = _labels(records, labels)
    if len(rationales) != len(records):
        raise ValueError(f"got {len(rationales)} rationales for {len(records)} records; expected one per record")
    choices = [r["choices"] for r in records]
    correct = {}
    for view in views:
        inputs = [simulator_input(r, text, view) for r, text in zip(records, rationales, strict=True)]
        correct[view] = correctness(predict_choices(model, tokenizer, inputs, choices, **predict_kwargs), choices, targets)
    return correct


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


def simulatability(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    rationales: Sequence[str],
    labels: Sequence[str] | None = None,
    **predict_kwargs: Any,
) -> SimulatabilityScores:
    """LAS and RQ of ``rationales`` under a simulator trained on all three views (see :func:`train_simulator`)."""
    return SimulatabilityScores.from_correctness(simulate(model, tokenizer, records, rationales, labels, **predict_kwargs))


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
    missing = [variant for variant in VARIANTS if variant not in correct]
    if missing:
        raise ValueError(f"simulator correctness for variants {missing} is missing; expected all of {VARIANTS}")
    scores = {variant: SimulatabilityScores.from_correctness(correct[variant]) for variant in VARIANTS}
    deltas = {variant: rq_scores(correct[variant]["x_r"], correct[variant]["x"]) for variant in VARIANTS}
    leaks = {variant: leaking_mask(correct[variant]["r"]) for variant in VARIANTS}

    def value(variant: str, idx: np.ndarray | slice = slice(None)) -> float:
        delta = deltas[variant][idx]
        if metric == "rq":
            return float(delta.mean()) if len(delta) else float("nan")
        return _las(delta, leaks[variant][idx]).las

    def separations(idx: np.ndarray | slice = slice(None)) -> dict[str, float]:
        gold = value("gold", idx)
        out = {f"gold_minus_{variant}": gold - value(variant, idx) for variant in DEGRADED}
        out["sum"] = sum(out.values())
        return out

    n = len(deltas["gold"])
    rng = np.random.default_rng(seed)
    resampled = [separations(rng.integers(0, n, size=n)) for _ in range(n_boot)] if n else []
    entry: dict[str, Any] = {
        "unit": "accuracy",
        "absolute": {variant: _defined(value(variant)) for variant in VARIANTS},
        "separations": {key: _defined(v) for key, v in separations().items()},
        "ci95": {key: [_defined(v) for v in _percentiles([sample[key] for sample in resampled])] for key in SEPARATIONS},
        "accuracy": {variant: scores[variant].accuracy for variant in VARIANTS},
    }
    # LAS has no per-example score, so for both metrics the win rate compares the per-example accuracy gains.
    entry["win_rate"] = {variant: float(np.mean(deltas["gold"] > deltas[variant])) for variant in DEGRADED}
    if metric == "las":
        entry["groups"] = {variant: {k: v if isinstance(v, int) else _defined(v)
                                     for k, v in scores[variant].las.to_dict().items()} for variant in VARIANTS}
    return entry
