"""Integrated Gradients leakage terms (thesis §4.5.2): the log-odds target against an independent computation."""

from __future__ import annotations

import pytest
import torch

from larev_hf.leakage import IGSettings, integrated_gradients_terms
from larev_hf.leakage.attribution import integrated_gradients_word_scores
from larev_hf.modeling import build_model, build_tokenizer

BASELINES = ["Is the sky blue on a clear day? yes.", "Can a fish climb a tall tree? no.", "Is ice colder than steam? yes."]
CHOICES = [["yes", "no"]] * len(BASELINES)


@pytest.fixture(scope="module")
def model_and_tokenizer():
    tokenizer = build_tokenizer("t5-tiny", BASELINES * 4 + ["yes no"])
    torch.manual_seed(0)
    return build_model("t5-tiny", tokenizer, seed=0).eval(), tokenizer


def test_log_odds_attributions_are_those_of_the_gold_label_minus_the_other_and_opposite_for_the_other(
        model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    odds = IGSettings(n_steps=32, target="log_odds")
    odds_yes = integrated_gradients_word_scores(model, tokenizer, BASELINES, ["yes"] * 3, odds, candidates=CHOICES)
    odds_no = integrated_gradients_word_scores(model, tokenizer, BASELINES, ["no"] * 3, odds, candidates=CHOICES)
    prob_yes = integrated_gradients_word_scores(model, tokenizer, BASELINES, ["yes"] * 3, IGSettings(n_steps=32))
    prob_no = integrated_gradients_word_scores(model, tokenizer, BASELINES, ["no"] * 3, IGSettings(n_steps=32))
    for (_, o_yes), (_, o_no), (_, p_yes), (_, p_no) in zip(odds_yes, odds_no, prob_yes, prob_no, strict=True):
        # IG is linear in its target and both follow one path: with two labels the log-odds of "yes" is
        # log p(yes) − log p(no), and that of "no" its negative
        assert o_yes == pytest.approx([a - b for a, b in zip(p_yes, p_no, strict=True)], abs=1e-5)
        assert o_yes == pytest.approx([-s for s in o_no], abs=1e-5)
    # the thesis's target is not antisymmetric: log p(yes) and log p(no) move by different amounts
    assert any(abs(a + b) > 1e-4 for (_, ya), (_, na) in zip(prob_yes, prob_no, strict=True)
               for a, b in zip(ya, na, strict=True))


def test_the_log_odds_target_names_the_row_whose_label_is_not_a_candidate(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    with pytest.raises(ValueError, match=r"row 1 has label 'maybe' and candidates \['yes', 'no'\]"):
        integrated_gradients_terms(model, tokenizer, BASELINES, ["yes", "maybe", "no"], IGSettings(target="log_odds"),
                                   candidates=CHOICES)
    with pytest.raises(ValueError, match="needs each row's candidate labels"):
        integrated_gradients_terms(model, tokenizer, BASELINES, ["yes", "no", "no"], IGSettings(target="log_odds"))
    with pytest.raises(ValueError, match="IG target must be one of"):
        IGSettings(target="margin")
