"""Figures that survive retraining: a run's separations over several evaluator seeds (docs/reliability.md).

A single-seed interval covers test sampling only; the evaluator's own training randomness (initialisation, batch
order, dropout) moves LAREV's headline figure by more than that interval's width (measured: docs/reports.md, "Reading
seed intervals (`--seeds`)"). With K seeds of every trained model scored on the same
test examples, each separation d (a per-example Gold − variant difference) forms a K × n table ``D[seed, example]``:

- **per seed**: ``mean(D[k])`` and that seed's own bootstrap interval;
- **across seeds**: the mean of the seeds' values and their standard deviation (ddof 1);
- :func:`two_level_bootstrap`: an interval that covers both sources — each replicate draws K seeds with replacement,
  then n examples with replacement (the same examples for every drawn seed: the test set is shared), and takes the
  mean of ``D`` over the drawn cells;
- **holds in k/K seeds**: seeds whose own interval's lower bound is above 0; a separation is **established** only
  when the two-level lower bound is above 0 *and* it holds in every seed.

:func:`ensemble_scores` is the ensemble evaluator's pointwise score: the mean over seeds of each seed's pointwise score
(not of probabilities: a pointwise score is a difference of two log-probabilities, and averaging log-ratios keeps the
metric's unit and its additivity over variants; docs/reliability.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.scores.stats import separation_matrix


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
