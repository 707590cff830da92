"""Named input formats of the evaluators: how r and b become encoder text.

``"larev"`` (default) is the thesis's r + b: the rationale then the baseline, one space apart
(thesis eq. 4.4); the baseline model sees b alone. ``"rev"`` reproduces REV's released code
(``"[rationale] {r} {b} [answer]"``; see ``shared/REFERENCE-IMPLEMENTATIONS.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from larev_hf.io import DataError, where


@dataclass(frozen=True)
class InputFormat:
    """Encoder templates for the rationale-augmented model (``with_rationale``) and the baseline model."""

    name: str
    with_rationale: str
    baseline_only: str

    def rationale_input(self, rationale: str, baseline: str) -> str:
        """Encoder text of Φ / Φ_LA: r ⊕ b."""
        return self.with_rationale.format(rationale=rationale.strip(), baseline=baseline.strip()).strip()

    def baseline_input(self, baseline: str) -> str:
        """Encoder text of Φ_base: b alone."""
        return self.baseline_only.format(baseline=baseline.strip()).strip()

    @property
    def baseline_offset(self) -> int:
        """Character offset of b inside :meth:`baseline_input`'s text (the length of the template's prefix)."""
        return len(self.baseline_only.split("{baseline}")[0].lstrip())

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


INPUT_FORMATS: dict[str, InputFormat] = {
    "larev": InputFormat("larev", "{rationale} {baseline}", "{baseline}"),
    "rev": InputFormat("rev", "[rationale] {rationale} {baseline} [answer]", "[rationale] {baseline} [answer]"),
}


def get_input_format(name: str) -> InputFormat:
    """Look up a named input format."""
    if name not in INPUT_FORMATS:
        raise ValueError(f"unknown input format {name!r}; expected one of {sorted(INPUT_FORMATS)}")
    return INPUT_FORMATS[name]


#: RoRA's evaluator inputs as an :class:`InputFormat` whose "baseline" slot holds the task input x:
#: ``rationale_input(r, x)`` is Φ's text ``"{x} rationale: {r}"`` (RoRA eq. 7), ``baseline_input(x)`` is Θ's (x with an
#: empty rationale, eq. 8), so :class:`~larev_hf.scores.ConditionalVScorer` computes RoRA eq. 9 unchanged. The LAS/RQ
#: simulators read the same texts.
RORA_FORMAT = InputFormat("rora", "{baseline} rationale: {rationale}", "{baseline} rationale:")


def task_text(record: Mapping[str, Any]) -> str:
    """The task input x of a schema record as RoRA's evaluators and the simulators read it: ``"question: {q}"`` (yes/no,
    the released format), ``"question: {q} options: (1) {c1} ..."`` (multiple-choice QA), ``"premise: {p} hypothesis: {h}"``."""
    task = record.get("task")
    if task == "nli":
        return f"premise: {record['premise'].strip()} hypothesis: {record['hypothesis'].strip()}"
    if task == "yesno":
        return f"question: {record['question'].strip()}"
    if task == "qa":
        options = " ".join(f"({i}) {choice}" for i, choice in enumerate(record["choices"], start=1))
        return f"question: {record['question'].strip()} options: {options}"
    raise DataError(f"{where(example_id=record.get('id'))}: field 'task' is {task!r}; expected 'nli', 'qa' or 'yesno'")
