"""Select-1, the annotators' own agreement and the share of it a metric reaches."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from larev_hf.meta.human_stats import (
    annotator_agreement,
    select_one,
    select_one_references,
    share_of_ceiling,
)


def test_select_one_by_hand() -> None:
    instances = ["a", "a", "a", "b", "b", "b"]
    human = [1.0, 0.0, 0.0, 0.0, 2 / 3, 0.0]
    # a: the top score is the acceptable one; b: two tied at the top, one acceptable → ½
    assert select_one([3.0, 1.0, 2.0, 5.0, 5.0, 1.0], human, instances) == pytest.approx((1 + 0.5) / 2)
    assert select_one([0.0, 1.0, 2.0, 0.0, 0.0, 1.0], human, instances) == 0.0
    assert select_one_references(human, instances) == {"random": pytest.approx(1 / 3), "oracle": 1.0}


def test_annotator_agreement_is_one_against_the_rest() -> None:
    rng = np.random.default_rng(0)
    truth = rng.random(60)
    votes = (truth[:, None] + 0.4 * rng.random((60, 3)) > 0.7).astype(float)
    instances = [str(k // 5) for k in range(60)]
    out = annotator_agreement(votes.tolist(), instances)
    expected = np.mean([spearmanr(votes[:, k], np.delete(votes, k, axis=1).mean(axis=1)).statistic for k in range(3)])
    assert out["n_annotators"] == 3 and "split_half" not in out
    assert out["one_vs_rest"]["spearman"] == pytest.approx(expected)
    six = annotator_agreement(np.tile(votes, 2).tolist(), instances)
    assert six["split_half"]["spearman"] == pytest.approx(1.0)  # both halves hold the same three annotators
    with pytest.raises(ValueError, match="two or more votes"):
        annotator_agreement([[1.0], [0.0]], ["a", "b"])


def test_share_of_ceiling_measures_distance_above_chance() -> None:
    assert share_of_ceiling(0.3, 0.6, "spearman") == pytest.approx(0.5)
    assert share_of_ceiling(0.65, 0.8, "auc") == pytest.approx(0.5)
    assert share_of_ceiling(0.5, 0.8, "pairwise") == 0.0
    assert share_of_ceiling(None, 0.8, "auc") is None
    assert share_of_ceiling(0.3, 0.066, "spearman") is None  # annotators who barely agree set no ceiling
