"""VARSuite families that a surface heuristic cannot pass (our extension of VARIF §4; docs/meta.md).

On e-SNLI, ROUGE-L of the rationale against the input separates gold from every template family A-D and length
separates the leaks (measured: docs/meta.md, "Families"): the template families differ from gold on the surface.
These families do not:

- ``input_copy``: a restatement of the input (premise and hypothesis, or the question), which ROUGE-L against the input
  scores at its maximum although it adds nothing;
- ``hypothesis_copy`` (NLI only): the hypothesis alone, restated;
- ``off_topic``: the gold rationale of *another* instance with the same label (NLI, yes/no), or another question's
  rationale whose answer is replaced by this one's (QA): fluent, human-written, consistent with the label, about
  something else;
- ``shuffled``: the gold rationale with its content words shuffled among their positions (same words, same length,
  stop words in place), which destroys what it says;
- ``label_only``: "the answer is <label> ." and kin, in the lower-case style of e-SNLI's explanations: the
  label and nothing about the input.
- ``padding``: the gold rationale followed by sentences that add nothing about this input. A metric that rewards
  length — or a calibration that leans on a length-like feature — scores it above the gold although the padding tells
  nothing new about this instance. RoRA's human study shows why this matters: on StrategyQA rationale length alone
  correlates with people (the better generators write longer rationales), so a metric can look right there by
  counting words. The padding is, drawn per example with the suite's seed: ``other``, the gold rationale of another
  instance (NLI and yes/no: one with the same label, so the padding does not argue for another label; QA: another
  question's rationale that names none of this question's choices); ``filler``, one or two generic sentences from
  :data:`FILLER` that fit any input; ``both``, the other instance's rationale, then a filler sentence. Every row keeps
  the gold label and records the instance it borrowed from in ``source_id`` (``None`` for filler alone).

Several surface templates per task for the copies, drawn per example with the seed (:func:`~larev_hf.meta.family_registry.example_rng`); every family keeps the gold label. Importing this module registers them in :mod:`larev_hf.meta.family_registry`
(:mod:`larev_hf.meta.suite` imports it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.meta.family_registry import STOPWORDS, WORD, pick_template, register_family

#: Surface templates of the input copies: family → task → templates. Fields: ``{premise}``, ``{hypothesis}``,
#: ``{question}`` as written (a final period added where there is none), and ``{..._clause}``: without the final punctuation and with a lower-case first letter.
COPY_TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "input_copy": {
        "nli": ("{premise} {hypothesis}", "The premise says: {premise} The hypothesis says: {hypothesis}",
                "{premise} Therefore, {hypothesis_clause}.", "We are told that {premise_clause}, and that "
                "{hypothesis_clause}.", "Since {premise_clause}, {hypothesis_clause}.",
                "The first sentence is \"{premise_clause}\" and the second is \"{hypothesis_clause}\"."),
        "qa": ("{question}", "The question asks: {question}", "{question} That is what has to be answered.",
               "To answer, think about the question: {question}", "The question here is {question_clause}.",
               "We need to know {question_clause}."),
        "yesno": ("{question}", "The question asks: {question}", "{question} That is what has to be answered.",
                  "To answer, think about the question: {question}", "The question here is {question_clause}.",
                  "We need to know {question_clause}."),
    },
    "hypothesis_copy": {
        "nli": ("{hypothesis}", "The hypothesis says that {hypothesis_clause}.", "It is stated that "
                "{hypothesis_clause}.", "{hypothesis} This is what the second sentence claims.",
                "In short, {hypothesis_clause}.", "The claim is that {hypothesis_clause}."),
    },
    # the bare label in the lower-case, space-before-period style of e-SNLI's own explanations (an unseen attack
    # that beats the gold on one label's rows, docs/meta.md, "Families"); unlike ``leak`` it is written as a gold
    # explanation is, so a metric cannot tell it apart by its surface form
    "label_only": {
        "nli": ("the answer is {label} .", "{label} .", "it is {label} .", "the relation is {label} .",
                "this is {label} .", "so it is {label} ."),
        "qa": ("the answer is {label} .", "{label} .", "it is {label} .", "the answer must be {label} .",
               "so it is {label} .", "{label} is the answer ."),
        "yesno": ("the answer is {label} .", "{label} .", "it is {label} .", "the answer must be {label} .",
                  "so it is {label} .", "{label} is the answer ."),
    },
}


def _label_only(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict:
    """"the answer is <label> ." and its kin: the label and nothing about this input."""
    return pick_template("label_only", record, rng, templates)


def _clause(text: str) -> str:
    """``text`` without its final punctuation, its first letter lower-cased unless the word is an acronym or "I"."""
    text = re.sub(r"[\s.!?]+$", "", text.strip())
    first = text.split(" ", 1)[0]
    if text and first != "I" and not (len(first) > 1 and first.isupper()):
        text = text[0].lower() + text[1:]
    return text


def _sentence(text: str) -> str:
    """``text`` ending in punctuation (a period added where it has none)."""
    text = text.strip()
    return text if re.search(r"[.!?]['\"]?$", text) else f"{text}."


def _copy_fields(record: Mapping[str, Any]) -> dict[str, str]:
    names = ("premise", "hypothesis") if record["task"] == "nli" else ("question",)
    return {**{n: _sentence(record[n]) for n in names}, **{f"{n}_clause": _clause(record[n]) for n in names}}


def copy_family(name: str, tasks: Sequence[str] | None = None):
    """A family drawing one of ``name``'s templates for the record's task (skipping a task outside ``tasks``)."""

    def family(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        if tasks is not None and record["task"] not in tasks:
            return None
        return pick_template(name, record, rng, templates, **_copy_fields(record))

    return family


def _mentions(text: str, phrase: str) -> re.Match | None:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, flags=re.IGNORECASE) if phrase.strip() else None


class OffTopicFamily:
    """The gold rationale of another instance that is consistent with this instance's label (see the module
    docstring). :meth:`prepare` indexes the suite's records before rows are built (:func:`~larev_hf.meta.suite.
    build_suite_with_skips` calls it); the row records the instance it came from in ``source_id``."""

    def __init__(self) -> None:
        self.by_label: dict[str, list[Mapping[str, Any]]] = {}
        self.answer_stating: list[Mapping[str, Any]] = []

    def prepare(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.by_label, self.answer_stating = {}, []
        for record in records:
            if not record["rationale"].strip():
                continue
            if record["task"] == "qa":
                if _mentions(record["rationale"], record["label"]):
                    self.answer_stating.append(record)
            else:
                self.by_label.setdefault(f"{record['task']}:{record['label']}", []).append(record)

    def __call__(self, record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        if record["task"] == "qa":
            pool = [other for other in self.answer_stating if other["id"] != record["id"]
                    and other["question"] != record["question"] and not _mentions(other["rationale"], record["label"])]
        else:
            pool = [other for other in self.by_label.get(f"{record['task']}:{record['label']}", [])
                    if other["id"] != record["id"] and other["rationale"] != record["rationale"]]
        if not pool:
            return None
        source = pool[int(rng.integers(len(pool)))]
        rationale = source["rationale"]
        if record["task"] == "qa":  # the other question's answer becomes this one's: on-label, off-topic
            rationale = re.sub(rf"(?<!\w){re.escape(source['label'])}(?!\w)", lambda _: record["label"], rationale,
                               flags=re.IGNORECASE)
        return {"template_id": "off_topic", "rationale": rationale, "source_id": source["id"]}


def content_word_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the content words of ``text``: words of three letters or more that are not stop words."""
    return [m.span() for m in WORD.finditer(text) if len(m.group()) > 2 and m.group().lower() not in STOPWORDS]


def shuffle_content_words(text: str, rng: np.random.Generator) -> str | None:
    """``text`` with its content words permuted among their positions (``None`` when fewer than two differ)."""
    spans = content_word_spans(text)
    words = [text[a:b] for a, b in spans]
    if len({w.lower() for w in words}) < 2:
        return None
    order = list(range(len(words)))
    for _ in range(20):
        order = list(rng.permutation(len(words)))
        if [words[k].lower() for k in order] != [w.lower() for w in words]:
            break
    else:
        order = order[1:] + order[:1]
    pieces, last = [], 0
    for (start, end), k in zip(spans, order, strict=True):
        pieces += [text[last:start], words[k]]
        last = end
    shuffled = "".join(pieces) + text[last:]
    return shuffled if shuffled != text else None


def _shuffled(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
    text = shuffle_content_words(record["rationale"], rng)
    return None if text is None else {"template_id": "shuffled", "rationale": text}


#: Sentences that are true of nearly anything and say nothing about an instance.
FILLER: tuple[str, ...] = (
    "This is something that can happen in everyday life.",
    "Many people have seen situations like this one.",
    "It is worth reading the sentences carefully.",
    "There are many things one could say about this.",
    "Details like these are common in descriptions.",
    "Such scenes are often described in simple words.",
)
#: What the padding is: another instance's rationale, filler sentences, or both.
PADDING_KINDS = ("other", "filler", "both")


def _padded_sentence(text: str) -> str:
    """``text`` ending in ``.``, ``!`` or ``?`` (a period added otherwise; unlike :func:`_sentence`, a closing quote
    is not looked past: the padding's rows as they have always been built)."""
    text = text.strip()
    return text if re.search(r"[.!?]$", text) else f"{text}."


def _names_any(text: str, phrases: Sequence[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(p)}(?!\w)", text, flags=re.IGNORECASE) for p in phrases if p.strip())


class PaddingFamily:
    """Gold + padding (``padding`` in the module docstring). :meth:`prepare` indexes the suite's records before rows
    are built."""

    def __init__(self) -> None:
        self.records: list[Mapping[str, Any]] = []

    def prepare(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.records = [record for record in records if record["rationale"].strip()]

    def _other(self, record: Mapping[str, Any], rng: np.random.Generator) -> Mapping[str, Any] | None:
        if record["task"] == "qa":
            pool = [o for o in self.records if o["question"] != record["question"]
                    and not _names_any(o["rationale"], record["choices"])]
        else:
            pool = [o for o in self.records if o["task"] == record["task"] and o["label"] == record["label"]
                    and o["id"] != record["id"] and o["rationale"] != record["rationale"]]
        return pool[int(rng.integers(len(pool)))] if pool else None

    def __call__(self, record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        if not record["rationale"].strip():
            return None
        kind = PADDING_KINDS[int(rng.integers(len(PADDING_KINDS)))]
        source = self._other(record, rng) if kind != "filler" else None
        if source is None:
            kind = "filler"
        fillers = [FILLER[int(k)] for k in rng.choice(len(FILLER), size=2 if kind == "filler" else 1, replace=False)]
        padding = ([_padded_sentence(source["rationale"])] if source is not None else []) + \
            (fillers if kind != "other" else [])
        return {"template_id": f"padding:{kind}",
                "rationale": " ".join([_padded_sentence(record["rationale"]), *padding]),
                "source_id": None if source is None else source["id"]}


# padding first: the order the families registered in when it had a module of its own, imported first
register_family("padding", PaddingFamily(), overwrite=True)
register_family("input_copy", copy_family("input_copy"), COPY_TEMPLATES["input_copy"], overwrite=True)
register_family("hypothesis_copy", copy_family("hypothesis_copy", ("nli",)), COPY_TEMPLATES["hypothesis_copy"],
                overwrite=True)
register_family("off_topic", OffTopicFamily(), overwrite=True)
register_family("shuffled", _shuffled, overwrite=True)
register_family("label_only", _label_only, COPY_TEMPLATES["label_only"], overwrite=True)
