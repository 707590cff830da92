"""FRAME's meta-metrics for rationale-label-consistency (RLC) metrics (Chan et al., 2022; ``papers/frame.txt``).

FRAME asks whether an RLC metric is reliable through three axioms (§3):

1. a reference rationale that states the predicted label (r = ŷ) should score highest — Φ(ŷ) and
   MAR = mean_{r ∈ {r̂, ṙ, ẏ}} 𝟙_H(ŷ|x,ŷ) / 𝟙_H(ŷ|x,r) (§3.2);
2. the score should not move under an equivalent perturbation Ψe and should move under a contrastive one Ψc —
   ASD(a, b) = |Φ(a) − Φ(b)| with a = ŷ, b = Ψ(ŷ) (§3.2, appendix A.1);
3. it should be stable as the task model F varies — SCV = σ(Φ(ŷ)) / μ(Φ(ŷ)) across F trained on less data, on
   noisier labels and at other sizes, and the ASD between F's correct and incorrect predictions (§3.2).

Φ(r) = 𝟙_H(ŷ|x,r) − 𝟙_G(ŷ|x) (§2.2) with accuracies on a 0-100 scale. :func:`nrg` summarises an axiom's
meta-metrics across the RLC metrics compared (Normalized Relative Gain, §4). This module holds the arithmetic,
the perturbations and the label noise; it imports numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

Direction = Literal["max", "min"]

#: Each axiom's meta-metrics and whether higher ("max") or lower ("min") is better (tables 1-3).
AXIOM_META_METRICS: dict[str, dict[str, Direction]] = {
    "axiom1": {"phi_reference": "max", "mar": "max"},
    "axiom2": {"asd_equivalent": "min", "asd_contrastive": "max"},
    "axiom3": {"scv_train_size": "min", "scv_label_noise": "min", "scv_capacity": "min", "asd_subpopulation": "min"},
}

#: Ψe for closed-set NLI (A.1): per class, sentences that restate the label without reading x. The paper gives one
#: example ("The hypothesis conflicts with the premise."); these are ours, 6 per class.
NLI_PARAPHRASES: dict[str, tuple[str, ...]] = {
    "entailment": (
        "The premise implies the hypothesis.",
        "If the premise is true, the hypothesis is true as well.",
        "The hypothesis follows from the premise.",
        "The premise entails the hypothesis.",
        "Given the premise, the hypothesis must hold.",
        "The hypothesis is supported by the premise.",
    ),
    "neutral": (
        "The premise neither supports nor refutes the hypothesis.",
        "The hypothesis may or may not be true given the premise.",
        "The premise does not settle whether the hypothesis holds.",
        "The hypothesis is not determined by the premise.",
        "From the premise alone one cannot tell if the hypothesis is true.",
        "The premise and the hypothesis are compatible but unrelated.",
    ),
    "contradiction": (
        "The hypothesis conflicts with the premise.",
        "If the premise is true, the hypothesis is false.",
        "The premise rules out the hypothesis.",
        "The premise contradicts the hypothesis.",
        "The hypothesis cannot be true given the premise.",
        "The premise and the hypothesis cannot both hold.",
    ),
}

#: Ψe for multi-choice QA (A.1): generic affirmations prepended to the rationale. The paper's example is the first.
QA_PREFIXES: tuple[str, ...] = (
    "The following rationale is faithful: ",
    "Here is a sound explanation: ",
    "The reasoning below is correct: ",
    "This explanation holds: ",
    "What follows is a valid justification: ",
    "The answer is justified as follows: ",
)


def accuracy(predictions: Sequence, targets: Sequence) -> float:
    """𝟙(b|a) of §2.2: the share of predictions equal to their targets, in percent (0-100)."""
    if len(predictions) != len(targets):
        raise ValueError(f"got {len(predictions)} predictions for {len(targets)} targets")
    if not predictions:
        raise ValueError("accuracy of no predictions")
    return 100.0 * float(np.mean([p == t for p, t in zip(predictions, targets, strict=True)]))


def phi(treatment_accuracy: float, control_accuracy: float) -> float:
    """Φ(r) = 𝟙_H(ŷ|x,r) − 𝟙_G(ŷ|x) (§2.2): how much the rationale raises the simulator's agreement with ŷ."""
    return float(treatment_accuracy - control_accuracy)


