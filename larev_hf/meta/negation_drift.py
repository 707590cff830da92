"""VARSuite's family E, ``drift`` (VARIF proposal §4): the gold rationale with exactly one negation inserted or deleted.

A drifted rationale reads like the gold and says the opposite, so a metric that rewards wording rather than what
supports the label scores it near the gold. The edit is rule-based (:func:`negation_edits`), or an HF text2text
model's (:func:`hf_negation_editor`) where :func:`is_negation_edit` accepts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.meta.family_registry import FamilyFn

_APOS = "['’]"
#: Deletion rules, tried in order (a span claimed by an earlier rule is not matched again).
_DELETIONS: tuple[tuple[str, str, str], ...] = (
    (rf"\b([Cc])a ?n{_APOS}t\b", r"\1an", "delete-nt"),      # can't, ca n't -> can
    (rf"\b([Ww])o ?n{_APOS}t\b", r"\1ill", "delete-nt"),     # won't, wo n't -> will
    (rf"\b([Ss])ha ?n{_APOS}t\b", r"\1hall", "delete-nt"),   # shan't -> shall
    (r"\b([Cc])annot\b", r"\1an", "delete-not"),             # cannot -> can
    (rf"\b(\w+?) ?n{_APOS}t\b", r"\1", "delete-nt"),         # doesn't, does n't -> does
    (r" not\b", "", "delete-not"),
    (r" no\b", "", "delete-no"),
    (r" never\b", "", "delete-never"),
)
_CANONICAL: tuple[tuple[str, str], ...] = (
    (rf"\b([Cc])a ?n{_APOS}t\b", r"\1an not"), (rf"\b([Ww])o ?n{_APOS}t\b", r"\1ill not"),
    (rf"\b([Ss])ha ?n{_APOS}t\b", r"\1hall not"), (r"\b([Cc])annot\b", r"\1an not"),
    (rf"\b(\w+?) ?n{_APOS}t\b", r"\1 not"),
)
_INSERTION = re.compile(rf"\b(?:is|are|was|were|can|could|will|would|should|may|might|must"
                        rf"|(?:has|have|had)(?= been\b| \w+(?:ed|en)\b))\b(?! not\b| no\b| never\b| ?n{_APOS}t\b)")
NEGATORS = frozenset({"not", "no", "never"})


def _negation_tokens(text: str) -> list[str]:
    for pattern, replacement in _CANONICAL:
        text = re.sub(pattern, replacement, text)
    return re.findall(r"\w+|[^\w\s]", text)


def is_negation_edit(gold: str, edited: str) -> bool:
    """Whether ``edited`` is ``gold`` with exactly one negation inserted or deleted (VARIF §4 E).

    Texts are compared as word/punctuation tokens after expanding contractions ("doesn't", "does n't"
    → "does not"; "can't", "cannot" → "can not"; "won't" → "will not"), so whitespace is ignored and a
    contraction ↔ full form change is no edit. One of the two token lists must equal the other plus one
    token among :data:`NEGATORS` (not, no, never; case-insensitive); every other token matches exactly.
    """
    a, b = _negation_tokens(gold), _negation_tokens(edited)
    if abs(len(a) - len(b)) != 1:
        return False
    long, short = (a, b) if len(a) > len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(long, short, strict=False)) if x != y), len(short))
    return long[i].lower() in NEGATORS and long[:i] + long[i + 1 :] == short


def negation_edits(gold: str) -> list[tuple[str, str]]:
    """Every rule-based one-negation edit of ``gold`` as ``(operation, edited text)``, in text order.

    Deletions: "n't"/"cannot" contractions, " not", " no", " never" (never at the very start of the text);
    insertions: " not" after a copula or modal (is, are, was, were, can, could, will, would, should, may,
    might, must; has/have/had before "been" or an -ed/-en word) not already negated. Only edits that
    pass :func:`is_negation_edit` are returned.
    """
    sites: list[tuple[int, int, str, str]] = []
    claimed: list[tuple[int, int]] = []
    for pattern, replacement, op in _DELETIONS:
        for match in re.finditer(pattern, gold):
            if any(match.start() < end and start < match.end() for start, end in claimed):
                continue
            claimed.append(match.span())
            sites.append((match.start(), match.end(), match.expand(replacement), op))
    for match in _INSERTION.finditer(gold):
        sites.append((match.end(), match.end(), " not", "insert-not"))
    edits = []
    for start, end, replacement, op in sorted(sites):
        edited = gold[:start] + replacement + gold[end:]
        if is_negation_edit(gold, edited):
            edits.append((op, edited))
    return edits


def drift_family(editor: Callable[[str, np.random.Generator], str | None] | None = None) -> FamilyFn:
    """Family E: one negation edit of the gold rationale, drawn with the example's rng.

    ``editor(gold, rng)`` is an optional hook (e.g. a wrapped HF text2text pipeline, see ``docs/meta.md``);
    its output is kept only if :func:`is_negation_edit` accepts it, otherwise the rule-based edit is used.
    """

    def drift(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        gold = record["rationale"]
        if editor is not None:
            edited = editor(gold, rng)
            if edited and is_negation_edit(gold, edited):
                return {"template_id": "drift:editor", "rationale": edited}
        edits = negation_edits(gold)
        if not edits:
            return None
        op, edited = edits[int(rng.integers(len(edits)))]
        return {"template_id": f"drift:{op}", "rationale": edited}

    return drift


def hf_negation_editor(model_name_or_path: str, prompt: str = "Negate the main claim of this sentence: {rationale}",
                       max_new_tokens: int = 96, device: str | None = None) -> Callable[[str, np.random.Generator], str]:
    """An ``editor`` for :func:`drift_family` from an HF text2text model, by Hub name (e.g. ``"google/flan-t5-large"``)
    or local path: greedy decoding of ``prompt`` (deterministic, so the suite stays byte-identical for a seed).

    VARIF §4 (E) allows "an LLM minimal edit"; the output is used only when :func:`is_negation_edit` accepts it, so a
    model that rewrites more than one negation falls back to the rule-based edit (``template_id`` says which).
    """
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path).eval()
    if device is not None:
        model.to(device)

    def editor(gold: str, rng: np.random.Generator) -> str:
        import torch

        inputs = tokenizer(prompt.format(rationale=gold), return_tensors="pt", truncation=True).to(model.device)
        with torch.no_grad():
            output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        return tokenizer.decode(output[0], skip_special_tokens=True).strip()

    return editor
