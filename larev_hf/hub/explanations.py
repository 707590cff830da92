"""A person's file of explanations in, a table of per-explanation scores out.

One reader for the "my explanations" format (JSON Lines or CSV, :data:`larev_hf.data.EXPLANATION_COLUMNS`, an optional
unique ``id`` and an optional ``instance_id`` shared by the explanations of one instance), used by ``larev-hf
evaluate`` and the bundle script, and one table of what each explanation scored — raw, label-centred and calibrated
scores and the rank within its instance — written as ``scores.jsonl`` and ``scores.csv`` and printed to the console.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import EXPLANATION_COLUMNS
from larev_hf.hub.inputs import INSTANCE_ID
from larev_hf.io import DataError, read_csv, read_jsonl, write_jsonl, write_text
from larev_hf.scores.ranking import within_instance_ranks

#: The table's columns, in order; ``label_centred``, ``calibrated`` and ``rank`` are empty where they do not apply.
TABLE_COLUMNS = ("row", "id", "instance_id", "label", "score", "label_centred", "calibrated", "rank", "rationale")
#: What each score column means, for the console and the report.
COLUMN_NOTES = {
    "score": "nats of new label information the explanation adds over a vacuous restatement of the input and label",
    "label_centred": "the score minus its label's mean gold score on the evaluator's test split: comparable across "
                     "labels",
    "calibrated": "log-odds that people find the explanation acceptable (robust to every VARSuite attack): the score "
                  "to read per explanation",
    "rank": "rank within the instance (1 = best), by the calibrated score where there is one, else the raw score",
}


def _choices(value: Any) -> Any:
    """A CSV cell of answer choices: a JSON list or a ``|``-separated string."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return [part.strip() for part in text.split("|")] if text else value


def read_explanation_rows(path: str | os.PathLike, task: str, column_mapping: Mapping[str, str] | None = None,
                          ) -> tuple[list[int], list[dict[str, Any]]]:
    """Line numbers and rows of a file in the "my explanations" format of ``task`` (``.csv`` by extension, JSON Lines
    otherwise), the user's columns renamed by ``column_mapping`` (schema field → the file's column). A row without an
    ``id`` is named ``{file stem}-{line}``, as the data loaders name it; no id changes a score.

    Raises:
        DataError: an empty file, or a line without a needed column (naming the line, the missing column and the
            columns the line has).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file; expected a JSON Lines or CSV file of explanations")
    mapping = dict(column_mapping or {})
    needed = [name for name in EXPLANATION_COLUMNS[task] if name != "choices"]  # choices: optional, checked later
    lines, rows = [], []
    for line, raw in (read_csv(path) if path.suffix.lower() == ".csv" else read_jsonl(path)):
        row = {**raw, **{field: raw[column] for field, column in mapping.items() if column in raw}}
        missing = [mapping.get(name, name) for name in needed if name not in row]
        if missing:
            raise DataError(f"{path}, line {line}: missing column(s) {missing}; this line has columns {sorted(raw)}; "
                            f"expected {', '.join(EXPLANATION_COLUMNS[task])} (rename yours with --column-mapping)")
        if "choices" in row:
            row["choices"] = _choices(row["choices"])
        if row.get("id") is None:
            row["id"] = f"{path.stem}-{line}"
        lines.append(line)
        rows.append(row)
    if not rows:
        raise DataError(f"{path}: no examples (the file is empty); expected one example per line with the columns "
                        f"{', '.join(EXPLANATION_COLUMNS[task])}")
    return lines, rows


def _floats(values: Any) -> list[float | None]:
    if values is None:
        return []
    return [None if value is None or np.isnan(value) else float(value) for value in np.asarray(values, dtype=float)]


def explanation_table(records: Sequence[Mapping[str, Any]], scores: Sequence[float],
                      label_centred: Sequence[float] | None = None,
                      calibrated: Sequence[float] | None = None) -> list[dict[str, Any]]:
    """One row per explanation (:data:`TABLE_COLUMNS`), in the file's order; ranks within an instance where the
    records name one (``instance_id``)."""
    raw, centred, calibrated_ = _floats(scores), _floats(label_centred), _floats(calibrated)
    instances = [record.get(INSTANCE_ID) for record in records]
    ranks = within_instance_ranks(calibrated_ or raw, instances) if any(i is not None for i in instances) else None
    return [{"row": i + 1, "id": record["id"], "instance_id": instances[i], "label": record["label"],
             "score": raw[i], "label_centred": centred[i] if centred else None,
             "calibrated": calibrated_[i] if calibrated_ else None, "rank": ranks[i] if ranks else None,
             "rationale": record["rationale"]} for i, record in enumerate(records)]


def scoring_details(records: Sequence[Mapping[str, Any]], log_p_rationale: Sequence[float],
                    log_p_baseline: Sequence[float], baselines: Sequence[str] | None) -> list[dict[str, Any]]:
    """Per row, what ``scores.jsonl`` holds beyond the table: the instance's input fields, both log-probabilities and
    the baseline used."""
    inputs = ("premise", "hypothesis", "question", "choices")
    used = baselines or [None] * len(records)
    return [{**{k: record[k] for k in inputs if record.get(k)}, "log_p_rationale": float(with_r),
             "log_p_baseline": float(base), "baseline": baseline}
            for record, with_r, base, baseline in zip(records, log_p_rationale, log_p_baseline, used, strict=True)]


def write_explanation_table(rows: Sequence[Mapping[str, Any]], output_dir: str | os.PathLike,
                            extra: Sequence[Mapping[str, Any]] | None = None) -> tuple[Path, Path]:
    """``scores.jsonl`` (each table row, merged with ``extra``'s row of the same position) and ``scores.csv`` (the
    table's columns) in ``output_dir``, written atomically."""
    output_dir = Path(output_dir)
    merged = [{**(extra[i] if extra else {}), **row} for i, row in enumerate(rows)]
    write_jsonl(output_dir / "scores.jsonl", merged)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(TABLE_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else row[key] for key in TABLE_COLUMNS})
    write_text(output_dir / "scores.csv", buffer.getvalue())
    return output_dir / "scores.jsonl", output_dir / "scores.csv"


