"""The label as a rationale states it, and rationales that carry no information of their own — what the new-information
score (:mod:`larev_hf.methods.new_information`, docs/method.md, "New information") treats counterfactually.

- :func:`drop_label_statements`: every sentence of r that names a label and no content word of the input — "The answer
  is entailment.", "This is neutral because the premise neither entails nor contradicts the hypothesis." — removed: a
  statement of the label, which says nothing about this input.
- :func:`drop_ungrounded_sentences`: every sentence of r with no content word of the input — "The text supports the
  conclusion.", another instance's explanation appended — removed: a sentence about nothing in this input says nothing
  new about it.
- :func:`mask_input_copies`: every run of at least a few words that r copies from the input masked: the input is
  already in b, so a copy of it adds nothing (what r says *between* the copies is kept).
- :func:`mask_label_words`: every word of r that names a label — the label itself and its inflections
  ("entailment", "entails", "contradictory"), the verbalizer a template baseline states it with ("implies", "is not
  related to"), an answer choice as a whole word — replaced by the mask token: what r says of the label is read as
  nothing, as RoRA removes the label-leaking tokens of a rationale (RoRA §3.1-3.2) but without a learned detector.
- :func:`masked_baseline`: b with the label's verbalization masked (the thesis's E2 baseline b̃, table 4.2), so the
  reference term has room: the label is no longer read off b.
- :func:`uninformative_rationales`: per training instance, a rationale that adds nothing about the label beyond the
  input — none at all, a label statement, a copy of the input, another instance's explanation — drawn with the seed.
  Trained towards every label equally, they teach the evaluator that such rationales leave it unsure.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from nltk.stem import PorterStemmer

from larev_hf.data.vacuous import NLI_VERBALIZERS
from larev_hf.defaults import UNINFORMATIVE_KINDS
from larev_hf.leakage.attribution import STOP_WORDS
from larev_hf.leakage.environments import verbalization_term

#: Word endings stripped from a label name to find its stem: "entailment" → "entail", "contradiction" → "contradict".
_LABEL_SUFFIXES = ("ment", "ion", "ory", "ed", "s")
#: The verbalizers' inflections (what a template baseline or a rationale says instead of the label's name).
_VERBALIZER_FORMS = {"implies": ("imply", "implies", "implied", "implying"),
                     "contradicts": ("contradict", "contradicts"), "is not related to": ("is not related to",
                                                                                         "not related to",
                                                                                         "unrelated to")}
#: A sentence: up to and with its end mark (or the end of the text).
_SENTENCE = re.compile(r"[^.!?;]*(?:[.!?;]+|$)")
#: Where a sentence starts without an end mark before it: a space between a lower-case letter (or a closing quote or
#: bracket) and a capitalised word.
_LOST_END_MARK = re.compile(r"(?<=[a-z'\"”)])(?= [A-Z][a-z])")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
#: A word as :func:`mask_input_copies` matches runs of them (letters, digits and apostrophes).
_COPY_WORD = re.compile(r"[\w']+")
_STEMMER = PorterStemmer()


def label_stem(label: str) -> str:
    """The stem of a one-word label name whose inflections name it too (``"entailment"`` → ``"entail"``); a label of
    several words, or a short one, is its own stem."""
    word = label.strip().lower()
    if " " in word or len(word) < 6:
        return word
    for suffix in _LABEL_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 5:
            return word[: -len(suffix)]
    return word


def label_word_pattern(record: Mapping[str, Any]) -> re.Pattern[str]:
    """A case-insensitive pattern of every word of a rationale that names one of ``record``'s labels: for NLI each
    label's stem and inflections and the baseline verbalizers' forms; otherwise each answer choice as a whole word."""
    choices = [str(choice) for choice in record.get("choices") or [record["label"]]]
    if record.get("task") == "nli":
        stems = [rf"{re.escape(label_stem(choice))}\w*" for choice in choices]
        forms = [re.escape(form).replace(r"\ ", r"\s+") for verbalizer in NLI_VERBALIZERS.values()
                 for form in _VERBALIZER_FORMS.get(verbalizer, (verbalizer,))]
        alternatives = sorted(stems + forms, key=len, reverse=True)
    else:
        alternatives = sorted((re.escape(choice.strip()) for choice in choices if choice.strip()), key=len, reverse=True)
    return re.compile(rf"(?<![\w])(?:{'|'.join(alternatives)})(?![\w])", re.IGNORECASE)


def mask_label_words(text: str, record: Mapping[str, Any], mask_token: str) -> str:
    """``text`` with every word that names a label of ``record`` (:func:`label_word_pattern`) replaced by
    ``mask_token``: a rationale's statement of the label, read as nothing."""
    return label_word_pattern(record).sub(mask_token, text)


def _input_texts(record: Mapping[str, Any]) -> list[str]:
    """The fields of ``record``'s input as text: premise and hypothesis (NLI), else the question."""
    fields = ("premise", "hypothesis") if record.get("task") == "nli" else ("question",)
    return [str(record.get(name) or "") for name in fields]


def input_content_words(record: Mapping[str, Any]) -> set[str]:
    """The content words of ``record``'s input (premise and hypothesis, or the question): lower-cased, longer than two
    letters, not stop words."""
    return {word.lower() for text in _input_texts(record) for word in _WORD.findall(text)
            if len(word) > 2 and word.lower() not in STOP_WORDS}


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stem(word.lower())


def content_stems(text: str) -> set[str]:
    """The Porter stems (``nltk``) of ``text``'s content words: longer than two letters, not stop words — so
    "girls" meets "girl" and "riding" meets "rides"."""
    return {_stem(word) for word in _WORD.findall(text) if len(word) > 2 and word.lower() not in STOP_WORDS}


