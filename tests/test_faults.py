"""Fault injection: a run killed at any point resumes to the report of an uninterrupted run; a refused
write is one clear line and leaves no half-written output; every bad CLI argument is exit 2 without a traceback."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from larev_hf.cli import main
from larev_hf.io import read_json, read_jsonl

#: Runs the CLI with one fault armed: SIGKILL when a stage marker is about to be written (``marker:<stage>``) or
#: when a finished temporary file or model directory is about to replace its target (``write:<file name>``).
FAULT_SCRIPT = """
import os, signal, sys
kind, _, name = os.environ["LAREV_TEST_FAULT"].partition(":")
if kind == "marker":
    import larev_hf.runner as runner
    original = runner.write_json
    def write_json(path, obj):
        if str(path).endswith(os.path.join("stages", name + ".done")):
            os.kill(os.getpid(), signal.SIGKILL)
        original(path, obj)
    runner.write_json = write_json
elif kind == "write":
    original_replace = os.replace
    def replace(src, dst, *args, **kwargs):
        if os.path.basename(str(dst)) == name:
            os.kill(os.getpid(), signal.SIGKILL)
        return original_replace(src, dst, *args, **kwargs)
    os.replace = replace
from larev_hf.cli import main
sys.exit(main(sys.argv[1:]))
"""

RUN_ARGS = ["--quiet", "run", "--method", "rev", "--dataset", "synthetic", "--max-train-examples", "32",
            "--max-eval-examples", "8", "--num-train-epochs", "1", "--n-boot", "20"]


def cli(run_dir: Path, fault: str | None = None, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    if fault:
        env["LAREV_TEST_FAULT"] = fault

    def set_limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run([sys.executable, "-c", FAULT_SCRIPT if fault else "import sys; from larev_hf.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *RUN_ARGS, "--output-dir", str(run_dir)],
                          env=env, capture_output=True, text=True, preexec_fn=set_limit, timeout=600)


def outcome(run_dir: Path) -> tuple[dict, list[dict]]:
    report = read_json(run_dir / "report.json")
    return report["methods"], [row for _, row in read_jsonl(run_dir / "scores" / "test_scores.jsonl")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict, list[dict]]:
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    assert cli(run_dir).returncode == 0
    return outcome(run_dir)


#: Kill points in pipeline order: a data file mid-write, the data stage's marker, a model directory about to replace
#: its target, a training stage's marker, the scores file, the report.
FAULTS = ["write:train.jsonl", "marker:data", "write:phi_base", "marker:phi", "write:test_scores.jsonl",
          "write:report.json"]


@pytest.mark.slow
def test_a_kill_anywhere_resumes_to_the_uninterrupted_report(reference, tmp_path: Path) -> None:
    """One run killed at every point in turn: each resume picks up where the last kill left it and is itself killed
    at the next point (so every kill also tests the resume before it), then a last resume must give the uninterrupted
    run's report and scores. One chain costs about one run instead of one run per kill point."""
    run_dir = tmp_path / "run"
    for fault in FAULTS:
        killed = cli(run_dir, fault)
        assert killed.returncode == -9, (fault, killed.stderr[-2000:])
    resumed = cli(run_dir)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert outcome(run_dir) == reference
    assert not [p for p in run_dir.rglob(".*.tmp")]  # the killed processes' temporaries were cleaned up


@pytest.mark.slow
def test_a_refused_write_is_one_line_and_leaves_no_half_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    refused = cli(run_dir, limit_bytes=200_000)  # data and tokenizer fit; the first model does not
    assert refused.returncode == 2, refused.stderr[-2000:]
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot access" in lines[0] and "File too large" in lines[0]
    assert (run_dir / "stages" / "tokenizer.done").is_file() and not (run_dir / "stages" / "phi_base.done").exists()
    assert not (run_dir / "models" / "phi_base").exists()  # no half model where a finished one is expected
    assert cli(run_dir).returncode == 0  # with room again, the same command resumes and finishes


@pytest.mark.parametrize("args, culprit", [
    (["run", "--dataset", "synthetic", "--method", "nonsense"], "method 'nonsense' is not available"),
    (["run", "--dataset", "synthetic", "--until", "nostage"], "--until 'nostage' is not a stage"),
    (["run", "--dataset", "synthetic", "--lambda-irm", "abc"], "--lambda-irm: invalid float value: 'abc'"),
    (["run", "--dataset", "jsonl", "--data-dir", "x.jsonl", "--column-mapping", "{bad"], "--column-mapping"),
    (["run", "--dataset", "nosuchkind"], "nosuchkind"),
    (["run", "--dataset", "synthetic", "--backbone", "./missing-checkpoint"], "--backbone ./missing-checkpoint"),
    (["evaluate", "--run-dir", "{missing}", "--data-file", "x.jsonl"], "no run_config.json"),
    (["meta", "--run-dir", "{missing}"], "no run_config.json"),
    (["meta", "--run-dir", "{missing}", "--split", "train"], "--split: invalid choice: 'train'"),
    (["export", "--run-dir", "{missing}", "--method", "rev"], "missing"),
])
def test_bad_arguments_exit_2_with_one_line_and_touch_nothing(args: list[str], culprit: str, tmp_path: Path,
                                                              capsys) -> None:
    output = tmp_path / "out"
    args = [a.replace("{missing}", str(tmp_path / "missing")) for a in args]
    with_output = [*args, "--output-dir", str(output)]
    try:
        code = main(["--quiet", *with_output])
    except SystemExit as exit_:  # argparse
        code = exit_.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err and culprit in err[-1] and not any("Traceback" in line for line in err)
    assert err[-1].startswith("larev-hf") and len([line for line in err if "error" in line]) == 1
    assert not output.exists() and not (tmp_path / "missing").exists()


def test_fault_script_arms_only_what_it_is_told() -> None:
    """The injected faults are test-only: nothing in the library reads LAREV_TEST_FAULT."""
    library = Path(__file__).resolve().parents[1] / "larev_hf"
    assert not any("LAREV_TEST_FAULT" in path.read_text() for path in library.rglob("*.py"))
