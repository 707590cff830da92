"""Rationale variants that separate new information from label leakage (LAREV thesis §5.2.1, appendix C.1).

For each example with a gold rationale ``r`` and a vacuous baseline ``b``
(:func:`~larev_hf.data.baseline_builders.add_baselines`):

- ``gold``: ``r`` — the human rationale.
- ``gold_leaky``: ``r`` followed by ``"The answer is <label>."`` — same information plus the label.
- ``vacuous``: ``b`` — the input and the label, no new information (REV §3.2).
- ``leaky``: ``"The answer is <label>."`` — only the label.

A leakage-aware metric should rank ``gold``/``gold_leaky`` above ``vacuous``/``leaky`` and not
reward ``gold_leaky`` for the appended label; the leaky variants test exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets

from larev_hf.io import DataError, where

LEAKY_TEMPLATE = "The answer is {label}."
VARIANTS: tuple[str, ...] = ("gold", "gold_leaky", "vacuous", "leaky")


def build_variants(example: Mapping[str, Any]) -> dict[str, str]:
    """Return ``{variant: rationale}`` for one example that has ``rationale``, ``label`` and ``baseline``."""
    for field in ("rationale", "label", "baseline"):
        if field not in example:
            hint = "; run add_baselines first" if field == "baseline" else ""
            raise DataError(f"{where(example_id=example.get('id'))}: missing field {field!r}{hint}")
    rationale = example["rationale"]
    leaky = LEAKY_TEMPLATE.format(label=example["label"])
    return {"gold": rationale, "gold_leaky": f"{rationale} {leaky}", "vacuous": example["baseline"], "leaky": leaky}


def add_variants(dataset: datasets.Dataset) -> datasets.Dataset:
    """Return ``dataset`` with one column ``rationale_<variant>`` per entry of :data:`VARIANTS`."""
    built = [build_variants(example) for example in dataset]
    for variant in VARIANTS:
        column = f"rationale_{variant}"
        if column in dataset.column_names:
            dataset = dataset.remove_columns(column)
        dataset = dataset.add_column(column, [variants[variant] for variants in built])
    return dataset
