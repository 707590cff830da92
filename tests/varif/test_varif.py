"""VARIF's arithmetic (larev_hf.varif.measures) on hand-made inputs."""

from __future__ import annotations

import numpy as np
import pytest

from larev_hf.varif.measures import (
    harmonic,
    hypervolume_2d,
    keep_equivalent,
    pareto_front,
    robustness,
    sim_nli,
    specificity,
    transform_informativeness,
    varif_scores,
)


def one_way_entailment(premises, hypotheses):
    """A deliberately asymmetric judge: a premise entails any hypothesis it contains as a substring."""
    return np.array([1.0 if h in p else 0.2 for p, h in zip(premises, hypotheses, strict=True)])


def test_hypervolume_of_hand_made_fronts() -> None:
    assert hypervolume_2d([(0.5, 0.5)]) == pytest.approx(0.25)
    assert hypervolume_2d([(1.0, 0.5), (0.5, 1.0)]) == pytest.approx(0.75)
    assert hypervolume_2d([(1.0, 0.5), (0.5, 1.0), (0.4, 0.4)]) == pytest.approx(0.75)  # dominated: adds nothing
    assert hypervolume_2d([(0.5, 0.5)], reference=(0.25, 0.25)) == pytest.approx(0.0625)
    assert hypervolume_2d([(0.5, -0.1), (-1.0, 2.0)]) == 0.0
    assert hypervolume_2d([]) == 0.0


def test_pareto_front_keeps_the_non_dominated_methods() -> None:
    points = {"gold": (0.9, 0.8), "vacuous": (1.0, 0.0), "self": (0.7, 0.6), "leak": (0.5, 0.9), "tie": (0.9, 0.8)}
    assert pareto_front(points) == ["vacuous", "gold", "tie", "leak"]


def test_sim_nli_is_symmetric_even_for_an_asymmetric_judge() -> None:
    a, b = ["a dog runs in the park", "cats"], ["a dog runs", "a cat sleeps"]
    assert one_way_entailment(a, b).tolist() != one_way_entailment(b, a).tolist()
    np.testing.assert_allclose(sim_nli(one_way_entailment, a, b), sim_nli(one_way_entailment, b, a))
    np.testing.assert_allclose(sim_nli(one_way_entailment, a, b), [0.6, 0.2])


def test_a_perturbation_the_nli_check_rejects_is_dropped() -> None:
    originals = ["a dog runs", "a dog runs", "a dog runs"]
    perturbed = ["a dog runs", "a dog runs fast", "the cat sleeps"]  # same · entailed one way only · unrelated
    assert keep_equivalent(one_way_entailment, originals, perturbed) == [True, False, False]


def test_robustness_averages_kept_perturbations_and_marks_none() -> None:
    r = robustness(one_way_entailment, ["x y", "z"], [["x y", "q"], []])
    assert r[0] == pytest.approx((1.0 + 0.2) / 2) and np.isnan(r[1])


def test_informativeness_transform() -> None:
    np.testing.assert_allclose(transform_informativeness([-1.0, 0.0, np.log(2.0)]), [0.0, 0.0, 0.5])
    np.testing.assert_allclose(transform_informativeness([1.0, 3.0, 2.0], "minmax"), [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="'exp' or 'minmax'"):
        transform_informativeness([1.0], "sigmoid")


def test_specificity_and_the_gate() -> None:
    spec = specificity([0.9, 0.1, 0.5], [[0.1, 0.2], [0.3, 0.4], [0.5, 0.2]])
    np.testing.assert_allclose(spec, [1.0, 0.0, 0.5])  # a tie is not specific
    scores = varif_scores(spec, [1.0, 1.0, 0.5], [1.0, 1.0, 0.5])
    assert scores[1] == 0.0  # S = 0 gives VARIF = 0 whatever R and Ĩ are
    assert scores[0] == pytest.approx(harmonic([1.0], [1.0])[0]) and scores[0] == pytest.approx(1.0)
    assert harmonic([1.0], [0.0])[0] == 0.0  # vacuous: robust but uninformative
    with pytest.raises(ValueError, match="M ≥ 1"):
        specificity([0.5], [[]])
