"""LC-IG (larev_hf.varif.lcig): label-symmetric masking, label-set-normalised log-probabilities, a trained round trip."""

from __future__ import annotations

import numpy as np
import pytest

from larev_hf.explain.choices import choice_log_probs
from larev_hf.varif.lcig import (
    LCIG,
    MaskSettings,
    label_phrases,
    mask_label_strings,
    mask_rationales,
    mask_words,
)

NLI = ["entailment", "neutral", "contradiction"]
QA = ["bus depot", "train station", "bridge"]


def _record(i: int, label: str, choices=NLI, task: str = "nli") -> dict:
    return {"id": f"r{i}", "task": task, "premise": "a man sleeps on a couch .", "hypothesis": "a person rests .",
            "question": "where do people wait for a bus ?" if task == "qa" else "", "choices": list(choices),
            "label": label, "rationale": ""}


def test_n_masked_is_a_tenth_of_the_words_at_least_one_at_most_ten() -> None:
    settings = MaskSettings()
    assert [settings.n_masked(n) for n in (0, 1, 5, 10, 11, 25, 99, 100, 101, 400)] == [0, 1, 1, 1, 2, 3, 10, 10, 10, 10]
    assert MaskSettings(mask_share=0.5, max_masked=3).n_masked(4) == 2
    with pytest.raises(ValueError, match="ig_labels"):
        MaskSettings(ig_labels="predicted")


def test_label_strings_become_one_mask_per_phrase_whatever_their_length() -> None:
    """'bus depot' (two words) and 'bridge' (one) leave the same shape: the shape cannot tell them apart."""
    record = _record(0, "bridge", QA, "qa")
    phrases = label_phrases(record)
    assert mask_label_strings("The answer is bus depot, not a bridge.", phrases, "<mask>") == \
        "The answer is <mask>, not a <mask>."
    assert mask_label_strings("The answer is Bridge.", phrases, "<mask>") == "The answer is <mask>."
    # whole words only, inflections of NLI labels included
    nli = label_phrases(_record(1, "neutral"))
    assert mask_label_strings("It entails this; the entailed text is neutral, unlike neutrality.", nli, "[M]") == \
        "It [M] this; the [M] text is [M], unlike neutrality."


def test_mask_words_picks_the_top_scores_and_never_punctuation() -> None:
    text = "a dog , not a cat ."
    spans = [(0, 1), (2, 5), (6, 7), (8, 11), (12, 13), (14, 17), (18, 19)]
    masked, words = mask_words(text, spans, [0.1, 0.5, 9.0, 0.7, 0.1, 0.2, 8.0], 2, "<mask>")
    assert masked == "a <mask> , <mask> a cat ." and words == ["dog", "not"]
    # ties go to the earlier word
    assert mask_words(text, spans, [1.0] * 7, 1, "<mask>")[1] == ["a"]


def _shape(text: str, mask_token: str) -> list[float]:
    """What a model could read from the masks alone: their count and relative positions (padded)."""
    words = text.split()
    positions = [k / len(words) for k, w in enumerate(words) if mask_token in w]
    return [len(positions), len(words), *(positions + [-1.0] * 6)[:6]]


