"""A researcher's first hour: each fault a new user met is a test that failed before the fix."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from larev_hf.cli import build_parser, main
from larev_hf.cli.commands.run import config_from_args
from larev_hf.data import EXPLANATION_COLUMNS
from larev_hf.hub.explanations import read_explanation_rows
from larev_hf.hub.files import resolve_bundle_dir
from larev_hf.hub.trust import Trust, assess, chance_level
from larev_hf.io import DataError, read_jsonl, write_json
from larev_hf.methods import method_names
from larev_hf.modeling import PRESETS
from larev_hf.report import verdict
from larev_hf.threads import configure_openmp_wait

ROOT = Path(__file__).resolve().parents[1]


def schema_rows(run_dir: Path, n: int = 6) -> list[dict]:
    return [record for _, record in read_jsonl(run_dir / "data" / "test.jsonl")][:n]


# ------------------------------------------------------------------ 2: an empty file is exit 2 naming the file
def test_evaluate_refuses_an_empty_file(tiny_run: Path, tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code = main(["--quiet", "evaluate", "--run-dir", str(tiny_run), "--data-file", str(empty), "--output-dir",
                 str(tmp_path / "out"), "--force"])
    err = capsys.readouterr().err
    assert code == 2
    assert str(empty) in err and "no examples" in err
    assert not (tmp_path / "out" / "report.json").exists()


# ------------------------------------------------------------------ 5: one "my explanations" format everywhere
def test_evaluate_reads_the_explanations_format_and_a_column_mapping(tiny_run: Path, tmp_path: Path) -> None:
    rows = schema_rows(tiny_run)
    task = rows[0]["task"]
    mine = [{column: row[column] for column in EXPLANATION_COLUMNS[task]} | {"id": row["id"]} for row in rows]
    renamed = [{("explanation" if k == "rationale" else k): v for k, v in row.items()} for row in mine]
    for name, records in (("mine", mine), ("renamed", renamed)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["--quiet", "evaluate", "--run-dir", str(tiny_run), "--data-file", str(tmp_path / "mine.jsonl"),
                 "--output-dir", str(tmp_path / "a"), "--force"]) == 0
    assert main(["--quiet", "evaluate", "--run-dir", str(tiny_run), "--data-file", str(tmp_path / "renamed.jsonl"),
                 "--output-dir", str(tmp_path / "b"), "--column-mapping", '{"rationale": "explanation"}', "--force"]) == 0
    a = [r for _, r in read_jsonl(tmp_path / "a" / "scores.jsonl")]
    b = [r for _, r in read_jsonl(tmp_path / "b" / "scores.jsonl")]
    assert len(a) == len(rows) and a == b  # the mapping only renames: the same scores to the last bit


def test_a_missing_column_is_named_with_the_columns_the_line_has(tiny_run: Path, tmp_path: Path, capsys) -> None:
    row = schema_rows(tiny_run, 1)[0]
    (tmp_path / "bad.jsonl").write_text(json.dumps({"rationale": row["rationale"], "label": row["label"]}) + "\n")
    code = main(["--quiet", "evaluate", "--run-dir", str(tiny_run), "--data-file", str(tmp_path / "bad.jsonl"),
                 "--output-dir", str(tmp_path / "out"), "--force"])
    err = capsys.readouterr().err
    assert code == 2
    assert re.search(r"missing column '(question|choices)'", err)
    assert "this line has columns ['label', 'rationale']" in err and "--column-mapping" in err


def test_the_script_names_a_missing_column(tmp_path: Path) -> None:
    # the bundle script reads files with the same reader as `larev-hf evaluate`
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"premise": "p", "hypothesis": "h", "label": "entailment", "explanation": "e"}) + "\n")
    with pytest.raises(DataError, match=r"line 1: missing column\(s\) \['rationale'\]; this line has columns "
                                        r"\['explanation', 'hypothesis', 'label', 'premise'\]"):
        read_explanation_rows(str(path), "nli")
    _, rows = read_explanation_rows(str(path), "nli", {"rationale": "explanation"})
    assert rows[0]["rationale"] == "e" and rows[0]["id"] == "mine-1"


# ------------------------------------------------------------------ 3: `run` without --dataset
def test_run_without_dataset_infers_it_or_asks(data_dir: Path, tmp_path: Path, capsys) -> None:
    parser = build_parser()
    args = parser.parse_args(["run", "--output-dir", str(tmp_path / "r"), "--data-dir", str(data_dir / "esnli")])
    assert config_from_args(args).data.dataset == "esnli"
    assert "--dataset esnli (inferred" in capsys.readouterr().err
    assert config_from_args(parser.parse_args(["run", "--output-dir", "x"])).data.dataset == "synthetic"
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "train.jsonl").write_text(json.dumps({"text": "a", "y": 1}) + "\n")
    with pytest.raises(ValueError, match="without --dataset: its columns match no known data set; pass --dataset"):
        config_from_args(parser.parse_args(["run", "--output-dir", "x", "--data-dir", str(tmp_path / "odd")]))


# ------------------------------------------------------------------ 4: every example script's --help
@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "examples").glob("*.py")))
def test_every_example_script_help_exits_0(script: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / script), "--help"], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-1500:]
    assert "usage" in done.stdout.lower()


# ------------------------------------------------------------------ 7: a mistyped local bundle path
def test_a_mistyped_local_bundle_path_is_one_line_without_the_network(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "bundles").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such local directory") as error:
        resolve_bundle_dir("bundles/larev-esnl")
    assert "not a Hub repo id either" in str(error.value) and "\n" not in str(error.value)
    assert error.value.__cause__ is None


# ------------------------------------------------------------------ 10: files readable by others
def test_outputs_and_bundles_follow_the_umask(tiny_run: Path, tmp_path: Path) -> None:
    from larev_hf.hub import EvaluatorBundle

    old = os.umask(0o022)
    try:
        write_json(tmp_path / "report.json", {"a": 1})
        bundle = EvaluatorBundle.from_run(tiny_run, "rev").save_pretrained(tmp_path / "bundle")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o644
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o755
    assert stat.S_IMODE((bundle / "README.md").stat().st_mode) == 0o644


# ------------------------------------------------------------------ 8: report wording
def _report(leaky_ci: list[float]) -> dict:
    ci = {"gold_minus_leaky": [0.5, 0.9], "gold_minus_gold_leaky": leaky_ci, "gold_minus_vacuous": [0.2, 0.4],
          "sum": [1.0, 2.0]}
    return {"methods": {"larev": {"ci95": ci, "absolute": {"gold": 1.0}, "separations": {}}}}


def test_a_negligible_interval_is_no_verdict_of_direction() -> None:
    assert "rewards the appended label" not in verdict(_report([-0.00004, -0.00001]))[0]
    assert "scores Gold-Leaky like Gold" in verdict(_report([-0.00004, -0.00001]))[0]
    assert "rewards the appended label" in verdict(_report([-0.3, -0.1]))[0]


# ------------------------------------------------------------------ 9, 11: help texts and docs/cli.md against the parser
def test_help_texts_show_defaults_and_every_method(capsys) -> None:
    for argv in (["evaluate", "--help"], ["run", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
    out = capsys.readouterr().out
    evaluate_help, run_help = out.split("usage: larev-hf run")
    assert re.search(r"--run-dir RUN_DIR\s+instead of --evaluator: a finished run directory", evaluate_help)
    assert re.search(r"--evaluator EVALUATOR\s+a named default evaluator", evaluate_help)
    assert re.search(r"--output-dir OUTPUT_DIR\s+where report\.md", evaluate_help)
    assert "(default: t5-tiny)" in run_help
    method_help = re.sub(r"\s+", " ", run_help.split("  --method METHOD")[1].split("  --")[0])
    assert all(name in method_help for name in method_names())


def test_docs_cli_names_every_subcommand_and_preset() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    listed = re.search(r"larev-hf \[--quiet\] \[--debug\] \{([^}]*)\}", text).group(1).split(",")
    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command").choices
    assert listed == list(subcommands)
    backbone_row = next(line for line in text.splitlines() if line.startswith("| `--backbone` | `t5-tiny`"))
    documented = set(re.findall(r"`([\w-]+)`", backbone_row.split("or any HF")[0])) - {"--backbone", "t5-tiny"} | {
        "t5-tiny"}
    assert documented == set(PRESETS)


# ------------------------------------------------------------------ trust: export refuses an untrained evaluator
def test_trust_flags_chance_accuracy_and_a_separation_not_above_0() -> None:
    chance = chance_level([["a", "b", "c"]] * 4)
    assert chance == pytest.approx(1 / 3)
    report = {"accuracy": {"phi_la": {"gold": 0.31}},
              "methods": {"larev": {"separations": {"gold_minus_vacuous": 0.4}, "ci95": {"gold_minus_vacuous": [0.1, 0.7]}}}}
    trust = assess(report, "larev", "phi_la", chance)
    assert not trust.ok and "(31.0%; chance 33.3%) is below 80%" in trust.problems[0]
    report["accuracy"]["phi_la"]["gold"] = 0.75  # 500 e-SNLI rows: above chance, still refused
    assert not assess(report, "larev", "phi_la", chance).ok
    report["accuracy"]["phi_la"]["gold"] = 0.87
    assert assess(report, "larev", "phi_la", chance).ok
    report["methods"]["larev"]["ci95"]["gold_minus_vacuous"] = [-0.1, 0.7]
    assert assess(report, "larev", "phi_la", chance).problems == [
        "Gold − Vacuous is not above 0 (its 95% interval includes or lies below 0)"]


def test_export_refuses_an_untrusted_run_unless_forced(tiny_run: Path, tmp_path: Path, capsys) -> None:
    from larev_hf.hub import EvaluatorBundle

    trust = Trust(**EvaluatorBundle.from_run(tiny_run, "larev").config.trust)
    argv = ["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir", str(tmp_path / "b")]
    code = main(argv)
    err = capsys.readouterr().err
    if trust.ok:  # the tiny run happened to pass: the card still states the check
        assert code == 0
    else:
        assert code == 2 and "--force" in err and "not trustworthy" in err and not (tmp_path / "b").exists()
        assert main([*argv, "--force"]) == 0
    card = (tmp_path / "b" / "README.md").read_text()
    assert "Trust check at export" in card and trust.sentence() in card


def test_relative_and_label_centred_scores(tiny_bundles: dict[str, Path]) -> None:
    from larev_hf.hub import EvaluatorBundle

    bundle = EvaluatorBundle.from_pretrained(tiny_bundles["larev"])
    inputs = [{"question": "Where is the blorvex kept?", "choices": ["kitchen", "garage", "garden"]}] * 2
    scored = bundle.score(["a blorvex is a spice kept in the kitchen .", "nothing ."], ["kitchen", "kitchen"], inputs,
                          relative=True)
    vacuous = bundle.score(scored.baselines, ["kitchen", "kitchen"], inputs)
    assert scored.relative == pytest.approx(scored.scores - vacuous.scores)
    assert "relative_scores" in scored.to_dict() and vacuous.relative is None  # a second pass only when asked


def test_label_offsets_are_the_test_splits_gold_means(tmp_path: Path) -> None:
    from larev_hf.hub.trust import label_offsets

    rows = [{"id": "1", "label": "a", "larev/gold": 1.0}, {"id": "2", "label": "a", "larev/gold": 3.0},
            {"id": "3", "label": "b", "larev/gold": -1.0}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert label_offsets([tmp_path / "s.jsonl"], "larev") == {"a": 2.0, "b": -1.0}
    assert label_offsets([tmp_path / "s.jsonl"], "rev") is None and label_offsets([tmp_path / "x"], "larev") is None


# ------------------------------------------------------------------ 12: how the command's threads wait
def test_openmp_wait_sleeps_only_when_the_cpus_are_shared() -> None:
    assert configure_openmp_wait(env := {}, busy_cores=0.0) is None and "GOMP_SPINCOUNT" not in env  # alone
    assert configure_openmp_wait(env := {}, busy_cores=1.5) == "0" and env["GOMP_SPINCOUNT"] == "0"
    assert configure_openmp_wait({"OMP_WAIT_POLICY": "ACTIVE"}, busy_cores=1.5) is None  # the user chose
    assert configure_openmp_wait({"GOMP_SPINCOUNT": "7"}, busy_cores=1.5) is None
    assert configure_openmp_wait({"LAREV_HF_SPIN": "off"}, busy_cores=1.5) is None
    assert configure_openmp_wait(env := {"LAREV_HF_SPIN": "123"}, busy_cores=0.0) == "123"
    assert env["GOMP_SPINCOUNT"] == "123"
    with pytest.raises(ValueError, match="LAREV_HF_SPIN='fast': expected 'auto', 'off' or a non-negative integer"):
        configure_openmp_wait({"LAREV_HF_SPIN": "fast"})


def test_jobs_started_together_see_each_other(tmp_path: Path, monkeypatch) -> None:
    import larev_hf.threads as threads

    monkeypatch.setattr(threads, "job_directory", lambda: tmp_path)
    (tmp_path / "999999999").touch()  # a job that died without cleaning up
    other = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(30)"])
    try:
        (tmp_path / str(other.pid)).touch()
        assert threads.register_job() == 1  # the live one counts, the dead one is removed
        assert not (tmp_path / "999999999").exists() and (tmp_path / str(os.getpid())).exists()
    finally:
        other.kill()
        other.wait()
    assert threads.register_job() == 0


def test_the_explanations_format_takes_snli_integer_labels(tmp_path: Path) -> None:
    from larev_hf.data import load_explanations

    path = tmp_path / "mine.jsonl"
    rows = [{"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": 0, "rationale": "a dog is an animal ."},
            {"premise": "A dog runs.", "hypothesis": "A cat sleeps.", "label": 2, "rationale": "dogs are not cats ."}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    dataset = load_explanations(path, "esnli", "nli")
    assert dataset["label"] == ["entailment", "contradiction"] and dataset["rationale"] == [r["rationale"] for r in rows]
