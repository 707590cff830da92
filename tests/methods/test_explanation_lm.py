"""The explanation likelihood EL(r, x) — a hand computation, the orderings it exists for (an explanation
above its shuffled words, a label statement and another input's explanation), and its settings' errors."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from larev_hf.config import RunConfig
from larev_hf.methods import get_method
from larev_hf.methods.explanation_lm import (
    UNSEEN_WORD_WEIGHT,
    ExplanationLanguageModel,
    ExplanationLMSettings,
    words,
)

TRAIN = [
    "a dog is an animal and the park is outside .",
    "a man playing a guitar is playing an instrument .",
    "a woman is a person .",
    "the dog can not be sleeping if it is running .",
    "a man can not be sleeping and playing a guitar at the same time .",
    "people in a park are outside .",
]


class TrainingSplit:
    """The part of a run the metric reads: its settings and its training split's rationales."""

    def __init__(self, order: int, copy: float) -> None:
        self.config = RunConfig(explanation_lm_order=order, explanation_lm_copy=copy)

    def split_records(self, split: str) -> list[dict]:
        assert split == "train"
        return [{"rationale": text} for text in TRAIN]


def record(premise: str, hypothesis: str) -> dict:
    return {"task": "nli", "premise": premise, "hypothesis": hypothesis, "label": "entailment"}


def test_a_unigram_model_with_copying_equals_a_hand_computation() -> None:
    model = ExplanationLanguageModel(TRAIN, order=1)
    counts = Counter(word for text in TRAIN for word in text.split())
    total, vocabulary = sum(counts.values()), len(counts) + 1  # nltk's vocabulary adds <UNK>
    source, text, copy = "A dog runs in the park .", "the dog is outside today", 0.25
    source_types = set(source.lower().split())

    def probability(word: str) -> float:
        language = (1 - UNSEEN_WORD_WEIGHT) * counts[word] / total + UNSEEN_WORD_WEIGHT / vocabulary
        return (1 - copy) * language + copy * (word in source_types) / len(source_types)

    expected = sum(math.log(probability(w)) for w in [*text.split(), "</s>"]) / (len(text.split()) + 1)
    assert model.mean_log_probability(text, source, copy) == pytest.approx(expected, rel=1e-12)


def test_an_explanation_of_this_input_ranks_above_its_shuffled_words_a_label_statement_and_another_inputs() -> None:
    x = record("A man is playing a guitar in the park .", "A man is playing an instrument .")
    other = record("A woman is sleeping .", "A person is asleep .")
    texts = ["a man playing a guitar is playing an instrument .",
             "an instrument playing a guitar is playing a man .",  # its content words shuffled
             "the answer is entailment ."]
    scores = get_method("explanation_lm").pointwise(TrainingSplit(order=3, copy=0.2), [x] * 3, {"r": texts}, {})["r"]
    assert scores[0] > scores[1] and scores[0] > scores[2]
    # the same explanation read against another input loses the copy term's credit; without copying, x is not read
    against = get_method("explanation_lm").pointwise(TrainingSplit(order=3, copy=0.2), [other], {"r": texts[:1]}, {})
    assert scores[0] > against["r"][0]
    blind = [get_method("explanation_lm").pointwise(TrainingSplit(order=3, copy=0.0), [r], {"r": texts[:1]}, {})["r"][0]
             for r in (x, other)]
    assert blind[0] == blind[1]


def test_the_words_are_lower_cased_with_punctuation_apart() -> None:
    assert words("A dog's TOY, outside.") == ["a", "dog", "'", "s", "toy", ",", "outside", "."]


@pytest.mark.parametrize(("settings", "message"), [
    (ExplanationLMSettings(explanation_lm_order=0), "--explanation-lm-order 0: expected an integer ≥ 1"),
    (ExplanationLMSettings(explanation_lm_copy=1.0), r"--explanation-lm-copy 1.0: expected a weight in \[0, 1\)"),
])
def test_bad_settings_name_the_flag(settings: ExplanationLMSettings, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        settings.validate(None)


def test_a_run_without_training_rationales_is_refused() -> None:
    with pytest.raises(ValueError, match="no rationale to fit the language model on"):
        ExplanationLanguageModel(["", "  "])


def test_outside_a_run_it_needs_the_state_a_calibration_carries() -> None:
    method = get_method("explanation_lm")
    with pytest.raises(ValueError, match="reads a run's training explanations"):
        method.pointwise(None, [record("A dog runs.", "An animal runs.")], {"r": ["a dog is an animal ."]}, {})
    state = {"order": 3, "copy": 0.2, "explanations": TRAIN}
    x = record("A dog runs.", "An animal runs.")
    assert method.text_scores([x], ["a dog is an animal ."], state)[0] == pytest.approx(
        method.pointwise(TrainingSplit(order=3, copy=0.2), [x], {"r": ["a dog is an animal ."]}, {})["r"][0])
    with pytest.raises(ValueError, match=r"--explanation-lm-copy 1.0"):
        method.text_scores([x], ["a dog ."], {**state, "copy": 1.0})
