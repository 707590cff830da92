"""The judged file of ``larev-hf human`` and its scores (larev_hf.meta.human_scoring), and the checks
HumanEvaluation makes before it writes anything."""

from __future__ import annotations

from pathlib import Path

import pytest

import larev_hf.meta.human_scoring as human_scoring
from larev_hf.meta import HumanEvaluation, HumanSettings
from larev_hf.meta.human_scoring import JudgedScores, parse_baseline_columns
from larev_hf.pipeline import Run


def test_parse_baseline_columns_gives_the_sign_that_makes_higher_better() -> None:
    assert parse_baseline_columns(["nll:lower", "votes", "score:higher"]) == {"nll": -1, "votes": 1, "score": 1}
    with pytest.raises(ValueError, match="expected NAME, NAME:higher or NAME:lower"):
        parse_baseline_columns(["nll:smaller"])


def test_judged_records_are_read_once_and_again_after_the_stage_rewrites_them(
        tiny_run: Path, judged_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judged = JudgedScores(Run.load(tiny_run, progress=False),
                          HumanSettings(judgments=str(judged_file), methods=["length"]), tmp_path)
    judged.stage_judged()
    reads: list[Path] = []
    read_jsonl = human_scoring.read_jsonl
    monkeypatch.setattr(human_scoring, "read_jsonl", lambda path: reads.append(path) or read_jsonl(path))
    first = judged.records()
    assert judged.records() is first and len(reads) == 1
    assert len(first) == sum(1 for _ in open(judged_file)) and all("baseline" in r for r in first)
    judged.stage_judged()
    assert judged.records() == first and len(reads) == 2


def test_bad_calibration_features_stop_the_command_before_anything_is_written(
        tiny_run: Path, judged_file: Path, tmp_path: Path) -> None:
    evaluation = HumanEvaluation(Run.load(tiny_run, progress=False),
                                 HumanSettings(judgments=str(judged_file), methods=["length", "rouge_l"],
                                               calibrate=["length", "rouge_l"], n_boot=20), tmp_path / "h")
    with pytest.raises(ValueError, match="name a learned metric"):
        evaluation.execute()
    assert not (tmp_path / "h").exists()
