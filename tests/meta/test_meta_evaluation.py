"""The meta-evaluation of a trained run (larev_hf.meta.evaluation) and the metric baselines (VARIF §5)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from larev_hf.cli import main
from larev_hf.io import read_jsonl, write_jsonl
from larev_hf.meta.evaluation import MetaEvaluation, MetaSettings, meta_evaluate
from larev_hf.meta.report import baseline_failures
from larev_hf.methods import get_method, method_names, resolve_methods
from larev_hf.methods.heuristics import input_text
from larev_hf.pipeline import Run
from larev_hf.scores.simulatability import las, las_contributions, rq, rq_scores

FAMILIES = ["gold", "vacuous", "leak", "label_swap"]


# --------------------------------------------------------------------------- per-example scores of LAS / RQ


@pytest.mark.parametrize("seed", range(5))
def test_las_contributions_average_to_las_and_rq_scores_to_rq(seed: int) -> None:
    rng = np.random.default_rng(seed)
    with_r, without, r_only = (rng.random(60) < p for p in (0.6, 0.4, 0.5))
    assert np.mean(las_contributions(with_r, without, r_only)) == pytest.approx(las(with_r, without, r_only).las)
    assert np.mean(rq_scores(with_r, without)) == pytest.approx(rq(with_r, without))


def test_las_contributions_with_one_empty_group_are_half_the_gain() -> None:
    with_r, without = np.array([1, 1, 0, 1], bool), np.array([0, 1, 0, 0], bool)
    none_leak = np.zeros(4, bool)
    assert np.isnan(las(with_r, without, none_leak).las)
    np.testing.assert_allclose(las_contributions(with_r, without, none_leak), [0.5, 0.0, 0.0, 0.5])


# --------------------------------------------------------------------------- metric baselines


def _pointwise(name: str, records: list[dict], rationales: list[str]) -> np.ndarray:
    return get_method(name).pointwise(None, records, {"v": rationales}, {})["v"]


def test_rouge_l_matches_a_hand_computed_lcs() -> None:
    record = {"task": "nli", "premise": "alpha beta gamma", "hypothesis": "delta"}
    # LCS("alpha beta gamma delta", "alpha gamma delta omega") = alpha gamma delta: P = R = 3/4
    assert _pointwise("rouge_l", [record], ["alpha gamma delta omega"])[0] == pytest.approx(0.75)


def test_rouge_l_reads_the_input_without_field_names() -> None:
    record = {"task": "nli", "premise": "A dog runs.", "hypothesis": "An animal moves."}
    assert "premise" not in input_text(record) and "hypothesis" not in input_text(record)
    circular = "This is entailment because the premise entails the hypothesis."
    assert _pointwise("rouge_l", [record], [circular])[0] == 0.0
    qa = {"task": "qa", "question": "Where do fish live?", "choices": ["sea", "desert"]}
    assert input_text(qa) == "Where do fish live? sea desert"


def test_length_counts_words() -> None:
    np.testing.assert_array_equal(_pointwise("length", [{}, {}], ["one two three", "four"]), [3.0, 1.0])


def test_baselines_are_registered_but_not_exportable() -> None:
    from larev_hf.methods import exportable_methods

    for name in ("rouge_l", "length", "rationale_only"):
        assert name in method_names() and get_method(name).kind == "baseline"
        assert name not in exportable_methods()


def test_baseline_failures_flags_metrics_not_above_every_baseline() -> None:
    def entry(kind: str, aucs: dict) -> dict:
        return {"kind": kind, "families": {f: {"auc": a} for f, a in aucs.items()}}

    report = {"methods": {"m": entry("metric", {"vacuous": 0.9, "leak": 0.6, "gold_leaky": 0.5}),
                          "b1": entry("baseline", {"vacuous": 0.8, "leak": 0.6, "gold_leaky": 0.9}),
                          "b2": entry("baseline", {"vacuous": 0.95, "leak": 0.5, "gold_leaky": 0.9})}}
    # vacuous: 0.9 < b2's 0.95; leak: a tie with b1 is not "above"; gold_leaky is never a failure
    assert baseline_failures(report) == {"m": ["vacuous", "leak"]}


# --------------------------------------------------------------------------- a trained run


@pytest.fixture(scope="module")
def meta_dir(tiny_run: Path, tmp_path_factory) -> Path:
    """The meta-evaluation of the tiny run on four families plus two user families."""
    out = tmp_path_factory.mktemp("meta")
    records = Run.load(tiny_run, progress=False).split_records("test")
    # "copy": every gold rationale again (must tie with gold everywhere); "swap_copy": filled in by the test below
    write_jsonl(out / "copy.jsonl", [{"id": r["id"], "rationale": r["rationale"]} for r in records])
    report = meta_evaluate(tiny_run, out / "meta", progress=False, families=FAMILIES, n_boot=50,
                           user_families=[f"copy={out / 'copy.jsonl'}"])
    (out / "report.json").write_text(json.dumps(report))
    return out


def _scores(meta: Path, method: str) -> dict[tuple[str, str], float]:
    return {(row["family"], row["id"]): row["score"] for _, row in read_jsonl(meta / "scores" / f"{method}.jsonl")}


def test_every_method_scores_every_suite_row(meta_dir: Path, tiny_run: Path) -> None:
    report = json.loads((meta_dir / "report.json").read_text())
    suite = {(row["family"], row["id"]) for _, row in read_jsonl(meta_dir / "meta" / "suite.jsonl")}
    # the run's five and its three baselines, then every other baseline (grounding, copied_span, copy_excess,
    # premise_link, explanation_lm: not in `all`)
    assert list(report["methods"]) == [*resolve_methods("all"), "grounding", "copied_span", "copy_excess",
                                       "premise_link", "explanation_lm"]
    for method in report["methods"]:
        assert set(_scores(meta_dir / "meta", method)) == suite
    for name in ("meta_report.md", "meta_report.json", "meta_heatmap.png"):
        assert (meta_dir / "meta" / name).stat().st_size > 0
    assert (meta_dir / "meta" / "meta_heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = (meta_dir / "meta" / "meta_report.md").read_text()
    for entry in report["methods"].values():
        assert f"| {entry['title']} |" in markdown


def test_a_user_family_of_gold_copies_ties_with_gold(meta_dir: Path) -> None:
    report = json.loads((meta_dir / "report.json").read_text())
    for method, entry in report["methods"].items():
        copy = entry["families"]["copy"]
        assert (copy["auc"], copy["win_rate"], copy["mean_separation"]) == (0.5, 0.5, 0.0), method  # ties count ½


def test_gold_scores_equal_the_runs_own_scores(meta_dir: Path, tiny_run: Path) -> None:
    """The suite's gold rows go through the same models and scorer as the run's test split."""
    run_rows = {row["id"]: row for _, row in read_jsonl(tiny_run / "scores" / "test_scores.jsonl")}
    for method in ("rev", "larev", "rora", "rouge_l", "length"):
        scores = _scores(meta_dir / "meta", method)
        for example_id, row in run_rows.items():
            assert scores[("gold", example_id)] == pytest.approx(row[f"{method}/gold"], abs=1e-5), method


def test_label_changing_user_family_is_scored_per_row(meta_dir: Path, tiny_run: Path, tmp_path: Path) -> None:
    """A user family that repeats label_swap's rows (rationale and wrong label) gets label_swap's scores."""
    swaps = [row for _, row in read_jsonl(meta_dir / "meta" / "suite.jsonl") if row["family"] == "label_swap"]
    write_jsonl(tmp_path / "swap.jsonl", [{"id": r["id"], "rationale": r["rationale"], "label_used": r["label_used"]}
                                          for r in swaps])
    out = tmp_path / "meta"
    meta_evaluate(tiny_run, out, progress=False, families=["gold", "label_swap"], methods=["rev", "rq"],
                  user_families=[f"mine={tmp_path / 'swap.jsonl'}"], n_boot=20)
    for method in ("rev", "rq"):
        scores = _scores(out, method)
        for row in swaps:
            assert scores[("mine", row["id"])] == pytest.approx(scores[("label_swap", row["id"])], abs=1e-6)


def test_meta_resumes_and_adds_a_method_without_rescoring(tiny_run: Path, tmp_path: Path) -> None:
    settings = {"families": ["gold", "vacuous"], "n_boot": 20}
    meta = MetaEvaluation(Run.load(tiny_run, progress=False), MetaSettings(methods=["length"], **settings), tmp_path)
    meta.execute()
    marker = tmp_path / "stages" / "score-length.done"
    first = marker.read_text()
    report = MetaEvaluation(Run.load(tiny_run, progress=False), MetaSettings(methods=["length", "rouge_l"], **settings),
                            tmp_path).execute()
    assert marker.read_text() == first  # not rescored
    assert set(report["methods"]) == {"length", "rouge_l"}
    with pytest.raises(ValueError, match="families"):
        MetaEvaluation(Run.load(tiny_run, progress=False), MetaSettings(families=["gold", "leak"]), tmp_path).execute()


def test_meta_errors_name_the_problem(tiny_run: Path, tmp_path: Path, capsys) -> None:
    assert main(["--quiet", "meta", "--run-dir", str(tiny_run), "--output-dir", str(tmp_path / "a"),
                 "--families", "gold,nonsense"]) == 2
    assert "unknown families ['nonsense']" in capsys.readouterr().err
    assert main(["--quiet", "meta", "--run-dir", str(tiny_run), "--output-dir", str(tmp_path / "b"),
                 "--user-families", "mine"]) == 2
    assert "expected NAME=PATH.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # nothing written


def test_meta_refuses_a_method_whose_models_are_not_trained(tmp_path: Path) -> None:
    from larev_hf.pipeline import RunConfig

    config = RunConfig(method="rev", dataset="synthetic", max_train_examples=16, max_eval_examples=8,
                       num_train_epochs=1.0, n_boot=10)
    Run(config, tmp_path / "run", progress=False).execute(until="tokenizer")
    with pytest.raises(ValueError, match=r"'rev': its stages \['phi_base', 'phi'\] have not finished"):
        meta_evaluate(tmp_path / "run", tmp_path / "meta", progress=False, methods=["rev"])


def test_auc_difference_is_paired_and_its_interval_covers_the_truth() -> None:
    from larev_hf.meta import auc, auc_difference_ci

    rng = np.random.default_rng(0)
    gold, family = rng.normal(1.0, 1.0, 80), rng.normal(0.0, 1.0, 80)
    noise_gold, noise_family = rng.normal(size=80), rng.normal(size=80)
    diff, (low, high) = auc_difference_ci(gold, family, noise_gold, noise_family, n_boot=300)
    assert diff == pytest.approx(auc(gold, family) - auc(noise_gold, noise_family))
    assert 0 < low <= diff <= high  # a metric that separates vs one that does not
    same, (low, high) = auc_difference_ci(gold, family, gold, family, n_boot=50)
    assert same == 0.0 and low == high == 0.0  # paired: identical metrics never differ
    with pytest.raises(ValueError, match="same rows"):
        auc_difference_ci(gold, family, gold[:10], family)


def test_bundles_give_the_run_path_scores(meta_dir: Path, tiny_run: Path, tiny_bundles: dict, tmp_path: Path) -> None:
    """The same evaluators through exported bundles (each building its own baselines) score the suite as the run does."""
    from larev_hf.meta import meta_evaluate_bundles

    records = Run.load(tiny_run, progress=False).split_records("test")
    report = meta_evaluate_bundles({"rev-bundle": tiny_bundles["rev"]}, records, tmp_path, families=FAMILIES,
                                   n_boot=20, baselines=("length",))
    assert set(report["methods"]) == {"rev-bundle", "length"} and report["methods"]["rev-bundle"]["title"] == "REV (rev-bundle)"
    from_run, from_bundle = _scores(meta_dir / "meta", "rev"), _scores(tmp_path, "rev-bundle")
    assert set(from_bundle) == {key for key in from_run if key[0] in FAMILIES}
    for key, value in from_bundle.items():
        assert value == pytest.approx(from_run[key], abs=1e-4), key


def test_drift_by_a_text2text_model_loaded_by_path(tiny_run: Path, tmp_path: Path) -> None:
    """--drift-model loads an HF seq2seq by name or path and keeps only its exact one-negation edits (a random-weight
    model's outputs never are, so every row falls back to the rule; all rows are valid drifts either way)."""
    from larev_hf.meta import is_negation_edit
    from larev_hf.modeling import build_model, build_tokenizer

    tokenizer = build_tokenizer("t5-tiny", ["the dog is not running in the park ."] * 4)
    build_model("t5-tiny", tokenizer, seed=0).save_pretrained(tmp_path / "editor")
    tokenizer.save_pretrained(tmp_path / "editor")
    report = meta_evaluate(tiny_run, tmp_path / "meta", progress=False, families=["gold", "drift"], methods=["length"],
                           drift_model=str(tmp_path / "editor"), n_boot=10)
    assert list(report["families"]) == ["gold", "drift", "drift_model"] and report["families"]["drift_model"]["letter"] == "E"
    gold = {r["id"]: r["rationale"] for _, r in read_jsonl(tmp_path / "meta" / "suite.jsonl") if r["family"] == "gold"}
    rows = [r for _, r in read_jsonl(tmp_path / "meta" / "suite.jsonl") if r["family"] == "drift_model"]
    assert rows and all(is_negation_edit(gold[r["id"]], r["rationale"]) for r in rows)
    assert all(r["template_id"] != "drift:editor" for r in rows)  # garbage model output rejected, rule used
