"""RoRA's label-conditioned infiller and the counterfactual data sets D^e (RoRA §3.2).

Following MICE (Ross et al., 2021), a seq2seq model learns to predict the masked leaking spans of a
training rationale from ``answer: {y} {x} rationale: {masked r}`` in T5's span-corruption format
(Raffel et al., 2020). Generating the spans for every candidate label e — greedy, once per label —
gives D^e = (X, R^e, Y): the label Y is unchanged, only the masked spans of the rationale are
rewritten, everything outside them is copied character for character. Because the infiller learns
I_V(Y → R | X), spans that x already determines come back unchanged and only the label-associated
ones flip (§3.2), so an aggressive mask still keeps most of the rationale's information.

The released code trains t5-base (lr 1e-4, batch 16, 20 epochs); here any backbone works, and offline
presets get sentinel tokens ``<extra_id_k>`` added to their tokenizer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from tokenizers import AddedToken
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.io import read_jsonl, write_jsonl
from larev_hf.modeling.backbones import build_model, resize_vocabulary
from larev_hf.modeling.scoring import pad_rows
from larev_hf.rora.masking import NUM_SENTINELS, MaskedRationale, infiller_input, sentinel, span_target
from larev_hf.training.seq2seq import train_seq2seq
from larev_hf.training.settings import TrainSettings


def add_sentinel_tokens(tokenizer: PreTrainedTokenizerBase, n: int = NUM_SENTINELS) -> int:
    """Add the sentinels ``<extra_id_0..n-1>`` a tokenizer lacks (T5's own already has them); return how many were added."""
    vocab = tokenizer.get_vocab()
    missing = [sentinel(k) for k in range(n) if sentinel(k) not in vocab]
    if missing:
        tokenizer.add_tokens([AddedToken(token, special=True, normalized=False) for token in missing], special_tokens=True)
    return len(missing)


def sentinel_ids(tokenizer: PreTrainedTokenizerBase, n: int = NUM_SENTINELS) -> dict[int, int]:
    """``{token id: k}`` of the sentinels; every one must be a single token."""
    ids = {}
    for k in range(n):
        token_ids = tokenizer.convert_tokens_to_ids([sentinel(k)])
        if token_ids[0] is None or token_ids[0] == tokenizer.unk_token_id:
            raise ValueError(f"the tokenizer has no single token for {sentinel(k)!r}; call add_sentinel_tokens first")
        ids[token_ids[0]] = k
    return ids


def build_infiller(backbone: str, tokenizer: PreTrainedTokenizerBase, seed: int = 0) -> PreTrainedModel:
    """A fresh infiller: sentinels added to ``tokenizer`` (in place), then the backbone sized to it."""
    add_sentinel_tokens(tokenizer)
    model = build_model(backbone, tokenizer, seed=seed)
    if model.get_input_embeddings().num_embeddings < len(tokenizer):  # a pretrained checkpoint without sentinels
        resize_vocabulary(model, len(tokenizer))
    return model


def infiller_pairs(
    records: Sequence[Mapping[str, Any]], masked: Sequence[MaskedRationale]
) -> tuple[list[str], list[str]]:
    """Training pairs ``answer: {y} {x} rationale: {masked r}`` → span target, for rationales with a masked span."""
    sources, targets = [], []
    for record, rationale in zip(records, masked, strict=True):
        if rationale.spans:
            sources.append(infiller_input(record, record["label"], rationale.masked))
            targets.append(span_target(rationale.originals))
    return sources, targets


def train_infiller(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    masked: Sequence[MaskedRationale],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
) -> PreTrainedModel:
    """Train the infiller on the training records' masked rationales (RoRA §3.2) and save it to ``output_dir``."""
    sources, targets = infiller_pairs(records, masked)
    if not sources:
        raise ValueError("no training rationale has a masked span: the detector masked nothing, nothing to infill")
    return train_seq2seq(model, tokenizer, sources, targets, output_dir, settings)


def parse_fills(ids: Sequence[int], sentinels: Mapping[int, int], tokenizer: PreTrainedTokenizerBase, n_spans: int) -> list[str | None]:
    """Split generated ids at the sentinels into the text of spans ``0..n_spans-1`` (``None`` for a span not produced)."""
    segments: dict[int, list[int]] = {}
    current = None
    for token in ids:
        if token == tokenizer.eos_token_id:
            break
        if token in sentinels:
            current = sentinels[token]
            segments.setdefault(current, [])
        elif current is not None:
            segments[current].append(token)
    return [tokenizer.decode(segments[k], skip_special_tokens=True).strip() if k in segments else None
            for k in range(n_spans)]


@dataclass
class Counterfactuals:
    """The rationale of one training example in every environment D^e, with the generated fills."""

    id: str
    rationales: dict[str, str]
    fills: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "rationales": self.rationales, "fills": self.fills}


