"""Agreement of a rationale metric with human judgments of explanations, with intervals resampled by instance.

A judged file holds several explanations per instance (Wiegreffe et al., 2022: five GPT-3 explanations of each SNLI or
CommonsenseQA instance, each judged acceptable or not by three annotators). Explanations of one instance share the
input, the label and the annotators' frame of reference, so they are not independent draws: every interval here is a
percentile bootstrap that resamples **instances** and keeps each instance's explanations together
(:func:`instance_bootstrap_indices`). The statistics, each "higher = the metric agrees more":

- :func:`spearman` and :func:`kendall`: Spearman ρ and Kendall τ-b of the metric's scores with a human column over
  all explanations (RoRA table 3 reports instance-wise Spearman; ``scipy.stats`` computes both).
- :func:`pairwise_agreement`: within one instance, every pair of explanations the annotators rank differently; the
  share of those pairs the metric orders the same way, a metric tie counting ½ (0.5 = chance; it asks the question a
  user comparing explanations of one input asks, free of between-instance differences in score level).
- :func:`acceptability_auc`: the Mann-Whitney AUC of explanations judged acceptable (human share ≥ ½) against those
  judged unacceptable by every annotator (share 0), ties ½.

:func:`agreement_table` computes all four for several metrics on the same bootstrap resamples, so differences between
two metrics (:func:`difference`) get a paired interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import kendalltau, rankdata, spearmanr

#: The statistics :func:`agreement_table` reports, in table order.
STATISTICS: tuple[str, ...] = ("pairwise", "spearman", "kendall", "auc")
#: Human share at or above which an explanation counts as acceptable, and the share of an unacceptable one.
ACCEPTABLE_AT, UNACCEPTABLE_AT = 0.5, 0.0


def _finite(values: Any, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what}: {int(np.sum(~np.isfinite(array)))} values are NaN or infinite")
    return array


def _nan_if_constant(statistic: float) -> float:
    return float(statistic) if np.isfinite(statistic) else float("nan")


def spearman(scores: Any, human: Any) -> float:
    """Spearman ρ of ``scores`` with ``human`` (``scipy.stats.spearmanr``; NaN when either side is constant)."""
    a, b = _finite(scores, "scores"), _finite(human, "human")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _nan_if_constant(spearmanr(a, b).statistic)


def kendall(scores: Any, human: Any) -> float:
    """Kendall τ-b of ``scores`` with ``human`` (``scipy.stats.kendalltau``; NaN when either side is constant)."""
    a, b = _finite(scores, "scores"), _finite(human, "human")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _nan_if_constant(kendalltau(a, b, variant="b").statistic)


def instance_groups(instance_ids: Sequence[Any]) -> list[np.ndarray]:
    """Row indices of each instance, instances in order of first appearance."""
    groups: dict[Any, list[int]] = {}
    for row, instance in enumerate(instance_ids):
        groups.setdefault(instance, []).append(row)
    return [np.asarray(rows, dtype=np.int64) for rows in groups.values()]


def judged_pairs(instance_ids: Sequence[Any], human: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of explanations of one instance that the annotators rank differently.

    Returns ``(first, second, instance)``: row indices with ``human[first] > human[second]`` and each pair's instance
    number (its index in :func:`instance_groups`).
    """
    values = _finite(human, "human")
    first, second, owner = [], [], []
    for k, rows in enumerate(instance_groups(instance_ids)):
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                a, b = rows[i], rows[j]
                if values[a] == values[b]:
                    continue
                hi, lo = (a, b) if values[a] > values[b] else (b, a)
                first.append(hi), second.append(lo), owner.append(k)
    as_array = [np.asarray(x, dtype=np.int64) for x in (first, second, owner)]
    return as_array[0], as_array[1], as_array[2]


