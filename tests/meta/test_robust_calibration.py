"""A calibrated score that a copy of the input cannot game — caps, attack rows, the choice by agreement and
robustness, the ``grounding`` text score, and the reports that show robustness beside agreement."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from larev_hf.cli import main
from larev_hf.meta import human_evaluate
from larev_hf.meta.robust_calibration import (
    ROBUST_FLOOR,
    SELECTION_MARGIN,
    AttackScores,
    robust_calibration,
    robustness_shortfalls,
)
from larev_hf.meta.stats import auc
from larev_hf.methods import get_method
from larev_hf.scores.calibration import Calibration, fit_calibration


def test_grounding_is_the_share_of_the_rationales_content_words_found_in_the_input() -> None:
    record = {"task": "nli", "premise": "A dog runs in the park.", "hypothesis": "An animal is outside.",
              "label": "entailment"}
    texts = ["the dog is outside today", "A dog runs in the park. An animal is outside.", "", "it is what it is"]
    scores = get_method("grounding").pointwise(None, [record] * 4, {"r": texts}, {})["r"]
    # content words: dog, outside (in x), today (not); a copy has all of them in x; no content words → 0
    assert scores.tolist() == pytest.approx([2 / 3, 1.0, 0.0, 0.0])


def test_copied_span_is_the_longest_run_of_the_input_in_the_rationale_over_its_length() -> None:
    record = {"task": "nli", "premise": "A dog runs in the park.", "hypothesis": "An animal is outside.",
              "label": "entailment"}
    texts = ["A dog runs in the park. An animal is outside.", "because a dog runs around here", "nothing here at all",
             "the animal is outside a dog runs in the park", ""]
    scores = get_method("copied_span").pointwise(None, [record] * 5, {"r": texts}, {})["r"]
    # a copy: the premise's and hypothesis's 11 tokens in order, 11 of 11; "a dog runs" is 3 of 6 tokens; no shared
    # run of two → the longest run is one token or none; the last copies "a dog runs in the park" (6 of 10)
    assert scores[0] == 1.0 and scores[1] == pytest.approx(3 / 6) and scores[2] == 0.0
    assert scores[3] == pytest.approx(6 / 10) and scores[4] == 0.0


def test_a_cap_bounds_a_feature_and_round_trips(tmp_path: Path) -> None:
    calibration = Calibration(features=["larev", "grounding"], mean=[0.0, 0.5], scale=[1.0, 0.2], coef=[1.0, 2.0],
                              intercept=0.0, caps=[None, 0.6])
    columns = {"larev": np.zeros(3), "grounding": np.array([0.5, 0.6, 1.0])}
    scores = calibration(columns)
    assert scores[1] == pytest.approx(scores[2]) and scores[0] < scores[1]  # above the cap counts as the cap
    calibration.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json")(columns) == pytest.approx(scores)
    with pytest.raises(ValueError, match="one entry per feature"):
        Calibration.from_dict({**calibration.to_dict(), "caps": [None]})


def test_the_rule_passes_above_the_floor_or_within_the_slack_of_a_weak_method() -> None:
    method = {"strong": 0.90, "weak": 0.60, "chance": 0.50}
    calibrated = {"strong": 0.79, "weak": 0.59, "chance": 0.47}
    assert robustness_shortfalls(calibrated, method) == {"strong": {"calibrated": 0.79, "method": 0.90},
                                                         "chance": {"calibrated": 0.47, "method": 0.50}}
    assert robustness_shortfalls({"strong": ROBUST_FLOOR, "weak": 0.58, "chance": 0.99}, method) == {}


def _copy_world(seed: int, n_instances: int = 300) -> tuple[dict, np.ndarray, list[str], AttackScores]:
    """Judged explanations whose acceptability rides on grounding (people like an explanation that reuses the input's
    words) and weakly on the method's score; VARSuite rows where a copy of the input has full grounding and a method
    score two units below its gold's."""
    rng = np.random.default_rng(seed)
    method = rng.normal(size=n_instances * 4)
    grounding = rng.uniform(0.0, 1.0, size=n_instances * 4)
    human = (3.0 * grounding + 0.5 * method + rng.normal(scale=0.5, size=method.size) > 1.8).astype(float)
    instances = [f"i{k // 4}" for k in range(method.size)]
    gold_method = rng.normal(1.0, 1.0, size=400)
    gold_grounding = rng.uniform(0.2, 0.8, size=400)
    attacks = AttackScores({"larev": np.concatenate([gold_method, gold_method - 2.0]),
                            "grounding": np.concatenate([gold_grounding, np.ones(400)])},
                           np.array(["gold"] * 400 + ["input_copy"] * 400), np.array([f"e{k}" for k in range(400)] * 2))
    return {"larev": method, "grounding": grounding}, human, instances, attacks


