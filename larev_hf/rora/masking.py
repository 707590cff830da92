"""Masked rationales: the leaking spans a detector chose, replaced by T5 span sentinels (RoRA §3.1-§3.2).

The chosen n-grams (:meth:`larev_hf.rora.LeakageDetector.select`) merge into spans where they overlap or are
adjacent (:func:`merge_spans`); span k becomes the sentinel ``<extra_id_k>``, the span-corruption format the
label-conditioned infiller is trained on (:mod:`larev_hf.rora.infiller`), which writes one counterfactual rationale
per label by filling them (:meth:`MaskedRationale.fill`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from larev_hf.io import read_jsonl, write_jsonl
from larev_hf.rora.ngrams import NGram

SENTINEL = "<extra_id_{}>"
#: T5 reserves 100 sentinels; a rationale may have at most this many masked spans.
NUM_SENTINELS = 100


def sentinel(k: int) -> str:
    """The k-th span sentinel, ``<extra_id_k>`` (T5's spelling; added to tokenizers that lack it)."""
    return SENTINEL.format(k)



@dataclass
class MaskedRationale:
    """A rationale with its leaking spans replaced by sentinels.

    ``spans`` are character ranges of ``text``; ``masked`` has ``<extra_id_k>`` in place of span k.
    """

    text: str
    spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def masked(self) -> str:
        return self.fill([sentinel(k) for k in range(len(self.spans))])

    @property
    def originals(self) -> list[str]:
        """The text under each span (what the infiller learns to predict)."""
        return [self.text[start:end] for start, end in self.spans]

    def fill(self, fills: Sequence[str]) -> str:
        """``text`` with span k replaced by ``fills[k]``; every character outside the spans is kept as it is."""
        if len(fills) != len(self.spans):
            raise ValueError(f"got {len(fills)} fills for {len(self.spans)} masked spans")
        pieces, position = [], 0
        for (start, end), fill in zip(self.spans, fills, strict=True):
            pieces += [self.text[position:start], fill]
            position = end
        pieces.append(self.text[position:])
        return "".join(pieces)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "masked": self.masked, "spans": [list(span) for span in self.spans]}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> MaskedRationale:
        return cls(values["text"], [tuple(span) for span in values["spans"]])


def merge_spans(grams: Sequence[NGram]) -> list[tuple[int, int]]:
    """Character spans of the chosen n-grams, merged where their tokens overlap or are adjacent."""
    merged: list[list[int]] = []  # [first token, last token, start char, end char]
    for gram in sorted(grams, key=lambda g: (g.first, g.last)):
        if merged and gram.first <= merged[-1][1] + 1:
            last = merged[-1]
            if gram.last > last[1]:
                last[1], last[3] = gram.last, gram.end
        else:
            merged.append([gram.first, gram.last, gram.start, gram.end])
    return [(start, end) for _, _, start, end in merged]



def save_masked(path: str | os.PathLike, ids: Sequence[str], masked: Sequence[MaskedRationale]) -> None:
    """Write masked rationales as JSON Lines (``id``, ``text``, ``masked``, ``spans``), atomically."""
    write_jsonl(path, ({"id": i, **m.to_dict()} for i, m in zip(ids, masked, strict=True)))


def load_masked(path: str | os.PathLike) -> dict[str, MaskedRationale]:
    """Read a file written by :func:`save_masked` into ``{id: MaskedRationale}``."""
    return {row["id"]: MaskedRationale.from_dict(row) for _, row in read_jsonl(path)}
