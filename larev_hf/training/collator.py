"""Collators for environment-grouped LAREV batches: :class:`EnvironmentCollator` (the trainer's default) and
:class:`TrainerColumnsCollator`, which lets any other collator (HF's ``DataCollatorForSeq2Seq``) feed the trainer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from larev_hf.defaults import ENVIRONMENT_COLUMN, GROUP_COLUMN, PROBE_COLUMN
from larev_hf.modeling.scoring import pad_rows


@dataclass
class EnvironmentCollator:
    """Pads r ⊕ b_e inputs and labels, carries the environment index, and adds the probe's b̃ once per group.

    Rows need ``input_ids`` and, for a loss, ``labels``; ``environment`` (int) and, for the probe, ``group_id`` and
    ``probe_input_ids`` when they have them (evaluation rows may have none). The probe inputs of a group are identical in
    each of its environments, so only the first row of each group contributes one (``probe_labels`` alike).
    """

    tokenizer: PreTrainedTokenizerBase
    environment_column: str = ENVIRONMENT_COLUMN
    group_column: str = GROUP_COLUMN
    probe_column: str = PROBE_COLUMN
    #: The trainer hands this collator the rows as they are: it reads the environment, group and probe columns itself.
    reads_trainer_columns = True

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        pad_id = self.tokenizer.pad_token_id
        input_ids, attention_mask = pad_rows([f["input_ids"] for f in features], pad_id)
        batch = {"input_ids": input_ids, "attention_mask": attention_mask}
        if features and "labels" in features[0]:
            batch["labels"], _ = pad_rows([f["labels"] for f in features], -100)
        batch.update(trainer_columns(features, self.tokenizer, self.environment_column, self.group_column,
                                     self.probe_column))
        return batch


def trainer_columns(features: list[dict[str, Any]], tokenizer: PreTrainedTokenizerBase,
                    environment_column: str = ENVIRONMENT_COLUMN, group_column: str = GROUP_COLUMN,
                    probe_column: str = PROBE_COLUMN) -> dict[str, torch.Tensor]:
    """What the IRM loss reads besides the model's inputs, under its fixed names whatever the columns are called:
    ``environment`` per row and, when the rows carry probe inputs, ``probe_input_ids`` / ``probe_attention_mask`` /
    ``probe_labels`` once per group (from the group's first row). The probe column holds token ids, or text that
    ``tokenizer`` encodes here (truncated at its ``model_max_length``). Rows without an environment column give
    nothing."""
    if not features or environment_column not in features[0]:
        return {}
    environments = []
    for row, feature in enumerate(features):
        value = feature[environment_column]
        try:
            environments.append(int(value))
        except (TypeError, ValueError):
            raise ValueError(f"column {environment_column!r} must hold integer environment indices; row {row} of the "
                             f"batch has {value!r}") from None
    columns = {"environment": torch.tensor(environments, dtype=torch.long)}
    if probe_column in features[0] and "labels" in features[0]:  # the probe decodes the label: nothing without one
        if group_column not in features[0]:
            raise ValueError(f"rows with {probe_column!r} need the group column {group_column!r} (b̃ is taken once per "
                             f"group); the batch's rows have {sorted(features[0])}")
        first_rows, seen = [], set()
        for feature in features:
            if feature[group_column] not in seen:
                seen.add(feature[group_column])
                first_rows.append(feature)
        probe_inputs = [f[probe_column] for f in first_rows]
        if isinstance(probe_inputs[0], str):
            probe_inputs = tokenizer(probe_inputs, truncation=True)["input_ids"]
        columns["probe_input_ids"], columns["probe_attention_mask"] = pad_rows(
            [list(ids) for ids in probe_inputs], tokenizer.pad_token_id)
        columns["probe_labels"], _ = pad_rows([list(f["labels"]) for f in first_rows], -100)
    return columns


@dataclass
class TrainerColumnsCollator:
    """Wraps any collator (HF's ``DataCollatorForSeq2Seq``, a user's own) for :class:`~larev_hf.training.IRMProbeTrainer`:
    the environment, group and probe columns are taken off each row before ``collator`` sees it (it would try to
    tensorize or pad them), and added back, padded and masked, by :func:`trainer_columns`. The trainer wraps a given
    collator in it unless the collator says it ``reads_trainer_columns``."""

    collator: Callable[[list[dict[str, Any]]], dict[str, Any]]
    tokenizer: PreTrainedTokenizerBase
    environment_column: str = ENVIRONMENT_COLUMN
    group_column: str = GROUP_COLUMN
    probe_column: str = PROBE_COLUMN
    reads_trainer_columns = True

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        own = {self.environment_column, self.group_column, self.probe_column}
        batch = dict(self.collator([{k: v for k, v in f.items() if k not in own} for f in features]))
        batch.update(trainer_columns(features, self.tokenizer, self.environment_column, self.group_column,
                                     self.probe_column))
        return batch
