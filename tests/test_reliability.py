"""Reliability of a run directory: changed inputs invalidate stages, failed starts leave nothing behind,
one process per directory, and user errors are one line with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from larev_hf.cli import detect_offline, main
from larev_hf.io import DataError, read_json, read_jsonl
from larev_hf.pipeline import Run, RunConfig
from larev_hf.runner import DirectoryLockedError, StageRunner

LABELS = ("entailment", "neutral", "contradiction")


def write_split(path: Path, n: int, premise: str = "A man plays a guitar on a stage") -> None:
    rows = [{"id": f"{path.stem}-{i}", "premise": f"{premise} {i} .", "hypothesis": f"Someone makes music {i} .",
             "label": LABELS[i % 3], "rationale": f"playing a guitar is making music {i} ."} for i in range(n)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    for split, n in (("train", 30), ("validation", 6), ("test", 6)):
        write_split(folder / f"{split}.jsonl", n)
    return folder


def config(data_dir: Path, **overrides) -> RunConfig:
    options = {"method": "rev", "dataset": "jsonl", "data_dir": str(data_dir), "loader_options": {"task": "nli"},
               "num_train_epochs": 1.0, "n_boot": 10}
    return RunConfig(**{**options, **overrides})


def train_ids(run_dir: Path) -> list[str]:
    return [row["id"] for _, row in read_jsonl(run_dir / "data" / "train.jsonl")]


def test_changed_data_reruns_data_and_every_later_stage(data_dir: Path, tmp_path: Path, caplog) -> None:
    run_dir = tmp_path / "run"
    Run(config(data_dir), run_dir, progress=False).execute(until="tokenizer")
    assert len(train_ids(run_dir)) == 30
    write_split(data_dir / "train.jsonl", 5, premise="An edited premise")  # 30 → 5 rows, premises edited
    with caplog.at_level("WARNING"):
        Run(config(data_dir), run_dir, progress=False).execute(until="data")
    assert "stage data: its inputs changed" in caplog.text
    assert len(train_ids(run_dir)) == 5
    records = [row for _, row in read_jsonl(run_dir / "data" / "train.jsonl")]
    assert all(r["premise"].startswith("An edited premise") for r in records)
    assert not (run_dir / "stages" / "tokenizer.done").exists()  # downstream invalidated, rerun on demand
    caplog.clear()
    with caplog.at_level("INFO"):  # unchanged data: nothing reruns
        Run(config(data_dir), run_dir, progress=False).execute(until="data")
    assert "stage data: done earlier, skipped" in caplog.text


def test_changed_data_also_drops_checkpoints_and_stages_this_run_does_not_list(data_dir: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    Run(config(data_dir), run_dir, progress=False).execute(until="tokenizer")
    # an interrupted training's epoch checkpoint, and a stage of a method this rerun does not name
    (run_dir / "models" / "phi.checkpoints" / "checkpoint-3").mkdir(parents=True)
    (run_dir / "stages" / "simulators.done").write_text(
        json.dumps({"seconds": 1.0, "fingerprint": read_json(run_dir / "stages" / "tokenizer.done")["fingerprint"]}))
    write_split(data_dir / "train.jsonl", 9)
    Run(config(data_dir), run_dir, progress=False).execute(until="data")
    assert not (run_dir / "models" / "phi.checkpoints").exists()  # trained on the old data: never resumed
    assert not (run_dir / "stages" / "simulators.done").exists()


def test_a_run_resumes_when_its_data_files_are_gone(data_dir: Path, tmp_path: Path, caplog) -> None:
    run_dir = tmp_path / "run"
    Run(config(data_dir), run_dir, progress=False).execute(until="data")
    data_dir.rename(tmp_path / "moved")
    with caplog.at_level("WARNING"):
        Run(config(data_dir), run_dir, progress=False).execute(until="tokenizer")  # data/*.jsonl hold all it needs
    assert "no longer there" in caplog.text and (run_dir / "stages" / "tokenizer.done").is_file()
    assert len(train_ids(run_dir)) == 30


def test_an_independent_stage_change_reruns_only_that_stage(tmp_path: Path) -> None:
    runner = StageRunner(tmp_path)
    names = ["suite", "score-rev", "score-larev"]
    before = runner.fingerprints(names, {"suite": 1, "score-rev": "rev v1", "score-larev": "larev v1"},
                                 independent=["score-rev", "score-larev"])
    after = runner.fingerprints(names, {"suite": 1, "score-rev": "rev v2", "score-larev": "larev v1"},
                                independent=["score-rev", "score-larev"])
    assert before["score-rev"] != after["score-rev"] and before["score-larev"] == after["score-larev"]
    assert before["suite"] == after["suite"]
    for name in names:
        runner.run_stage(name, lambda: None, before[name])
    assert runner.invalidate_changed(names, after, independent=["score-rev", "score-larev"]) == ["score-rev"]
    assert runner.is_done("score-larev") and runner.is_done("suite")


def test_settings_that_do_not_touch_data_keep_the_fingerprints(data_dir: Path, tmp_path: Path) -> None:
    runner = StageRunner(tmp_path)
    inputs = {"data": {"train": "abc"}}
    first = runner.fingerprints(["data", "tokenizer", "phi_base"], inputs)
    # adding a method's stages later (e.g. RoRA's) leaves the trained stages' fingerprints as they were
    more = runner.fingerprints(["data", "tokenizer", "rora_detector", "phi_base"], inputs)
    assert first["phi_base"] == more["phi_base"] and first["tokenizer"] == more["tokenizer"]
    changed = runner.fingerprints(["data", "tokenizer", "phi_base"], {"data": {"train": "abd"}})
    assert all(changed[name] != first[name] for name in first)


def test_an_empty_split_fails_cleanly_and_leaves_nothing(data_dir: Path, tmp_path: Path, capsys) -> None:
    (data_dir / "train.jsonl").write_text("")
    run_dir = tmp_path / "run"
    args = ["--quiet", "run", "--method", "rev", "--dataset", "jsonl", "--task", "nli", "--data-dir", str(data_dir),
            "--output-dir", str(run_dir), "--until", "data"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "train.jsonl" in err[0] and "has no examples" in err[0]
    assert not (run_dir / "stages" / "data.done").exists() and not (run_dir / "run_config.json").exists()
    write_split(data_dir / "train.jsonl", 12)  # fixed: the same command, and even another seed, now works
    assert main([*args, "--seed", "3"]) == 0
    assert read_json(run_dir / "run_config.json")["seed"] == 3 and len(train_ids(run_dir)) == 12


def test_a_failed_start_can_be_retried_with_another_setting(data_dir: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (data_dir / "test.jsonl").write_text('{"id": "x", "premise": "p", "hypothesis": "h", "label": "maybe", '
                                         '"rationale": "r"}\n')
    with pytest.raises(DataError, match="maybe"):
        Run(config(data_dir), run_dir, progress=False).execute(until="data")
    assert not (run_dir / "run_config.json").exists()
    write_split(data_dir / "test.jsonl", 6)
    Run(config(data_dir, seed=7), run_dir, progress=False).execute(until="data")  # not "different settings"
    assert read_json(run_dir / "run_config.json")["seed"] == 7


def test_the_lock_refuses_a_live_holder_and_takes_over_a_dead_one(tmp_path: Path, caplog) -> None:
    runner = StageRunner(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / ".lock").write_text(str(sleeper.pid))
        with pytest.raises(DirectoryLockedError, match=f"in use by process {sleeper.pid}"):
            with runner.lock():
                pass
    finally:
        sleeper.kill()
        sleeper.wait()
    (tmp_path / ".lock").write_text("")  # empty and fresh: another process between creating it and writing its PID
    with pytest.raises(DirectoryLockedError, match="starting"):
        with runner.lock():
            pass
    (tmp_path / ".lock").write_text(str(sleeper.pid))
    with caplog.at_level("WARNING"), runner.lock():  # the holder is gone: its lock is stale
        assert (tmp_path / ".lock").read_text() == str(os.getpid())
    assert "no longer running" in caplog.text and not (tmp_path / ".lock").exists()


def test_a_second_process_on_a_run_directory_is_refused(data_dir: Path, tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    Run(config(data_dir), run_dir, progress=False).execute(until="data")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (run_dir / ".lock").write_text(str(holder.pid))
        assert main(["--quiet", "meta", "--run-dir", str(run_dir), "--methods", "length"]) == 2
        assert f"in use by process {holder.pid}" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("flag, value, expected", [
    ("--backbone", "no-such-org/no-such-model", "not a preset"),
    ("--backbone", "./typo-checkpoint", "no such directory"),
    ("--data-dir", "esnli_data_typo", "check --data-dir"),
    ("--data-dir", "./esnli_data_typo", "no such file or directory"),
])
def test_typos_fail_in_seconds_with_one_line(flag: str, value: str, expected: str, data_dir: Path, tmp_path: Path,
                                             capsys) -> None:
    run_dir = tmp_path / "run"
    args = {"--backbone": "t5-tiny", "--data-dir": str(data_dir), flag: value}
    start = time.perf_counter()
    code = main(["--quiet", "run", "--method", "rev", "--dataset", "esnli", "--output-dir", str(run_dir),
                 *(item for pair in args.items() for item in pair), "--until", "data"])
    assert code == 2 and time.perf_counter() - start < 10
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0] and "Traceback" not in err[0]
    assert not run_dir.exists()  # the output directory is left untouched


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run_config.json"):
        main(["--debug", "meta", "--run-dir", str(tmp_path)])


def test_offline_is_detected_when_the_hub_cannot_be_reached(monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    assert detect_offline(host="127.0.0.1", timeout=1.0)  # nothing listens on port 443 here
    assert os.environ["HF_HUB_OFFLINE"] == os.environ["HF_DATASETS_OFFLINE"] == "1"


def test_errors_name_the_users_own_column_and_the_json_position(tmp_path: Path) -> None:
    from larev_hf.data import load_examples

    row = {"id": "e-1", "premise": "A dog runs .", "hypothesis": "An animal moves .", "label": 0,
           "explanation_1": "", "explanation_2": "", "explanation_3": ""}
    (tmp_path / "test.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(DataError, match=r"example id 'e-1': column 'explanation_1' \(the schema's 'rationale'\) is empty"):
        load_examples("esnli", tmp_path, "test")
    (tmp_path / "test.jsonl").write_text('{"id": "e-1", "premise": "A dog\n')
    with pytest.raises(DataError, match=r"line 1: malformed JSON \(.+ column \d+\)"):
        load_examples("esnli", tmp_path, "test")
    (tmp_path / "mine.jsonl").write_text(json.dumps({"q": "Why?", "answer": "yes", "why": " "}) + "\n")
    with pytest.raises(DataError, match=r"column 'why' \(the schema's 'rationale'\) is empty"):
        load_examples("jsonl", tmp_path / "mine.jsonl", "test", task="yesno",
                      column_mapping={"question": "q", "label": "answer", "rationale": "why"})


def test_the_console_shows_stages_not_trainer_dicts(tmp_path: Path, capsys, caplog, monkeypatch) -> None:
    run_dir = tmp_path / "run"
    argv = ["run", "--method", "rev", "--dataset", "synthetic", "--max-train-examples", "32", "--max-eval-examples",
            "8", "--num-train-epochs", "1", "--n-boot", "10", "--output-dir"]
    assert main([*argv, str(tmp_path / "logged")]) == 0
    assert "\r" not in capsys.readouterr().err  # not a terminal: no progress bars, whose carriage returns fill logs
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: the bars are drawn
    with caplog.at_level("INFO"):
        assert main([*argv, str(run_dir)]) == 0
    console = capsys.readouterr()
    assert "'loss'" not in console.out + console.err and "train_runtime" not in console.out + console.err
    assert "phi_base train" in console.err  # the Trainer's bar is named after the model
    assert "[3/6] phi_base: done in" in caplog.text and "[6/6] report-rev" in caplog.text
    logged = [json.loads(line) for line in (run_dir / "models" / "phi_base.log.jsonl").read_text().splitlines()]
    assert any("train_loss" in row for row in logged)  # the numbers are kept, in the model's log file


HEAVY_MODULES = ("torch", "transformers", "datasets", "scipy", "sklearn", "peft", "captum")


def test_help_and_settings_load_without_the_heavy_libraries() -> None:
    """`larev-hf --help` and every settings dataclass import in a fresh interpreter with none of torch & co.
    loaded (the lazy package exports of larev_hf.lazy), and a lazily exported name is the submodule's object."""
    code = (
        "import sys, contextlib, io\n"
        "from larev_hf.cli import main\n"
        "from larev_hf.config import RunConfig\n"
        "from larev_hf.meta import MetaSettings\n"
        "from larev_hf.training import TrainSettings\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['run', '--help'])\n"
        f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import larev_hf.modeling as modeling
    from larev_hf.modeling import backbones

    assert modeling.build_model is backbones.build_model and "build_model" in dir(modeling)
    with pytest.raises(AttributeError, match="larev_hf.modeling.*no_such_name"):
        modeling.no_such_name  # noqa: B018