def mar(reference_accuracy: float, rationale_accuracies: Mapping[str, float] | Sequence[float]) -> float:
    """Mean accuracy ratio (§3.2): the mean over rationales r of 𝟙_H(ŷ|x,ŷ) / 𝟙_H(ŷ|x,r); above 1 when the reference
    rationale ŷ lets H agree with ŷ more often than r does. A rationale with 0 accuracy makes the ratio infinite."""
    values = list(rationale_accuracies.values()) if isinstance(rationale_accuracies, Mapping) else list(rationale_accuracies)
    if not values:
        raise ValueError("MAR needs at least one rationale's accuracy")
    with np.errstate(divide="ignore"):
        return float(np.mean([reference_accuracy / value if value else np.inf for value in values]))


def asd(phi_a: float, phi_b: float) -> float:
    """Absolute score difference |Φ(a) − Φ(b)| (§3.2)."""
    return float(abs(phi_a - phi_b))


def scv(values: Sequence[float], ddof: int = 0) -> float:
    """Score coefficient of variation σ/μ of Φ(ŷ) across task models (§3.2, axiom 3). The paper does not say which
    σ; the population one (``ddof=0``) is the default. μ ≤ 0 makes the ratio meaningless: it raises."""
    array = np.asarray(values, dtype=float)
    if array.size < 2:
        raise ValueError(f"SCV needs Φ(ŷ) of at least two task models, got {array.size}")
    mean = float(array.mean())
    if mean <= 0:
        raise ValueError(f"SCV = σ/μ is undefined for a mean Φ(ŷ) of {mean:.4g} ≤ 0")
    return float(array.std(ddof=ddof) / mean)


def nrg(scores: Mapping[str, Mapping[str, float]], directions: Mapping[str, Direction]) -> dict[str, float]:
    """Normalized Relative Gain (§4; Chan et al., 2022): each meta-metric is min-max normalised across the RLC
    metrics (1 = best, flipped where lower is better) and each metric's NRG is the mean of its normalised values.

    ``scores`` maps RLC metric → {meta-metric: value}; ``directions`` names the meta-metrics used ("max" or "min").
    Where every metric has the same value, each gets 1 (all are best).
    """
    metrics = list(scores)
    if len(metrics) < 2:
        raise ValueError(f"NRG compares RLC metrics; got {metrics}")
    normalised: dict[str, list[float]] = {metric: [] for metric in metrics}
    for meta_metric, direction in directions.items():
        if direction not in ("max", "min"):
            raise ValueError(f"direction of {meta_metric!r} must be 'max' or 'min', got {direction!r}")
        missing = [metric for metric in metrics if meta_metric not in scores[metric]]
        if missing:
            raise ValueError(f"meta-metric {meta_metric!r} is missing for {missing}")
        values = np.array([scores[metric][meta_metric] for metric in metrics], dtype=float)
        low, high = values.min(), values.max()
        gains = np.ones_like(values) if high == low else (values - low) / (high - low)
        if direction == "min":
            gains = 1.0 - gains if high != low else gains
        for metric, gain in zip(metrics, gains, strict=True):
            normalised[metric].append(float(gain))
    return {metric: float(np.mean(values)) for metric, values in normalised.items()}


def defined_nrg(meta: Mapping[str, Mapping[str, Any]], directions: Mapping[str, Direction]) -> dict[str, Any]:
    """:func:`nrg` across the metrics of ``meta`` (metric → {meta-metric: value}) over the meta-metrics of
    ``directions`` that every metric defines (a finite number); the others are left out (``dropped``). ``values`` is
    None when fewer than two metrics or no meta-metric is left."""
    used = {name: d for name, d in directions.items() if all(finite_number(meta[m].get(name)) for m in meta)}
    dropped = [name for name in directions if name not in used]
    if len(meta) < 2 or not used:
        return {"values": None, "used": list(used), "dropped": dropped}
    return {"values": nrg({m: {name: float(meta[m][name]) for name in used} for m in meta}, used),
            "used": list(used), "dropped": dropped}


def equivalent_perturbation(label: str, task: str, rng: np.random.Generator, rationale: str | None = None) -> str:
    """Ψe (A.1): for NLI a sentence restating ``label`` (:data:`NLI_PARAPHRASES`); for QA ``rationale`` (default: the
    label itself, the reference rationale) behind a generic affirmation (:data:`QA_PREFIXES`)."""
    if task == "nli":
        key = label.strip().lower()
        if key not in NLI_PARAPHRASES:
            raise ValueError(f"no paraphrases for the NLI label {label!r}; expected one of {sorted(NLI_PARAPHRASES)}")
        options = NLI_PARAPHRASES[key]
        return options[int(rng.integers(len(options)))]
    return QA_PREFIXES[int(rng.integers(len(QA_PREFIXES)))] + (label if rationale is None else rationale)