def test_a_robust_fit_ranks_a_copy_of_the_input_below_the_gold_where_a_fit_to_people_does_not() -> None:
    columns, human, instances, attacks = _copy_world(0)
    _, _, _, fresh = _copy_world(1)  # attack rows neither fitted nor checked on
    naive, _ = fit_calibration(columns, human, instances, ["larev", "grounding"])
    robust, out_of_fold, table = robust_calibration(columns, human, instances, ["larev", "grounding"], "larev", attacks)

    def copy_auc(calibration: Calibration) -> float:
        scores = calibration(fresh.columns)
        return auc(scores[fresh.families == "gold"], scores[fresh.families == "input_copy"])

    assert copy_auc(naive) < 0.5  # the surface cue wins: a copy outscores the gold
    assert copy_auc(robust) >= ROBUST_FLOOR
    chosen = next(row for row in table if row["chosen"])
    assert not chosen["shortfalls"] and out_of_fold.shape == human.shape
    assert robust.fitted_on["robust"]["chosen"] == {k: chosen[k] for k in ("cap_quantile", "unacceptable_weight",
                                                                           "shrink")}
    # among the candidates that pass, none agrees with people more (out of fold) than the chosen one
    assert chosen["agreement"] == pytest.approx(max(row["agreement"] for row in table if not row["shortfalls"]))


def test_attack_rows_of_another_split_enter_the_fit_and_all_of_the_checked_split_checks_it() -> None:
    columns, human, instances, attacks = _copy_world(0)
    _, _, _, train = _copy_world(2)
    robust, _, table = robust_calibration(columns, human, instances, ["larev", "grounding"], "larev", attacks,
                                          fit_attacks=train)
    assert robust.fitted_on["robust"]["n_attack_rows"] == {"fit": 800, "check": 800}
    assert robust.fitted_on["robust"]["n_check_examples"] == 400  # every example, not alternate halves
    chosen = next(row for row in table if row["chosen"])
    assert chosen["aucs"] == pytest.approx(attacks.family_aucs(robust(attacks.columns)))
    assert chosen["aucs"]["input_copy"] >= ROBUST_FLOOR + SELECTION_MARGIN


def test_the_paired_win_rate_compares_each_gold_with_its_own_attacks_only() -> None:
    """Hand computation: a feature that spreads the examples apart (a large per-example offset shared by a gold and
    its attack) lowers the AUC across examples but not the paired win rate."""
    offsets = np.array([0.0, 10.0, 20.0])
    gold, attack = offsets + 1.0, offsets + np.array([0.5, 1.5, 0.0])  # example 1's attack beats its gold
    rows = AttackScores({"s": np.concatenate([gold, attack, [5.0]])},
                        np.array(["gold"] * 3 + ["drift"] * 3 + ["drift"]), np.array(["a", "b", "c"] * 2 + ["z"]))
    scores = rows.columns["s"]
    assert rows.family_win_rates(scores) == {"drift": pytest.approx(2 / 3)}  # "z" has no gold: left out
    assert rows.family_statistics(scores, "paired") == rows.family_win_rates(scores)
    across = auc(scores[rows.families == "gold"], scores[rows.families == "drift"])
    assert rows.family_statistics(scores, "auc") == {"drift": pytest.approx(across)}
    with pytest.raises(ValueError, match="robustness statistic must be one of"):
        rows.family_statistics(scores, "median")


def test_a_paired_robust_fit_records_its_statistic_and_checks_win_rates() -> None:
    columns, human, instances, attacks = _copy_world(0)
    robust, _, table = robust_calibration(columns, human, instances, ["larev", "grounding"], "larev", attacks,
                                          statistic="paired")
    assert robust.fitted_on["robust"]["statistic"] == "paired"
    _, check = attacks.halves()
    chosen = next(row for row in table if row["chosen"])
    assert chosen["aucs"] == pytest.approx(check.family_win_rates(robust(check.columns)))
    assert chosen["aucs"]["input_copy"] >= ROBUST_FLOOR + SELECTION_MARGIN


