"""Fixed rationales as explanation methods: the gold (human) rationale and a user's pre-generated file.

Neither can explain a perturbed input it has not seen (``regenerable`` is False), so VARIF omits R (§3.1) for them;
each explains one label only, and requesting another is a :class:`~larev_hf.io.DataError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from larev_hf.explain.generators.base import resolve_labels
from larev_hf.io import DataError, read_jsonl, where


class GoldGenerator:
    """The gold (human) rationale of each record (VARIF §5 baseline 1). Fixed text, so not regenerable: R is omitted.

    The gold rationale justifies the gold label only, so requesting another label is a :class:`DataError`.
    """

    name = "gold"
    regenerable = False

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        out = []
        for record, label in zip(records, labels, strict=True):
            loc = where(example_id=record.get("id"))
            rationale = record.get("rationale")
            if not isinstance(rationale, str) or not rationale.strip():
                raise DataError(f"{loc}: field 'rationale' is {rationale!r}; the gold generator needs a non-empty "
                                "gold rationale")
            if label != record["label"]:
                raise DataError(f"{loc}: requested label {label!r} but the gold rationale explains the gold label "
                                f"{record['label']!r}; gold rationales cannot be regenerated for another label")
            out.append(rationale)
        return out


class JsonlGenerator:
    """A user's pre-generated rationales: a JSON Lines file of ``{"id", "rationale", "label"?}`` rows, looked up by id.

    The rationales are fixed text, so the generator cannot explain a perturbed input it has not seen
    (``regenerable`` is False) and VARIF omits R for it. A row's optional ``label`` says which label its rationale
    explains; requesting another label is a :class:`DataError`, as is an id the file lacks.
    """

    regenerable = False

    def __init__(self, path: str | os.PathLike, name: str | None = None) -> None:
        self.path = str(path)
        self.name = name or f"jsonl:{Path(path).stem}"
        self.rows: dict[str, tuple[int, str, str | None]] = {}
        for line, row in read_jsonl(path):
            for field in ("id", "rationale"):
                if field not in row:
                    raise DataError(f"{where(self.path, line, row.get('id'))}: missing field {field!r}; expected "
                                    "rows with 'id' and 'rationale' (and optionally 'label')")
            example_id, rationale, label = row["id"], row["rationale"], row.get("label")
            loc = where(self.path, line, str(example_id))
            if not isinstance(example_id, (str, int)) or isinstance(example_id, bool) or not str(example_id).strip():
                raise DataError(f"{loc}: field 'id' is {example_id!r}; expected a non-empty example id")
            if not isinstance(rationale, str) or not rationale.strip():
                raise DataError(f"{loc}: field 'rationale' is {rationale!r}; expected a non-empty string")
            if label is not None and not isinstance(label, str):
                raise DataError(f"{loc}: field 'label' is {label!r}; expected a label string")
            if str(example_id) in self.rows:
                raise DataError(f"{loc}: duplicate id (first on line {self.rows[str(example_id)][0]})")
            self.rows[str(example_id)] = (line, rationale, label)

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        out = []
        for record, label in zip(records, labels, strict=True):
            example_id = str(record.get("id"))
            if example_id not in self.rows:
                raise DataError(f"{where(example_id=example_id)}: no row with this id in {self.path} "
                                f"({len(self.rows)} rows); expected a rationale for every evaluated example")
            line, rationale, row_label = self.rows[example_id]
            if row_label is not None and row_label != label:
                raise DataError(f"{where(self.path, line, example_id)}: the rationale explains label {row_label!r} but "
                                f"label {label!r} was requested; pre-generated rationales are fixed")
            out.append(rationale)
        return out
