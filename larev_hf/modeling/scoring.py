"""Batched inference with a seq2seq model: label scoring, log p(y | input) under teacher forcing, and generation
(:func:`generate_texts`, the one loop the self-rationalizer, FRAME's label reader and the text2text explanation
generator share).

One routine serves every metric (REV, LAREV, RoRA, accuracy). For each (input, label) pair it
returns the sum, the mean and the count of the label's token log-probabilities, where the
label's tokens include the end-of-sequence token, as in REV's released code. The sum is
log p(y | input), our default; REV's code reports the mean (``reduction="mean"`` for parity, see
``shared/REFERENCE-IMPLEMENTATIONS.md``). No ``generate`` call is made; pairs are sorted by
length so each batch carries little padding; an input scored under several labels (answer choices) is
encoded once; log-softmax runs in fp32 so fp16/bf16 models stay finite; results come back in input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.modeling.precision import autocast_for

REDUCTIONS = ("sum", "mean")
#: The encoder input's length in tokens that scoring keeps (longer inputs are truncated to it).
MAX_INPUT_TOKENS = 512


@dataclass
class LabelScores:
    """Per-example log-probabilities of the label (natural log, nats)."""

    sum: np.ndarray
    mean: np.ndarray
    n_tokens: np.ndarray

    def reduce(self, reduction: str = "sum") -> np.ndarray:
        """The per-example score under ``reduction`` ("sum" = log p(y|·), "mean" = REV's per-token mean)."""
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
        return self.sum if reduction == "sum" else self.mean


def _tokenize(tokenizer: PreTrainedTokenizerBase, texts: Sequence[str], max_length: int, target: bool) -> list[list[int]]:
    kwargs = {"text_target": list(texts)} if target else {"text": list(texts)}
    return tokenizer(**kwargs, truncation=True, max_length=max_length)["input_ids"]


def drop_end_of_sequence(ids: list[int], tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """``ids`` without a trailing end-of-sequence token (``</s>``, or ``[SEP]`` for BERT-style tokenizers), so a
    target scores or forces the *beginning* of a longer output; a lone token is kept."""
    ends = {tokenizer.eos_token_id, getattr(tokenizer, "sep_token_id", None)} - {None}
    return ids[:-1] if len(ids) > 1 and ids[-1] in ends else ids


def pad_rows(rows: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad integer rows into one tensor; also return the 0/1 mask of real positions."""
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def decoder_inputs(model: PreTrainedModel, labels: torch.Tensor) -> torch.Tensor:
    """Teacher-forcing decoder inputs: the labels shifted right with the model's start token."""
    return model.prepare_decoder_input_ids_from_labels(labels=labels)


@torch.inference_mode()
def score_labels(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    inputs: Sequence[str],
    labels: Sequence[str],
    *,
    batch_size: int = 64,
    max_input_length: int = MAX_INPUT_TOKENS,
    max_label_length: int = 32,
    progress: bool = False,
    desc: str = "scoring",
    end_of_sequence: bool = True,
) -> LabelScores:
    """Score ``labels[i]`` given ``inputs[i]`` for every i with teacher forcing.

    Args:
        model (`PreTrainedModel`): a seq2seq model (T5, BART, ...); its device and dtype are used as they are.
        tokenizer (`PreTrainedTokenizerBase`): the model's tokenizer; labels are encoded as targets.
        inputs (`Sequence[str]`): encoder inputs.
        labels (`Sequence[str]`): label texts, one per input.
        batch_size (`int`, *optional*, defaults to 64): pairs per forward pass.
        progress (`bool`, *optional*, defaults to `False`): show a progress bar.
        end_of_sequence (`bool`, *optional*, defaults to `True`): score the label's end-of-sequence token too;
            `False` scores the label as the beginning of a longer output (e.g. ``"ŷ explanation:"`` of a
            self-rationalizing model, whose output goes on with a rationale).

    Returns:
        `LabelScores`: per-example sum, mean and token count of log p(label token | input, previous tokens).
    """
    if len(inputs) != len(labels):
        raise ValueError(f"got {len(inputs)} inputs but {len(labels)} labels; expected one label per input")
    n = len(inputs)
    sums, counts = np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.int64)
    if n == 0:
        return LabelScores(sums, sums.copy(), counts)
    source_ids = _tokenize(tokenizer, inputs, max_input_length, target=False)
    target_ids = _tokenize(tokenizer, labels, max_label_length, target=True)
    if not end_of_sequence:
        target_ids = [drop_end_of_sequence(ids, tokenizer) for ids in target_ids]
    # The same input scored under several labels (answer choices, label sets) is encoded once: pairs are grouped
    # by their source, and each batch runs the encoder on its distinct sources only.
    source_key: dict[tuple[int, ...], int] = {}
    source_of = [source_key.setdefault(tuple(ids), len(source_key)) for ids in source_ids]
    # Length bucketing: longest first so the first batch shows any out-of-memory at once.
    order = sorted(range(n), key=lambda i: (len(source_ids[i]), source_of[i], len(target_ids[i])), reverse=True)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    encoder = model.get_encoder()
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with autocast_for(model):  # bf16 for a model trained in it (larev_hf.modeling.precision), else fp32
        for start in tqdm(range(0, n, batch_size), desc=desc, disable=not progress, unit="batch"):
            batch = order[start : start + batch_size]
            representative = {source_of[i]: i for i in batch}  # distinct sources of the batch → one pair holding each
            position = {source: k for k, source in enumerate(representative)}
            input_ids, attention_mask = pad_rows([source_ids[i] for i in representative.values()], pad_id)
            pair_source = torch.tensor([position[source_of[i]] for i in batch], device=device)
            attention_mask = attention_mask.to(device)
            hidden = encoder(input_ids=input_ids.to(device), attention_mask=attention_mask).last_hidden_state
            label_ids, label_mask = pad_rows([target_ids[i] for i in batch], pad_id)
            masked_labels = label_ids.masked_fill(label_mask == 0, -100).to(device)
            logits = model(
                encoder_outputs=(hidden.index_select(0, pair_source),),
                attention_mask=attention_mask.index_select(0, pair_source),
                decoder_input_ids=decoder_inputs(model, masked_labels),
                use_cache=False,  # one teacher-forced pass: a key/value cache would only cost time
            ).logits
            log_probs = torch.log_softmax(logits.float(), dim=-1)
            token_log_probs = log_probs.gather(-1, label_ids.to(device).unsqueeze(-1)).squeeze(-1)
            token_log_probs = token_log_probs * label_mask.to(device)
            sums[batch] = token_log_probs.sum(-1).double().cpu().numpy()
            counts[batch] = label_mask.sum(-1).numpy()
    model.train(was_training)
    return LabelScores(sum=sums, mean=sums / np.maximum(counts, 1), n_tokens=counts)


def choice_scores(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    inputs: Sequence[str],
    choices: Sequence[Sequence[str]],
    *,
    reduction: str = "sum",
    **score_kwargs,
) -> list[np.ndarray]:
    """log p(choice | input) of every choice of every input (one batched :func:`score_labels` pass), per input."""
    flat_inputs = [text for text, options in zip(inputs, choices, strict=True) for _ in options]
    flat_labels = [option for options in choices for option in options]
    flat = score_labels(model, tokenizer, flat_inputs, flat_labels, **score_kwargs).reduce(reduction)
    out, offset = [], 0
    for options in choices:
        out.append(flat[offset : offset + len(options)])
        offset += len(options)
    return out


def predict_choices(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    inputs: Sequence[str],
    choices: Sequence[Sequence[str]],
    *,
    reduction: str = "sum",
    **score_kwargs,
) -> list[int]:
    """Index of the most probable choice per input (argmax over the choices' label log-probabilities)."""
    return [int(np.argmax(row)) for row in choice_scores(model, tokenizer, inputs, choices, reduction=reduction,
                                                          **score_kwargs)]


def generate_texts(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 64,
                   max_new_tokens: int = 64, decoder_prefixes: Sequence[Sequence[int]] | None = None,
                   **generate_kwargs: Any) -> list[str]:
    """Decode an output for every text (greedy unless ``generate_kwargs`` say otherwise), in input order.

    Inputs are batched by length, so little of a batch is padding. ``decoder_prefixes`` (one id list per text) forces
    each output's first tokens (e.g. a label prefix); batches then hold prefixes of one length, so they need no padding.
    """
    import torch

    prefix_length = [len(p) for p in decoder_prefixes] if decoder_prefixes is not None else [0] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: (prefix_length[i], len(texts[i])))
    settings = {"do_sample": False, "num_beams": 1, **generate_kwargs, "max_new_tokens": max_new_tokens}
    outputs = [""] * len(texts)
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        start = 0
        while start < len(order):
            batch = [i for i in order[start : start + batch_size] if prefix_length[i] == prefix_length[order[start]]]
            start += len(batch)
            encoded = tokenizer([texts[i] for i in batch], return_tensors="pt", padding=True, truncation=True)
            extra = {}
            if decoder_prefixes is not None:
                extra["decoder_input_ids"] = torch.tensor([list(decoder_prefixes[i]) for i in batch], device=model.device)
            generated = model.generate(input_ids=encoded["input_ids"].to(model.device),
                                       attention_mask=encoded["attention_mask"].to(model.device), **extra, **settings)
            for i, text in zip(batch, tokenizer.batch_decode(generated, skip_special_tokens=True), strict=True):
                outputs[i] = text
    model.train(was_training)
    return outputs
