"""IRM environments from the leakage term (thesis §4.5.2, table 4.2; §4.5.3, table 4.4).

For each training example: E1 keeps b, E2 replaces t_leak by a mask token, E3 replaces it by a
counter-label term from a :class:`~larev_hf.leakage.rewriters.Rewriter`; b̃ (the probe's input) is
E2's baseline. The three differ only inside t_leak's span. When t_leak lies inside the gold
label's verbalization in b (one word of "is not related to", of a two-word answer), the span is
widened to that whole verbalization, so masking and rewriting act on the label cue as a unit.
"""

from __future__ import annotations

import random
import re

from larev_hf.leakage.attribution import LeakageTerm
from larev_hf.leakage.rewriters import CounterLabelRewriter, Rewriter, label_verbalization

ENVIRONMENTS = ("original", "mask", "antonym")
#: Rationale-side environments (our extension, not the thesis's): b kept, the answer in r masked (E4) or
#: replaced by another choice (E5), as RoRA removes label-leaking tokens from the rationale.
RATIONALE_ENVIRONMENTS = ("rationale_mask", "rationale_swap")


def widen_to_verbalization(example: dict, baseline: str, start: int, end: int) -> tuple[int, int]:
    """The span of the gold verbalization occurrence in ``baseline`` that overlaps [start, end), if any."""
    verbalization = label_verbalization(example, example["label"]).lower()
    lowered, position = baseline.lower(), 0
    while (found := lowered.find(verbalization, position)) >= 0:
        if found < end and start < found + len(verbalization):
            return min(start, found), max(end, found + len(verbalization))
        position = found + 1
    return start, end


def make_environments(
    example: dict,
    term: LeakageTerm,
    mask_token: str,
    rewriter: Rewriter | None = None,
    widen: bool = True,
) -> dict[str, str]:
    """The baselines of E1/E2/E3 and the span they differ in: ``{"original", "mask", "antonym", "term", "start", "end"}``."""
    rewriter = rewriter or CounterLabelRewriter()
    baseline = example["baseline"]
    start, end = widen_to_verbalization(example, baseline, term.start, term.end) if widen else (term.start, term.end)
    prefix, span, suffix = baseline[:start], baseline[start:end], baseline[end:]
    return {
        "original": baseline,
        "mask": f"{prefix}{mask_token}{suffix}",
        "antonym": rewriter.rewrite(example, prefix, span, suffix),
        "term": span,
        "start": start,
        "end": end,
    }


def verbalization_term(example: dict) -> LeakageTerm | None:
    """The last occurrence of the gold label's verbalization in the baseline, as a leakage term.

    An offline stand-in for the Integrated-Gradients term (it needs no trained Φ_base), used by the
    example scripts; ``None`` when the baseline does not state the label verbatim.
    """
    verbalization = label_verbalization(example, example["label"])
    start = example["baseline"].lower().rfind(verbalization.lower())
    if start < 0:
        return None
    end = start + len(verbalization)
    return LeakageTerm(start, end, example["baseline"][start:end], 0.0, False)


def verbalization_environments(records: list[dict], mask_token: str) -> tuple[list[dict], list[dict[str, str]]]:
    """E1/E2/E3 around :func:`verbalization_term` for every record whose baseline states its label; also returns
    those records (the others are dropped)."""
    kept, environments = [], []
    for record in records:
        term = verbalization_term(record)
        if term is not None:
            kept.append(record)
            environments.append(make_environments(record, term, mask_token))
    return kept, environments


def mask_token_of(tokenizer) -> str:
    """The tokenizer's mask token, or T5's first sentinel ``<extra_id_0>``."""
    if getattr(tokenizer, "mask_token", None):
        return tokenizer.mask_token
    if "<extra_id_0>" in tokenizer.get_vocab():
        return "<extra_id_0>"
    return tokenizer.unk_token


def answer_pattern(answer: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive occurrences of ``answer`` (a label or answer choice) in a text."""
    return re.compile(rf"(?<![\w]){re.escape(answer.strip())}(?![\w])", re.IGNORECASE)


def rationale_environments(example: dict, mask_token: str, seed: int = 0) -> dict[str, str]:
    """The rationales of E4 and E5 (:data:`RATIONALE_ENVIRONMENTS`): every whole-word occurrence of the gold answer
    in r replaced by ``mask_token`` (E4) or by another of the example's choices, drawn by (seed, id) (E5). Where r
    does not state the answer both equal r, so the environments differ only where the rationale leaks the label."""
    rationale, label = example["rationale"], example["label"]
    pattern = answer_pattern(label)
    others = [c for c in example["choices"] if c != label]
    counter = random.Random(f"{seed}:{example['id']}:rationale").choice(others) if others else label
    return {"rationale_mask": pattern.sub(lambda _: mask_token, rationale),
            "rationale_swap": pattern.sub(lambda _: counter, rationale)}


#: Grounding environments (our extension, not the thesis's): b kept, the rationale replaced by one that is
#: not an explanation of this input — another training instance's gold (of any label) or this gold's words in a
#: random order — with this instance's label as the target.
GROUNDING_ENVIRONMENTS = ("other_instance", "word_shuffle")

#: LAREV-G's ``--grounding-target`` → the grounding environments whose target is every label equally (a uniform
#: distribution: outlier exposure) instead of the instance's label.
GROUNDING_TARGETS: dict[str, tuple[str, ...]] = {
    "label": (), "uniform": GROUNDING_ENVIRONMENTS, "mixed": ("word_shuffle",)}


def word_shuffle(text: str, rng: random.Random) -> str:
    """``text``'s whitespace-separated words in a random order (the same words, none of what they said); the text
    itself when it has fewer than two distinct words."""
    words = text.split()
    if len(set(words)) < 2:
        return text
    shuffled = words[:]
    while shuffled == words:
        rng.shuffle(shuffled)
    return " ".join(shuffled)


def grounding_rationales(records: list[dict], seed: int = 0) -> list[dict[str, str]]:
    """Per training record, the rationales of :data:`GROUNDING_ENVIRONMENTS`: ``other_instance`` is the gold
    rationale of another record drawn by (seed, id) from all records (any label: its label cues do not predict this
    record's label) with a different rationale text; ``word_shuffle`` is :func:`word_shuffle` of this record's gold.

    In an IRM group with E1-E3 (same target y), a Φ that trusts a rationale's label cues whatever the rationale is
    about has a different risk in these environments than in E1-E3; the invariant predictor uses r only where r is an
    explanation of this input (docs/method.md, "Grounded LAREV")."""
    if len(records) < 2:
        raise ValueError("grounding environments need at least two training records (another instance's rationale)")
    if len({r["rationale"] for r in records}) < 2:
        raise ValueError("grounding environments need two different training rationales; every one is the same text")
    out = []
    for index, record in enumerate(records):
        rng = random.Random(f"{seed}:{record['id']}:grounding")
        other = index
        while other == index or records[other]["rationale"] == record["rationale"]:
            other = rng.randrange(len(records))
        out.append({"other_instance": records[other]["rationale"],
                    "word_shuffle": word_shuffle(record["rationale"], rng)})
    return out
