"""Scoring a person's explanations: one id rule for every way in, the trust check, the per-explanation table, ranks
within an instance, and the named default evaluators."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import evaluate
import numpy as np
import pytest
from scipy.stats import rankdata

import larev_hf
from larev_hf import evaluators
from larev_hf.cli import main
from larev_hf.data.vacuous import NLI_FRAMES, TemplateBaselineBuilder
from larev_hf.evaluators import building, loading, recipes
from larev_hf.hub import EvaluatorBundle, build_records
from larev_hf.hub.explanations import TABLE_COLUMNS
from larev_hf.io import DataError, read_json, read_jsonl
from larev_hf.scores.ranking import within_instance_ranks

ROOT = Path(__file__).resolve().parents[2]

#: Hand-written e-SNLI-style instances (not from any split), each with a good explanation, a restatement and a label
#: sentence.
INSTANCES = [
    ("A man in a red jacket rides a bike down a wet street.", "A man is outdoors.", "entailment",
     "A street is outdoors, so someone riding down it is outdoors."),
    ("Two dogs chase a ball across a snowy field.", "Two cats sleep on a sofa.", "contradiction",
     "Dogs are not cats, and chasing a ball is not sleeping."),
    ("A woman plays a violin on a small stage.", "The woman is a famous musician.", "neutral",
     "Playing on a small stage does not mean she is famous."),
    ("A child builds a sandcastle on the beach.", "A kid is playing with sand.", "entailment",
     "Building a sandcastle is playing with sand, and a child is a kid."),
]


def explanation_rows() -> list[dict]:
    """Three explanations per instance, file order instance by instance."""
    rows = []
    for premise, hypothesis, label, good in INSTANCES:
        for rationale in (good, f"{premise} {hypothesis}", f"The answer is {label}."):
            rows.append({"premise": premise, "hypothesis": hypothesis, "label": label, "rationale": rationale})
    return rows


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def key(row: dict) -> tuple:
    return row["premise"], row["hypothesis"], row["label"], row["rationale"]


# --------------------------------------------------------------------------- one id rule
def test_the_template_baseline_is_a_function_of_the_instance_not_its_id() -> None:
    builder = TemplateBaselineBuilder(seed=0)
    rows = [{"task": "nli", "premise": p, "hypothesis": h, "label": y} for p, h, y, _ in INSTANCES * 5]
    first = builder([{**row, "id": f"a{i}"} for i, row in enumerate(rows)])
    renamed = builder([{**row, "id": f"zz-{i * 7}"} for i, row in enumerate(rows)])
    assert first == renamed
    # still varied across instances: one surface frame is not chosen for every input
    many = [{"task": "nli", "premise": f"A person number {i} walks.", "hypothesis": "A person walks.",
             "label": "entailment", "id": "same"} for i in range(40)]
    frames = [2 if b.startswith("The statement that") else 1 if ". This " in b else 0 for b in builder(many)]
    used = set(frames)
    assert len(used) == len(NLI_FRAMES)


def test_an_explanation_scores_the_same_whatever_its_id_line_or_instance_id(nli_run, nli_bundle, tmp_path,
                                                                            monkeypatch) -> None:
    rows = explanation_rows()
    plain = write(tmp_path / "plain.jsonl", rows)
    renamed = write(tmp_path / "renamed.jsonl",
                    [{"id": f"mine-{1000 - i}", **row} for i, row in enumerate(rows)][::-1])  # new ids, reversed lines
    grouped = write(tmp_path / "grouped.jsonl",
                    [{"instance_id": f"pair-{i // 3}", **row} for i, row in enumerate(rows)])
    scores: dict[str, dict[tuple, float]] = {}

    def cli(name: str, path: Path, *source: str) -> None:
        out = tmp_path / name
        assert main(["--quiet", "evaluate", *source, "--data-file", str(path), "--output-dir", str(out), "--force"]) == 0
        scores[name] = {key(r): r["score"] for _, r in read_jsonl(out / "scores.jsonl")}

    for name, path in (("plain", plain), ("renamed", renamed), ("grouped", grouped)):
        cli(f"cli-bundle-{name}", path, "--evaluator", str(nli_bundle))
    cli("cli-run-grouped", grouped, "--run-dir", str(nli_run))

    spec = importlib.util.spec_from_file_location("score_llm_rationales", ROOT / "examples" / "score_llm_rationales.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)
    spec.loader.exec_module(script)
    for name, path in (("plain", plain), ("renamed", renamed)):
        out = tmp_path / f"script-{name}"
        assert script.main(["--evaluator", str(nli_bundle), "--input", str(path), "--output_dir", str(out)]) == 0
        scores[f"script-{name}"] = {key(r): r["score"] for _, r in read_jsonl(out / "scores.jsonl")}

    metric = evaluate.load(larev_hf.metric_path("larev"), evaluator=str(nli_bundle))
    for name, path in (("plain", plain), ("renamed", renamed), ("grouped", grouped)):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        result = metric.compute(rationales=[r["rationale"] for r in lines], labels=[r["label"] for r in lines],
                                inputs=lines)
        scores[f"evaluate-{name}"] = {key(r): s for r, s in zip(lines, result["scores"], strict=True)}
        assert ("instance_ranks" in result) == (name == "grouped")

    reference = scores["cli-bundle-plain"]
    assert len(reference) == len(rows)
    for name, values in scores.items():
        assert values.keys() == reference.keys(), name
        np.testing.assert_allclose([values[k] for k in reference], list(reference.values()), rtol=0, atol=1e-6,
                                   err_msg=name)


def test_row_ids_are_unique_and_an_instance_shares_its_input(nli_bundle, tmp_path, capsys) -> None:
    rows = explanation_rows()
    inputs = [{"premise": r["premise"], "hypothesis": r["hypothesis"]} for r in rows[:2]]
    with pytest.raises(DataError, match=r"inputs\[1\]: duplicate id 'x' \(first at inputs\[0\]\); expected a unique "
                                        r"id per row; explanations of one instance share an 'instance_id' instead"):
        build_records(["a", "b"], ["entailment"] * 2, [{**i, "id": "x"} for i in inputs], task="nli")
    mixed = [{**inputs[0], "instance_id": "p"}, {"premise": rows[3]["premise"], "hypothesis": rows[3]["hypothesis"],
                                                 "instance_id": "p"}]
    with pytest.raises(DataError, match=r"inputs\[1\]: instance_id 'p' is shared with inputs\[0\], whose input "
                                        r"differs"):
        build_records(["a", "b"], ["entailment", "contradiction"], mixed, task="nli")
    path = write(tmp_path / "dup.jsonl", [{"id": "q1", **rows[0]}, {"id": "q1", **rows[1]}])
    code = main(["--quiet", "evaluate", "--evaluator", str(nli_bundle), "--data-file", str(path), "--output-dir",
                 str(tmp_path / "out"), "--force"])
    assert code == 2
    assert f"{path}, line 2: duplicate id 'q1' (first at {path}, line 1)" in capsys.readouterr().err


def test_ranks_within_an_instance_follow_scipy() -> None:
    rng = np.random.default_rng(3)
    scores = rng.normal(size=30).round(1)  # ties included
    instances = [None if i % 7 == 0 else f"i{i % 4}" for i in range(30)]
    ranks = within_instance_ranks(scores, instances)
    for group in {g for g in instances if g is not None}:
        rows = [i for i, g in enumerate(instances) if g == group]
        assert [ranks[i] for i in rows] == list(rankdata(-scores[rows], method="min").astype(int))
    assert all(ranks[i] is None for i, g in enumerate(instances) if g is None)


# --------------------------------------------------------------------------- what a person gets
def test_evaluate_checks_trust_and_writes_a_table_a_person_can_read(nli_bundle, tmp_path, capsys) -> None:
    rows = explanation_rows()
    grouped = write(tmp_path / "mine.jsonl", [{"instance_id": f"pair-{i // 3}", **row} for i, row in enumerate(rows)])
    argv = ["evaluate", "--evaluator", str(nli_bundle), "--data-file", str(grouped), "--output-dir", str(tmp_path / "a")]
    assert main(argv) == 2  # 48 training rows: the evaluators are near chance
    err = capsys.readouterr().err
    assert "not trustworthy" in err and "--force" in err and not (tmp_path / "a").exists()

    assert main([*argv, "--force"]) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err  # no progress bars when stderr is not a terminal
    assert "warning:" in captured.err and "not trustworthy" in captured.err
    table = [line for line in captured.out.splitlines() if line.strip()]
    assert table[0].split()[:5] == ["row", "id", "instance", "label", "score"]
    assert all(r["rationale"][:30] in captured.out for r in rows)
    report = read_json(tmp_path / "a" / "report.json")
    with open(tmp_path / "a" / "scores.csv", newline="") as handle:
        csv_rows = list(csv.DictReader(handle))
    assert list(csv_rows[0]) == list(TABLE_COLUMNS) and len(csv_rows) == len(rows)
    # the table's ranks are the ranks of the scores within each instance
    for group in range(len(INSTANCES)):
        members = [r for r in report["explanations"] if r["instance_id"] == f"pair-{group}"]
        expected = rankdata([-r["score"] for r in members], method="min").astype(int)
        assert [r["rank"] for r in members] == list(expected)
    # label-centred = score minus the label's offset from the bundle (an NLI bundle has a fixed label set)
    offsets = EvaluatorBundle.from_pretrained(nli_bundle).config.label_offsets
    for r in report["explanations"]:
        assert r["label_centred"] == pytest.approx(r["score"] - offsets[r["label"]], abs=1e-9)
    text = (tmp_path / "a" / "report.md").read_text()
    # the user's explanations are "yours", not a data set's "Gold" rows (the trust line speaks of the evaluator's own)
    assert text.startswith(f"# Your explanations: {grouped}") and "Gold" not in text.split("## Each explanation")[1]

    # the same explanations as CSV give the same scores
    with open(tmp_path / "mine.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["instance_id", "premise", "hypothesis", "label", "rationale"])
        writer.writeheader()
        writer.writerows([{"instance_id": f"pair-{i // 3}", **row} for i, row in enumerate(rows)])
    assert main(["--quiet", "evaluate", "--evaluator", str(nli_bundle), "--data-file", str(tmp_path / "mine.csv"),
                 "--output-dir", str(tmp_path / "c"), "--force"]) == 0
    from_csv = read_json(tmp_path / "c" / "report.json")["explanations"]
    assert [r["score"] for r in from_csv] == [r["score"] for r in report["explanations"]]


def test_an_interrupt_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch) -> None:
    from larev_hf.pipeline import Run

    def interrupted(self, until=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(Run, "execute", interrupted)
    assert main(["--quiet", "demo", "--output-dir", str(tmp_path / "demo")]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "larev-hf: interrupted; rerun the same command to resume (finished stages are kept)"


# --------------------------------------------------------------------------- named default evaluators
TINY = recipes.EvaluatorRecipe(
    name="tiny-synthetic", description="the synthetic task, 48 rows (a test recipe)", dataset="synthetic",
    data_subdir="synthetic", hub_dataset="synthetic",
    run={"method": "larev", "backbone": "t5-tiny", "max_train_examples": 48, "max_eval_examples": 12,
         "num_train_epochs": 1, "n_boot": 50},
    force_export=True, minutes=0.5)


def test_a_named_evaluator_is_built_once_into_the_cache_and_rebuilt_when_its_recipe_changes(tmp_path, monkeypatch,
                                                                                             capsys) -> None:
    monkeypatch.setenv(recipes.EVALUATORS_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(recipes.DATA_ENV, raising=False)
    monkeypatch.setitem(recipes.RECIPES, TINY.name, TINY)
    assert loading.bundle_path(TINY.name) is None
    assert main(["--quiet", "evaluators", "build", TINY.name]) == 0
    built = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert built == loading.evaluator_dir(TINY.name) / "bundle" and (built / "config_larev.json").is_file()
    record = tmp_path / "cache" / f"{TINY.name}-{TINY.fingerprint}" / recipes.BUILT_NAME
    stamp = record.stat().st_mtime_ns
    # reused: a second use loads it, evaluate.load resolves the name, and nothing is rebuilt
    assert main(["--quiet", "evaluators", "path", TINY.name]) == 0 and capsys.readouterr().out.strip() == str(built)
    metric = evaluate.load(larev_hf.metric_path("larev"), evaluator=TINY.name)
    bundle = EvaluatorBundle.from_pretrained(built)
    result = metric.compute(rationales=["A plonk is a kind of tool."], labels=["garage"],
                            inputs=[{"question": "Where is the plonk kept?", "choices": ["garage", "garden"]}])
    assert result["hashcode"] == bundle.hashcode and record.stat().st_mtime_ns == stamp
    assert main(["--quiet", "evaluators", "list"]) == 0
    assert f"{TINY.name}" in (listing := capsys.readouterr().out) and "built (" in listing
    # a changed recipe is another fingerprint: not built yet, beside the old one
    changed = dataclasses.replace(TINY, run={**TINY.run, "seed": 1})
    monkeypatch.setitem(recipes.RECIPES, TINY.name, changed)
    assert changed.fingerprint != TINY.fingerprint and loading.bundle_path(TINY.name) is None
    assert loading.evaluator_dir(TINY.name) != built.parent


def test_a_build_runs_in_this_process_says_each_stage_and_resumes_after_an_interruption(tmp_path, monkeypatch,
                                                                                          capsys) -> None:
    monkeypatch.setenv(recipes.EVALUATORS_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(recipes.DATA_ENV, raising=False)
    expected = {"run/phi_base": 1.0, "run/phi": 1.0, "run/phi_la": 2.0}
    monkeypatch.setitem(recipes.RECIPES, TINY.name, dataclasses.replace(TINY, stage_seconds=expected))

    def no_child_process(*args, **kwargs):
        raise AssertionError(f"the build started a child process: {args}")

    monkeypatch.setattr(subprocess, "run", no_child_process)
    monkeypatch.setattr(subprocess, "Popen", no_child_process)
    exported = building.export_run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(building, "export_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        evaluators.build(TINY.name, progress=True)
    first = capsys.readouterr().err
    assert "larev-hf run --dataset synthetic" in first and "training the evaluators: run/phi_la done in" in first
    assert "min left" in first and loading.bundle_path(TINY.name) is None
    monkeypatch.setattr(building, "export_run", exported)
    built = evaluators.build(TINY.name, progress=True)
    second = capsys.readouterr().err
    assert "phi_la done earlier, kept" in second and "run/phi_la done in" not in second
    assert built == loading.bundle_path(TINY.name) and (built / "config_larev.json").is_file()


def test_an_unknown_evaluator_name_lists_the_names(capsys) -> None:
    assert main(["--quiet", "evaluators", "path", "nope"]) == 2
    assert "no named evaluator 'nope'; expected one of ['esnli', 'esnli-larev']" in capsys.readouterr().err


def test_a_task_without_a_trustworthy_offline_evaluator_says_why(capsys) -> None:
    # StrategyQA has no named evaluator: asking for one explains, instead of a build whose export would be refused
    assert main(["--quiet", "evaluators", "path", "strategyqa"]) == 2
    error = capsys.readouterr().err
    assert "no named evaluator 'strategyqa': no offline backbone learns StrategyQA" in error and "t5-large" in error
    assert main(["--quiet", "evaluators", "list"]) == 0
    assert "strategyqa" in capsys.readouterr().out and recipes.NOT_OFFERED.keys().isdisjoint(recipes.RECIPES)


def test_every_named_recipe_calibrates_on_features_its_bundle_can_compute_and_estimates_each_stage() -> None:
    from larev_hf.meta.settings import ROBUSTNESS_STATISTICS
    from larev_hf.methods import text_features

    for recipe in recipes.RECIPES.values():
        read = [f for f in recipe.calibrate if f != recipe.method]
        # a bundle exported with the calibration computes its text features itself (export refuses others)
        assert set(read) <= set(text_features()), recipe.name
        assert recipe.human.get("robustness_statistic", "auc") in ROBUSTNESS_STATISTICS
        # the progress line's estimate has every scoring stage of the calibration
        assert {f"human/score-{f}" for f in recipe.calibrate} <= set(recipe.stage_seconds), recipe.name


def test_where_a_calibration_was_fitted_does_not_change_the_hashcode(tiny_bundles) -> None:
    from larev_hf.scores.calibration import Calibration

    config = EvaluatorBundle.from_pretrained(tiny_bundles["larev"]).config

    def hashed(coef: float, run_dir: str) -> str:
        calibration = Calibration(["larev"], [0.0], [1.0], [coef], 0.0, fitted_on={"run_dir": run_dir})
        return json.dumps(dataclasses.replace(config, calibration=calibration.to_dict()).scoring_settings(),
                          sort_keys=True)

    # the same fit made in two directories is one evaluator; another coefficient is another
    assert hashed(1.0, "/cache/run") == hashed(1.0, "/tmp/elsewhere/run") != hashed(2.0, "/cache/run")
