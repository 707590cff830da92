"""The padding family: the gold plus sentences that say nothing about the input, which a length score prefers."""

from __future__ import annotations

import re

from larev_hf.meta.stats import auc
from larev_hf.meta.suite import build_suite
from larev_hf.meta.surface_families import FILLER

NLI = [
    {"id": f"n{i}", "task": "nli", "premise": f"A person number {i} walks a dog.", "hypothesis": "A person is outside.",
     "question": "", "choices": ["entailment", "neutral", "contradiction"], "label": label,
     "rationale": f"Walking dog {i} happens outside."}
    for i, label in enumerate(["entailment", "entailment", "neutral", "neutral", "contradiction", "contradiction"] * 3)
]
QA = [
    {"id": f"q{i}", "task": "qa", "premise": "", "hypothesis": "", "question": f"Where is item {i} kept?",
     "choices": choices, "label": choices[0], "rationale": f"Item {i} belongs in the {choices[0]}."}
    for i, choices in enumerate([["kitchen", "garage"], ["garden", "attic"], ["garage", "porch"], ["attic", "cellar"]])
]


def test_padding_keeps_the_gold_and_adds_only_what_says_nothing_about_the_input() -> None:
    rows = {row["id"]: row for row in build_suite(NLI, families=["padding"], seed=0) if row["family"] == "padding"}
    by_id = {record["id"]: record for record in NLI}
    assert set(rows) == set(by_id)
    kinds = set()
    for row_id, row in rows.items():
        gold = by_id[row_id]["rationale"]
        assert row["rationale"].startswith(gold) and len(row["rationale"]) > len(gold)
        assert row["label_used"] == by_id[row_id]["label"]  # the padding never changes the label
        kinds.add(row["template_id"])
        padding = row["rationale"][len(gold):]
        if row["source_id"] is not None:  # another instance's gold, with this one's label
            source = by_id[row["source_id"]]
            assert row["source_id"] != row_id and source["label"] == by_id[row_id]["label"]
            assert source["rationale"] in padding
        else:
            assert all(sentence.strip() in FILLER for sentence in re.findall(r"[^.]+\.", padding))
    assert kinds == {"padding:other", "padding:filler", "padding:both"}
    # a length score prefers every padded rationale to its gold: the family exists to catch that
    golds = [len(by_id[row_id]["rationale"]) for row_id in rows]
    assert auc(golds, [len(row["rationale"]) for row in rows.values()]) == 0.0


def test_qa_padding_names_none_of_the_questions_choices_and_is_reproducible() -> None:
    first = [row for row in build_suite(QA, families=["padding"], seed=3) if row["family"] == "padding"]
    assert first == [row for row in build_suite(QA, families=["padding"], seed=3) if row["family"] == "padding"]
    by_id = {record["id"]: record for record in QA}
    for row in first:
        padding = row["rationale"][len(by_id[row["id"]]["rationale"]):]
        assert not any(re.search(rf"\b{choice}\b", padding) for choice in by_id[row["id"]]["choices"])
