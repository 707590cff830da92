"""The VARSuite family registry: family name → the function that writes a family's rationale for a record, and the
helpers every family module uses (a seeded generator per example, template drawing, the word pattern), with the
hand-written surface templates they draw from (families A-D, VARIF proposal §4: :data:`TEMPLATES` per task, several
per family so that no metric passes by memorising one string) and the stop words that keep the pseudo-specific
family's "entity" a content word (:data:`STOPWORDS`). The built-in
families (:mod:`larev_hf.meta.suite`) and the surface-proof ones (:mod:`larev_hf.meta.surface_families`) register
here, so neither imports the other's module to add a family."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.io import DataError, where

_NLI_RELATION = {"entailment": "entails", "contradiction": "contradicts",
                 "neutral": "neither entails nor contradicts"}
_TRUTH = {"yes": "true", "no": "false"}

#: Surface templates of the families A-D: family → task → templates. Fields: ``{label}``, ``{relation}``
#: (NLI: entails / contradicts / neither entails nor contradicts), ``{truth}`` (yes/no: true / false),
#: ``{entity}`` (D only). ``vacuous`` and ``pseudo_specific`` templates never state the label.
TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "vacuous": {
        "nli": ("The answer follows from the evidence provided.", "The text supports the conclusion.",
                "The relation between the two sentences is clear from the premise.",
                "Reading the premise and the hypothesis together settles the question.",
                "The premise contains what is needed to judge the hypothesis.",
                "Comparing the two statements gives the answer."),
        "qa": ("The answer follows from the evidence provided.", "The text supports the conclusion.",
               "Common sense points to the right choice here.",
               "Thinking about the question carefully gives the answer.",
               "Only one of the choices fits the question.", "The question itself makes the correct option clear."),
        "yesno": ("The answer follows from the evidence provided.", "The text supports the conclusion.",
                  "The facts behind the question settle it.", "Looking at what is known about this gives the answer.",
                  "Basic knowledge of the topic answers the question.",
                  "The answer can be worked out from well-known facts."),
    },
    "leak": {
        "nli": ("The label is {label}.", "The answer is {label}.", "The relation is {label}.",
                "This pair is labelled {label}.", "Correct label: {label}.", "The correct class here is {label}."),
        "qa": ("The answer is {label}.", "The correct choice is {label}.", "The label is {label}.", "Pick {label}.",
               "Correct answer: {label}.", "The right option here is {label}."),
        "yesno": ("The answer is {label}.", "The label is {label}.", "Correct answer: {label}.",
                  "The right answer here is {label}.", "Answer: {label}.", "The question should be answered {label}."),
    },
    "circular": {
        "nli": ("This is {label} because the premise {relation} the hypothesis.",
                "The premise {relation} the hypothesis, which is why the answer is {label}.",
                "Since the premise {relation} the hypothesis, the label is {label}.",
                "The answer is {label} because the relation between the premise and the hypothesis is {label}.",
                "It must be {label}: the premise {relation} the hypothesis.",
                "This pair is {label} because {label} is the relation that holds between the sentences."),
        "qa": ("The answer is {label} because {label} is the correct answer.",
               "The right choice is {label} because {label} answers the question.",
               "It is {label} since the question is answered by {label}.",
               "The correct option is {label}, because that is the option that fits.",
               "The answer must be {label} because {label} is what the question asks for.",
               "Choose {label} because the answer to the question is {label}."),
        "yesno": ("The answer is {label} because the answer to the question is {label}.",
                  "It is {label} since what the question asks is {truth}.",
                  "The answer is {label}, because the statement in the question is {truth}.",
                  "The question is answered {label} because it is {truth}.", "It is {truth}, so the answer is {label}.",
                  "The answer must be {label} because that is the correct answer."),
    },
    "pseudo_specific": {
        "nli": ("Because the text mentions {entity}, the conclusion follows.",
                "The premise refers to {entity}, which settles the relation.",
                "Since {entity} appears in the sentences, the answer is clear.",
                "The mention of {entity} makes the relation between the sentences obvious.",
                "Given that {entity} is mentioned, the hypothesis can be judged.",
                "The key detail is {entity}, and that decides it."),
        "qa": ("Because the question mentions {entity}, the answer follows.",
               "The question is about {entity}, which points to the answer.",
               "Since {entity} is mentioned, the right choice is clear.", "Thinking about {entity} gives the answer.",
               "The key word here is {entity}, and it decides the answer.",
               "The mention of {entity} makes the correct option obvious."),
        "yesno": ("Because the question mentions {entity}, the answer follows.",
                  "The question is about {entity}, which settles it.", "Knowing about {entity} answers the question.",
                  "Since {entity} is involved, the answer is clear.",
                  "The key fact concerns {entity}, and that decides it.",
                  "Facts about {entity} make the answer obvious."),
    },
}

STOPWORDS = frozenset("""
a an the and or but if then than so of to in on at by for with from into onto over under about as
is are was were be been being am do does did done has have had having can could will would shall should
may might must not no nor yes this that these those there here it its they them their he him his she her
we us our you your i me my what which who whom whose when where why how all any some each every both
one two three other another such very just also only too more most much many few own same out up down
off again once while during before after above below between through near front back top side
though although because since whether like get got put make made way thing things often
""".split())


FamilyFn = Callable[[Mapping[str, Any], np.random.Generator, Sequence[str]], "dict[str, Any] | None"]
"""``(record, rng, templates for the record's task) -> row fields`` (``rationale``; optionally
``template_id``, ``label_used``, extra keys) or ``None`` to skip the example."""

#: A word: letters, with inner apostrophes or hyphens.
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")


# --------------------------------------------------------------------------- seeding and registry


def example_rng(seed: int, example_id: str, family: str) -> np.random.Generator:
    """A generator seeded from SHA-256 of ``(seed, family, id)``: stable across processes (never ``hash()``)."""
    digest = hashlib.sha256(f"{seed}\x1f{family}\x1f{example_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


FAMILIES: dict[str, FamilyFn] = {}


def register_family(name: str, fn: FamilyFn, templates: Mapping[str, Sequence[str]] | None = None,
                    *, overwrite: bool = False) -> None:
    """Add a family to :data:`FAMILIES` (and optional per-task ``templates`` to :data:`TEMPLATES`).

    ``fn(record, rng, templates)`` returns the row fields (``rationale``, optionally ``template_id`` and
    ``label_used``, which defaults to the gold label) or ``None`` to skip the example.
    """
    if not re.fullmatch(r"[A-Za-z_][\w-]*", name):
        raise ValueError(f"family name {name!r}: expected letters, digits, '_' or '-'")
    if name in FAMILIES and not overwrite:
        raise ValueError(f"family {name!r} is already registered; pass overwrite=True to replace it")
    FAMILIES[name] = fn
    if templates is not None:
        TEMPLATES[name] = {task: tuple(items) for task, items in templates.items()}


def pick_template(name: str, record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str],
          **fields: str) -> dict[str, Any]:
    """Draw one template with ``rng`` and render it for the record's gold label."""
    if not templates:
        raise DataError(f"{where(example_id=record['id'])}: family {name!r} has no templates "
                        f"for task {record['task']!r}")
    k = int(rng.integers(len(templates)))
    label = record["label"]
    text = templates[k].format(label=label, relation=_NLI_RELATION.get(label, "supports"),
                               truth=_TRUTH.get(label, "true"), **fields)
    return {"template_id": f"{name}:{record['task']}:{k}", "rationale": text}
