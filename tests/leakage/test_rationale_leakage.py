"""The label as a rationale states it (masked), b̃, and the uninformative rationales Φ_NI is trained to stay unsure on."""

from __future__ import annotations

from pathlib import Path

import pytest

from larev_hf.data import load_examples
from larev_hf.leakage.rationale_leakage import (
    UNINFORMATIVE_KINDS,
    content_stems,
    drop_label_statements,
    drop_ungrounded_sentences,
    label_stem,
    mask_input_copies,
    mask_label_words,
    masked_baseline,
    sentences,
    uninformative_rationales,
)

NLI = {"id": "bike", "task": "nli", "choices": ["entailment", "neutral", "contradiction"], "label": "entailment",
       "premise": "A man rides a bike down a wet street.", "hypothesis": "A man is outdoors.",
       "baseline": "A man rides a bike down a wet street implies a man is outdoors.", "rationale": "x"}


@pytest.mark.parametrize(("text", "expected"), [
    ("The answer is entailment.", "The answer is M."),
    ("Since the premise contradicts the hypothesis, the label is contradiction.",
     "Since the premise M the hypothesis, the label is M."),
    ("the premise neither entails nor contradicts the hypothesis", "the premise neither M nor M the hypothesis"),
    ("Contradictory statements; NEUTRAL.", "M statements; M."),
    ("It implies that he is not related to her.", "It M that he M her."),
    # a rationale that names no label is left as it is, words that only begin like one included
    ("a street is outdoors , so a man riding down it is outdoors .", None),
    ("the entail-free neutrality", "the M-free M"),
])
def test_every_word_that_names_an_nli_label_is_masked(text: str, expected: str | None) -> None:
    assert mask_label_words(text, NLI, "M") == (text if expected is None else expected)


@pytest.mark.parametrize(("text", "expected"), [
    ("The answer is entailment.", ""),
    ("This is neutral because the premise neither entails nor contradicts the hypothesis.", ""),
    ("A street is outdoors, so a man riding down it is outdoors. The answer is entailment.",
     "A street is outdoors, so a man riding down it is outdoors."),
    ("a man on a street is outdoors The answer is entailment.", "a man on a street is outdoors"),
    # a sentence that names the label and the input is an explanation: kept (its label words are masked later)
    ("a bike is contradictory to walking ; so it is not .", "a bike is contradictory to walking ; so it is not ."),
    ("The man is outdoors because a street is outdoors.", "The man is outdoors because a street is outdoors."),
])
def test_a_sentence_that_names_a_label_and_nothing_of_the_input_is_dropped(text: str, expected: str) -> None:
    assert drop_label_statements(text, NLI) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # generic sentences name nothing of the input: dropped, whatever they suggest about the label
    ("The text supports the conclusion.", ""),
    ("Comparing the two statements gives the answer. The answer is entailment.", ""),
    # inflections meet through their stems: "wet streets" is about "a wet street", "riding" about "rides"
    ("Wet streets are outside. This is obvious.", "Wet streets are outside."),
    ("Riding happens outdoors; clearly so.", "Riding happens outdoors;"),
    # another instance's explanation appended (padding): its sentence goes, the grounded one stays
    ("A man on a street is outdoors. Two dogs play in the snow.", "A man on a street is outdoors."),
])
def test_a_sentence_that_names_nothing_of_the_input_is_dropped(text: str, expected: str) -> None:
    assert drop_ungrounded_sentences(text, NLI) == expected


def test_masked_words_do_not_ground_a_sentence() -> None:
    masked = mask_input_copies("The hypothesis says that a man is outdoors.", NLI, "M")
    assert masked == "The hypothesis says that M."
    assert drop_ungrounded_sentences(masked, NLI, "M") == ""
    assert drop_ungrounded_sentences("M rides.", NLI, "M") == "M rides."  # an unmasked input word still grounds


