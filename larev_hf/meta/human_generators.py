"""RoRA's human-study figures (Jiang et al., ACL 2024, §4.1, tables 2 and 3): per generator and per rationale.

On a judged file whose explanations come from several generators (a ``source`` column: GPT-4, GPT-3.5, Llama2-7B,
Flan-T5 on StrategyQA), people's mean judgment orders the generators; a metric is informative there only if it orders
them the same way *and* adds to what rationale length already tells (the larger models write longer rationales).
Per metric:

- table 2: the mean score per generator beside people's mean, and Kendall τ between the two orders
  (``scipy.stats.kendalltau`` over the generators' means), with its question-bootstrap interval and the share of
  bootstrap replicates in which the metric orders the generators exactly as people do (τ = 1): how firmly the
  order holds, where four generators leave τ only seven values;
- table 3: Spearman and Pearson with people per rationale, with instance-bootstrap intervals;
- the rank partial correlation with people given length: Spearman ρ of the two residuals after regressing each
  variable's ranks on length's ranks — zero for a metric that only counts words — with its interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import kendalltau, pearsonr, rankdata

from larev_hf.meta.human_stats import instance_bootstrap_indices, percentile_interval, spearman

#: The column whose ranks the partial correlation holds fixed.
CONTROL = "length"


def _constant(values: np.ndarray) -> bool:
    return bool(np.all(values == values[0]))


def pearson(scores: Any, human: Any) -> float:
    """Pearson r (NaN when either side is constant)."""
    x, y = np.asarray(scores, dtype=float), np.asarray(human, dtype=float)
    return float("nan") if _constant(x) or _constant(y) else float(pearsonr(x, y)[0])


def partial_spearman(scores: Any, human: Any, control: Any) -> float:
    """Spearman ρ of ``scores`` and ``human`` with ``control`` held fixed: the Pearson correlation of the residuals of
    each variable's ranks after a least-squares line on ``control``'s ranks; NaN when either is a monotone function of
    ``control`` (nothing is left once it is held fixed)."""
    ranks = [rankdata(np.asarray(v, dtype=float)) for v in (scores, human, control)]
    z = np.column_stack([np.ones(len(ranks[2])), ranks[2]])
    residuals = [r - z @ np.linalg.lstsq(z, r, rcond=None)[0] for r in ranks[:2]]
    if any(np.max(np.abs(r)) < 1e-9 * len(r) for r in residuals):  # a variable that is a function of the control
        return float("nan")
    return pearson(*residuals)


def _interval(statistic, columns: Sequence[np.ndarray], draws: list[np.ndarray]) -> dict[str, Any]:
    value = statistic(*columns)
    replicates = np.array([statistic(*(c[rows] for c in columns)) for rows in draws])
    return {"value": None if not np.isfinite(value) else float(value), "ci95": percentile_interval(replicates)}


def generator_tau(values: np.ndarray, human: np.ndarray, sources: np.ndarray) -> float:
    """Kendall τ between people's and a metric's mean per generator (NaN when either order is all ties)."""
    names = sorted(set(sources.tolist()))
    people = [float(np.mean(human[sources == s])) for s in names]
    means = [float(np.mean(values[sources == s])) for s in names]
    tau = kendalltau(people, means).statistic
    return float(tau) if np.isfinite(tau) else float("nan")


def generator_figures(columns: Mapping[str, np.ndarray], human: np.ndarray, sources: Sequence[str],
                      instances: Sequence[str], n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Tables 2 and 3 of RoRA for every column (see the module docstring); generators in people's order, best first.
    Needs at least two generators."""
    sources = np.asarray(sources)
    names = sorted(set(sources.tolist()), key=lambda s: -float(np.mean(human[sources == s])))
    people = {s: float(np.mean(human[sources == s])) for s in names}
    draws = instance_bootstrap_indices(instances, n_boot=n_boot, seed=seed)
    control = columns.get(CONTROL)
    out: dict[str, Any] = {"generators": names, "people": people, "metrics": {}}
    for name, values in columns.items():
        values = np.asarray(values, dtype=float)
        means = {s: float(np.mean(values[sources == s])) for s in names}
        tau = generator_tau(values, human, sources)
        replicates = np.array([generator_tau(values[rows], human[rows], sources[rows]) for rows in draws])
        entry = {"means": means, "kendall_tau": None if not np.isfinite(tau) else float(tau),
                 "kendall_tau_ci95": percentile_interval(replicates),
                 "share_tau_1": float(np.mean(replicates >= 1.0 - 1e-9)),
                 "spearman": _interval(spearman, [values, human], draws),
                 "pearson": _interval(pearson, [values, human], draws)}
        if control is not None and name != CONTROL:
            entry["partial_spearman_given_length"] = _interval(partial_spearman, [values, human, control], draws)
        out["metrics"][name] = entry
    return out
