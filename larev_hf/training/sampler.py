"""Environment-grouped batching for IRM (thesis §5.3.3).

A *group* is one training instance under each of its environments (E1 original b, E2 t_leak
masked, E3 t_leak rewritten). The IRM penalty compares environments of the same items, so a
batch must hold whole groups::

    rows:     g0/E1 g0/E2 g0/E3 | g1/E1 g1/E2 g1/E3 | g2/E1 ...
    batch 0:  [ g7 (3 rows), g2 (3 rows) ]   -> process 0
    batch 1:  [ g4 (3 rows), g0 (3 rows) ]   -> process 1   (accelerate, split_batches=False)
    batch 2:  [ g5 ...                   ]   -> process 0

Under DDP, accelerate hands out whole batches round-robin to the processes, so a group never
splits across processes. The group order is reshuffled every epoch with ``seed + epoch``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
from torch.utils.data import BatchSampler, Sampler


class GroupOrderSampler(Sampler[int]):
    """Yields group indices in a seeded random order; reseeded with ``seed + epoch`` by ``set_epoch``."""

    def __init__(self, n_groups: int, seed: int = 0, shuffle: bool = True) -> None:
        self.n_groups, self.seed, self.shuffle, self.epoch = n_groups, seed, shuffle, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        if not self.shuffle:
            return iter(range(self.n_groups))
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        return iter(torch.randperm(self.n_groups, generator=generator).tolist())

    def __len__(self) -> int:
        return self.n_groups


class EnvironmentGroupBatchSampler(BatchSampler):
    """Batches of whole environment groups.

    Args:
        group_ids (`Sequence`): the group of every dataset row (rows of a group may be anywhere).
        groups_per_batch (`int`): groups in one batch (a batch has ``groups_per_batch × n_environments`` rows).
        seed (`int`, *optional*, defaults to 0): shuffling seed; epoch ``e`` uses ``seed + e``.
        drop_last (`bool`, *optional*, defaults to `False`): drop a final batch with fewer groups.

    Example:

    ```python
    >>> sampler = EnvironmentGroupBatchSampler(["a", "a", "b", "b", "c", "c"], groups_per_batch=2, seed=0)
    >>> [sorted(batch) for batch in sampler]
    [[0, 1, 4, 5], [2, 3]]
    ```
    """

    def __init__(self, group_ids: Sequence, groups_per_batch: int, seed: int = 0, drop_last: bool = False) -> None:
        if groups_per_batch < 1:
            raise ValueError(f"groups_per_batch must be >= 1, got {groups_per_batch}")
        rows_by_group: dict = {}
        for row, group in enumerate(group_ids):
            rows_by_group.setdefault(group, []).append(row)
        self.groups = list(rows_by_group.values())
        self.sampler = GroupOrderSampler(len(self.groups), seed=seed)
        self.groups_per_batch = groups_per_batch
        # Batches have a variable number of rows (groups × their environments). ``batch_size = None`` tells
        # accelerate's BatchSamplerShard to treat each batch as one unit: it deals out and, for even_batches,
        # repeats whole batches, never slicing rows off a batch (which could split a group).
        self.batch_size = None
        self.drop_last = drop_last

    def set_epoch(self, epoch: int) -> None:
        self.sampler.set_epoch(epoch)

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        n_groups = 0
        for group_index in self.sampler:
            batch.extend(self.groups[group_index])
            n_groups += 1
            if n_groups == self.groups_per_batch:
                yield batch
                batch, n_groups = [], 0
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        full, rest = divmod(len(self.groups), self.groups_per_batch)
        return full + (1 if rest and not self.drop_last else 0)
