"""Vacuous baselines ``b``: the input and the label restated, with no new information.

REV (§3.2) measures a rationale ``r`` by how much more it tells an evaluator about the label ``y``
than a *vacuous* rationale ``b`` that only combines the input ``x`` and ``y`` (a template for
e-SNLI, a question→declarative conversion for QA); the LAREV thesis (§4.4, table 4.1) keeps that
baseline and adds a leakage correction. A baseline is therefore built from ``(x, y)`` only — never
from the rationale — and always contains the label's verbalization (:func:`label_verbalization`).

This module holds what a baseline says: the templates and :class:`TemplateBaselineBuilder` (rule-based,
dependency-free, deterministic: the default). :mod:`larev_hf.data.baseline_builders` holds the builder that runs an
HF model (:class:`~larev_hf.data.baseline_builders.HFBaselineBuilder`) and how a builder is chosen and applied.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from larev_hf.io import DataError, where

logger = logging.getLogger(__name__)

#: REV's label verbalizers for the e-SNLI template baseline (REV §3.2).
NLI_VERBALIZERS: dict[str, str] = {
    "entailment": "implies",
    "contradiction": "contradicts",
    "neutral": "is not related to",
}

#: Surface frames for NLI; the first is REV's ``"{premise} {verbalizer} {hypothesis}"``.
NLI_FRAMES: tuple[str, ...] = (
    "{p} {v} {h}.",
    "{p}. This {v} the claim that {h}.",
    "The statement that {p} {v} the statement that {h}.",
)

#: Columns a builder never sees (a baseline is built from (x, y) alone).
RATIONALE_COLUMNS = re.compile(r"^(rationale(_\w+)?|baseline)$")
_TRAILING_PUNCT = re.compile(r"[\s.!?,;:]+$")
_BLANK = re.compile(r"_+")
_CLAUSE_BREAK = re.compile(r"(?:[.!?]\s+|,\s*(?=(?:what|where|which|who|whom|whose|when|why|how)\b))", re.IGNORECASE)
_GAP_WH = {"what", "where", "which", "who", "whom", "whose", "when"}
_FRONT_WH = _GAP_WH | {"why", "how"}
_BE = {"is", "are", "was", "were"}
_AUX = _BE | {"do", "does", "did", "can", "could", "would", "will", "should", "might", "may", "must", "shall", "has", "have", "had"}
_SUBJECTS = {"you", "i", "we", "they", "he", "she", "it", "one", "someone", "somebody", "people", "humans"}
_PARTICIPLE = re.compile(r"^(\w+ed|\w+en|kept|found|put|held|built|sold|bought|made|worn|seen)$", re.IGNORECASE)
_LOWERABLE = {"a", "an", "the", "two", "three", "four", "some", "several", "many", "this", "these", "those",
              "there", "people", "men", "women", "one", "he", "she", "it", "we", "they", "his", "her", "its",
              "their"}


def instance_key(example: Mapping[str, Any]) -> str:
    """What identifies an instance by its content: the task and its inputs (premise and hypothesis; the question and
    its choices), never a row id. Every per-example draw of the baselines is seeded from it, so an explanation scores
    the same whatever its id or its line, and the explanations of one instance share one baseline."""
    fields = (example.get("premise", ""), example.get("hypothesis", "")) if example.get("task") == "nli" else \
        (example.get("question", ""), *sorted(example.get("choices") or ()))
    return "\x1f".join([str(example.get("task", "")), *map(str, fields)])


def label_verbalization(example: Mapping[str, Any]) -> str:
    """The text by which a baseline states the label: REV's NLI verbalizer, the answer text, or yes/no."""
    if example["task"] == "nli":
        if example["label"] not in NLI_VERBALIZERS:
            raise DataError(f"{where(example_id=example.get('id'))}: field 'label' is {example['label']!r}; "
                            f"expected one of {list(NLI_VERBALIZERS)}")
        return NLI_VERBALIZERS[example["label"]]
    return str(example["label"])


def _strip_end(text: str) -> str:
    return _TRAILING_PUNCT.sub("", " ".join(str(text).split()))


def _sentence(text: str) -> str:
    """Capitalise and end with a full stop, keeping a final "." or "!" (it may end the answer text)."""
    text = " ".join(text.split()).rstrip("?,;: ")
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!")) else ".")


def _embedded(text: str) -> str:
    """Lower-case a sentence-initial determiner so the text reads naturally inside a frame."""
    first, _, rest = text.partition(" ")
    return (first.lower() + (" " + rest if rest else "")) if first.lower() in _LOWERABLE else text


def nli_baseline(premise: str, hypothesis: str, label: str, frame: int = 0) -> str:
    """REV's template baseline for NLI: premise, verbalizer, hypothesis (trailing punctuation stripped)."""
    template = NLI_FRAMES[frame]
    p, h = _strip_end(premise), _embedded(_strip_end(hypothesis))
    if not template.startswith("{p}"):
        p = _embedded(p)
    return _sentence(template.format(p=p, v=NLI_VERBALIZERS[label], h=h))