@pytest.mark.parametrize(("text", "expected"), [
    # the whole hypothesis (shorter than the run), a four-word run of the premise; the words between them stay
    ("a man is outdoors", "M"),
    ("A man rides a bike, so a man is outdoors.", "M, so M."),
    ("riding a bike down a wet road", "riding M road"),
    # three words of the premise are not a copy at min_words=4; case is ignored
    ("Rides A Bike on ice", "Rides A Bike on ice"),
])
def test_runs_copied_from_the_input_are_masked(text: str, expected: str) -> None:
    assert mask_input_copies(text, NLI, "M", min_words=4) == expected


def test_sentences_join_back_to_the_text() -> None:
    text = "One. Two!  Three; four"
    assert sentences(text) == ["One.", " Two!", "  Three;", " four"]
    assert "".join(sentences(text)) == text
    # a sentence added to a lower-cased explanation without an end mark before it is a sentence of its own
    assert sentences("walking the dog The answer is X.") == ["walking the dog", " The answer is X."]
    assert sentences("A man named John runs.") == ["A man named", " John runs."]
    assert sentences("it says `` past the fence '' The answer is X.") == ["it says `` past the fence ''",
                                                                         " The answer is X."]
    assert content_stems("The girls are riding") == content_stems("a girl rides")  # stop words and inflections go


def test_qa_labels_are_masked_as_whole_words_only() -> None:
    record = {"task": "qa", "choices": ["bank", "river bed"], "label": "bank"}
    assert mask_label_words("money goes in a bank ; a riverbank is not a river  bed", record, "<m>") == \
        "money goes in a <m> ; a riverbank is not a river  bed"
    assert mask_label_words("a river bed is wet", record, "<m>") == "a <m> is wet"


def test_label_stems() -> None:
    assert [label_stem(x) for x in ("entailment", "contradiction", "neutral", "yes", "river bed")] == [
        "entail", "contradict", "neutral", "yes", "river bed"]


def test_masked_baseline_hides_the_stated_label_and_keeps_a_baseline_that_states_none() -> None:
    assert masked_baseline(NLI, "M") == "A man rides a bike down a wet street M a man is outdoors."
    assert masked_baseline({**NLI, "baseline": "A man rides a bike."}, "M") == "A man rides a bike."


@pytest.fixture(scope="module")
def esnli(data_dir: Path) -> list[dict]:
    return load_examples("esnli", str(data_dir / "esnli"), "test", max_examples=80).to_list()


def test_uninformative_rationales_are_seeded_and_carry_nothing_of_their_own(esnli: list[dict]) -> None:
    drawn = [pairs[0] for pairs in uninformative_rationales(esnli, seed=0)]
    assert [pairs[0] for pairs in uninformative_rationales(esnli, seed=0)] == drawn
    assert [pairs[0] for pairs in uninformative_rationales(esnli, seed=1)] != drawn
    assert {kind for kind, _ in drawn} == set(UNINFORMATIVE_KINDS)
    golds = {record["rationale"] for record in esnli}
    for record, (kind, text) in zip(esnli, drawn, strict=True):
        if kind == "empty":
            assert text == ""
        elif kind == "label":
            assert text.removesuffix(" .") in record["choices"]
        elif kind == "copy":
            assert text in (record["hypothesis"], record["premise"], f"{record['premise']} {record['hypothesis']}")
        else:
            assert text in golds and text != record["rationale"]
    only = uninformative_rationales(esnli, seed=0, kinds=["copy"])
    assert {kind for pairs in only for kind, _ in pairs} == {"copy"}
    # several draws per instance are of different kinds
    assert all(len({kind for kind, _ in pairs}) == 3 for pairs in uninformative_rationales(esnli, draws=3))
    with pytest.raises(ValueError, match="expected 1 to 1, one per kind"):
        uninformative_rationales(esnli, kinds=["copy"], draws=2)
    with pytest.raises(ValueError, match="expected a non-empty list of empty, label, copy, other_instance"):
        uninformative_rationales(esnli, kinds=["copies"])