def contrastive_perturbation(label: str, choices: Sequence[str], rng: np.random.Generator) -> str:
    """Ψc (A.1): one of the other m − 1 classes (or answer choices), uniformly; never ``label`` itself."""
    others = [choice for choice in dict.fromkeys(choices) if choice != label]
    if not others:
        raise ValueError(f"label {label!r} has no other class among {list(choices)} to swap in")
    return others[int(rng.integers(len(others)))]


def noisy_labels(labels: Sequence[str], choices: Sequence[Sequence[str]], share: float,
                 rng: np.random.Generator) -> tuple[list[str], list[int]]:
    """Axiom 3 (B): the labels with ``round(share · n)`` of them, drawn without replacement, replaced by another of
    their choices (:func:`contrastive_perturbation`). The paper does not say how labels were noised; this flips
    exactly the stated share. Returns the labels and the flipped positions."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"the share of noisy labels must be in [0, 1], got {share}")
    n_flip = int(round(share * len(labels)))
    flipped = sorted(rng.choice(len(labels), size=n_flip, replace=False).tolist()) if n_flip else []
    noisy = list(labels)
    for i in flipped:
        noisy[i] = contrastive_perturbation(labels[i], choices[i], rng)
    return noisy, flipped


#: Axiom 3's variation factors (A)-(C): meta-metric ``scv_<factor>``.
FACTORS: tuple[str, ...] = ("train_size", "label_noise", "capacity")

#: Kinds of the notes a meta-metric cell can carry, and their marks in the tables.
NOTE_MARKS: dict[str, str] = {"abs_mean": "†", "no_variation": "‡", "undefined": ""}


def cell_note(kind: str, text: str) -> dict[str, str]:
    return {"kind": kind, "text": text}


def scv_value(values: Sequence[float], denominator: str = "abs") -> tuple[float | None, dict[str, str] | None]:
    """SCV of Φ(ŷ) across settings with :func:`~larev_hf.frame.meta_metrics.scv`, and a note (``{"kind", "text"}``):
    ``(None, undefined)`` for fewer than two settings, μ = 0 with σ > 0, or μ < 0 with ``denominator="signed"``;
    with ``"abs"`` a negative μ gives σ/|μ| (the SCV of −Φ; ``abs_mean``). Settings that all give the same
    Φ(ŷ) ≤ 0 have SCV 0 (``no_variation``: σ = 0, where σ/μ would be 0/0 or 0/negative)."""
    values = [float(v) for v in values]
    mean = float(np.mean(values)) if values else 0.0
    if len(values) >= 2 and max(values) == min(values) and mean <= 0:
        return 0.0, cell_note("no_variation", f"every setting gives Φ(ŷ) = {mean:.4g}: σ = 0, SCV taken as 0")
    try:
        if denominator == "abs" and len(values) >= 2 and mean < 0:
            return scv([-v for v in values]), cell_note("abs_mean", f"μ(Φ(ŷ)) = {mean:.4g} < 0: σ/|μ|")
        return scv(values), None
    except ValueError as error:
        return None, cell_note("undefined", str(error))


def finite_number(value: Any) -> bool:
    """Whether ``value`` is a finite int or float (not None, NaN or ±inf)."""
    return value is not None and isinstance(value, int | float) and math.isfinite(value)


def seed_summary(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean ± population std over the seeds where the value is defined."""
    kept = [float(v) for v in values if finite_number(v)]
    return {"mean": float(np.mean(kept)) if kept else None, "std": float(np.std(kept)) if kept else None,
            "n": len(kept), "values": [v if finite_number(v) else None for v in values]}


# ---------------------------------------------------------------------- the tables' vocabulary
#: Display names of FRAME's four RLC metrics (§3.3).
METRIC_NAMES: dict[str, str] = {"f_gold": "F-GOLD", "gh_gold": "GH-GOLD", "gh_pred": "GH-PRED",
                                "np_gh_pred": "NP-GH-PRED"}
#: The rationales Φ is measured for: the reference ŷ, the non-reference r̂, ṙ, ẏ (axiom 1) and Ψe(ŷ), Ψc(ŷ) (axiom 2).
RATIONALES: tuple[str, ...] = ("y_hat", "r_hat", "r_dot", "y_dot", "psi_e", "psi_c")
RATIONALE_NAMES: dict[str, str] = {"y_hat": "ŷ", "r_hat": "r̂", "r_dot": "ṙ", "y_dot": "ẏ", "psi_e": "Ψe(ŷ)",
                                   "psi_c": "Ψc(ŷ)"}
