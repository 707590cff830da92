"""VARIF's perturbations P(x) (larev_hf.varif.perturb, proposal §3.1): the NLI filter, the format perturbation, the
rule paraphraser, an HF paraphraser on a tiny local T5, and the perturbed set of real e-SNLI records."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from larev_hf.data import make_example
from larev_hf.io import DataError
from larev_hf.varif.perturb import (
    format_perturbation,
    hf_paraphraser,
    perturb_records,
    rule_paraphrases,
    split_sentences,
)

NLI_LABELS = ["entailment", "neutral", "contradiction"]


def no_new_negation(premises, hypotheses) -> np.ndarray:
    """A rule judge: the premise entails the hypothesis unless the hypothesis says "not" and the premise does not."""
    return np.array([0.0 if "not" in h.lower().split() and "not" not in p.lower().split() else 1.0
                     for p, h in zip(premises, hypotheses, strict=True)])


def records() -> list[dict]:
    return [
        make_example(id="n1", task="nli", premise="A man sleeps on a bench . A dog barks at him .",
                     hypothesis="A man is sleeping", choices=NLI_LABELS, label="entailment", rationale="r"),
        make_example(id="q1", task="qa", question="Where do kids play?", choices=["park", "bank", "office", "mine"],
                     label="park", rationale="r"),
        make_example(id="y1", task="yesno", question="Is the sky blue?", choices=["yes", "no"], label="yes",
                     rationale="r"),
    ]


def negate_then_frame(texts: list[str]) -> list[list[str]]:
    """Two candidates per query: one with an inserted "not" (not equivalent), one framed (equivalent)."""
    return [[f"not {t}", f"In short: {t}"] for t in texts]


def test_the_judge_drops_a_paraphrase_it_rejects_and_keeps_one_it_accepts() -> None:
    originals = records()
    rows, stats = perturb_records(originals, negate_then_frame, no_new_negation, seed=0)
    names = [(row["original_id"], row["perturbation"]) for row in rows]
    assert names == [(i, kind) for i in ("n1", "q1", "y1") for kind in ("paraphrase-2", "format")]
    by_id = {r["id"]: r for r in originals}
    for row in rows:
        original = by_id[row["original_id"]]
        assert row["id"] == original["id"] and row["label"] == original["label"]
        assert row["perturbed_id"] == f"{row['id']}::{row['perturbation']}"
        if row["perturbation"] == "paraphrase-2":
            field = "hypothesis" if original["task"] == "nli" else "question"
            assert row[field] == f"In short: {original[field]}"
            assert {k: v for k, v in row.items() if k != field and k in original} == {
                k: v for k, v in original.items() if k != field}
    assert stats["filtered"] is True
    assert stats["candidates"] == {"paraphrase-1": 3, "paraphrase-2": 3, "format": 3}
    assert stats["kept"] == {"paraphrase-1": 0, "paraphrase-2": 3, "format": 3}
    assert stats["rejected"] == {"paraphrase-1": 3, "paraphrase-2": 0, "format": 0}
    assert stats["kept_per_example"] == {"n1": 2, "q1": 2, "y1": 2}
    assert [r["hypothesis"] for r in originals][0] == "A man is sleeping"  # the input records are not modified


def test_without_a_judge_every_candidate_is_kept_and_the_stats_say_so() -> None:
    rows, stats = perturb_records(records(), negate_then_frame, None, seed=0)
    assert len(rows) == 9 and stats["filtered"] is False and "none" in stats["filter"]
    assert stats["rejected"] == {"paraphrase-1": 0, "paraphrase-2": 0, "format": 0}
    assert len({row["perturbed_id"] for row in rows}) == 9


def test_the_judge_is_called_once_per_direction_for_the_whole_set() -> None:
    calls = []

    def counting_judge(premises, hypotheses):
        calls.append(len(premises))
        return no_new_negation(premises, hypotheses)

    perturb_records(records(), negate_then_frame, counting_judge)
    assert calls == [6, 6]


def test_format_perturbation_of_a_qa_record_permutes_the_choices_and_keeps_the_label() -> None:
    record = records()[1]
    orders = set()
    for seed in range(10):
        out = format_perturbation(record, np.random.default_rng(seed))
        assert Counter(out["choices"]) == Counter(record["choices"])
        assert out["label"] == "park" and out["label"] in out["choices"]
        assert out["choices"] != record["choices"]
        assert out["question"] != record["question"]
        assert " ".join(out["question"].replace("?", "").split()) == "Where do kids play"
        orders.add(tuple(out["choices"]))
    assert len(orders) > 1
    assert record["choices"] == ["park", "bank", "office", "mine"]


def test_format_perturbation_of_an_nli_record_swaps_its_premise_sentences() -> None:
    record = records()[0]
    out = format_perturbation(record, np.random.default_rng(0))
    assert split_sentences(record["premise"]) == ["A man sleeps on a bench .", "A dog barks at him ."]
    assert out["premise"] == "A dog barks at him . A man sleeps on a bench ."
    assert out["label"] == record["label"] and out["choices"] == record["choices"]
    assert out["hypothesis"] != record["hypothesis"]
    assert out["hypothesis"].rstrip(".").split() == record["hypothesis"].split()  # only spacing and final "."
    one_sentence = dict(record, premise="Mr. Smith sleeps on a bench.")
    assert format_perturbation(one_sentence, np.random.default_rng(0))["premise"] == "Mr. Smith sleeps on a bench."


def test_rule_paraphrases_are_distinct_differ_from_the_input_and_depend_only_on_the_seed() -> None:
    texts = ["Two kids are playing near a large sofa .", "Where would you put a photo?", "A big dog runs",
             "The man does n't sleep", "XYZ"]
    for text in texts:
        for seed in range(3):
            out = rule_paraphrases(text, np.random.default_rng(seed), n=3)
            assert len(out) == len(set(out)) >= 2 and text not in out
            assert out == rule_paraphrases(text, np.random.default_rng(seed), n=3)
    assert rule_paraphrases("Two kids are playing.", np.random.default_rng(0))[0] == "Two children are playing."
    assert rule_paraphrases("KIDS play", np.random.default_rng(0))[0] == "CHILDREN play"
    assert rule_paraphrases("Kids play", np.random.default_rng(0))[0] == "Children play"
    # "big" → "large" is not a safe rewrite ("big sister"): only frames are offered
    assert all("big" in out for out in rule_paraphrases("A big dog runs", np.random.default_rng(0), n=5))
    assert rule_paraphrases("", np.random.default_rng(0)) == []


def test_bad_records_are_named() -> None:
    bad = records()
    bad[2] = dict(bad[2], question=" ")
    with pytest.raises(DataError, match="'y1'.*'question'"):
        perturb_records(bad)
    with pytest.raises(DataError, match="'n1': duplicate id"):
        perturb_records([records()[0], records()[0]])
    with pytest.raises(ValueError, match="one list"):
        perturb_records(records(), lambda texts: [["x"]])


def test_hf_paraphraser_on_a_tiny_local_t5(tmp_path) -> None:
    from larev_hf.modeling import build_model, build_tokenizer

    texts = ["a man is sleeping on a bench .", "where do kids play ?", "the dog barks ."]
    tokenizer = build_tokenizer("t5-tiny", texts * 20)
    build_model("t5-tiny", tokenizer, seed=0).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    paraphrase = hf_paraphraser(str(tmp_path), num_return_sequences=3, max_new_tokens=6, seed=1)
    first = paraphrase(texts)
    assert len(first) == len(texts)
    for text, outs in zip(texts, first, strict=True):
        assert len(outs) <= 3 and len(set(outs)) == len(outs)
        assert all(isinstance(o, str) and o and o == o.strip() and o != text for o in outs)
    assert sum(map(len, first)) > 0
    assert paraphrase(texts) == first
    assert hf_paraphraser(str(tmp_path), num_return_sequences=3, max_new_tokens=6, seed=1)(texts) == first
    assert paraphrase([]) == []


def test_perturb_records_on_real_esnli(data_dir) -> None:
    from larev_hf.data import load_examples

    originals = list(load_examples("esnli", data_dir / "esnli", "test", max_examples=20))
    rows, stats = perturb_records(originals, seed=3)
    assert len(originals) == 20 and len(rows) == 60
    assert stats["kept_per_example"] == {r["id"]: 3 for r in originals}
    by_id = {r["id"]: r for r in originals}
    for row in rows:
        original = by_id[row["original_id"]]
        assert row["hypothesis"] != original["hypothesis"]
        assert row["label"] == original["label"] and row["id"] == original["id"]
        assert sorted(split_sentences(row["premise"])) == sorted(split_sentences(original["premise"]))
    assert len({row["perturbed_id"] for row in rows}) == 60
    again, _ = perturb_records(originals, seed=3)
    assert again == rows
