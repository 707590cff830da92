"""The ``padding`` VARSuite family: the gold rationale followed by sentences that add nothing about this input.

A metric that rewards length — or a calibration that leans on a length-like feature — scores a padded rationale above
the gold although the padding tells nothing new about this instance. RoRA's human study shows why this matters: on
StrategyQA rationale length alone correlates with people (the better generators write longer rationales), so a metric
can look right there by counting words. The padding is, drawn per example with the suite's seed:

- ``other``: the gold rationale of another instance (NLI and yes/no: one with the same label, so the padding does not
  argue for another label; QA: another question's rationale that names none of this question's choices);
- ``filler``: one or two generic sentences from :data:`FILLER` that fit any input;
- ``both``: the other instance's rationale, then a filler sentence.

Every row keeps the gold label and records the instance it borrowed from in ``source_id`` (``None`` for filler alone).
Importing this module registers the family (:mod:`larev_hf.meta.suite` imports it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.meta.family_registry import register_family

#: Sentences that are true of nearly anything and say nothing about an instance.
FILLER: tuple[str, ...] = (
    "This is something that can happen in everyday life.",
    "Many people have seen situations like this one.",
    "It is worth reading the sentences carefully.",
    "There are many things one could say about this.",
    "Details like these are common in descriptions.",
    "Such scenes are often described in simple words.",
)
KINDS = ("other", "filler", "both")


def _sentence(text: str) -> str:
    text = text.strip()
    return text if re.search(r"[.!?]$", text) else f"{text}."


def _names_any(text: str, phrases: Sequence[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(p)}(?!\w)", text, flags=re.IGNORECASE) for p in phrases if p.strip())


class PaddingFamily:
    """Gold + padding (module docstring). :meth:`prepare` indexes the suite's records before rows are built."""

    def __init__(self) -> None:
        self.records: list[Mapping[str, Any]] = []

    def prepare(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.records = [record for record in records if record["rationale"].strip()]

    def _other(self, record: Mapping[str, Any], rng: np.random.Generator) -> Mapping[str, Any] | None:
        if record["task"] == "qa":
            pool = [o for o in self.records if o["question"] != record["question"]
                    and not _names_any(o["rationale"], record["choices"])]
        else:
            pool = [o for o in self.records if o["task"] == record["task"] and o["label"] == record["label"]
                    and o["id"] != record["id"] and o["rationale"] != record["rationale"]]
        return pool[int(rng.integers(len(pool)))] if pool else None

    def __call__(self, record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        if not record["rationale"].strip():
            return None
        kind = KINDS[int(rng.integers(len(KINDS)))]
        source = self._other(record, rng) if kind != "filler" else None
        if source is None:
            kind = "filler"
        fillers = [FILLER[int(k)] for k in rng.choice(len(FILLER), size=2 if kind == "filler" else 1, replace=False)]
        padding = ([_sentence(source["rationale"])] if source is not None else []) + \
            (fillers if kind != "other" else [])
        return {"template_id": f"padding:{kind}", "rationale": " ".join([_sentence(record["rationale"]), *padding]),
                "source_id": None if source is None else source["id"]}


register_family("padding", PaddingFamily(), overwrite=True)
