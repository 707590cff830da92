"""The run pipeline end to end on small synthetic data: report schema, evaluate, determinism, resume, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from larev_hf.cli import main
from larev_hf.io import read_json, read_jsonl
from larev_hf.pipeline import Run, RunConfig

SMALL = dict(dataset="synthetic", max_train_examples=240, max_eval_examples=48, num_train_epochs=2.0, n_boot=200)
REPORT_KEYS = {
    "absolute": {"gold", "gold_leaky", "vacuous", "leaky"},
    "separations": {"gold_minus_leaky", "gold_minus_gold_leaky", "gold_minus_vacuous", "sum"},
    "ci95": {"gold_minus_leaky", "gold_minus_gold_leaky", "gold_minus_vacuous", "sum"},
    "win_rate": {"leaky", "gold_leaky", "vacuous"},
}


@pytest.fixture(scope="module")
def larev_run(tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("run")
    Run(RunConfig(method="all", **SMALL), output, progress=False).execute()
    return output


@pytest.mark.slow
def test_report_has_the_documented_schema_and_files(larev_run):
    report = read_json(larev_run / "report.json")
    assert report["dataset"] == "synthetic" and report["split"] == "test" and report["n_examples"] == 48
    assert set(report["methods"]) == {"rev", "larev", "rora", "las", "rq", "rouge_l", "length", "rationale_only"}
    for method in ("rouge_l", "length", "rationale_only"):  # VARIF §5's metric baselines, in their own units
        entry = report["methods"][method]
        assert entry["kind"] == "baseline" and set(entry["absolute"]) == REPORT_KEYS["absolute"]
    for method in ("rev", "larev", "rora"):
        entry = report["methods"][method]
        for key, names in REPORT_KEYS.items():
            assert set(entry[key]) == names
        seps = entry["separations"]
        assert seps["sum"] == pytest.approx(seps["gold_minus_leaky"] + seps["gold_minus_gold_leaky"] + seps["gold_minus_vacuous"])
        for low, high in entry["ci95"].values():
            assert low <= high
    assert set(report["accuracy"]) == {"phi_base", "phi", "phi_la", "rora_theta", "rora_phi", "simulator",
                                       "simulator_rationale_only"}
    for method in ("las", "rq"):  # accuracy differences: their own keys, None where LAS is undefined
        entry = report["methods"][method]
        assert entry["unit"] == "accuracy" and set(entry["absolute"]) == REPORT_KEYS["absolute"]
        assert set(entry["separations"]) == set(entry["ci95"]) == REPORT_KEYS["separations"]
        assert all(value is None or -1 <= value <= 1 for value in entry["absolute"].values())
    assert set(report["methods"]["las"]["groups"]) == REPORT_KEYS["absolute"]
    # weights are reproducible only at the same thread count (and versions, device): every stage records them
    assert set(report["stage_environments"]) == set(report["timings"])
    assert report["stage_environments"]["phi_la"]["torch_threads"] == torch.get_num_threads()
    assert report["stage_environments"]["phi_base"]["torch"] == torch.__version__
    assert (larev_run / "separations.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = (larev_run / "report.md").read_text()
    assert "| LAREV |" in markdown and "Gold − Leaky" in markdown
    assert "| RORA |" in markdown and "### LAS by leakage group" in markdown
    assert "## Metric baselines" in markdown and "| ROUGE_L | ROUGE-L F1 |" in markdown
    rows = [row for _, row in read_jsonl(larev_run / "scores" / "test_scores.jsonl")]
    assert len(rows) == 48 and {"rev/gold", "larev/leaky", "log_p_baseline"} <= set(rows[0])
    assert {"rora/leaky", "log_p_theta", "simulator/x", "simulator/gold/x_r", "simulator/leaky/r"} <= set(rows[0])
    summary = read_json(larev_run / "leakage" / "summary.json")
    assert summary["n_examples"] == 240 and "stop_word_guard_fired" in summary
    assert not list(larev_run.rglob("*.tmp")) and not list(larev_run.rglob(".*.tmp"))


@pytest.mark.slow
def test_larev_separates_where_the_leaky_baseline_fools_rev(larev_run):
    """The synthetic baseline states the answer: Φ_base is certain from b alone, Φ keeps answering from b
    whatever the rationale, and only Φ_LA (trained across environments) needs the rationale."""
    report = read_json(larev_run / "report.json")
    accuracy, methods = report["accuracy"], report["methods"]
    assert accuracy["phi_base"]["baseline"] == 1.0
    assert accuracy["phi"]["vacuous"] >= 0.9 and accuracy["phi"]["leaky"] >= 0.9
    assert accuracy["phi_la"]["gold"] >= 0.9
    assert accuracy["phi_la"]["vacuous"] < accuracy["phi"]["vacuous"] - 0.2
    for key in ("gold_minus_leaky", "gold_minus_vacuous"):
        assert methods["larev"]["separations"][key] > 0.5
        assert methods["larev"]["ci95"][key][0] > 0
        assert methods["larev"]["separations"][key] > methods["rev"]["separations"][key] + 0.5


@pytest.mark.slow
def test_evaluate_reproduces_the_run_scores_without_training(larev_run, tmp_path):
    run = Run.load(larev_run, progress=False)
    report = run.evaluate_file(larev_run / "data" / "test.jsonl", tmp_path / "eval")
    original = read_json(larev_run / "report.json")
    for method in ("rev", "larev", "rora"):
        assert report["methods"][method]["absolute"] == pytest.approx(original["methods"][method]["absolute"], abs=1e-9)
    for method in ("las", "rq"):
        assert report["methods"][method]["absolute"] == original["methods"][method]["absolute"]
    assert not (tmp_path / "eval" / "models").exists()


def test_same_seed_same_scores(tmp_path):
    # determinism does not depend on the size: a small run whose models still train on more than one batch (of 32)
    tiny = {**SMALL, "max_train_examples": 64, "max_eval_examples": 16, "num_train_epochs": 1.0, "n_boot": 50}
    reports = [Run(RunConfig(method="rev", **tiny), tmp_path / f"r{i}", progress=False).execute() for i in range(2)]
    assert reports[0]["methods"] == reports[1]["methods"]


@pytest.mark.slow
def test_killed_run_resumes_without_redoing_finished_stages(tmp_path):
    output = tmp_path / "run"
    command = [sys.executable, "-m", "larev_hf.cli", "--quiet", "run", "--method", "rev", "--dataset", "synthetic",
               "--output-dir", str(output), "--max-train-examples", "400", "--max-eval-examples", "40",
               "--num-train-epochs", "3", "--n-boot", "100"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "OMP_NUM_THREADS": "1"})
    marker = output / "stages" / "phi_base.done"
    deadline = time.time() + 240
    while not marker.exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert marker.exists(), "the run did not finish its first training stage"
    time.sleep(1.0)
    process.send_signal(signal.SIGKILL)  # killed inside the next stage (Φ)
    process.wait()
    assert not (output / "report.json").exists()
    finished = {p.name: p.stat().st_mtime_ns for p in (output / "stages").glob("*.done")}
    weights = output / "models" / "phi_base" / "model.safetensors"
    weights_mtime = weights.stat().st_mtime_ns

    assert main(["--quiet", *command[4:]]) == 0
    for name, mtime in finished.items():
        assert (output / "stages" / name).stat().st_mtime_ns == mtime, f"{name} was redone"
    assert weights.stat().st_mtime_ns == weights_mtime
    assert (output / "report.json").exists() and (output / "stages" / "phi.done").exists()
    assert not list(output.glob("models/*.checkpoints"))


def test_resuming_with_other_settings_is_refused(tmp_path, capsys):
    output = tmp_path / "run"
    output.mkdir()
    (output / "run_config.json").write_text(json.dumps({**RunConfig().to_dict(), "seed": 5}))
    assert main(["--quiet", "run", "--method", "rev", "--output-dir", str(output)]) == 2
    assert "different settings (seed)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"id": "x1", "question": "q?", "answer": "a", "choices": ["a", "b"]}\n', "missing column 'explanation'"),
        (b'{"id": "x1", "question": "q?", "answer": "c", "choices": ["a", "b"], "explanation": "r"}\n', "label"),
        (b'{"id": "x1", "question": "q?", "answer": "a", "choices": ["a", "b"], "explanation": ""}\n', "rationale"),
        (b'{"id": "x1", "question": "q?" "answer"}\n', "malformed JSON"),
        (b'{"id": "x1", "question": "caf\xe9"}\n', "UTF-8"),
    ],
)
def test_bad_input_stops_with_a_located_error_and_writes_nothing(tmp_path, capsys, line, expected):
    data = tmp_path / "data"
    data.mkdir()
    good = b'{"id": "ok%d", "question": "where?", "answer": "a", "choices": ["a", "b"], "explanation": "because"}\n'
    for split in ("train", "validation"):
        (data / f"{split}.jsonl").write_bytes(b"".join(good % i for i in range(3)))
    (data / "test.jsonl").write_bytes(good % 0 + line)
    output = tmp_path / "out"
    mapping = '{"label": "answer", "rationale": "explanation"}'
    code = main(["--quiet", "run", "--dataset", "jsonl", "--data-dir", str(data), "--output-dir", str(output),
                 "--column-mapping", mapping])
    message = capsys.readouterr().err
    assert code == 2
    assert "test.jsonl" in message and "line 2" in message and expected in message
    assert not (output / "data").exists()


def test_baseline_builder_specs():
    from larev_hf.data import HFBaselineBuilder, TemplateBaselineBuilder, baseline_builder_from_spec

    assert isinstance(baseline_builder_from_spec("template", seed=3), TemplateBaselineBuilder)
    with pytest.raises(ValueError, match="'paraphrase:<model>'"):
        baseline_builder_from_spec("paraphrase")
    builder = baseline_builder_from_spec("qa2d:some/model", seed=1)
    assert isinstance(builder, HFBaselineBuilder) and builder.to_config()["mode"] == "qa2d"


def test_until_must_name_a_stage_of_the_run(tmp_path, capsys):
    code = main(["--quiet", "run", "--method", "rev", "--output-dir", str(tmp_path / "r"), "--until", "probe"])
    assert code == 2
    assert "not a stage of this run" in capsys.readouterr().err


def test_each_evaluator_seed_shares_the_data_and_tokenizer_and_keeps_its_own_models(tmp_path):
    run = Run(RunConfig(method="rev", seed=0, seeds=["0", "2"]), tmp_path, progress=False)
    own, other = run.seed_views()
    assert own is run and other.config.training.seed == 2 and other.runner is run.runner
    assert other.path("data", "test.jsonl") == run.path("data", "test.jsonl") == tmp_path / "data" / "test.jsonl"
    assert other.path("tokenizer") == tmp_path / "tokenizer"
    assert run.path("models", "phi") == tmp_path / "models" / "phi"
    assert other.path("models", "phi") == tmp_path / "seeds" / "seed-2" / "models" / "phi"
    assert (run.stage_name("phi"), other.stage_name("phi"), other.stage_name("tokenizer")) == \
        ("phi", "phi@seed2", "tokenizer")
    assert [name for name, _ in run.stages()] == [
        "data", "tokenizer", "phi_base", "phi", "phi_base@seed2", "phi@seed2", "score-rev", "score-rev@seed2",
        "report-rev+seeds0-2"]
    assert run.unfinished_stages("rev") == ["tokenizer", "phi_base", "phi", "tokenizer", "phi_base@seed2",
                                            "phi@seed2"]


def test_phi_la_settings_may_change_until_a_phi_la_exists(tmp_path):
    from larev_hf.io import write_json

    def checked(config: RunConfig) -> Run:
        run = Run(config, tmp_path, progress=False)
        run.check_config()
        run.runner.save_pending_settings()  # what the runner does once a stage has finished
        return run

    checked(RunConfig(method="all", lambda_irm=0.5))
    checked(RunConfig(method="all", lambda_irm=0.1))  # nothing trained yet
    write_json(tmp_path / "stages" / "phi_la.done", {"seconds": 1.0})
    with pytest.raises(ValueError, match="different settings \\(lambda_irm\\)"):
        Run(RunConfig(method="all", lambda_irm=0.3), tmp_path, progress=False).check_config()
    with pytest.raises(ValueError, match="different settings \\(seed\\)"):
        Run(RunConfig(method="all", lambda_irm=0.1, seed=1), tmp_path, progress=False).check_config()


def test_schema_files_load_and_name_a_missing_field(tmp_path):
    from larev_hf.data import load_schema_jsonl
    from larev_hf.io import DataError

    record = {"id": "s1", "task": "qa", "premise": "", "hypothesis": "", "question": "where?", "choices": ["a", "b"],
              "label": "a", "rationale": "because", "baseline": "extra columns are dropped"}
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps({k: v for k, v in record.items() if k != "label"}) + "\n")
    with pytest.raises(DataError, match=r"test\.jsonl, line 2.*missing field 'label'"):
        load_schema_jsonl(path)
    path.write_text(json.dumps(record) + "\n")
    assert load_schema_jsonl(path)[0] == {k: v for k, v in record.items() if k != "baseline"}


def test_method_lists_are_validated_and_canonically_ordered():
    assert RunConfig(method="larev,rev").methods == ("rev", "larev")
    assert RunConfig(method="all").methods == ("rev", "larev", "rora", "las", "rq", "rouge_l", "length", "rationale_only")
    with pytest.raises(ValueError, match="comma-separated list"):
        RunConfig(method="rev,bogus")


@pytest.mark.slow
def test_train_rationale_trains_every_evaluator_on_that_variant(tmp_path):
    """RoRA §4's per-type protocol: a simulator trained on leaky rationales learns to read the restated label, so
    RQ rewards the leaky rationale it penalises when trained on gold ones."""
    reports = {variant: Run(RunConfig(method="rq", train_rationale=variant, **SMALL), tmp_path / variant,
                            progress=False).execute()
               for variant in ("gold", "leaky")}
    rq = {variant: report["methods"]["rq"]["absolute"] for variant, report in reports.items()}
    assert rq["leaky"]["leaky"] > rq["gold"]["leaky"] + 0.15  # measured: +0.31 against +0.04
    run = Run.load(tmp_path / "leaky", progress=False)
    train = run.split_records("train")
    assert all(r["rationale"] == r["rationale_leaky"] != r["rationale_gold"] for r in train)
    assert [r["rationale"] for r in run.split_records("test")] == [r["rationale_gold"] for r in run.split_records("test")]
    with pytest.raises(ValueError, match="train_rationale must be one of"):
        RunConfig(train_rationale="silver")


@pytest.mark.slow
def test_phi_la_init_phi_starts_from_the_runs_phi(larev_run, tmp_path):
    """``--phi-la-init phi``: Φ_LA starts from Φ's trained weights; by default it starts from the backbone as built.

    At a learning rate of 1e-9 training barely moves the weights, so the trained Φ_LA shows where it started.
    """
    import shutil

    from safetensors.torch import load_file

    from larev_hf.methods.larev import train_phi_la

    def weights(path: Path) -> dict[str, torch.Tensor]:
        return load_file(str(path / "model.safetensors"))

    phi = weights(larev_run / "models" / "phi")
    gaps = {}
    for init in ("phi", "fresh"):
        run_dir = tmp_path / init
        shutil.copytree(larev_run, run_dir, ignore=shutil.ignore_patterns("phi_la*"))
        train_phi_la("phi_la", Run(RunConfig(method="all", phi_la_init=init, learning_rate=1e-9, **SMALL), run_dir,
                                   progress=False))
        trained = weights(run_dir / "models" / "phi_la")
        gaps[init] = max(float((trained[name] - phi[name]).abs().max()) for name in phi)
    assert gaps["phi"] < 1e-6 and gaps["fresh"] > 1e-3, gaps  # measured: 3.5e-8 against 8.6e-3
    with pytest.raises(ValueError, match="phi_la_init must be one of"):
        RunConfig(phi_la_init="probe")
