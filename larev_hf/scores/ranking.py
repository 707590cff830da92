"""Ranks of explanations within their instance: which of the explanations written for one input scores best.

Scores of different instances are not on one scale (each instance has its own baseline and, per label, its own
offset: docs/hub.md), so "which explanation is best" is answered within an instance. Rank 1 is the highest score;
ties share the lowest rank (``scipy.stats.rankdata(method="min")``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def within_instance_ranks(scores: Sequence[float], instances: Sequence[str | None]) -> list[int | None]:
    """Per row, its rank among the rows of the same instance (1 = highest score); ``None`` where the row names no
    instance or its score is NaN.

    Args:
        scores (`Sequence[float]`): one score per row (higher = better).
        instances (`Sequence[str | None]`): the row's instance id, or ``None``.
    """
    from scipy.stats import rankdata  # here: reading and checking a file of explanations needs no scipy

    if len(scores) != len(instances):
        raise ValueError(f"{len(scores)} scores for {len(instances)} instance ids; expected one of each per row")
    values = np.asarray(scores, dtype=float)
    groups: dict[str, list[int]] = {}
    for i, instance in enumerate(instances):
        if instance is not None and not np.isnan(values[i]):
            groups.setdefault(instance, []).append(i)
    ranks: list[int | None] = [None] * len(values)
    for rows in groups.values():
        for row, rank in zip(rows, rankdata(-values[rows], method="min"), strict=True):
            ranks[row] = int(rank)
    return ranks
