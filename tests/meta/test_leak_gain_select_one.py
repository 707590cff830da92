"""The leak's gain in VARSuite's report and select-1's bootstrap interval in the human report."""

from __future__ import annotations

import numpy as np
import pytest

from larev_hf.meta.human_stats import (
    agreement_table,
    instance_groups,
    select_one,
    select_one_hits,
    select_one_replicates,
)
from larev_hf.meta.report import leak_gain, meta_summary, render_meta_markdown
from larev_hf.meta.stats import mean_separation_ci


def test_mean_separation_ci_is_paired() -> None:
    gold = np.arange(20, dtype=float)
    family = gold - 0.5  # every pair separated by exactly 0.5, whatever the examples' spread
    assert mean_separation_ci(gold, family, n_boot=200) == pytest.approx((0.5, 0.5))
    low, high = mean_separation_ci(gold, gold + np.where(np.arange(20) % 2, 1.0, -1.0), n_boot=500)
    assert low < 0 < high


def test_leak_gain_in_the_meta_summary_and_report() -> None:
    ids = [f"e{i}" for i in range(12)]
    rows = [{"id": i, "family": "gold", "score": float(k)} for k, i in enumerate(ids)]
    rows += [{"id": i, "family": "gold_leaky", "score": float(k) + (0.3 if k < 6 else 0.0)} for k, i in enumerate(ids)]
    rows += [{"id": i, "family": "vacuous", "score": -1.0} for i in ids]
    labels = {i: ("entailment" if k < 6 else "neutral") for k, i in enumerate(ids)}
    summary = meta_summary("larev", rows, n_boot=200, labels=labels)
    gain = summary["leak_gain"]
    assert gain["value"] == pytest.approx(0.15) and gain["n"] == 12
    assert gain["ci95"][0] <= 0.15 <= gain["ci95"][1]
    assert gain["by_label"] == {"entailment": pytest.approx(0.3), "neutral": pytest.approx(0.0)}
    assert leak_gain({"families": {"vacuous": summary["families"]["vacuous"]}}) is None
    report = {"dataset": "esnli", "split": "test", "n_examples": 12, "expected_order": [["gold"], ["vacuous"]],
              "families": {f: {"letter": None, "n_rows": 12, "n_skipped": 0} for f in ("gold", "gold_leaky", "vacuous")},
              "methods": {"larev": summary}}
    markdown = render_meta_markdown(report)
    assert "The leak's gain" in markdown and "+0.150" in markdown and "+0.300" in markdown


def test_select_one_interval_uses_the_agreement_tables_draws() -> None:
    rng = np.random.default_rng(0)
    instances = np.repeat([f"i{k}" for k in range(40)], 5).tolist()
    human = rng.choice([0.0, 1 / 3, 2 / 3, 1.0], size=200)
    scores = human + rng.normal(0, 0.5, size=200)
    hits = select_one_hits(scores, human, instances)
    assert hits.size == len(instance_groups(instances)) and hits.mean() == select_one(scores, human, instances)
    replicates = select_one_replicates(scores, human, instances, n_boot=300, seed=3)
    assert replicates.shape == (300,) and np.all((replicates >= 0) & (replicates <= 1))
    perfect = select_one_replicates(human, human, instances, n_boot=300, seed=3)
    assert np.all(perfect >= replicates - 1e-12)  # the oracle picks an acceptable one wherever there is one
    # the same draws as agreement_table: a score's replicate AUCs and select-1s come from the same instances
    table = agreement_table({"s": scores}, human, instances, n_boot=50, seed=3)
    assert table["metrics"]["s"]["auc"]["ci95"] is not None
    np.testing.assert_allclose(select_one_replicates(scores, human, instances, n_boot=50, seed=3), replicates[:50])