def _fronted_wh(words: list[str], answer: str) -> str | None:
    """Un-invert a fronted wh-question; ``None`` when no rule applies.

    ``Where would you put X`` → ``you would put X: answer`` (a ``do`` auxiliary is kept, which keeps
    the tense: ``Where did he go`` → ``he did go: answer``); ``What is X`` → ``X is answer``;
    ``Where is the X kept`` → ``the X is kept: answer``.
    """
    wh, rest = words[0].lower(), words[1:]
    if len(rest) >= 2 and rest[0].lower() in _AUX and rest[1].lower() in _SUBJECTS:
        aux, subject, tail = rest[0], rest[1], rest[2:]
        return " ".join([subject, aux, *tail]) + f": {answer}"
    if len(rest) >= 2 and rest[0].lower() in _BE:
        if wh in {"what", "which", "who"}:
            return " ".join([*rest[1:], rest[0], answer])
        if len(rest) >= 3 and _PARTICIPLE.match(rest[-1]):
            return " ".join([*rest[1:-1], rest[0], rest[-1]]) + f": {answer}"
    return None


def qa_baseline(question: str, answer: str) -> str:
    """Rule-based question→declarative conversion that always contains ``answer`` verbatim.

    Heuristic (a dependency-free stand-in for REV/RoRA's QA2D model), tried in order on the
    question's last clause (after the last sentence break, or a comma followed by a wh-word):

    1. A blank (``_`` or ``___``) is replaced by the answer.
    2. A gap wh-word (what/where/which/who/whom/whose/when) as the last word is replaced by the
       answer: "... no surprise sight at the what?" → "... no surprise sight at the bus depot."
    3. A fronted wh-question with an auxiliary and a pronoun subject drops the wh-word and un-inverts:
       "Where would you put a light?" → "You would put a light: desk."; "What is X?" → "X is answer.";
       "Where is the X kept?" → "The X is kept: garage." (a be-question ending in a participle).
    4. An in-situ "what" inside the clause is replaced: "works up a what playing" → "works up a sweat playing".
    5. Otherwise the question is kept and the answer appended: "Where would a bald eagle land: tree."
    """
    question = " ".join(str(question).split())
    answer = " ".join(str(answer).split())
    if _BLANK.search(question):
        return _sentence(_BLANK.sub(lambda _: answer, question, count=1))
    body = _strip_end(question)
    breaks = list(_CLAUSE_BREAK.finditer(body))
    cut = breaks[-1].end() if breaks else 0
    prefix, words = body[:cut], body[cut:].split()
    lowered = [word.lower() for word in words]
    if lowered and lowered[-1] in _GAP_WH:
        clause = " ".join([*words[:-1], answer])
    elif lowered and lowered[0] in _FRONT_WH and (fronted := _fronted_wh(words, answer)) is not None:
        clause = fronted[:1].upper() + fronted[1:] if prefix.rstrip().endswith((".", "!", "?")) else fronted
    elif "what" in lowered[1:]:
        at = len(lowered) - 1 - lowered[::-1].index("what")
        clause = " ".join([*words[:at], answer, *words[at + 1 :]])
    else:
        clause = " ".join(words) + f": {answer}"
    return _sentence(prefix + clause)


def yesno_baseline(question: str, label: str) -> str:
    """Yes/no baseline: the question followed by the answer word, e.g. ``"Is X a Y? no."``.

    Kept deliberately simple (no polarity rewriting, which would need a parser) so the label word
    ``yes``/``no`` is always present verbatim.
    """
    return f"{_strip_end(question)}? {label}."


@runtime_checkable
class BaselineBuilder(Protocol):
    """Maps examples (schema records without rationale columns) to one baseline string each."""

    def __call__(self, examples: list[dict[str, Any]]) -> list[str]: ...

    def to_config(self) -> dict[str, Any]: ...


class TemplateBaselineBuilder:
    """Rule-based vacuous baselines (REV §3.2; LAREV thesis §4.4, table 4.1).

    NLI uses REV's template with the verbalizers "implies" / "contradicts" / "is not related to";
    with ``variants=True`` one of :data:`NLI_FRAMES` is chosen per instance from ``seed`` and the instance's content
    (:func:`instance_key`: premise and hypothesis, never the row id), so an evaluator cannot key on one fixed surface
    form (the verbalizer is always present verbatim) and a score never depends on what a row is called.
    QA uses :func:`qa_baseline`, yes/no :func:`yesno_baseline`.

    Args:
        seed (`int`, defaults to 0): seeds the per-example frame choice.
        variants (`bool`, defaults to `True`): vary the NLI frame; `False` gives REV's single template.
    """

    def __init__(self, seed: int = 0, variants: bool = True) -> None:
        self.seed = seed
        self.variants = variants

    def build(self, example: Mapping[str, Any]) -> str:
        """Baseline for one example; reads ``task``, the inputs and ``label`` only (``id`` names it in errors)."""
        task, label = example["task"], example["label"]
        if task == "nli":
            label_verbalization(example)  # validates the label
            frame = random.Random(f"{self.seed}:{instance_key(example)}").randrange(len(NLI_FRAMES)) \
                if self.variants else 0
            return nli_baseline(example["premise"], example["hypothesis"], label, frame)
        if task == "qa":
            return qa_baseline(example["question"], label)
        if task == "yesno":
            return yesno_baseline(example["question"], label)
        raise DataError(f"{where(example_id=example.get('id'))}: field 'task' is {task!r}; expected nli, qa or yesno")

    def __call__(self, examples: list[dict[str, Any]]) -> list[str]:
        return [self.build(example) for example in examples]

    def to_config(self) -> dict[str, Any]:
        return {"name": "template", "seed": self.seed, "variants": self.variants}
