"""LAS and RQ arithmetic: grouping and macro-averaging on hand-computable cases and the report summary (the
simulator they read is tested in tests/training/test_simulator.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from larev_hf.scores.simulatability import (
    SimulatabilityScores,
    las,
    las_bootstrap_ci,
    leaking_mask,
    rq,
    rq_scores,
    summarize_simulatability,
)

# Six examples: the simulator with (x, r), with x only, with r only.
WITH = [1, 1, 0, 0, 0, 0]
WITHOUT = [0, 0, 0, 0, 1, 0]
R_ONLY = [1, 1, 0, 0, 0, 0]


def test_rq_is_the_mean_accuracy_gain_over_all_examples():
    assert list(rq_scores(WITH, WITHOUT)) == [1, 1, 0, 0, -1, 0]
    assert rq(WITH, WITHOUT) == pytest.approx(1 / 6)
    assert rq([True] * 4, [True, False, False, False]) == pytest.approx(0.75)
    assert math.isnan(rq([], []))


def test_las_groups_by_rationale_only_correctness_and_macro_averages():
    result = las(WITH, WITHOUT, R_ONLY)
    # Leaking (the rationale alone is simulated correctly): examples 0, 1 with gains 1, 1 → 1.
    # Non-leaking: examples 2-5 with gains 0, 0, −1, 0 → −0.25. LAS = (1 − 0.25) / 2, unlike RQ's 1/6.
    assert list(leaking_mask(R_ONLY)) == [True, True, False, False, False, False]
    assert (result.n_leaking, result.n_nonleaking) == (2, 4)
    assert result.leaking == pytest.approx(1.0) and result.nonleaking == pytest.approx(-0.25)
    assert result.las == pytest.approx(0.375)
    # Moving example 4 (gain −1) into the leaking group changes both group means.
    moved = las(WITH, WITHOUT, [1, 1, 0, 0, 1, 0])
    assert moved.leaking == pytest.approx(1 / 3) and moved.nonleaking == pytest.approx(0.0)
    assert moved.las == pytest.approx(1 / 6)


def test_las_is_undefined_when_every_example_leaks_or_none_does():
    everything = las(WITH, WITHOUT, [1] * 6)
    assert math.isnan(everything.las) and everything.n_nonleaking == 0
    assert everything.leaking == pytest.approx(1 / 6) and math.isnan(everything.nonleaking)
    assert math.isnan(las(WITH, WITHOUT, [0] * 6).las)
    assert math.isnan(las_bootstrap_ci(WITH, WITHOUT, [1] * 6, n_boot=50)[0])


def test_bad_correctness_arrays_are_refused():
    with pytest.raises(ValueError, match="one entry per example"):
        las(WITH, WITHOUT, R_ONLY[:5])
    with pytest.raises(ValueError, match="0/1"):
        rq([2, 0], [0, 0])
    with pytest.raises(ValueError, match="views"):
        SimulatabilityScores.from_correctness({"x_r": np.ones(2), "x": np.ones(2)})


def test_summary_separations_and_intervals():
    rng = np.random.default_rng(0)
    n = 40
    correct = {}
    for variant, (p_with, p_r) in {"gold": (0.9, 0.5), "gold_leaky": (1.0, 1.0), "vacuous": (0.6, 0.5),
                                   "leaky": (1.0, 1.0)}.items():
        correct[variant] = {"x_r": rng.random(n) < p_with, "x": np.arange(n) % 2 == 0, "r": rng.random(n) < p_r}
    rq_entry = summarize_simulatability(correct, "rq", n_boot=200)
    las_entry = summarize_simulatability(correct, "las", n_boot=200)
    expected = {v: rq(c["x_r"], c["x"]) for v, c in correct.items()}
    assert rq_entry["absolute"] == pytest.approx(expected)
    assert rq_entry["separations"]["gold_minus_leaky"] == pytest.approx(expected["gold"] - expected["leaky"])
    low, high = rq_entry["ci95"]["gold_minus_vacuous"]
    assert low <= rq_entry["separations"]["gold_minus_vacuous"] <= high
    # Every "leaky" rationale leaks: LAS is undefined for it and for the separations that use it.
    # None, not NaN, so report.json stays valid JSON.
    assert las_entry["absolute"]["leaky"] is None and las_entry["groups"]["leaky"]["n_nonleaking"] == 0
    assert las_entry["separations"]["gold_minus_leaky"] is None and las_entry["separations"]["sum"] is None
    assert las_entry["separations"]["gold_minus_vacuous"] is not None
    gold = correct["gold"]
    assert las_entry["absolute"]["gold"] == pytest.approx(las(gold["x_r"], gold["x"], gold["r"]).las)
    assert rq_entry["unit"] == las_entry["unit"] == "accuracy"
    gains = {v: rq_scores(c["x_r"], c["x"]) for v, c in correct.items()}
    assert las_entry["win_rate"] == rq_entry["win_rate"]
    assert rq_entry["win_rate"]["vacuous"] == pytest.approx(np.mean(gains["gold"] > gains["vacuous"]))
