"""Files of explanations judged by people: one explanation a line, several explanations per instance.

A judged file (e.g. ``../shared/data/human/snli_accept_train.jsonl``, Wiegreffe et al., NAACL 2022) has the task's
input fields (NLI: ``premise``, ``hypothesis``; QA: ``question``, ``choices``; yes/no: ``question``), the label, the
explanation in ``rationale``, an ``id`` shared by the explanations of one instance, and numeric columns: the human
judgments (``acceptable``: the share of annotators who found the explanation acceptable) and optional baseline scores
(``gpt3_nll``). Field names map as for ``--dataset jsonl`` (``column_mapping``); an NLI label may be e-SNLI's integer
id (0 entailment, 1 neutral, 2 contradiction); a missing ``label`` column falls back to ``answer`` (CommonsenseQA).

:func:`load_judgments` reads such a file into schema records with a unique row id (``<instance>#<k>``), the
``instance`` id and the numeric columns under ``numbers``; every error is one :class:`~larev_hf.io.DataError` line that
names the file, the line, the instance id, the field and what was expected.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from larev_hf.data.schema import COLUMNS, NLI_LABELS, YESNO_LABELS, make_example, validate_example
from larev_hf.io import DataError, read_jsonl, where

#: The input fields of each task, which the explanations of one instance must share with its label.
INPUT_FIELDS = {"nli": ("premise", "hypothesis"), "qa": ("question", "choices"), "yesno": ("question",)}


def _mapping(column_mapping: str | Mapping[str, str] | None) -> dict[str, str]:
    if column_mapping is None:
        return {}
    if isinstance(column_mapping, str):
        try:
            column_mapping = json.loads(column_mapping)
        except json.JSONDecodeError as error:
            raise ValueError(f"--column-mapping {column_mapping!r}: expected a JSON object ({error.msg})") from None
    if not isinstance(column_mapping, Mapping) or not all(isinstance(v, str) for v in column_mapping.values()):
        raise ValueError(f"--column-mapping: expected a JSON object of field → column names, got {column_mapping!r}")
    unknown = sorted(set(column_mapping) - (set(COLUMNS) - {"task"}))
    if unknown:
        raise ValueError(f"--column-mapping has unknown schema fields {unknown}; expected fields among {COLUMNS}")
    return dict(column_mapping)


def _label(value: Any, task: str) -> str:
    """The label as text: an integer NLI label is e-SNLI's id, a boolean yes/no label is yes/no."""
    if task == "nli" and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(NLI_LABELS):
        return NLI_LABELS[value]
    if task == "yesno" and isinstance(value, bool):
        return YESNO_LABELS[0] if value else YESNO_LABELS[1]
    text = "" if value is None else str(value).strip()
    if task == "nli" and text in ("0", "1", "2"):
        return NLI_LABELS[int(text)]
    return text


def _number(raw: Mapping[str, Any], column: str, loc: str) -> float:
    if column not in raw:
        raise DataError(f"{loc}: missing column {column!r}; this line has columns {sorted(raw)}")
    value = raw[column]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DataError(f"{loc}: column {column!r} is {value!r}; expected a number")
    try:
        number = float(value)
    except ValueError:
        raise DataError(f"{loc}: column {column!r} is {value!r}; expected a number") from None
    if not math.isfinite(number):
        raise DataError(f"{loc}: column {column!r} is {value!r}; expected a finite number")
    return number


