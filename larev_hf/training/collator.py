"""Collator for environment-grouped LAREV batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from larev_hf.defaults import ENVIRONMENT_COLUMN, GROUP_COLUMN
from larev_hf.modeling.scoring import pad_rows


@dataclass
class EnvironmentCollator:
    """Pads r ⊕ b_e inputs and labels, carries the environment index, and adds the probe's b̃ once per group.

    Rows need ``input_ids``, ``labels``, ``environment`` (int) and, for the probe,
    ``group_id``, ``probe_input_ids``; the probe inputs of a group are identical in each of its
    environments, so only the first row of each group contributes one (``probe_labels`` alike).
    """

    tokenizer: PreTrainedTokenizerBase
    environment_column: str = ENVIRONMENT_COLUMN
    group_column: str = GROUP_COLUMN

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        pad_id = self.tokenizer.pad_token_id
        input_ids, attention_mask = pad_rows([f["input_ids"] for f in features], pad_id)
        labels, _ = pad_rows([f["labels"] for f in features], -100)
        batch = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "labels": labels,
            "environment": torch.tensor([int(f[self.environment_column]) for f in features], dtype=torch.long),
        }
        if features and "probe_input_ids" in features[0]:
            first_rows, seen = [], set()
            for f in features:
                if f[self.group_column] not in seen:
                    seen.add(f[self.group_column])
                    first_rows.append(f)
            batch["probe_input_ids"], batch["probe_attention_mask"] = pad_rows([f["probe_input_ids"] for f in first_rows], pad_id)
            batch["probe_labels"], _ = pad_rows([f["labels"] for f in first_rows], -100)
        return batch
