"""The protocol every explanation generator implements, and the checks and input text they share.

VARIF scores *explanation methods*: each method E writes e_i = E(x_i, y_i) for a record and a label (label-conditional,
``papers/varif-proposal.md`` §"Key definitions"). :func:`resolve_labels` checks the requested labels against each
record's choices; :func:`raw_input_text` is the input x as the extractive heuristics read it (§2.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from larev_hf.io import DataError, where


@runtime_checkable
class ExplanationGenerator(Protocol):
    """An explanation method E of VARIF (§"Key definitions"): e_i = E(x_i, y_i) for each record and label."""

    name: str
    #: False when it cannot explain a perturbed input it has not seen (gold, a user's JSONL): R is omitted for it.
    regenerable: bool

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        """One explanation per record, for ``labels[i]`` (default: each record's gold ``label``)."""
        ...


def resolve_labels(records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
    """``labels`` (default: each record's ``label``), checked: one per record, each among the record's ``choices``."""
    if labels is None:
        out = []
        for record in records:
            if not isinstance(record.get("label"), str):
                raise DataError(f"{where(example_id=record.get('id'))}: field 'label' is {record.get('label')!r}; "
                                "expected the gold label as a string (or pass labels=)")
            out.append(record["label"])
        labels = out
    labels = list(labels)
    if len(labels) != len(records):
        raise ValueError(f"got {len(labels)} labels for {len(records)} records; expected one label per record")
    for record, label in zip(records, labels, strict=True):
        choices = list(record.get("choices") or [])
        if label not in choices:
            raise DataError(f"{where(example_id=record.get('id'))}: requested label {label!r} is not one of the "
                            f"record's choices {choices}")
    return labels


def raw_input_text(record: Mapping[str, Any]) -> str:
    """The input x as plain text for the extractive heuristics (§2.2): premise + hypothesis (NLI), else the question.

    Unlike :func:`~larev_hf.modeling.input_formats.task_text` there are no field markers ("premise:") and no answer
    choices, so no extracted word is a format word or states an answer option.
    """
    task = record.get("task")
    if task == "nli":
        return f"{record['premise'].strip()} {record['hypothesis'].strip()}".strip()
    if task in ("qa", "yesno"):
        return record["question"].strip()
    raise DataError(f"{where(example_id=record.get('id'))}: field 'task' is {task!r}; expected 'nli', 'qa' or 'yesno'")