def _choices(value: Any, loc: str, column: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not value:
        raise DataError(f"{loc}: column {column!r} is {value!r}; expected a non-empty list of answer choices")
    return [str(choice).strip() for choice in value]


def load_judgments(path: str | os.PathLike, task: str, numeric_columns: Sequence[str],
                   column_mapping: str | Mapping[str, str] | None = None,
                   max_instances: int | None = None) -> list[dict[str, Any]]:
    """Read a judged file into schema records (see the module docstring).

    Args:
        path: the JSONL file.
        task: the task kind of the run that will score it (``nli``, ``qa`` or ``yesno``).
        numeric_columns: columns every line must hold as a finite number (the human and baseline columns).
        column_mapping: schema field → the file's column (a dict or its JSON text).
        max_instances: keep the first N instances (in file order).

    Returns:
        One record per explanation, in file order: the schema fields (``id`` = ``<instance>#<k>``, k counting the
        instance's explanations from 0), ``instance`` and ``numbers`` (column → value).

    Raises:
        DataError: a missing column, a value that is not a number, a rationale that is not text, a label outside the
            choices,
            or an instance whose explanations do not share its input and label (an id layout this reader does not
            know: ids must name instances, not explanations of different inputs).
    """
    if task not in INPUT_FIELDS:
        raise ValueError(f"task {task!r}: expected one of {tuple(INPUT_FIELDS)}")
    mapping = _mapping(column_mapping)
    if not os.path.isfile(path):
        raise DataError(f"{path}: no such file; expected a JSONL file of judged explanations")
    records: list[dict[str, Any]] = []
    first_line: dict[str, tuple[int, dict[str, Any]]] = {}
    counts: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        id_column = mapping.get("id", "id")
        instance = raw.get(id_column)
        loc = where(path, line, None if instance is None else str(instance))
        if instance is None or isinstance(instance, bool) or not str(instance).strip():
            raise DataError(f"{loc}: column {id_column!r} is {instance!r}; expected the instance id its explanations "
                            "share")
        instance = str(instance).strip()
        if instance not in counts and max_instances is not None and len(counts) >= max_instances:
            break
        label_column = mapping.get("label", "label" if "label" in raw or "answer" not in raw else "answer")
        fields = {"label": label_column, "rationale": mapping.get("rationale", "rationale"),
                  **{field: mapping.get(field, field) for field in INPUT_FIELDS[task]}}
        for field, column in fields.items():
            if column not in raw:
                raise DataError(f"{loc}: missing column {column!r} (the schema's {field!r}); this line has columns "
                                f"{sorted(raw)}")
        rationale = raw[fields["rationale"]]
        if not isinstance(rationale, str):  # an empty explanation was judged too (CommonsenseQA has 5): kept, scored
            raise DataError(f"{loc}: column {fields['rationale']!r} is {rationale!r}; expected the explanation's text")
        choices = (_choices(raw[fields["choices"]], loc, fields["choices"]) if task == "qa"
                   else list(NLI_LABELS if task == "nli" else YESNO_LABELS))
        k = counts.get(instance, 0)
        record = make_example(id=f"{instance}#{k}", task=task, label=_label(raw[fields["label"]], task),
                              choices=choices, rationale=rationale.strip(),
                              **{f: str(raw[fields[f]]).strip() for f in INPUT_FIELDS[task] if f != "choices"})
        try:
            validate_example(record, require_rationale=False)
        except DataError as error:
            raise DataError(str(error).replace(where(example_id=record["id"]), loc)) from None
        shared = {f: record[f] for f in (*INPUT_FIELDS[task], "label")}
        if instance in first_line:
            earlier_line, earlier = first_line[instance]
            differing = [f for f in shared if shared[f] != earlier[f]]
            if differing:
                raise DataError(f"{loc}: the explanations of one instance must share its input and label, but "
                                f"{differing} differ from line {earlier_line}; expected one 'id' per instance "
                                "(not per explanation, not reused for another input)")
        else:
            first_line[instance] = (line, shared)
        counts[instance] = k + 1
        record["instance"] = instance
        record["numbers"] = {column: _number(raw, column, loc) for column in numeric_columns}
        # each annotator's votes ("votes" for the first human column, "votes_<column>" for a fine-grained one), in one
        # annotator order per instance: the annotators' own agreement (human_stats.annotator_agreement)
        record["votes"] = {column: [float(v) for v in raw[key]] for column in numeric_columns
                           for key in (f"votes_{column}", "votes" if column == numeric_columns[0] else None)
                           if key in raw and isinstance(raw[key], list)
                           and all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw[key])}
        if isinstance(raw.get("source"), str):
            record["source"] = raw["source"]
        records.append(record)
    if not records:
        raise DataError(f"{path}: no judged explanations; expected one JSON object a line")
    return records


def instance_half(instances: Sequence[str], seed: int = 0) -> dict[str, str]:
    """Split instances into two halves, ``select`` and ``held``, by a SHA-256 of ``(seed, instance)``: the instances
    sorted by their hash, the first half ``select``. Deterministic, independent of file order, sizes differing by at
    most one."""
    unique = list(dict.fromkeys(instances))
    order = sorted(unique, key=lambda i: hashlib.sha256(f"{seed}\x1f{i}".encode()).hexdigest())
    return {instance: "select" if rank < (len(order) + 1) // 2 else "held" for rank, instance in enumerate(order)}
