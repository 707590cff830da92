"""RoRA's texts: masked rationales (the leaking spans a detector chose, replaced by T5 span sentinels, RoRA §3.1-§3.2)
and the formats its models read and write.

The chosen n-grams (:meth:`larev_hf.rora.LeakageDetector.select`) merge into spans where they overlap or are
adjacent (:func:`merge_spans`); span k becomes the sentinel ``<extra_id_k>``, the span-corruption format the
label-conditioned infiller is trained on (:mod:`larev_hf.rora.infiller`), which writes one counterfactual rationale
per label by filling them (:meth:`MaskedRationale.fill`).

The formats, from the authors' released StrategyQA code (``shared/REFERENCE-IMPLEMENTATIONS.md``):

- infiller (RoRA §3.2): ``"answer: {label} question: {q} rationale: {masked r}"`` → the masked spans in
  T5's span-corruption format ``"<extra_id_0> span0 <extra_id_1> span1 <extra_id_2>"`` (:func:`span_target`);
- evaluator Φ (eq. 7): ``"question: {q} rationale: {r}"`` → the label;
- baseline Θ (eq. 8): the same text with an EMPTY rationale, ``"question: {q} rationale:"``.

``x`` is ``"question: {q}"`` for yes/no questions (exactly the released format), ``"question: {q}
options: (1) {c1} (2) {c2} ..."`` for multiple-choice QA (the released ECQA evaluator also lists the
options) and ``"premise: {p} hypothesis: {h}"`` for NLI.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from larev_hf.io import read_jsonl, write_jsonl
from larev_hf.modeling.input_formats import RORA_FORMAT, task_text
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


INFILLER_TEMPLATE = "answer: {label} {x} rationale: {rationale}"
#: The words the templates add to every input (for training a preset tokenizer on RoRA's texts).
TEMPLATE_WORDS = "answer: question: options: rationale: premise: hypothesis:"


def evaluator_input(record: Mapping[str, Any], rationale: str) -> str:
    """Φ's encoder text: ``"{x} rationale: {r}"`` (RoRA eq. 7)."""
    return RORA_FORMAT.rationale_input(rationale, task_text(record))


def baseline_input(record: Mapping[str, Any]) -> str:
    """Θ's encoder text: x with an empty rationale, ``"{x} rationale:"`` (RoRA eq. 8)."""
    return RORA_FORMAT.baseline_input(task_text(record))


def infiller_input(record: Mapping[str, Any], label: str, masked_rationale: str) -> str:
    """The infiller's encoder text for candidate ``label`` (RoRA §3.2: y ⊕ x ⊕ masked r)."""
    return INFILLER_TEMPLATE.format(label=label, x=task_text(record), rationale=masked_rationale.strip())


def span_target(originals: Sequence[str]) -> str:
    """T5 span-corruption target: each masked span after its sentinel, closed by the next sentinel."""
    pieces = [f"{sentinel(k)} {text.strip()}" for k, text in enumerate(originals)]
    return " ".join([*pieces, sentinel(len(originals))])

