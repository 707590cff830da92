"""Calibration features measured by benchmarks/calibration_candidates.py: the copy excess and the explanation LM's
corpus setting."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import larev_hf.data
from larev_hf.data.schema import make_example
from larev_hf.methods import get_method
from larev_hf.methods.explanation_lm import ExplanationLM, ExplanationLMSettings
from larev_hf.methods.heuristics import COPY_EXCESS_FROM


def test_copy_excess_penalises_only_what_acceptable_explanations_do_not_copy() -> None:
    record = make_example(id="a", task="nli", label="entailment", choices=("entailment", "neutral", "contradiction"),
                          premise="A man in a raincoat rides a bicycle along a flooded road.",
                          hypothesis="A man is outside in the rain.")
    texts = ["A man is outside in the rain.", "A raincoat and a flooded road mean rain.", "riding means being outside"]
    records = [record] * len(texts)
    spans = get_method("copied_span").pointwise(None, records, {"r": texts}, {})["r"]
    excess = get_method("copy_excess").pointwise(None, records, {"r": texts}, {})["r"]
    np.testing.assert_allclose(excess, -np.maximum(0.0, spans - COPY_EXCESS_FROM))
    assert excess[0] == pytest.approx(-(1 - COPY_EXCESS_FROM))  # the hypothesis restated
    assert excess[2] == 0.0 and get_method("copy_excess").kind == "baseline"
    assert not get_method("copy_excess").in_all


def test_explanation_lm_corpus_reads_the_whole_training_split(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def load(dataset: str, data_dir: str, split: str, **options: object) -> SimpleNamespace:
        calls.append((dataset, data_dir, split, options))
        return SimpleNamespace(to_list=lambda: [{"rationale": f"all of them {k} ."} for k in range(5)])

    monkeypatch.setattr(larev_hf.data, "load_examples", load)
    settings = ExplanationLMSettings(explanation_lm_corpus="dataset")
    context = SimpleNamespace(
        config=SimpleNamespace(data=SimpleNamespace(dataset="esnli", data_dir="d", loader_options={}),
                               method_settings=lambda cls: settings),
        split_records=lambda split: [{"rationale": "the run's one .", "rationale_gold": "the run's gold ."}])
    state = ExplanationLM().calibration_state(context)
    assert state["explanations"] == [f"all of them {k} ." for k in range(5)]
    assert calls == [("esnli", "d", "train", {})]
    settings.explanation_lm_corpus = "run"  # the default: the run's training split, gold explanations
    assert ExplanationLM().calibration_state(context)["explanations"] == ["the run's gold ."]
    with pytest.raises(ValueError, match="explanation-lm-corpus"):
        ExplanationLMSettings(explanation_lm_corpus="all").validate(None)


def test_premise_link_is_zero_for_the_hypothesis_restated_and_counts_the_premise_words_an_explanation_uses() -> None:
    record = make_example(id="a", task="nli", label="entailment", choices=("entailment", "neutral", "contradiction"),
                          premise="A man in a raincoat rides a bicycle along a flooded road.",
                          hypothesis="A man is outside in the rain.")
    texts = ["The claim is that a man is outside in the rain.", "A raincoat and a flooded road mean rain.",
             "the man rides outside", "so it is ."]
    linked = get_method("premise_link").pointwise(None, [record] * len(texts), {"r": texts}, {})["r"]
    # content words (stemmed, stop words out): claim, man, outsid, rain (none the premise's alone); raincoat, flood,
    # road | mean, rain; ride | man, outsid; none
    np.testing.assert_allclose(linked, [0.0, 3 / 5, 1 / 3, 0.0])
    assert not get_method("premise_link").in_all and get_method("premise_link").kind == "baseline"
    question = make_example(id="q", task="qa", label="river", choices=("river", "desert", "city"),
                            question="Where would you find water flowing downhill?")
    shares = get_method("premise_link").pointwise(None, [question] * 2, {"r": ["a river .", "water flows downhill"]},
                                                  {})["r"]
    np.testing.assert_allclose(shares, [0.0, 1.0])  # the answer restated links nothing; the question's words do
