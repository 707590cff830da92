"""The one example schema every loader maps to, and its validation.

Columns (all strings unless noted):

- ``id``: unique example id.
- ``task``: ``"nli"`` (premise/hypothesis, fixed label set), ``"qa"`` (multiple choice, the answer
  text is the label: an open label) or ``"yesno"`` (a yes/no question).
- ``premise``, ``hypothesis``: NLI inputs ("" for other tasks).
- ``question``: QA / yes-no input ("" for NLI).
- ``choices`` (list of str): the label set (NLI, yes/no) or the example's answer choices (QA).
- ``label``: the gold label as text; always one of ``choices``.
- ``rationale``: the gold free-text rationale (may be "" only where a loader allows it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import datasets

from larev_hf.io import DataError, where

TASKS = ("nli", "qa", "yesno")
NLI_LABELS = ("entailment", "neutral", "contradiction")
YESNO_LABELS = ("yes", "no")

COLUMNS = ("id", "task", "premise", "hypothesis", "question", "choices", "label", "rationale")

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "task": datasets.Value("string"),
        "premise": datasets.Value("string"),
        "hypothesis": datasets.Value("string"),
        "question": datasets.Value("string"),
        "choices": datasets.Sequence(datasets.Value("string")),
        "label": datasets.Value("string"),
        "rationale": datasets.Value("string"),
    }
)


def make_example(
    *,
    id: str,
    task: str,
    label: str,
    choices: Iterable[str],
    rationale: str = "",
    premise: str = "",
    hypothesis: str = "",
    question: str = "",
) -> dict[str, Any]:
    """Build one schema record (keyword-only so loaders read clearly)."""
    return {
        "id": str(id),
        "task": task,
        "premise": premise,
        "hypothesis": hypothesis,
        "question": question,
        "choices": list(choices),
        "label": label,
        "rationale": rationale,
    }


def validate_example(
    example: Mapping[str, Any],
    *,
    path: str | None = None,
    line: int | None = None,
    require_rationale: bool = True,
    location: str | None = None,
) -> None:
    """Check one record against the schema; raise :class:`DataError` naming the place and the field.

    The one rule every record meets, wherever it comes from: a loader's file, ``evaluate.load``/``score`` inputs
    (:func:`larev_hf.hub.inputs.build_records`), a judged file (:mod:`larev_hf.meta.judgments`) or the suite. The
    rationale must be non-empty where a run trains and reports on it (``require_rationale``, the loaders); where a
    user's explanations are scored it may be empty — b alone — and ``require_rationale=False``. ``location``
    replaces the file/line/id location in messages (e.g. ``inputs[3]``)."""
    loc = location or where(path, line, example.get("id"))
    for column in COLUMNS:
        if column not in example:
            raise DataError(f"{loc}: missing field {column!r}; expected the fields {', '.join(COLUMNS)}")
    if example["task"] not in TASKS:
        raise DataError(f"{loc}: field 'task' is {example['task']!r}; expected one of {TASKS}")
    if not str(example["id"]).strip():
        raise DataError(f"{loc}: field 'id' is empty; expected a unique example id")
    if example["task"] == "nli" and not (example["premise"].strip() and example["hypothesis"].strip()):
        raise DataError(f"{loc}: fields 'premise' and 'hypothesis' must be non-empty for an NLI example")
    if example["task"] != "nli" and not example["question"].strip():
        raise DataError(f"{loc}: field 'question' is empty; expected the question text")
    if not example["choices"]:
        raise DataError(f"{loc}: field 'choices' is empty; expected the label set or the answer choices")
    if example["label"] not in example["choices"]:
        raise DataError(
            f"{loc}: field 'label' is {example['label']!r}, which is outside the label set {list(example['choices'])}"
        )
    if not isinstance(example["rationale"], str):
        raise DataError(f"{loc}: field 'rationale' is {example['rationale']!r}; expected a string")
    if require_rationale and not example["rationale"].strip():
        raise DataError(f"{loc}: field 'rationale' is empty; expected a non-empty free-text rationale")


def to_dataset(examples: list[dict[str, Any]]) -> datasets.Dataset:
    """Turn validated records into a :class:`datasets.Dataset` with the schema's features; ids must be unique."""
    seen: set[str] = set()
    for example in examples:
        if example["id"] in seen:
            raise DataError(f"{where(example_id=example['id'])}: duplicate id; expected unique example ids")
        seen.add(example["id"])
    columns = {column: [example[column] for example in examples] for column in COLUMNS}
    return datasets.Dataset.from_dict(columns, features=FEATURES)
