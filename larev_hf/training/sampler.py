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

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import BatchSampler, Sampler


def length_grouped_batches(items: Sequence[int], length: Callable[[int], int], per_batch: int, megabatch_batches: int,
                           generator: torch.Generator) -> list[list[int]]:
    """``items`` (already in random order) as batches of similar length, the batches in random order.

    As HF's ``LengthGroupedSampler``: the items are cut into mega-batches of ``megabatch_batches`` batches and each is
    sorted by ``length``, longest first, then cut into batches. Unlike it, the batches are then shuffled (all but a
    short last one, which stays last): on a small set one mega-batch holds the whole epoch, and its batches would
    otherwise arrive longest to shortest.
    """
    size = megabatch_batches * per_batch
    batches = [sorted_chunk[i : i + per_batch]
               for start in range(0, len(items), size)
               for sorted_chunk in [sorted(items[start : start + size], key=length, reverse=True)]
               for i in range(0, len(sorted_chunk), per_batch)]
    short = [batches.pop()] if batches and len(batches[-1]) < per_batch else []
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()] + short


def grouping_lengths(args: Any, dataset: Any) -> list[int] | None:
    """The rows' input lengths when ``args.train_sampling_strategy`` is ``"group_by_length"`` and the dataset has
    ``input_ids`` — what both trainers group their batches by (``TrainSettings.group_by_length``); else ``None``."""
    if args.train_sampling_strategy != "group_by_length" or "input_ids" not in getattr(dataset, "column_names", ()):
        return None
    return [len(ids) for ids in dataset["input_ids"]]


class LengthGroupedShuffledSampler(Sampler[int]):
    """Row indices in batches of ``batch_size`` rows of similar length, in random batch order
    (:func:`length_grouped_batches`); reseeded with ``seed + epoch`` by ``set_epoch``. The DataLoader cuts the
    indices into the same batches (every batch but the last is full)."""

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int = 0, megabatch_batches: int = 50) -> None:
        self.lengths, self.batch_size, self.seed, self.megabatch_batches, self.epoch = (
            list(lengths), batch_size, seed, megabatch_batches, 0)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(len(self.lengths), generator=generator).tolist()
        batches = length_grouped_batches(order, self.lengths.__getitem__, self.batch_size, self.megabatch_batches,
                                         generator)
        return iter([row for batch in batches for row in batch])

    def __len__(self) -> int:
        return len(self.lengths)


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
        lengths (`Sequence[int]`, *optional*): the input length of every row. When given, batches hold groups of
            similar length (their longest row), in random batch order (:func:`length_grouped_batches`), so little
            of a batch is padding.
        megabatch_batches (`int`, *optional*, defaults to 50): batches per mega-batch (HF's factor).

    Example:

    ```python
    >>> sampler = EnvironmentGroupBatchSampler(["a", "a", "b", "b", "c", "c"], groups_per_batch=2, seed=0)
    >>> [sorted(batch) for batch in sampler]
    [[0, 1, 4, 5], [2, 3]]
    ```
    """

    def __init__(self, group_ids: Sequence, groups_per_batch: int, seed: int = 0, drop_last: bool = False,
                 lengths: Sequence[int] | None = None, megabatch_batches: int = 50) -> None:
        if groups_per_batch < 1:
            raise ValueError(f"groups_per_batch must be >= 1, got {groups_per_batch}")
        if lengths is not None and len(lengths) != len(group_ids):
            raise ValueError(f"got {len(lengths)} lengths for {len(group_ids)} rows; expected one per row")
        rows_by_group: dict = {}
        for row, group in enumerate(group_ids):
            rows_by_group.setdefault(group, []).append(row)
        self.groups = list(rows_by_group.values())
        self.group_lengths = None if lengths is None else [max(lengths[row] for row in rows) for rows in self.groups]
        self.megabatch_batches = megabatch_batches
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
        order = list(self.sampler)
        if self.group_lengths is not None:
            generator = torch.Generator().manual_seed(self.sampler.seed + self.sampler.epoch + 1)
            order = [group for batch in length_grouped_batches(order, self.group_lengths.__getitem__,
                                                               self.groups_per_batch, self.megabatch_batches, generator)
                     for group in batch]
        for group_index in order:
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