def input_content_stems(record: Mapping[str, Any]) -> set[str]:
    """:func:`content_stems` of ``record``'s input (premise and hypothesis, or the question)."""
    return {_stem(word) for word in input_content_words(record)}


def sentences(text: str) -> list[str]:
    """``text``'s sentences, each with the spaces before it and its end mark (joined, they give ``text`` back). A
    capitalised word right after a lower-case one (or a closing quote or bracket) starts a sentence too: lower-cased
    explanations (e-SNLI's) often lose the end mark before a sentence added to them ("… the dog The answer is
    contradiction.")."""
    return [part for sentence in _SENTENCE.findall(text) if sentence for part in _LOST_END_MARK.split(sentence)]


def drop_ungrounded_sentences(text: str, record: Mapping[str, Any], mask_token: str | None = None) -> str:
    """``text`` without the sentences that name no content word of ``record``'s input (:func:`content_stems`; the
    words of ``mask_token``, what earlier steps masked, do not count): a sentence about nothing in this input."""
    stems = input_content_stems(record)
    kept = [sentence for sentence in sentences(text)
            if content_stems(sentence.replace(mask_token, " ") if mask_token else sentence) & stems]
    return "".join(kept).strip()


def mask_input_copies(text: str, record: Mapping[str, Any], mask_token: str, min_words: int = 6) -> str:
    """``text`` with each maximal run of at least ``min_words`` words (or a whole input field, if shorter) copied from
    one field of ``record``'s input (premise or hypothesis, or the question) replaced by ``mask_token``; words are
    compared lower-cased."""
    words = [(m.group().lower(), m.start(), m.end()) for m in _COPY_WORD.finditer(text)]
    sources = [[w.lower() for w in _COPY_WORD.findall(source)] for source in _input_texts(record)]
    spans, i = [], 0
    while i < len(words):
        best = 0
        for source in sources:
            for start in range(len(source)):
                n = 0
                while i + n < len(words) and start + n < len(source) and words[i + n][0] == source[start + n]:
                    n += 1
                if n >= min(min_words, len(source)) and n > best:
                    best = n
        if best:
            spans.append((words[i][1], words[i + best - 1][2]))
        i += max(best, 1)
    for start, end in reversed(spans):
        text = f"{text[:start]}{mask_token}{text[end:]}"
    return text


def drop_label_statements(text: str, record: Mapping[str, Any]) -> str:
    """``text`` without the sentences that name a label of ``record`` (:func:`label_word_pattern`) and no content word
    of its input (:func:`input_content_words`): what is left of a bare label statement is nothing. A sentence that
    names a label *and* the input ("walking is contradictory to sleeping") is kept, for :func:`mask_label_words`."""
    pattern, content = label_word_pattern(record), input_content_words(record)
    kept = [sentence for sentence in sentences(text)
            if not (pattern.search(sentence) and not {w.lower() for w in _WORD.findall(sentence)} & content)]
    return "".join(kept).strip()


def masked_baseline(record: Mapping[str, Any], mask_token: str) -> str:
    """b̃: ``record``'s baseline with its label's verbalization masked (E2 of the thesis's table 4.2); the baseline as it
    is when it does not state the label verbatim."""
    baseline = record["baseline"]
    term = verbalization_term(record)
    return baseline if term is None else f"{baseline[:term.start]}{mask_token}{baseline[term.end:]}"


def _input_copy(record: Mapping[str, Any], rng: random.Random) -> str:
    """The input, or one part of it, as written: the hypothesis, the premise or both (NLI); the question otherwise."""
    if record.get("task") == "nli":
        return rng.choice([record["hypothesis"], record["premise"], f"{record['premise']} {record['hypothesis']}"])
    return str(record.get("question") or "")


def uninformative_rationales(records: Sequence[Mapping[str, Any]], seed: int = 0,
                             kinds: Sequence[str] = UNINFORMATIVE_KINDS, draws: int = 1) -> list[list[tuple[str, str]]]:
    """Per training record, ``draws`` pairs ``(kind, rationale)``: distinct kinds of ``kinds``
    (:data:`UNINFORMATIVE_KINDS`) drawn by (seed, id), each with a rationale of that kind — ``""``, a label of the
    record's choices (any label: a statement says nothing about which is right), a copy of the input, or another
    record's gold explanation (any label)."""
    unknown = [kind for kind in kinds if kind not in UNINFORMATIVE_KINDS]
    if unknown or not kinds:
        raise ValueError(f"uninformative rationale kinds {list(kinds)}: expected a non-empty list of "
                         f"{', '.join(UNINFORMATIVE_KINDS)}")
    if not 1 <= draws <= len(kinds):
        raise ValueError(f"{draws} uninformative rationales per instance: expected 1 to {len(kinds)}, one per kind")
    if "other_instance" in kinds and len({r["rationale"] for r in records}) < 2:
        raise ValueError("the other_instance kind needs two training records with different rationales")
    out = []
    for index, record in enumerate(records):
        rng = random.Random(f"{seed}:{record['id']}:uninformative")
        drawn = []
        # one draw is rng.choice, as a single environment always drew (its models stay reproducible)
        for kind in [rng.choice(list(kinds))] if draws == 1 else rng.sample(list(kinds), draws):
            if kind == "empty":
                text = ""
            elif kind == "label":
                text = f"{rng.choice(list(record.get('choices') or [record['label']]))} ."
            elif kind == "copy":
                text = _input_copy(record, rng)
            else:
                other = index
                while other == index or records[other]["rationale"] == record["rationale"]:
                    other = rng.randrange(len(records))
                text = records[other]["rationale"]
            drawn.append((kind, text))
        out.append(drawn)
    return out