def _pair_credit(scores: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """1 where the metric orders a pair as the annotators do, ½ for a metric tie, 0 otherwise."""
    a, b = scores[first], scores[second]
    return (a > b) + 0.5 * (a == b)


def pairwise_agreement(scores: Any, human: Any, instance_ids: Sequence[Any]) -> tuple[float, int]:
    """Within-instance pairwise agreement and the number of pairs it is over (NaN when no pair differs in ``human``).

    Over every pair of explanations of one instance whose human values differ: the share the metric orders the same
    way, a tie in the metric counting ½.
    """
    values = _finite(scores, "scores")
    first, second, _ = judged_pairs(instance_ids, human)
    if first.size == 0:
        return float("nan"), 0
    return float(np.mean(_pair_credit(values, first, second))), int(first.size)


def _mann_whitney(positive: np.ndarray, negative: np.ndarray) -> float:
    if positive.size == 0 or negative.size == 0:
        return float("nan")
    ranks = rankdata(np.concatenate([positive, negative]))
    return float((ranks[: positive.size].sum() - positive.size * (positive.size + 1) / 2)
                 / (positive.size * negative.size))


def acceptability_auc(scores: Any, human: Any, acceptable_at: float = ACCEPTABLE_AT,
                      unacceptable_at: float = UNACCEPTABLE_AT) -> float:
    """AUC that an acceptable explanation (``human >= acceptable_at``) scores above an unacceptable one
    (``human <= unacceptable_at``), ties ½; equals ``sklearn.metrics.roc_auc_score`` on those rows."""
    values, judged = _finite(scores, "scores"), _finite(human, "human")
    return _mann_whitney(values[judged >= acceptable_at], values[judged <= unacceptable_at])


def instance_bootstrap_indices(instance_ids: Sequence[Any], n_boot: int = 1000, seed: int = 0
                               ) -> list[np.ndarray]:
    """``n_boot`` resamples of rows: instances drawn with replacement, each drawn instance bringing all its rows.

    The unit of resampling is the instance (a cluster bootstrap), so an interval reflects how many *inputs* were
    judged, not how many explanations.
    """
    groups = instance_groups(instance_ids)
    return [np.concatenate([groups[k] for k in drawn]) for drawn in _instance_draws(len(groups), n_boot, seed)]


def _instance_draws(n_instances: int, n_boot: int, seed: int) -> list[np.ndarray]:
    """The instance numbers each bootstrap replicate draws (with replacement)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1; got {n_boot}")
    rng = np.random.default_rng(seed)
    return [rng.integers(n_instances, size=n_instances) for _ in range(n_boot)]


def percentile_interval(values: np.ndarray, level: float = 0.95) -> list[float] | None:
    """The percentile interval of the finite bootstrap replicates in ``values`` (None when there are none)."""
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
    return [float(low), float(high)]


class _Resamples:
    """The bootstrap resamples of one judged file, shared by every metric so that differences are paired."""

    def __init__(self, instance_ids: Sequence[Any], human: np.ndarray, n_boot: int, seed: int) -> None:
        self.human = human
        self.first, self.second, owner = judged_pairs(instance_ids, human)
        groups = instance_groups(instance_ids)
        # the same draws as instance_bootstrap_indices; an instance drawn c times brings its rows and its pairs c times
        self.rows: list[np.ndarray] = []
        self.pair_weights: list[np.ndarray] = []
        for drawn in _instance_draws(len(groups), n_boot, seed):
            self.rows.append(np.concatenate([groups[k] for k in drawn]))
            self.pair_weights.append(np.bincount(drawn, minlength=len(groups))[owner])

    def replicates(self, scores: np.ndarray) -> dict[str, np.ndarray]:
        credit = _pair_credit(scores, self.first, self.second)
        out: dict[str, list[float]] = {name: [] for name in STATISTICS}
        for rows, weights in zip(self.rows, self.pair_weights, strict=True):
            s, h = scores[rows], self.human[rows]
            total = weights.sum()
            out["pairwise"].append(float(credit @ weights / total) if total else float("nan"))
            out["spearman"].append(spearman(s, h))
            out["kendall"].append(kendall(s, h))
            out["auc"].append(acceptability_auc(s, h))
        return {name: np.asarray(values) for name, values in out.items()}


def point_statistics(scores: Any, human: Any, instance_ids: Sequence[Any]) -> dict[str, float]:
    """Every statistic of :data:`STATISTICS` of one score column against one human column (no interval)."""
    return {"pairwise": pairwise_agreement(scores, human, instance_ids)[0], "spearman": spearman(scores, human),
            "kendall": kendall(scores, human), "auc": acceptability_auc(scores, human)}


def agreement_table(scores_by_metric: Mapping[str, Any], human: Any, instance_ids: Sequence[Any],
                    n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Every statistic of :data:`STATISTICS` for every metric, with 95% instance-bootstrap intervals.

    Args:
        scores_by_metric: metric name → one score per explanation (higher = better explanation; flip a column whose
            lower values are better before passing it).
        human: one human value per explanation (e.g. the share of annotators who found it acceptable).
        instance_ids: the instance of each explanation.
        n_boot, seed: bootstrap replicates and their seed; every metric is resampled with the same draws.

    Returns:
        ``{"n_explanations", "n_instances", "n_pairs", "n_acceptable", "n_unacceptable", "metrics": {name: {statistic:
        {"value", "ci95"}}}, "replicates": {name: {statistic: array}}}`` (``replicates`` feeds :func:`difference`).
    """
    judged = _finite(human, "human")
    if len(instance_ids) != judged.size:
        raise ValueError(f"{judged.size} human values but {len(instance_ids)} instance ids")
    resamples = _Resamples(instance_ids, judged, n_boot, seed)
    metrics: dict[str, dict[str, Any]] = {}
    replicates: dict[str, dict[str, np.ndarray]] = {}
    for name, values in scores_by_metric.items():
        scores = _finite(values, name)
        if scores.size != judged.size:
            raise ValueError(f"metric {name!r}: {scores.size} scores for {judged.size} explanations")
        point = point_statistics(scores, judged, instance_ids)
        replicates[name] = resamples.replicates(scores)
        metrics[name] = {stat: {"value": None if np.isnan(point[stat]) else point[stat],
                                "ci95": percentile_interval(replicates[name][stat])} for stat in STATISTICS}
    return {"n_explanations": int(judged.size), "n_instances": len(instance_groups(instance_ids)),
            "n_pairs": int(resamples.first.size), "n_acceptable": int(np.sum(judged >= ACCEPTABLE_AT)),
            "n_unacceptable": int(np.sum(judged <= UNACCEPTABLE_AT)), "metrics": metrics, "replicates": replicates}


def difference(table: Mapping[str, Any], metric: str, other: str, statistic: str) -> dict[str, Any]:
    """``metric`` − ``other`` on one statistic of an :func:`agreement_table`, with the paired bootstrap interval (the
    same resampled instances for both); ``established`` when the interval's lower bound is above 0."""
    a, b = table["metrics"][metric][statistic]["value"], table["metrics"][other][statistic]["value"]
    value = None if a is None or b is None else a - b
    interval = percentile_interval(table["replicates"][metric][statistic] - table["replicates"][other][statistic])
    return {"value": value, "ci95": interval, "established": bool(interval is not None and interval[0] > 0)}


def select_one_hits(scores: Any, human: Any, instance_ids: Sequence[Any], acceptable_at: float = ACCEPTABLE_AT
                    ) -> np.ndarray:
    """Per instance (in :func:`instance_groups` order), whether its top-scored explanation is acceptable
    (``human >= acceptable_at``); several explanations tied at the top count by their mean."""
    values, judged = _finite(scores, "scores"), _finite(human, "human")
    hits = []
    for rows in instance_groups(instance_ids):
        top = rows[values[rows] == values[rows].max()]
        hits.append(float(np.mean(judged[top] >= acceptable_at)))
    return np.asarray(hits)


def select_one(scores: Any, human: Any, instance_ids: Sequence[Any], acceptable_at: float = ACCEPTABLE_AT) -> float:
    """Wiegreffe et al. (2022)'s *select-1* (§5): the share of instances whose top-scored explanation is acceptable
    (``human >= acceptable_at``); several explanations tied at the top count by their mean."""
    return float(np.mean(select_one_hits(scores, human, instance_ids, acceptable_at)))


def select_one_replicates(scores: Any, human: Any, instance_ids: Sequence[Any], n_boot: int = 1000, seed: int = 0,
                          acceptable_at: float = ACCEPTABLE_AT) -> np.ndarray:
    """Select-1 on ``n_boot`` instance-bootstrap resamples: the draws of :func:`agreement_table` with the same
    ``seed``, so a difference of two metrics' replicates is paired (and pairs with the table's)."""
    hits = select_one_hits(scores, human, instance_ids, acceptable_at)
    return np.array([float(np.mean(hits[drawn])) for drawn in _instance_draws(hits.size, n_boot, seed)])


def select_one_references(human: Any, instance_ids: Sequence[Any], acceptable_at: float = ACCEPTABLE_AT
                          ) -> dict[str, float]:
    """Select-1 of a random choice (the expected share: each instance's share of acceptable explanations) and of an
    oracle (the share of instances with at least one acceptable explanation)."""
    judged = _finite(human, "human")
    groups = instance_groups(instance_ids)
    return {"random": float(np.mean([np.mean(judged[rows] >= acceptable_at) for rows in groups])),
            "oracle": float(np.mean([np.any(judged[rows] >= acceptable_at) for rows in groups]))}


def annotator_agreement(votes: Sequence[Sequence[float]], instance_ids: Sequence[Any]) -> dict[str, Any]:
    """The annotators' own agreement: the statistics of each annotator's votes against the mean of the others' on
    the same explanations (one against the rest, averaged over annotator positions), and, with 4 or more votes per
    explanation, the first half of the annotators' mean against the second half's (split-half). These are the
    ceilings a metric's agreement is read against: a metric that agrees with the rest as well as one annotator does
    is at the ceiling."""
    matrix = np.asarray([list(v) for v in votes], dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise ValueError("annotator agreement needs two or more votes per explanation, the same number for each")

    per_annotator = [point_statistics(matrix[:, k], np.delete(matrix, k, axis=1).mean(axis=1), instance_ids)
                     for k in range(matrix.shape[1])]
    out: dict[str, Any] = {"n_annotators": int(matrix.shape[1]), "one_vs_rest": {
        stat: float(np.nanmean([entry[stat] for entry in per_annotator])) for stat in STATISTICS}}
    if matrix.shape[1] >= 4:
        half = matrix.shape[1] // 2
        out["split_half"] = point_statistics(matrix[:, :half].mean(axis=1), matrix[:, half:].mean(axis=1),
                                             instance_ids)
    return out


#: A ceiling closer to chance than this is no ceiling: the annotators barely agree, and a ratio to it only magnifies
#: noise (measured on the shared fine-grained SNLI file: docs/human.md, "Measured: select-1, the annotators' ceiling
#: and the grounded evaluator").
MIN_CEILING_MARGIN = 0.1


def share_of_ceiling(value: float | None, ceiling: float | None, statistic: str) -> float | None:
    """A metric's agreement as a share of the annotators' (:func:`annotator_agreement`): for a correlation the ratio,
    for pairwise agreement and AUC (chance ½) the ratio of the distances above chance; ``None`` when the ceiling is
    within :data:`MIN_CEILING_MARGIN` of chance."""
    if value is None or ceiling is None or not np.isfinite(ceiling):
        return None
    chance = 0.5 if statistic in ("pairwise", "auc") else 0.0
    if ceiling - chance < MIN_CEILING_MARGIN:
        return None
    return float((value - chance) / (ceiling - chance))