def _cell(value: Any) -> str:
    return "" if value is None else f"{value:+.3f}" if isinstance(value, float) else str(value)


def _shown_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns worth showing: ``instance_id``/``rank``/``label_centred``/``calibrated`` only where some row has
    one."""
    optional = ("instance_id", "label_centred", "calibrated", "rank")
    return [c for c in TABLE_COLUMNS if c not in optional or any(row.get(c) is not None for row in rows)]


def format_explanation_table(rows: Sequence[Mapping[str, Any]], width: int | None = None) -> str:
    """The table for the console: one line per explanation; on a terminal (or with ``width``) the rationale is cut to
    the width left, in a pipe or a log it is printed whole."""
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 10**9
    columns = _shown_columns(rows)
    titles = {"label_centred": "centred", "instance_id": "instance"}
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    header = [titles.get(column, column) for column in columns]
    sizes = [max(len(header[k]), *(len(line[k]) for line in cells)) for k in range(len(columns) - 1)]
    room = max(20, width - sum(sizes) - 2 * len(sizes))
    numeric = {"row", "score", "label_centred", "calibrated", "rank"}
    lines = []
    for line in [header, *cells]:
        text = line[-1] if len(line[-1]) <= room else line[-1][:room - 1] + "…"
        fixed = [cell.rjust(size) if column in numeric else cell.ljust(size)
                 for cell, size, column in zip(line[:-1], sizes, columns, strict=False)]
        lines.append("  ".join([*fixed, text]))
    return "\n".join(lines)


def markdown_explanation_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The table as markdown (the report's), rationale in full."""
    columns = _shown_columns(rows)
    out = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for row in rows:
        out.append("| " + " | ".join(_cell(row.get(c)).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(out)


def column_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per score column shown: what it means."""
    shown = _shown_columns(rows)
    return [f"{column}: {note}" for column, note in COLUMN_NOTES.items() if column in shown]
