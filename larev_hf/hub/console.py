"""The table of what each explanation scored, as a person reads it: one line per explanation on the console, a
markdown table in ``report.md``, a note per column and a line of counts (findings, truncations, rows whose raw score
is uninformative).

The files (``scores.jsonl``, ``scores.csv``: :mod:`larev_hf.hub.explanations`) keep every rationale whole; here a
long one is shortened, so one 3,000-word rationale does not fill the screen.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from larev_hf.hub.explanations import TABLE_COLUMNS
from larev_hf.hub.findings import FINDINGS

#: What each column means, for the console and the report.
COLUMN_NOTES = {
    "score": "nats of label information the explanation adds over the evaluator's reference without it: > 0 adds "
             "information for the label, 0 nothing new (a copy of the input, a generic sentence, a label statement), "
             "< 0 points away from it ('ceiling' where the evaluator is already certain of the label without it, the "
             "thesis's LAREV and REV: read the calibrated score)",
    "label_centred": "the score minus its label's mean gold score on the evaluator's test split: comparable across "
                     "labels ('ceiling' where the score is)",
    "calibrated": "log-odds that people find the explanation acceptable (robust to every VARSuite attack): the score "
                  "to read per explanation",
    "rank": "rank within the instance (1 = best), by the calibrated score where there is one, else the raw score",
    "why": "the strongest finding about the explanation, with its evidence (every finding and its evidence: "
           "scores.jsonl; what each means: docs/findings.md)",
    "moved_by": "the calibration input that moved the calibrated score most, and by how much (log-odds; all of them "
                "in scores.jsonl, summing with the intercept to the calibrated score)",
}
#: The console's longest rationale cell, in characters, when the width is not a terminal's (a pipe, a log).
RATIONALE_CHARS = 100
#: The console's longest ``why`` cell, in characters.
WHY_CHARS = 48
#: The columns that repeat the raw score (shown as ``ceiling`` where it is uninformative).
RAW = ("score", "label_centred")
#: Columns the console leaves out (they are in the files).
FILE_ONLY = ("findings", "raw_informative")


def _cell(value: Any) -> str:
    return "" if value is None else f"{value:+.3f}" if isinstance(value, float) else str(value)


def _shorten(text: str, room: int, count: bool = True) -> str:
    """``text`` cut to ``room`` characters with an ellipsis and (``count``) how many words it had."""
    if len(text) <= room:
        return text
    tail = f"… ({len(text.split())} words)" if count else "…"
    return text[:max(1, room - len(tail))].rstrip() + tail


def _shown_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns worth showing: the optional ones only where some row has a value."""
    optional = ("instance_id", "label_centred", "calibrated", "rank", "why", "moved_by")
    return [c for c in TABLE_COLUMNS if c not in FILE_ONLY
            and (c not in optional or any(row.get(c) is not None for row in rows))]


def _score_cell(row: Mapping[str, Any], column: str = "score") -> str:
    """A raw or label-centred score, or ``ceiling`` where the raw score cannot carry a judgment."""
    return "ceiling" if row.get("raw_informative") is False else _cell(row.get(column))


def format_explanation_table(rows: Sequence[Mapping[str, Any]], width: int | None = None) -> str:
    """The table for the console: one line per explanation; the rationale cut to the width left on a terminal (or
    ``width``), else to :data:`RATIONALE_CHARS` characters, saying how many words it had."""
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 10**9
    columns = _shown_columns(rows)
    titles = {"label_centred": "centred", "instance_id": "instance", "moved_by": "moved by"}
    cells = [[_score_cell(row, column) if column in RAW else _shorten(_cell(row.get(column)), WHY_CHARS, count=False)
              if column == "why" else _cell(row.get(column)) for column in columns] for row in rows]
    header = [titles.get(column, column) for column in columns]
    sizes = [max(len(header[k]), *(len(line[k]) for line in cells)) for k in range(len(columns) - 1)]
    room = min(RATIONALE_CHARS if width >= 10**9 else width, max(20, width - sum(sizes) - 2 * len(sizes)))
    numeric = {"row", "score", "label_centred", "calibrated", "rank"}
    lines = []
    for line in [header, *cells]:
        fixed = [cell.rjust(size) if column in numeric else cell.ljust(size)
                 for cell, size, column in zip(line[:-1], sizes, columns, strict=False)]
        lines.append("  ".join([*fixed, _shorten(line[-1], room)]))
    return "\n".join(lines)


def markdown_explanation_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The table as markdown (the report's), rationale in full."""
    columns = _shown_columns(rows)
    out = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for row in rows:
        out.append("| " + " | ".join((_score_cell(row, c) if c in RAW else _cell(row.get(c))).replace("|", "\\|")
                                     for c in columns) + " |")
    return "\n".join(out)


def column_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per column shown: what it means."""
    shown = _shown_columns(rows)
    return [f"{column}: {note}" for column, note in COLUMN_NOTES.items() if column in shown]


def finding_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many explanations carry each finding, in :data:`FINDINGS`' order, those no row carries left out."""
    counted = {name: sum(name in (row.get("findings") or ()) for row in rows) for name in FINDINGS}
    return {name: n for name, n in counted.items() if n}


def summary_line(rows: Sequence[Mapping[str, Any]]) -> str:
    """One line of what needs a look: the findings' counts (truncations among them) and the rows whose raw score
    is at the baseline's ceiling; empty when there is nothing to say."""
    parts = [f"{n} {FINDINGS[name]}" for name, n in finding_counts(rows).items()]
    ceiling = sum(row.get("raw_informative") is False for row in rows)
    if ceiling:
        parts.append(f"raw score at the baseline's ceiling for {ceiling} (read the calibrated score there)"
                     if any(row.get("calibrated") is not None for row in rows)
                     else f"raw score at the baseline's ceiling for {ceiling}")
    return f"of {len(rows)} explanations: " + "; ".join(parts) if parts else ""
