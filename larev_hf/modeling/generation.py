"""Batched generation with any HF seq2seq model: the one loop the self-rationalizer, FRAME's label reader and the
text2text explanation generator share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