def test_masking_is_label_symmetric_and_a_classifier_cannot_read_the_label_from_its_shape(tiny_tokenizer) -> None:
    """Rationales that differ only in the answer they state get identical r⁻ (count and positions of masks), so a
    classifier of the mask shape stays at chance; one mask per word of the answer (the naive way) does not, because
    the answers have 1, 2 and 3 words."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    from larev_hf.leakage.environments import mask_token_of
    from larev_hf.modeling import build_model

    detector = build_model("t5-tiny", tiny_tokenizer, seed=3).eval()
    choices = ["bus depot", "bridge", "city bus stop"]
    templates = ["the answer is {} .", "people wait at the {} because buses stop there .",
                 "{} , as that is where a bus waits .", "we know it is the {} from the question ."]
    records, rationales = [], []
    for t, template in enumerate(templates):
        for k, label in enumerate(choices):
            records.append(_record(3 * t + k, label, choices, "qa"))
            rationales.append(template.format(label))
    mask = mask_token_of(tiny_tokenizer)
    out = mask_rationales(detector, tiny_tokenizer, records, rationales, settings=MaskSettings(mask_share=0.3))
    for t in range(len(templates)):
        group = {row["masked"] for row in out[3 * t : 3 * t + 3]}
        assert len(group) == 1, group  # the same r⁻ whichever answer the rationale names
        assert "depot" not in next(iter(group)) and "bridge" not in next(iter(group))
    y = [r["label"] for r in records]
    ours = np.array([_shape(row["masked"], mask) for row in out])
    assert cross_val_score(LogisticRegression(max_iter=1000), ours, y, cv=4).mean() <= 0.34
    naive = [rationale.replace(record["label"], " ".join([mask] * len(record["label"].split())))
             for record, rationale in zip(records, rationales, strict=True)]
    leaky = np.array([_shape(text, mask) for text in naive])
    assert cross_val_score(LogisticRegression(max_iter=1000), leaky, y, cv=4).mean() > 0.6


def test_choice_log_probs_are_normalised_over_the_label_set(tiny_model, tiny_tokenizer) -> None:
    records = [_record(0, "neutral"), _record(1, "bus depot", QA, "qa"), _record(2, "bridge", QA, "qa")]
    inputs = ["a man sleeps .", "where is a bus ?", "over a river ?"]
    totals = np.zeros(len(records))
    for choice_index in range(3):
        labels = [r["choices"][choice_index] for r in records]
        values, predicted = choice_log_probs(tiny_model, tiny_tokenizer, inputs, records, labels)
        totals += np.exp(values)
    np.testing.assert_allclose(totals, 1.0, atol=1e-6)
    best = [max(r["choices"], key=lambda c, r=r, i=i: choice_log_probs(tiny_model, tiny_tokenizer, [inputs[i]], [r],
                                                                      [c])[0][0]) for i, r in enumerate(records)]
    assert predicted == best


@pytest.mark.slow
def test_trained_lcig_masking_removes_what_a_leaky_rationale_gives_away(tmp_path) -> None:
    """Gold rationales name the label half the time: unmasked, h₁ᵘ reads a leaky rationale ("the label is X .") and
    I is large; masked, the detector is at chance on r⁻ and I falls (hypothesis H2 on a task built for it)."""
    from larev_hf.training import TrainSettings

    cues = {"entailment": "indeed", "neutral": "perhaps", "contradiction": "never"}
    records = []
    for i in range(150):
        label = NLI[i % 3]
        record = _record(i, label)
        record["rationale"] = (f"the label is {label} ." if i % 2 else f"the man {cues[label]} rests on the couch .")
        records.append(record)
    settings = TrainSettings(learning_rate=3e-3, num_train_epochs=12, batch_size=16, progress=False)
    lcig = LCIG.train(records, tmp_path / "lcig", settings=settings, mask_settings=MaskSettings(ig_steps=8))
    test = [_record(1000 + i, NLI[i % 3]) for i in range(30)]
    leaky = [f"the label is {r['label']} ." for r in test]
    scores = lcig.score(test, leaky)
    assert scores["d_correct"].mean() >= 0.9  # the label is in r ...
    assert scores["d_masked_correct"].mean() == pytest.approx(1 / 3)  # ... and gone from r⁻ (the same text for all)
    assert scores["I_unmasked"].mean() - scores["I"].mean() > 0.5
    assert len(set(scores["masked"])) == 1
    reloaded = LCIG(tmp_path / "lcig", MaskSettings(ig_steps=8))
    np.testing.assert_allclose(reloaded.score(test[:6], leaky[:6])["I"], scores["I"][:6], atol=1e-6)
