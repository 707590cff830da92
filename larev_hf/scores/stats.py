"""Summaries of pointwise scores over rationale variants, as in the thesis's tables.

- absolute: the corpus score of each variant (thesis tables 5.3 / 5.9);
- separations: Gold − variant, and their SUM (tables 5.4 / 5.10);
- ci95: paired bootstrap 95% intervals of each of those (resampling examples);
- win_rate: the share of examples whose Gold score beats the variant's.

The variants are an open set: any mapping ``{variant: scores}`` that holds ``gold`` is summarised, every other
variant compared with Gold. :data:`VARIANTS` is the thesis's default set (§5.2.1); more come from the adversarial
suite or a user. SUM adds up every Gold − variant separation.

Over several evaluator seeds (``--seeds``; docs/reliability.md): :func:`seed_summary` gives each separation per seed,
across seeds and with :func:`two_level_bootstrap`'s interval (seeds and examples resampled), and
:func:`ensemble_scores` the ensemble evaluator's scores, so a figure survives retraining.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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


def two_level_bootstrap(table: Any, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> list[float]:
    """Percentile interval of ``table.mean()`` for a ``[seeds, examples]`` table, resampling seeds, then examples.

    Replicate b draws seed rows ``S_b`` (K with replacement) and example columns ``E_b`` (n with replacement) and takes
    ``table[S_b][:, E_b].mean()``. With one seed it is the ordinary example bootstrap.
    """
    values = np.asarray(table, dtype=np.float64)
    if values.ndim != 2 or values.size == 0:
        raise ValueError(f"expected a non-empty [seeds, examples] table, got shape {values.shape}")
    k, n = values.shape
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for b in range(n_boot):
        rows = rng.integers(0, k, size=k)
        columns = rng.integers(0, n, size=n)
        means[b] = values[np.ix_(rows, columns)].mean()
    alpha = (1 - level) / 2
    return [float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))]


def ensemble_scores(per_seed: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """The mean over seeds of each variant's pointwise scores (``per_seed[k][variant]``: one score per example)."""
    if not per_seed:
        raise ValueError("no seeds to combine")
    variants = list(per_seed[0])
    return {v: np.mean([np.asarray(scores[v], dtype=np.float64) for scores in per_seed], axis=0) for v in variants}


def seed_summary(per_seed_scores: Mapping[int, Mapping[str, Any]], per_seed_ci: Mapping[int, Mapping[str, Any]],
                 n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The across-seed entry of one method (see the module docstring).

    Args:
        per_seed_scores: seed → variant → pointwise scores on the shared test examples (``gold`` included).
        per_seed_ci: seed → separation key → that seed's own 95% interval (its report's ``ci95``).
        n_boot, seed: two-level bootstrap replicates and their seed.

    Returns:
        ``{"seeds": [...], "separations": {key: {"per_seed": {seed: value}, "mean", "sd", "ci95", "single_seed_ci_width",
        "holds", "of", "established"}}}`` — ``single_seed_ci_width`` is the mean width of the seeds' own intervals, to
        set against ``sd``.
    """
    seeds = list(per_seed_scores)
    tables = {}
    for s in seeds:
        for key, diffs in separation_matrix(per_seed_scores[s]).items():
            tables.setdefault(key, []).append(diffs)
    out: dict[str, Any] = {}
    for key, rows in tables.items():
        table = np.stack(rows)
        values = table.mean(axis=1)
        own = [per_seed_ci[s].get(key) for s in seeds]
        holds = sum(1 for ci in own if ci is not None and ci[0] > 0)
        interval = two_level_bootstrap(table, n_boot=n_boot, seed=seed)
        widths = [ci[1] - ci[0] for ci in own if ci is not None]
        out[key] = {"per_seed": {str(s): float(v) for s, v in zip(seeds, values, strict=True)},
                    "mean": float(values.mean()), "sd": float(values.std(ddof=1)) if len(seeds) > 1 else 0.0,
                    "ci95": interval, "single_seed_ci_width": float(np.mean(widths)) if widths else None,
                    "holds": holds, "of": len(seeds), "established": bool(interval[0] > 0 and holds == len(seeds))}
    return {"seeds": [int(s) for s in seeds], "separations": out}