def test_attack_rows_enter_the_fit_as_unacceptable() -> None:
    columns, human, instances, attacks = _copy_world(0)
    copies = attacks.subset(attacks.families == "input_copy").columns
    plain, _ = fit_calibration(columns, human, instances, ["larev", "grounding"])
    weighted, _ = fit_calibration(columns, human, instances, ["larev", "grounding"], unacceptable=copies,
                                  unacceptable_weight=1.0)
    assert weighted(copies).mean() < plain(copies).mean()
    assert weighted.fitted_on["n_unacceptable_rows"] == 400


def test_human_calibrate_reports_robustness_beside_agreement_and_meta_scores_the_calibration(
        tiny_run: Path, judged_file: Path, tmp_path: Path) -> None:
    report = human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["larev", "grounding"],
                            calibrate=["larev", "grounding"], half="held", n_boot=20)
    section = report["calibration"]
    assert {"calibrated", "calibrated_agreement"} <= set(report["metrics"])
    families = set(section["robustness"]["method"])
    suite = {row["family"] for row in map(json.loads, (tmp_path / "h" / "attacks" / "test" / "suite.jsonl").open())}
    assert families == suite - {"gold"} and {"vacuous", "input_copy", "label_only"} <= families
    for name in ("calibrated", "calibrated_agreement"):
        assert set(section["robustness"][name]["aucs"]) == families
    assert sum(row["chosen"] for row in section["candidates"]) == 1
    markdown = (tmp_path / "h" / "human_report.md").read_text()
    assert "Robustness of the calibrated score" in markdown and "Worst VARSuite AUC (test)" in markdown
    # the tiny run's validation split is small: the report says the choice may not hold on the test split
    examples = len({row["id"] for row in map(json.loads, (tmp_path / "h" / "attacks" / "validation" /
                                                          "suite.jsonl").open())})
    # the training split's attack rows are in the fit (the default), so every validation example checks the choice
    assert (tmp_path / "h" / "attacks" / "train" / "suite.jsonl").is_file()
    assert section["check_examples"] == examples < 500
    assert f"**The choice was checked on {examples} validation examples**" in markdown
    # the fit on alternate validation examples checks on the others: half as many
    halves = human_evaluate(tiny_run, judged_file, tmp_path / "h3", progress=False, methods=["larev", "grounding"],
                            calibrate=["larev", "grounding"], half="held", n_boot=20, robustness_fit_split="validation")
    assert not (tmp_path / "h3" / "attacks" / "train").exists()
    assert halves["calibration"]["check_examples"] == examples // 2
    # the fit reads the attack splits' scores only: no meta report is written there
    assert not (tmp_path / "h" / "attacks" / "validation" / "meta_report.json").exists()
    # without the test split's report (a named evaluator's build): the same calibration, no robustness section
    unreported = human_evaluate(tiny_run, judged_file, tmp_path / "h4", progress=False, methods=["larev", "grounding"],
                                calibrate=["larev", "grounding"], half="held", n_boot=20,
                                robustness_report_split="none")
    assert not (tmp_path / "h4" / "attacks" / "test").exists() and "robustness" not in unreported["calibration"]
    assert (tmp_path / "h4" / "calibration.json").read_bytes().replace(b"/h4/", b"/h/") == \
        (tmp_path / "h" / "calibration.json").read_bytes()
    with pytest.raises(ValueError, match="name a learned metric"):
        human_evaluate(tiny_run, judged_file, tmp_path / "h2", progress=False, methods=["length", "grounding"],
                       calibrate=["length", "grounding"], n_boot=20)
    # larev-hf meta scores the fitted calibration like any metric, from its features' suite scores
    assert main(["--quiet", "meta", "--run-dir", str(tiny_run), "--output-dir", str(tmp_path / "m"), "--methods",
                 "larev", "--calibration", str(tmp_path / "h" / "calibration.json"), "--n-boot", "20"]) == 0
    meta = json.loads((tmp_path / "m" / "meta_report.json").read_text())
    calibration = Calibration.load(tmp_path / "h" / "calibration.json")
    rows = {name: {(r["id"], r["family"]): r["score"] for r in map(json.loads, (tmp_path / "m" / "scores" /
                                                                                f"{name}.jsonl").open())}
            for name in ("larev", "grounding")}
    keys = sorted(rows["larev"])
    scores = calibration({name: np.array([rows[name][k] for k in keys]) for name in rows})
    gold = scores[[k[1] == "gold" for k in keys]]
    vacuous = scores[[k[1] == "vacuous" for k in keys]]
    assert meta["methods"]["calibrated"]["families"]["vacuous"]["auc"] == pytest.approx(auc(gold, vacuous))
