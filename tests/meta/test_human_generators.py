"""RoRA's tables 2 and 3 as figures: means per generator with Kendall τ, per-rationale correlations, and the rank
partial correlation given length against the textbook formula."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, rankdata, spearmanr

from larev_hf.meta.human_generators import generator_figures, partial_spearman


def test_partial_spearman_equals_the_first_order_partial_correlation_of_ranks() -> None:
    rng = np.random.default_rng(0)
    length = rng.normal(size=200)
    human = length + rng.normal(size=200)
    metric = 0.5 * human + rng.normal(size=200)
    x, y, z = (rankdata(v) for v in (metric, human, length))
    rxy, rxz, ryz = pearsonr(x, y)[0], pearsonr(x, z)[0], pearsonr(y, z)[0]
    expected = (rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2))
    assert partial_spearman(metric, human, length) == pytest.approx(expected, abs=1e-12)
    # a metric that only counts words adds nothing to length
    assert np.isnan(partial_spearman(2 * length + 1, human, length))


def test_generator_figures_order_generators_as_people_do() -> None:
    rng = np.random.default_rng(1)
    generators = ["gpt-4", "gpt-3.5", "llama2-7b", "flan-t5"]
    quality = {"gpt-4": 2.7, "gpt-3.5": 2.3, "llama2-7b": 1.2, "flan-t5": 0.4}
    sources = [g for _ in range(40) for g in generators]
    instances = [f"q{i}" for i in range(40) for _ in generators]
    human = np.array([quality[g] for g in sources]) + rng.normal(scale=0.3, size=len(sources))
    length = np.array([{"gpt-4": 20, "gpt-3.5": 30, "llama2-7b": 15, "flan-t5": 5}[g] for g in sources], float) \
        + rng.normal(size=len(sources))
    good = human + rng.normal(scale=0.3, size=len(sources))
    figures = generator_figures({"good": good, "length": length}, human, sources, instances, n_boot=200, seed=0)
    assert figures["generators"] == generators  # people's order, best first
    assert figures["metrics"]["good"]["kendall_tau"] == pytest.approx(1.0)
    means = [figures["metrics"]["length"]["means"][g] for g in generators]
    assert figures["metrics"]["length"]["kendall_tau"] == pytest.approx(
        kendalltau([quality[g] for g in generators], means).statistic)  # GPT-3.5 writes the longest: τ < 1
    assert figures["metrics"]["length"]["kendall_tau"] < 1
    spearman = figures["metrics"]["good"]["spearman"]
    assert spearman["value"] == pytest.approx(spearmanr(good, human).statistic)
    assert spearman["ci95"][0] < spearman["value"] < spearman["ci95"][1]
    assert "partial_spearman_given_length" not in figures["metrics"]["length"]
    assert figures["metrics"]["good"]["partial_spearman_given_length"]["value"] > 0.5
    # the order's firmness: a metric that follows people orders them exactly in (nearly) every replicate, length in
    # none (GPT-3.5's longer rationales are no sampling accident); a noise column's τ interval spans 0
    assert figures["metrics"]["good"]["share_tau_1"] > 0.95
    assert figures["metrics"]["length"]["share_tau_1"] == 0.0
    noise = rng.normal(size=len(sources))
    noisy = generator_figures({"noise": noise}, human, sources, instances, n_boot=200, seed=0)["metrics"]["noise"]
    low, high = noisy["kendall_tau_ci95"]
    assert low < 0 < high and noisy["share_tau_1"] < 0.5
