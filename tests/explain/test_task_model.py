"""FRAME's task model F (larev_hf.explain.task_model): its output format, parsing and a trained round trip."""

from __future__ import annotations

import pytest

from larev_hf.explain.task_model import (
    SelfRationalizer,
    parse_self_rationalization,
    self_rationalization_target,
)
from tests.park_task import park_records

NLI = ["entailment", "neutral", "contradiction"]


def test_target_and_parse_round_trip_and_repair() -> None:
    target = self_rationalization_target("neutral", " a dog may or may not run . ")
    assert target == "neutral explanation: a dog may or may not run ."
    assert parse_self_rationalization(target, NLI) == ("neutral", "a dog may or may not run .", False)
    assert parse_self_rationalization("Contradiction explanation: no", NLI) == ("contradiction", "no", False)
    assert parse_self_rationalization("contradicton explanation: x", NLI) == ("contradiction", "x", True)
    assert parse_self_rationalization("entailment", NLI) == ("entailment", "", False)
    assert parse_self_rationalization("neutral explanation : it may.", NLI) == ("neutral", "it may.", False)


def _records(n: int) -> list[dict]:
    return park_records(n)


def test_trained_task_model_predicts_labels_and_rationales_and_reloads(tmp_path) -> None:
    from larev_hf.training import TrainSettings

    records = _records(48)
    settings = TrainSettings(learning_rate=3e-3, num_train_epochs=30, batch_size=16, progress=False)
    model = SelfRationalizer.train(records, tmp_path / "f", settings=settings)
    predictions = model.predict(records)
    assert all(p["label"] in NLI for p in predictions)
    accuracy = sum(p["label"] == r["label"] for p, r in zip(predictions, records, strict=True)) / len(records)
    assert accuracy >= 0.9
    def squeeze(text: str) -> str:  # decoding may drop the space before punctuation
        return text.replace(" ", "")

    same = sum(squeeze(p["rationale"]) == squeeze(r["rationale"]) for p, r in zip(predictions, records, strict=True))
    assert same >= 0.8 * len(records)
    reloaded = SelfRationalizer.train(records, tmp_path / "f")  # a finished directory is loaded, not retrained
    assert reloaded.predict(records[:6]) == predictions[:6]


def test_noisy_labels_reach_the_targets(tmp_path) -> None:
    """``labels=`` replaces the gold labels F learns (axiom 3's noisy training sets)."""
    from larev_hf.training import TrainSettings

    records = _records(24)
    flipped = ["contradiction" if r["label"] == "entailment" else r["label"] for r in records]
    settings = TrainSettings(learning_rate=3e-3, num_train_epochs=30, batch_size=8, progress=False)
    model = SelfRationalizer.train(records, tmp_path / "noisy", settings=settings, labels=flipped)
    predictions = model.predict(records)
    entailed = [p for p, r in zip(predictions, records, strict=True) if r["label"] == "entailment"]
    assert sum(p["label"] == "contradiction" for p in entailed) >= 0.75 * len(entailed)
    with pytest.raises(ValueError):
        SelfRationalizer.train(records, tmp_path / "bad", settings=settings, labels=flipped[:-1])
