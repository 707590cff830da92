"""Meta-evaluation statistics: does a rationale metric rank gold rationales above each VARSuite family?

VARIF §4-§6 name the meta-evaluation only as "AUC / rank correlation"; this module fixes the choices:

- :func:`auc`: the Mann-Whitney AUC, P(gold score > family score) with ties counted ½ (1 = perfect
  separation, 0.5 = chance, below 0.5 = the metric prefers the adversarial family);
  :func:`auc_ci`: its percentile bootstrap interval, resampling both groups; :func:`auc_difference_ci`: two
  metrics' AUCs compared on the same rows.
- :func:`paired_win_rate` and :func:`mean_separation` (:func:`mean_separation_ci`: its paired interval): the same
  question asked per example, with the gold and the family rationale of one example paired by id.
- :func:`kendall_tau_b`: Kendall τ-b between a method's family means and the expected order of VARIF
  H5 (gold > pseudo-specific > {vacuous, leak, circular}, a tied tier).
- :func:`summarize_method`: all of the above for one method's scores, keyed by family.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import kendalltau, rankdata

#: VARIF H5 (§6) without "LLM concise" (not a VARSuite family): tiers from best to worst; one tier's
#: families are expected to tie.
EXPECTED_ORDER: tuple[tuple[str, ...], ...] = (
    ("gold",), ("pseudo_specific",), ("vacuous", "leak", "circular"))
#: Families reported but left out of the worst-family AUC by default: ``gold_leaky`` carries all of the
#: gold rationale's information, so a metric is not wrong to score it as high as gold.
NOT_WORSE_THAN_GOLD: tuple[str, ...] = ("gold_leaky",)

_BOOT_CELLS = 2_000_000  # bootstrap replicates are ranked in chunks of at most this many scores


def _scores(values: Any, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        raise ValueError(f"{what}: no scores")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what}: {int(np.sum(~np.isfinite(array)))} scores are NaN or infinite")
    return array


def _u_over_n(gold: np.ndarray, family: np.ndarray) -> np.ndarray:
    """AUC of each row: Mann-Whitney U of ``gold`` (mid-ranks, so ties count ½) over ``n1 * n2``."""
    n1, n2 = gold.shape[-1], family.shape[-1]
    ranks = rankdata(np.concatenate([gold, family], axis=-1), axis=-1)
    return (ranks[..., :n1].sum(axis=-1) - n1 * (n1 + 1) / 2) / (n1 * n2)


def auc(gold_scores: Any, family_scores: Any) -> float:
    """Mann-Whitney AUC that a gold rationale scores above a family rationale (ties count ½).

    Equals ``sklearn.metrics.roc_auc_score`` with gold as the positive class, and
    ``scipy.stats.mannwhitneyu(gold, family).statistic / (n1 * n2)``.
    """
    return float(_u_over_n(_scores(gold_scores, "gold"), _scores(family_scores, "family")))


def auc_ci(gold_scores: Any, family_scores: Any, n_boot: int = 1000, seed: int = 0,
           level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of :func:`auc`; both groups are resampled with replacement, independently.

    Args:
        gold_scores, family_scores (`array-like`): the two groups of scores.
        n_boot (`int`, defaults to 1000): bootstrap replicates.
        seed (`int`, defaults to 0): seeds ``numpy.random.default_rng``.
        level (`float`, defaults to 0.95): coverage of the interval.
    """
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"n_boot must be >= 1 and 0 < level < 1; got n_boot={n_boot}, level={level}")
    gold, family = _scores(gold_scores, "gold"), _scores(family_scores, "family")
    rng = np.random.default_rng(seed)
    chunk = max(1, _BOOT_CELLS // (gold.size + family.size))
    values = []
    for start in range(0, n_boot, chunk):
        m = min(chunk, n_boot - start)
        values.append(_u_over_n(gold[rng.integers(gold.size, size=(m, gold.size))],
                                family[rng.integers(family.size, size=(m, family.size))]))
    low, high = np.percentile(np.concatenate(values), [50 * (1 - level), 50 * (1 + level)])
    return float(low), float(high)


def auc_difference_ci(gold_a: Any, family_a: Any, gold_b: Any, family_b: Any, n_boot: int = 1000, seed: int = 0,
                      level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """AUC(metric a) − AUC(metric b) on the same examples, with a percentile bootstrap interval.

    ``gold_a[i]`` and ``gold_b[i]`` score the same gold rationale (likewise the family arrays), so each replicate
    resamples the gold rows and the family rows once and applies the indices to both metrics (a paired comparison:
    the interval excludes 0 when one metric separates this family better on these examples).
    """
    ga, fa, gb, fb = (_scores(v, what) for v, what in ((gold_a, "gold a"), (family_a, "family a"),
                                                       (gold_b, "gold b"), (family_b, "family b")))
    if ga.shape != gb.shape or fa.shape != fb.shape:
        raise ValueError("the two metrics must score the same rows: got gold "
                         f"{ga.size} vs {gb.size} and family {fa.size} vs {fb.size}")
    rng = np.random.default_rng(seed)
    chunk = max(1, _BOOT_CELLS // (ga.size + fa.size))
    values = []
    for start in range(0, n_boot, chunk):
        m = min(chunk, n_boot - start)
        gi, fi = rng.integers(ga.size, size=(m, ga.size)), rng.integers(fa.size, size=(m, fa.size))
        values.append(_u_over_n(ga[gi], fa[fi]) - _u_over_n(gb[gi], fb[fi]))
    low, high = np.percentile(np.concatenate(values), [50 * (1 - level), 50 * (1 + level)])
    return float(auc(ga, fa) - auc(gb, fb)), (float(low), float(high))


def _paired(gold: Any, family: Any) -> tuple[np.ndarray, np.ndarray]:
    gold, family = _scores(gold, "gold"), _scores(family, "family")
    if gold.shape != family.shape:
        raise ValueError(f"paired scores need equal lengths; got gold {gold.size} and family {family.size}")
    return gold, family


def paired_win_rate(gold: Any, family: Any) -> float:
    """Share of examples whose gold rationale scores above the same example's family rationale.

    ``gold[i]`` and ``family[i]`` must belong to the same example. A tie counts ½, so a metric that gives
    every rationale the same score has a win rate of 0.5, not 0.
    """
    gold, family = _paired(gold, family)
    return float(np.mean((gold > family) + 0.5 * (gold == family)))


def mean_separation(gold: Any, family: Any) -> float:
    """Mean paired difference ``gold[i] - family[i]``, in the metric's own units (> 0: gold scores higher)."""
    gold, family = _paired(gold, family)
    return float(np.mean(gold - family))


def mean_separation_ci(gold: Any, family: Any, n_boot: int = 1000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of :func:`mean_separation`, resampling the examples (each gold rationale stays
    with its own family rationale: a paired interval)."""
    gold, family = _paired(gold, family)
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"n_boot must be >= 1 and 0 < level < 1; got n_boot={n_boot}, level={level}")
    differences = gold - family
    rng = np.random.default_rng(seed)
    chunk = max(1, _BOOT_CELLS // differences.size)
    values = []
    for start in range(0, n_boot, chunk):
        m = min(chunk, n_boot - start)
        values.append(differences[rng.integers(differences.size, size=(m, differences.size))].mean(axis=1))
    low, high = np.percentile(np.concatenate(values), [50 * (1 - level), 50 * (1 + level)])
    return float(low), float(high)


def _tiers(expected_order: Sequence[str | Sequence[str]]) -> list[tuple[str, ...]]:
    tiers = [(tier,) if isinstance(tier, str) else tuple(tier) for tier in expected_order]
    names = [name for tier in tiers for name in tier]
    if len(names) != len(set(names)):
        raise ValueError(f"expected_order names a family twice: {expected_order}")
    return tiers


def kendall_tau_b(metric_family_means: Mapping[str, float],
                  expected_order: Sequence[str | Sequence[str]] = EXPECTED_ORDER) -> float:
    """Kendall τ-b between a metric's family means and the expected order (VARIF H5, §6).

    ``expected_order`` lists tiers from best to worst; a tier is a family name or a collection of names
    expected to tie (τ-b corrects for those ties). Only families present in both arguments count; at
    least two are needed. Returns NaN when either side is constant (e.g. all means equal).
    """
    tiers = _tiers(expected_order)
    names = [name for tier in tiers for name in tier if name in metric_family_means]
    if len(names) < 2:
        raise ValueError(f"need at least two families of the expected order {tiers}; "
                         f"got {sorted(metric_family_means)}")
    expected = [-next(k for k, tier in enumerate(tiers) if name in tier) for name in names]
    means = [float(metric_family_means[name]) for name in names]
    return float(kendalltau(means, expected, variant="b").statistic)


def _by_id(scores: Any, ids: Sequence[Any] | None, family: str) -> dict[str, float]:
    values = _scores(scores, family)
    keys = [str(i) for i in (range(values.size) if ids is None else ids)]
    if len(keys) != values.size:
        raise ValueError(f"family {family!r}: {values.size} scores but {len(keys)} ids")
    if len(set(keys)) != len(keys):
        raise ValueError(f"family {family!r}: duplicate example ids")
    return dict(zip(keys, values.tolist(), strict=True))


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def summarize_method(scores_by_family: Mapping[str, Any],
                     ids_by_family: Mapping[str, Sequence[Any]] | None = None,
                     n_boot: int = 1000, seed: int = 0, *, reference: str = "gold",
                     expected_order: Sequence[str | Sequence[str]] = EXPECTED_ORDER,
                     worst_over: Sequence[str] | None = None) -> dict[str, Any]:
    """One method's meta-evaluation over the VARSuite families (VARIF §4-§6).

    Each family is compared with ``reference`` on the examples both have, paired by example id (a
    family may skip examples, e.g. ``drift``): :func:`auc` and :func:`auc_ci` on those examples' scores,
    :func:`paired_win_rate` and :func:`mean_separation` on the pairs.

    Args:
        scores_by_family (`Mapping[str, array-like]`): family → one score per row; must hold ``reference``.
        ids_by_family (`Mapping[str, Sequence]`, *optional*): family → the example id of each score;
            without it, scores are paired by position.
        n_boot (`int`, defaults to 1000): bootstrap replicates of each AUC interval.
        seed (`int`, defaults to 0): seeds every bootstrap.
        reference (`str`, defaults to ``"gold"``): the family every other is compared with.
        expected_order (defaults to :data:`EXPECTED_ORDER`): tiers for :func:`kendall_tau_b`.
        worst_over (`Sequence[str]`, *optional*): families for the worst-family AUC; defaults to every
            family but ``reference`` and :data:`NOT_WORSE_THAN_GOLD`.

    Returns:
        ``{"reference", "families": {family: {"auc", "ci95", "win_rate", "mean_separation", "separation_ci95",
        "n"}},
        "family_means", "worst_family", "worst_auc", "tau_b"}``. ``n`` counts the paired examples; a
        family sharing none with the reference has ``None`` statistics, as has ``tau_b`` when fewer than
        two families of the expected order are scored or a side is constant.
    """
    if reference not in scores_by_family:
        raise ValueError(f"scores_by_family has no reference family {reference!r}; "
                         f"it has {sorted(scores_by_family)}")
    ids_by_family = ids_by_family or {}
    if ids_by_family and set(ids_by_family) != set(scores_by_family):
        raise ValueError(f"ids_by_family covers {sorted(ids_by_family)}; "
                         f"scores_by_family covers {sorted(scores_by_family)}")
    keyed = {name: _by_id(scores, ids_by_family.get(name), name) for name, scores in scores_by_family.items()}
    gold = keyed[reference]
    families: dict[str, dict[str, Any]] = {}
    for name, scores in keyed.items():
        if name == reference:
            continue
        common = [i for i in gold if i in scores]
        if not common:
            families[name] = {"auc": None, "ci95": None, "win_rate": None, "mean_separation": None,
                              "separation_ci95": None, "n": 0}
            continue
        g, f = np.array([gold[i] for i in common]), np.array([scores[i] for i in common])
        families[name] = {"auc": auc(g, f), "ci95": list(auc_ci(g, f, n_boot=n_boot, seed=seed)),
                          "win_rate": paired_win_rate(g, f), "mean_separation": mean_separation(g, f),
                          "separation_ci95": list(mean_separation_ci(g, f, n_boot=n_boot, seed=seed)),
                          "n": len(common)}
    means = {name: float(np.mean(list(scores.values()))) for name, scores in keyed.items()}
    if worst_over is None:
        worst_over = [name for name in families if name not in NOT_WORSE_THAN_GOLD]
    pool = list(worst_over)
    unknown = [name for name in pool if name not in families]
    if unknown:
        raise ValueError(f"worst_over names families without scores: {unknown}")
    scored = [name for name in pool if families[name]["auc"] is not None]
    worst = min(scored, key=lambda name: families[name]["auc"]) if scored else None
    tiers = _tiers(expected_order)
    ranked = [name for tier in tiers for name in tier if name in means]
    tau = kendall_tau_b(means, tiers) if len(ranked) >= 2 else None
    return {"reference": reference, "families": families, "family_means": means, "worst_family": worst,
            "worst_auc": families[worst]["auc"] if worst else None, "tau_b": _finite(tau)}
