"""Negation edits of a text: exactly one negation inserted or deleted, by rules (VARIF proposal §4, family E).

VARSuite's ``drift`` family (:mod:`larev_hf.meta.suite`) draws one edit of the gold rationale; the finding
*contradicts the label* (:mod:`larev_hf.hub.findings`) reads an explanation beside its edits. The rules live here, in
the data layer, so both can use them.
"""

from __future__ import annotations

import re

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