#: MAR's non-reference rationales R_NR (§3.2).
NON_REFERENCE: tuple[str, ...] = ("r_hat", "r_dot", "y_dot")
#: The columns of tables 1-3 (the meta-metrics of :data:`~larev_hf.frame.meta_metrics.AXIOM_META_METRICS`, in order).
TABLE_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "axiom1": [("phi_reference", "Φ(ŷ) (↑)"), ("mar", "MAR (↑)")],
    "axiom2": [("asd_equivalent", "Equivalent ASD (↓)"), ("asd_contrastive", "Contrastive ASD (↑)")],
    "axiom3": [("scv_train_size", "% Train SCV (↓)"), ("scv_label_noise", "% Noisy Train SCV (↓)"),
               ("scv_capacity", "Capacity SCV (↓)"), ("asd_subpopulation", "Subpop. ASD (↓)")],
}
AXIOM_TITLES: dict[str, str] = {"axiom1": "Axiom 1: reference rationale upper bound",
                                "axiom2": "Axiom 2: rationale perturbation sensitivity",
                                "axiom3": "Axiom 3: robustness to variation in F"}


# ---------------------------------------------------------------------- the paper's printed tables
# FRAME's printed means (papers/frame.txt, tables 1-3), rows in the order F-GOLD, GH-GOLD, GH-PRED, NP-GH-PRED: table 1
# (Φ(ŷ), MAR), table 2 (equivalent, contrastive ASD), table 3 (SCV of train size, label noise, capacity; subpopulation
# ASD), and the NRG column each table prints.
_TABLE1 = {
    "e-SNLI": ([(-7.27, 1.45), (-1.70, 1.01), (9.10, 1.01), (54.77, 1.15)], [0.50, 0.04, 0.13, 0.66]),
    "CoS-E v1.0": ([(-34.39, 0.85), (17.93, 1.33), (18.60, 1.33), (23.83, 2.04)], [0.00, 0.65, 0.66, 1.00]),
    "CoS-E v1.11": ([(-35.63, 0.83), (21.16, 1.47), (22.17, 1.46), (23.48, 2.26)], [0.00, 0.70, 0.71, 1.00]),
}
_TABLE2 = {
    "e-SNLI": ([(11.80, 12.50), (6.10, 40.53), (0.00, 5.23), (0.07, 40.83)], [0.10, 0.74, 0.50, 1.00]),
    "CoS-E v1.0": ([(5.61, 26.91), (0.67, 83.09), (0.00, 15.09), (0.74, 26.21)], [0.09, 0.94, 0.50, 0.52]),
    "CoS-E v1.11": ([(4.04, 26.13), (0.96, 84.14), (0.00, 21.57), (1.42, 25.55)], [0.04, 0.93, 0.50, 0.36]),
}
_TABLE3 = {
    "e-SNLI": ([(0.27, 0.34, 0.81, 6.81), (0.14, 0.71, 0.65, 20.18), (0.11, 0.21, 0.16, 32.97),
                (0.02, 0.03, 0.04, 1.85)], [0.27, 0.26, 0.69, 1.00]),
    "CoS-E v1.0": ([(0.13, 0.21, 0.55, 23.41), (0.25, 0.40, 0.43, 27.56), (0.32, 0.22, 0.08, 23.20),
                    (0.08, 0.10, 0.05, 5.37)], [0.71, 0.15, 0.30, 1.00]),
    "CoS-E v1.11": ([(0.14, 0.16, 0.63, 25.48), (0.23, 0.32, 0.40, 22.61), (0.05, 0.22, 0.32, 25.47),
                     (0.05, 0.07, 0.09, 6.28)], [0.57, 0.00, 0.70, 1.00]),
}
#: table → dataset → (rows of means per RLC metric, printed NRG per RLC metric).
PAPER_TABLES: dict[str, dict[str, tuple[list[tuple[float, ...]], list[float]]]] = {
    "axiom1": _TABLE1, "axiom2": _TABLE2, "axiom3": _TABLE3}
#: The paper's dataset whose tables a run on ``--dataset`` is compared with (our CoS-E is v1.0: three choices).
PAPER_DATASETS: dict[str, str] = {"esnli": "e-SNLI", "cose": "CoS-E v1.0"}
