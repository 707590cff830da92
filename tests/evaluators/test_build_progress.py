"""A long build's progress: every runner's finished and skipped stages reach a listener, and the estimate of what is
left scales the expected time of the stages to come by the pace measured so far."""

from __future__ import annotations

from pathlib import Path

import pytest

from larev_hf.evaluators import BuildProgress
from larev_hf.runner import StageRunner, stage_listener


def test_a_listener_hears_every_runner_in_the_block_and_no_other(tmp_path: Path) -> None:
    heard: list[tuple[str, str, bool]] = []

    def listen(directory: Path, stage: str, seconds: float | None) -> None:
        heard.append((directory.name, stage, seconds is None))

    first, second = StageRunner(tmp_path / "run"), StageRunner(tmp_path / "human")
    with stage_listener(listen):
        first.run([("a", lambda: None), ("b", lambda: None)])
        second.run([("c", lambda: None)])
        first.run([("a", lambda: None), ("b", lambda: None)])  # done earlier: heard as skipped
    StageRunner(tmp_path / "later").run([("d", lambda: None)])  # outside the block: not heard
    assert heard == [("run", "a", False), ("run", "b", False), ("human", "c", False), ("run", "a", True),
                     ("run", "b", True)]


def test_what_is_left_is_the_expected_rest_at_the_measured_pace(tmp_path: Path) -> None:
    lines: list[str] = []
    expected = {"run/train": 100.0, "run/score": 50.0, "human/attacks/validation/score-larev": 200.0}
    build = tmp_path / "build"
    progress = BuildProgress(expected, build, lines.append)
    progress.step = "training"
    progress(build / "run", "train", 50.0)  # twice as fast as expected: the 250 s still to come take 125 s
    assert lines[-1] == "  training: run/train done in 50 s; about 2.1 min left"
    progress(build / "run", "score", 25.0)
    assert lines[-1].endswith("about 1.7 min left")  # 200 s at pace 0.5
    progress(tmp_path / "elsewhere", "score", 3.0)  # a runner outside the build: ignored
    assert len(lines) == 2
    progress(build / "human" / "attacks" / "validation", "score-larev", 100.0)
    assert lines[-1].endswith("human/attacks/validation/score-larev done in 100 s; about 0.0 min left")


def test_a_stage_done_earlier_is_kept_and_does_not_set_the_pace(tmp_path: Path) -> None:
    lines: list[str] = []
    progress = BuildProgress({"run/a": 10.0, "run/b": 30.0}, tmp_path, lines.append)
    progress.step = "training"
    progress(tmp_path / "run", "a", None)
    assert lines == ["  training: a done earlier, kept"]
    progress(tmp_path / "run", "b", 60.0)
    assert progress.actual == pytest.approx(60.0) and progress.planned == pytest.approx(30.0)
