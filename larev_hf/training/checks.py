"""What the IRM trainer checks before training starts, so a setting that would do nothing says so.

The IRMv1 penalty compares the environments of the same items (thesis eq. 4.6), so it needs batches that hold several
environments, and groups that hold all of theirs. Sample limits such as HF's ``--max_train_samples`` (``select(range(n))``)
cut groups, and a set sorted by environment then gives groups, and batches, of one environment; the penalty of a
one-environment batch is a squared gradient of its risk, not a comparison. These functions count such cases; the trainer
turns the counts into one warning each (or an error where nothing could be compared).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class GroupCounts:
    """How the rows of a training set fall into environment groups."""

    n_rows: int
    n_groups: int
    environments: tuple[int, ...]  # the distinct environment indices, sorted
    full_size: int  # the most environments any group has
    short_groups: int  # groups with fewer environments than ``full_size``
    single_environment_groups: int  # groups whose rows are all of one environment

    @property
    def rows_per_group(self) -> float:
        return self.n_rows / max(self.n_groups, 1)


def count_groups(environments: Sequence[int], groups: Sequence) -> GroupCounts:
    """Count the groups of a set from its ``environments`` and ``groups`` columns."""
    if len(environments) != len(groups):
        raise ValueError(f"got {len(environments)} environments for {len(groups)} group ids; expected one per row")
    per_group: dict = {}
    for environment, group in zip(environments, groups, strict=True):
        per_group.setdefault(group, set()).add(int(environment))
    sizes = [len(envs) for envs in per_group.values()]
    full = max(sizes, default=0)
    return GroupCounts(
        n_rows=len(environments), n_groups=len(per_group),
        environments=tuple(sorted({int(e) for e in environments})), full_size=full,
        short_groups=sum(size < full for size in sizes), single_environment_groups=sum(size == 1 for size in sizes))


def single_environment_batches(batches: Iterable[Sequence[int]], environments: Sequence[int]) -> tuple[int, int]:
    """(batches whose rows are all of one environment, batches) over one pass of a batch sampler."""
    counts = Counter(len({int(environments[row]) for row in batch}) == 1 for batch in batches)
    return counts[True], counts[True] + counts[False]


def check_training_groups(counts: GroupCounts, single_batches: tuple[int, int], lambda_irm: float,
                          group_column: str, environment_column: str) -> None:
    """Refuse a training set of one environment under a positive λ_IRM; warn, with counts, about cut groups and
    one-environment batches. Nothing is said when λ_IRM is 0 (a plain ERM run on groups is legitimate)."""
    if lambda_irm <= 0:
        return
    if len(counts.environments) < 2:
        raise ValueError(
            f"lambda_irm={lambda_irm} but the training set's {counts.n_rows} rows all have {environment_column!r} = "
            f"{counts.environments[0] if counts.environments else None}: the IRM penalty compares environments, so "
            f"give the rows of each {group_column!r} several environments, or set lambda_irm=0")
    if counts.short_groups:
        warnings.warn(
            f"{counts.short_groups} of {counts.n_groups} groups ({group_column!r}) have fewer environments than the "
            f"fullest group's {counts.full_size} ({counts.single_environment_groups} have only one): a sample limit "
            f"such as max_train_samples cut them. Select whole groups (e.g. filter on {group_column!r}) so the IRM "
            f"penalty compares the same items across environments", UserWarning, stacklevel=3)
    single, total = single_batches
    if single:
        warnings.warn(
            f"{single} of {total} training batches hold a single environment: their IRM penalty compares nothing "
            f"(it is the squared gradient of one risk). Keep several environments per {group_column!r}, or raise "
            f"per_device_train_batch_size (groups per batch)", UserWarning, stacklevel=3)


def check_probe(has_probe: bool, lambda_probe: float, columns: Sequence[str] | None, probe_column: str) -> None:
    """A probe weight needs a probe model and its column; a probe model needs a weight."""
    if lambda_probe > 0 and not has_probe:
        raise ValueError(f"lambda_probe={lambda_probe} but no probe_model was given, so the probe term would be 0: "
                         f"pass probe_model= (a trained leakage probe ψ or its directory) or set lambda_probe=0")
    if has_probe and lambda_probe == 0:
        warnings.warn("a probe_model was given but lambda_probe is 0: the probe is never used; set lambda_probe > 0",
                      UserWarning, stacklevel=3)
    if has_probe and lambda_probe > 0 and columns is not None and probe_column not in columns:
        raise ValueError(f"lambda_probe={lambda_probe} with a probe_model needs the column {probe_column!r} in the "
                         f"training set (the token ids of the leakage-masked baseline b̃); it has {list(columns)}")
