"""Summaries of pointwise scores over rationale variants, as in the thesis's tables.

- absolute: the corpus score of each variant (thesis tables 5.3 / 5.9);
- separations: Gold − variant, and their SUM (tables 5.4 / 5.10);
- ci95: paired bootstrap 95% intervals of each of those (resampling examples);
- win_rate: the share of examples whose Gold score beats the variant's.

The variants are an open set: any mapping ``{variant: scores}`` that holds ``gold`` is summarised, every other
variant compared with Gold. :data:`VARIANTS` is the thesis's default set (§5.2.1); more come from the adversarial
suite or a user. SUM adds up every Gold − variant separation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

#: The reference variant every other one is compared with.
REFERENCE = "gold"
VARIANTS = ("gold", "gold_leaky", "vacuous", "leaky")
DEGRADED = ("leaky", "gold_leaky", "vacuous")
SEPARATIONS = ("gold_minus_leaky", "gold_minus_gold_leaky", "gold_minus_vacuous", "sum")


def degraded_variants(variants: Iterable[str]) -> tuple[str, ...]:
    """The variants compared with Gold: the thesis's three first (in the tables' order), then any other in given order."""
    names = list(variants)
    if REFERENCE not in names:
        raise ValueError(f"variants {names}: the reference variant {REFERENCE!r} is missing")
    return tuple(v for v in DEGRADED if v in names) + tuple(v for v in names if v not in DEGRADED and v != REFERENCE)


def separation_keys(variants: Iterable[str]) -> tuple[str, ...]:
    """``gold_minus_<variant>`` for every degraded variant, then ``sum``."""
    return (*(f"gold_minus_{v}" for v in degraded_variants(variants)), "sum")


def separation_matrix(scores: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-example Gold − variant differences and their sum."""
    gold = np.asarray(scores[REFERENCE], dtype=np.float64)
    diffs = {f"gold_minus_{variant}": gold - np.asarray(scores[variant], dtype=np.float64)
             for variant in degraded_variants(scores)}
    diffs["sum"] = sum(diffs.values())
    return diffs


def bootstrap_ci(values: np.ndarray, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> list[float]:
    """Percentile bootstrap interval of the mean of ``values`` (examples resampled with replacement)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return [float("nan"), float("nan")]
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    alpha = (1 - level) / 2
    return [float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))]


def summarize_variants(scores: Mapping[str, np.ndarray], n_boot: int = 1000, seed: int = 0) -> dict:
    """The report entry of one method: absolute, separations, ci95 and win_rate (see module docstring)."""
    if REFERENCE not in scores:
        raise ValueError(f"scores for the variant {REFERENCE!r} are missing (got {list(scores)}); every other "
                         "variant is compared with it")
    diffs = separation_matrix(scores)
    point = _separations_and_wins(scores, diffs)
    return {
        "absolute": {variant: float(np.mean(values)) for variant, values in scores.items()},
        "separations": point["separations"],
        "ci95": {key: bootstrap_ci(value, n_boot=n_boot, seed=seed) for key, value in diffs.items()},
        "win_rate": point["win_rate"],
    }


def _separations_and_wins(scores: Mapping[str, np.ndarray], diffs: Mapping[str, np.ndarray],
                          rows: np.ndarray | slice = slice(None)) -> dict[str, dict[str, float]]:
    """Each separation's mean and each degraded variant's gold-win rate over ``rows`` (default: every example)."""
    gold = np.asarray(scores[REFERENCE], dtype=np.float64)[rows]
    return {"separations": {key: float(np.mean(value[rows])) for key, value in diffs.items()},
            "win_rate": {variant: float(np.mean(gold > np.asarray(scores[variant], dtype=np.float64)[rows]))
                         for variant in degraded_variants(scores)}}


def summarize_by_label(scores: Mapping[str, np.ndarray], labels: Iterable[str]) -> dict[str, dict]:
    """Per gold label: the number of examples, each Gold − variant separation's mean and the gold-win rate on that
    label's examples, so a leak that works for one label only (measured: docs/meta.md, "Families") is not hidden in
    the mean over labels."""
    labels = np.asarray(list(labels))
    diffs = separation_matrix(scores)
    return {str(label): {"n": int(np.sum(labels == label)), **_separations_and_wins(scores, diffs, labels == label)}
            for label in dict.fromkeys(labels.tolist())}
