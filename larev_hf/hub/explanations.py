"""A person's file of explanations in, a table of per-explanation scores out.

One reader for the "my explanations" format (JSON Lines or CSV, :data:`larev_hf.data.EXPLANATION_COLUMNS`, an optional
unique ``id`` and an optional ``instance_id`` shared by the explanations of one instance), used by ``larev-hf
evaluate`` and the bundle script, and one table of what each explanation scored — raw, label-centred and calibrated
scores, the rank within its instance, its findings and what moved its calibrated score — written whole as
``scores.jsonl`` and ``scores.csv`` (:mod:`larev_hf.hub.console` prints it and writes the report's).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import EXPLANATION_COLUMNS
from larev_hf.hub.findings import Finding
from larev_hf.hub.inputs import INSTANCE_ID, build_records, parse_choices
from larev_hf.io import DataError, read_csv, read_jsonl, write_json, write_jsonl, write_text
from larev_hf.scores.ranking import within_instance_ranks

#: The table's columns (``scores.csv``), in order; ``label_centred``, ``calibrated``, ``rank``, ``why`` and
#: ``moved_by`` are empty where they do not apply.
TABLE_COLUMNS = ("row", "id", "instance_id", "label", "score", "label_centred", "calibrated", "rank", "why",
                 "moved_by", "findings", "raw_informative", "rationale")
#: How the console and the report name each calibration feature (``moved_by``: the largest contribution).
FEATURE_TITLES = {"larev": "label evidence", "rev": "label evidence", "explanation_lm": "reads as an explanation",
                  "copied_span": "copied span of the input", "grounding": "words from the input",
                  "copy_excess": "copy of the input", "premise_link": "premise words", "length": "length",
                  "rouge_l": "overlap with the input"}
def _file_rows(path: Path) -> Any:
    """``(line, row)`` of a file of explanations: ``.csv`` by extension, JSON Lines otherwise."""
    return read_csv(path) if path.suffix.lower() == ".csv" else read_jsonl(path)


def in_dataset_format(path: str | os.PathLike) -> bool:
    """Whether the file's first line lacks a ``rationale`` column, so it is in a data set's own format (e-SNLI's
    ``test.jsonl``, ...) rather than the "my explanations" one."""
    path = Path(path)
    if not path.is_file():
        return False
    first = next(iter(_file_rows(path)), None)
    return first is not None and "rationale" not in first[1]


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
    for line, raw in _file_rows(path):
        row = {**raw, **{field: raw[column] for field, column in mapping.items() if column in raw}}
        missing = [mapping.get(name, name) for name in needed if name not in row]
        if missing:
            raise DataError(f"{path}, line {line}: missing column(s) {missing}; this line has columns {sorted(raw)}; "
                            f"expected {', '.join(EXPLANATION_COLUMNS[task])} (rename yours with --column-mapping)")
        if "choices" in row:
            row["choices"] = parse_choices(row["choices"])
        if row.get("id") is None:
            row["id"] = f"{path.stem}-{line}"
        lines.append(line)
        rows.append(row)
    if not rows:
        raise DataError(f"{path}: no examples (the file is empty); expected one example per line with the columns "
                        f"{', '.join(EXPLANATION_COLUMNS[task])}")
    return lines, rows


def read_explanation_records(path: str | os.PathLike, *, task: str, label_set: Sequence[str] | None = None,
                             column_mapping: Mapping[str, str] | None = None, allow_empty: bool = False,
                             require_choices: bool = False, rows: list[dict[str, Any]] | None = None,
                             ) -> list[dict[str, Any]]:
    """The file's rows validated into schema records for an evaluator of ``task`` and ``label_set``, every error
    naming the file and line (:func:`~larev_hf.hub.inputs.build_records`). It needs no model, so ``larev-hf evaluate``
    runs it before any loads: a bad file is refused in a fraction of a second. ``rows``: the file already read (a data
    set's own format) instead of the "my explanations" reader; a ``baseline`` column becomes the records' b.

    Raises:
        DataError: naming the line and the field; empty or whitespace-only rationales unless ``allow_empty`` (every
            such line named).
    """
    if rows is None:
        lines, rows = read_explanation_rows(path, task, column_mapping)
    else:
        lines = list(range(1, len(rows) + 1))
    with_baseline = [row for row in rows if "baseline" in row]
    if with_baseline and len(with_baseline) != len(rows):
        raise DataError(f"{path}: {len(with_baseline)} of {len(rows)} lines have a 'baseline'; give one on every "
                        "line or on none")
    baselines = [row["baseline"] for row in rows] if with_baseline else None

    def locate(kind: str, index: int, key: str | None = None) -> str:
        field = key or {"rationales": "rationale", "labels": "label", "baselines": "baseline"}.get(kind)
        return f"{path}, line {lines[index]}" + (f": field {field!r}" if field else "")

    return build_records([row.get("rationale") for row in rows], [row.get("label") for row in rows], rows,
                         task=task, label_set=label_set, baselines=baselines, require_choices=require_choices,
                         locate=locate, allow_empty=allow_empty)


def _floats(values: Any) -> list[float | None]:
    if values is None:
        return []
    return [None if value is None or np.isnan(value) else float(value) for value in np.asarray(values, dtype=float)]


def explanation_table(records: Sequence[Mapping[str, Any]], scores: Sequence[float],
                      label_centred: Sequence[float] | None = None,
                      calibrated: Sequence[float] | None = None, *,
                      findings: Sequence[Sequence[Finding]] | None = None,
                      contributions: Mapping[str, Sequence[float]] | None = None,
                      raw_informative: Sequence[bool] | None = None) -> list[dict[str, Any]]:
    """One row per explanation (:data:`TABLE_COLUMNS`), in the file's order; ranks within an instance where the
    records name one (``instance_id``); ``why``: the strongest finding with its evidence (:mod:`larev_hf.hub.findings`),
    ``findings`` all of them; ``moved_by``: the calibration feature that moved the calibrated score most, with its
    contribution (log-odds); ``raw_informative``: ``False`` where the raw score sits at the baseline's ceiling."""
    raw, centred, calibrated_ = _floats(scores), _floats(label_centred), _floats(calibrated)
    instances = [record.get(INSTANCE_ID) for record in records]
    rows = []
    for i, record in enumerate(records):
        found = list(findings[i]) if findings is not None else []
        rows.append({"row": i + 1, "id": record["id"], "instance_id": instances[i], "label": record["label"],
                     "score": raw[i], "label_centred": centred[i] if centred else None,
                     "calibrated": calibrated_[i] if calibrated_ else None, "rank": None,
                     "why": found[0].short() if found else None,
                     "moved_by": _moved_by(contributions, i) if contributions else None,
                     "findings": [finding.name for finding in found] if findings is not None else None,
                     "raw_informative": None if raw_informative is None else bool(raw_informative[i]),
                     "rationale": record["rationale"]})
    if any(i is not None for i in instances):  # ranked within each instance the records name
        for row, rank in zip(rows, within_instance_ranks(calibrated_ or raw, instances), strict=True):
            row["rank"] = rank
    return rows


def _moved_by(contributions: Mapping[str, Sequence[float]], i: int) -> str:
    """The feature with the largest contribution to row ``i``'s calibrated score, titled, with its signed value."""
    name = max(contributions, key=lambda feature: abs(float(contributions[feature][i])))
    return f"{FEATURE_TITLES.get(name, name)}: {float(contributions[name][i]):+.2f}"


def scoring_details(records: Sequence[Mapping[str, Any]], log_p_rationale: Sequence[float],
                    log_p_baseline: Sequence[float], baselines: Sequence[str] | None, *,
                    findings: Sequence[Sequence[Finding]] | None = None,
                    contributions: Mapping[str, Sequence[float]] | None = None,
                    intercept: float | None = None) -> list[dict[str, Any]]:
    """Per row, what ``scores.jsonl`` holds beyond the table: the instance's input fields, both log-probabilities,
    the baseline used, each finding with its evidence (``finding_evidence``) and each calibration feature's
    contribution (``contributions``, with ``calibration_intercept``: they sum to ``calibrated``)."""
    inputs = ("premise", "hypothesis", "question", "choices")
    used = baselines or [None] * len(records)
    rows = [{**{k: record[k] for k in inputs if record.get(k)}, "log_p_rationale": float(with_r),
             "log_p_baseline": float(base), "baseline": baseline}
            for record, with_r, base, baseline in zip(records, log_p_rationale, log_p_baseline, used, strict=True)]
    for i, row in enumerate(rows):
        if findings is not None:
            row["finding_evidence"] = [finding.to_dict() for finding in findings[i]]
        if contributions is not None:
            row["contributions"] = {name: float(values[i]) for name, values in contributions.items()}
            row["calibration_intercept"] = intercept
    return rows


def _csv_cell(value: Any) -> Any:
    """A CSV cell: empty for ``None``, a list ``;``-joined."""
    if value is None:
        return ""
    return "; ".join(map(str, value)) if isinstance(value, list) else value


def explanation_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The text of ``scores.csv``: the table's columns (:data:`TABLE_COLUMNS`), one line per explanation."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(TABLE_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _csv_cell(row.get(key)) for key in TABLE_COLUMNS})
    return buffer.getvalue()


def write_explanation_table(rows: Sequence[Mapping[str, Any]], output_dir: str | os.PathLike,
                            extra: Sequence[Mapping[str, Any]] | None = None,
                            report: Mapping[str, Any] | None = None, report_text: str | None = None,
                            ) -> tuple[Path, Path]:
    """``scores.jsonl`` (each table row, merged with ``extra``'s row of the same position) and ``scores.csv`` (the
    table's columns) in ``output_dir``, and, when given, ``report.json`` (``report``) and ``report.md``
    (``report_text``): every output of a scored file, each written atomically, in one place."""
    output_dir = Path(output_dir)
    merged = [{**(extra[i] if extra else {}), **row} for i, row in enumerate(rows)]
    table_text = explanation_csv(rows)
    write_jsonl(output_dir / "scores.jsonl", merged)
    write_text(output_dir / "scores.csv", table_text)
    if report is not None:
        write_json(output_dir / "report.json", report)
    if report_text is not None:
        write_text(output_dir / "report.md", report_text)
    return output_dir / "scores.jsonl", output_dir / "scores.csv"