@torch.inference_mode()
def generate_counterfactuals(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    masked: Sequence[MaskedRationale],
    *,
    batch_size: int = 32,
    max_new_tokens: int = 64,
    progress: bool = False,
) -> tuple[list[Counterfactuals], dict[str, int]]:
    """Greedy infilling of every record's masked spans once per candidate label e ∈ its ``choices`` (RoRA §3.2).

    Returns:
        `tuple`: one :class:`Counterfactuals` per record (``rationales[e]`` is r^e; the original rationale for
        every e when nothing was masked) and counts: ``generated`` sequences and ``missing_fills`` (spans the
        infiller did not produce; they are left empty so no original leaking text survives).
    """
    sentinels = sentinel_ids(tokenizer)
    jobs = [(i, label) for i, (record, rationale) in enumerate(zip(records, masked, strict=True)) if rationale.spans
            for label in record["choices"]]
    sources = [infiller_input(records[i], label, masked[i].masked) for i, label in jobs]
    encoded = tokenizer(sources, truncation=True, max_length=512)["input_ids"]
    order = sorted(range(len(jobs)), key=lambda j: len(encoded[j]), reverse=True)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    results: dict[tuple[int, str], list[str]] = {}
    missing = 0
    for start in tqdm(range(0, len(order), batch_size), desc="infilling", disable=not progress, unit="batch"):
        batch = order[start : start + batch_size]
        input_ids, attention_mask = pad_rows([encoded[j] for j in batch], tokenizer.pad_token_id)
        output = model.generate(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device),
                                do_sample=False, num_beams=1, max_new_tokens=max_new_tokens)
        for j, ids in zip(batch, output.tolist(), strict=True):
            i, label = jobs[j]
            fills = parse_fills(ids[1:], sentinels, tokenizer, len(masked[i].spans))  # ids[0]: decoder start
            missing += sum(fill is None for fill in fills)
            results[(i, label)] = [fill or "" for fill in fills]
    model.train(was_training)
    counterfactuals = []
    for i, (record, rationale) in enumerate(zip(records, masked, strict=True)):
        if not rationale.spans:
            counterfactuals.append(Counterfactuals(record["id"], {label: record["rationale"] for label in record["choices"]}))
            continue
        fills = {label: results[(i, label)] for label in record["choices"]}
        counterfactuals.append(Counterfactuals(record["id"], {label: _join(rationale, f) for label, f in fills.items()}, fills))
    return counterfactuals, {"generated": len(jobs), "missing_fills": missing}


def _join(rationale: MaskedRationale, fills: Sequence[str]) -> str:
    """Insert fills into the original text; a fill gets a space where it would otherwise fuse with a neighbouring word."""
    padded = []
    for (start, end), fill in zip(rationale.spans, fills, strict=True):
        before = rationale.text[start - 1] if start > 0 else " "
        after = rationale.text[end] if end < len(rationale.text) else " "
        if fill and before.isalnum() and fill[0].isalnum():
            fill = " " + fill
        if fill and after.isalnum() and fill[-1].isalnum():
            fill = fill + " "
        padded.append(fill)
    return rationale.fill(padded)


def save_counterfactuals(path: str | os.PathLike, counterfactuals: Sequence[Counterfactuals]) -> None:
    """Write counterfactuals as JSON Lines, atomically."""
    write_jsonl(path, (c.to_dict() for c in counterfactuals))


def load_counterfactuals(path: str | os.PathLike) -> list[Counterfactuals]:
    """Read a file written by :func:`save_counterfactuals`."""
    return [Counterfactuals(row["id"], row["rationales"], row.get("fills", {})) for _, row in read_jsonl(path)]
