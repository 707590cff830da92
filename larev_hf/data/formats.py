"""Which format a file is in: the schema itself, a data set's own layout, or the "my explanations" format.

:func:`load_schema_jsonl` reads a file already in the schema (a run's ``data/test.jsonl``); :func:`infer_dataset_kind`
tells a data set's own layout from its columns (what ``larev-hf run --data-dir`` does without ``--dataset``);
:func:`load_explanations` reads a user's explanations to score, in the one "my explanations" format
(:data:`EXPLANATION_COLUMNS`) or in the data set's own layout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets

from larev_hf.data.loaders import load_examples, load_jsonl
from larev_hf.data.schema import COLUMNS, to_dataset, validate_example
from larev_hf.data.sources import read_local
from larev_hf.io import DataError, read_jsonl


def load_schema_jsonl(path: str | os.PathLike) -> datasets.Dataset:
    """A JSONL file already in the schema (a run's ``data/test.jsonl``, a saved synthetic split, ...).

    Extra columns (``baseline``, ``rationale_<variant>``) are dropped; each record is validated.
    """
    records = []
    for line, raw in read_jsonl(path):
        record = {column: raw[column] for column in COLUMNS if column in raw}
        validate_example(record, path=str(path), line=line)
        records.append(record)
    return to_dataset(records)


#: The columns that tell each data set's own layout apart (:func:`infer_dataset_kind`), most specific first.
KIND_COLUMNS: dict[str, frozenset[str]] = {
    "esnli": frozenset({"premise", "hypothesis", "explanation_1"}),
    "ecqa": frozenset({"q_text", "q_ans", "taskB"}),
    "strategyqa": frozenset({"question", "answer", "facts"}),
    "cose": frozenset({"question", "choices", "answerKey"}),
}


def infer_dataset_kind(source: str | os.PathLike) -> str | None:
    """The data set kind whose columns the first line of a local directory's ``train``/``test`` file (or a local
    file) has; ``None`` when none matches or ``source`` is not local (a Hub name)."""
    path = Path(source).expanduser()
    candidates = [path] if path.is_file() else [path / f"{split}{ext}" for split in ("train", "test", "validation")
                                                  for ext in (".jsonl", ".csv")]
    for candidate in candidates:
        if candidate.is_file():
            first = next(iter(read_local(candidate)), None)
            columns = set(first[1]) if first else set()
            return next((kind for kind, needed in KIND_COLUMNS.items() if needed <= columns), None)
    return None


#: The columns of the one "my explanations" format, per task (the bundle script's, ``evaluate.load``'s and
#: ``larev-hf evaluate``'s); ``id`` is optional everywhere.
EXPLANATION_COLUMNS: dict[str, tuple[str, ...]] = {
    "nli": ("premise", "hypothesis", "label", "rationale"),
    "qa": ("question", "choices", "label", "rationale"),
    "yesno": ("question", "label", "rationale"),
}


def load_explanations(
    path: str | os.PathLike, kind: str, task: str, column_mapping: Mapping[str, str] | None = None,
    loader_options: Mapping[str, Any] | None = None,
) -> datasets.Dataset:
    """A file of explanations to score with a run trained on data set ``kind`` (task ``task``).

    Read in the "my explanations" format (:data:`EXPLANATION_COLUMNS`: the schema's columns, as the bundle script and
    ``evaluate.load`` take them) when the file has a ``rationale`` column or ``column_mapping`` is given, in the data
    set's own format otherwise (e-SNLI's ``explanation_1``, CoS-E's ``explanation``, ...).

    Raises:
        DataError: the file is missing or holds no examples (naming it), or a line lacks a column (naming the line,
            the column and the columns it has, and the format that was expected).
    """
    path = Path(path)
    first = next(iter(read_local(path)), None) if path.is_file() else None
    if path.is_file() and first is None:
        raise DataError(f"{path}: no examples (the file is empty); expected one example per line with the columns "
                        f"{', '.join(EXPLANATION_COLUMNS[task])} (or the {kind} data set's own columns)")
    mapping = dict(column_mapping or {})
    rationale_column = mapping.get("rationale", "rationale")
    if kind == "synthetic" and not mapping and (first is None or "task" in first[1]):
        dataset = load_schema_jsonl(path)  # a saved split of the synthetic task: the schema itself
    elif kind == "jsonl":
        dataset = load_jsonl(path, **{**dict(loader_options or {}), **({"column_mapping": mapping} if mapping else {})})
    elif mapping or (first is not None and rationale_column in first[1]):
        try:
            dataset = load_jsonl(path, task=task, column_mapping=mapping)
        except DataError as error:
            raise DataError(f"{error} (read as the 'my explanations' format: columns "
                            f"{', '.join(EXPLANATION_COLUMNS[task])}; rename yours with --column-mapping)") from None
    else:
        try:
            dataset = load_examples(kind, str(path.parent) if path.is_file() else str(path),
                                    path.stem if path.is_file() else "test")
        except DataError as error:
            if "missing column" not in str(error):
                raise
            raise DataError(f"{error}; or give the 'my explanations' format: columns "
                            f"{', '.join(EXPLANATION_COLUMNS[task])} (docs/hub.md)") from None
    if len(dataset) == 0:
        raise DataError(f"{path}: no examples left to score (every line was skipped, e.g. e-SNLI label -1)")
    return dataset
