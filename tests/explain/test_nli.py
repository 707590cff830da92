"""VARIF's NLI judge (larev_hf.explain.nli, proposal §3.1): the entailment class lookup, batched probabilities, and
training the offline MiniLM judge with the HF Trainer (no downloads)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from larev_hf.data import make_example
from larev_hf.explain.nli import (
    NLIJudge,
    NliTrainArguments,
    entailment_index,
    nli_train_main,
    train_nli_judge,
)
from larev_hf.io import DataError
from larev_hf.methods.settings import add_dataclass_arguments
from larev_hf.varif.measures import keep_equivalent
from tests.explained_nli import explained_records

PREMISES = ["A man sleeps .", "Two kids play soccer in a large park near the river while their parents watch .",
            "A dog runs .", "A woman reads a book on a bench in the sun .", "Cats.", "A chef cooks pasta for guests ."]
HYPOTHESES = ["A person rests", "Children are outside", "An animal moves", "Nobody is reading", "x",
              "Someone is cooking food in a restaurant kitchen tonight"]


@pytest.fixture(scope="module")
def upper_case_checkpoint(tmp_path_factory):
    """A MiniLM classifier with a fresh head whose labels are MNLI-style upper case, entailment last."""
    from larev_hf.rora.classifier import build_classifier

    path = tmp_path_factory.mktemp("upper-nli")
    model, tokenizer = build_classifier("minilm", ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"], seed=0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_judge_finds_entailment_and_scores_pairs_in_input_order(upper_case_checkpoint) -> None:
    judge = NLIJudge.from_pretrained(upper_case_checkpoint, device="cpu", batch_size=2)
    assert judge.entailment_index == 2 and judge.labels == ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]
    probs = judge.probabilities(PREMISES, HYPOTHESES)
    assert probs.shape == (6, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(judge.entail(PREMISES, HYPOTHESES), probs[:, 2])
    big = NLIJudge(judge.model, judge.tokenizer, batch_size=64)
    np.testing.assert_allclose(big.probabilities(PREMISES, HYPOTHESES), probs, atol=1e-6)
    one_by_one = np.concatenate([big.probabilities([p], [h]) for p, h in zip(PREMISES, HYPOTHESES, strict=True)])
    np.testing.assert_allclose(one_by_one, probs, atol=1e-6)
    assert judge.predict(PREMISES, HYPOTHESES) == [judge.labels[i] for i in probs.argmax(axis=1)]
    assert keep_equivalent(judge.entail, PREMISES, HYPOTHESES, threshold=0.0) == [True] * 6  # an EntailmentFn
    assert judge.probabilities([], []).shape == (0, 3) and judge.entail([], []).shape == (0,)
    assert judge.predict([], []) == []
    with pytest.raises(ValueError, match="2 premises and 1 hypotheses"):
        judge.entail(PREMISES[:2], HYPOTHESES[:1])


def test_a_checkpoint_without_an_entailment_label_is_refused(tmp_path) -> None:
    from larev_hf.rora.classifier import build_classifier

    model, tokenizer = build_classifier("minilm", ["A", "B"], seed=0)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"no label of config.id2label \['A', 'B'\]") as error:
        NLIJudge.from_pretrained(tmp_path, device="cpu")
    assert str(tmp_path) in str(error.value)


def test_entailment_index_skips_negated_labels() -> None:
    assert entailment_index({0: "not_entailment", 1: "entailment"}) == 1
    assert entailment_index({"0": "Entails", "1": "Non-Entailment"}) == 0
    with pytest.raises(ValueError, match="no label"):
        entailment_index({0: "NOT_ENTAILMENT", 1: "other"}, "rte-model")
    with pytest.raises(ValueError, match="several labels"):
        entailment_index({0: "entailed", 1: "entails"}, "odd-model")


def nli_records(n: int, prefix: str) -> list[dict]:
    """Pairs whose label is readable off the hypothesis: a copy (entailment), a negation (contradiction) or an
    addition (neutral)."""
    people = ["man", "woman", "boy", "girl", "chef", "dog", "child", "farmer", "doctor", "singer"]
    actions = ["sleeping", "running", "eating", "reading", "singing", "cooking"]
    out = []
    for i in range(n):
        who, what = people[i % len(people)], actions[(i // 3) % len(actions)]
        label = ("entailment", "contradiction", "neutral")[i % 3]
        hypothesis = {"entailment": f"A {who} is {what}", "contradiction": f"A {who} is not {what}",
                      "neutral": f"A {who} is {what} with a friend after work"}[label]
        out.append(make_example(id=f"{prefix}-{i}", task="nli", premise=f"A {who} is {what} .",
                                hypothesis=hypothesis, choices=["entailment", "neutral", "contradiction"],
                                label=label, rationale="r"))
    return out


def test_train_nli_judge_writes_metrics_that_match_the_saved_judge_and_is_not_retrained(tmp_path) -> None:
    train, evaluation = nli_records(60, "train"), nli_records(24, "eval")
    output = tmp_path / "judge"
    metrics = train_nli_judge(train, output, eval_records=evaluation, epochs=2.0, batch_size=30, seed=0,
                              progress=False)
    written = json.loads((output / "nli_metrics.json").read_text())
    assert written == metrics
    assert written["train_examples"] == 60 and written["epochs"] == 2.0 and written["train_seconds"] > 0
    assert written["eval_examples"] == 24
    judge = NLIJudge.from_pretrained(output, device="cpu")
    assert judge.labels == ["entailment", "neutral", "contradiction"] and judge.entailment_index == 0
    predicted = judge.predict([r["premise"] for r in evaluation], [r["hypothesis"] for r in evaluation])
    assert written["accuracy"] == pytest.approx(accuracy_score([r["label"] for r in evaluation], predicted))
    assert {label: c["gold"] for label, c in written["per_class"].items()} == {
        "entailment": 8, "neutral": 8, "contradiction": 8}
    assert {label: c["predicted"] for label, c in written["per_class"].items()} == {
        label: predicted.count(label) for label in judge.labels}
    assert not (tmp_path / ".judge.tmp").exists()

    weights = output / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    again = train_nli_judge(train, output, eval_records=evaluation, epochs=5.0, progress=False)
    assert again == metrics and weights.stat().st_mtime_ns == stamp


def test_train_nli_judge_refuses_records_of_another_task(tmp_path) -> None:
    qa = make_example(id="qa-7", task="qa", question="Where?", choices=["park", "bank"], label="park", rationale="r")
    with pytest.raises(DataError, match="'qa-7'.*'task' is 'qa'"):
        train_nli_judge([*nli_records(3, "ok"), qa], tmp_path / "judge", progress=False)
    assert not (tmp_path / "judge").exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a finished NLI judge"):
        train_nli_judge(nli_records(3, "ok"), tmp_path / "other", progress=False)
    assert (tmp_path / "other" / "notes.txt").read_text() == "keep me"


def test_nli_train_command_on_esnli(data_dir, tmp_path, capsys) -> None:
    parser = argparse.ArgumentParser()
    add_dataclass_arguments(parser, NliTrainArguments)
    args = parser.parse_args(["--data-dir", str(data_dir / "esnli"), "--output-dir", str(tmp_path / "judge"),
                              "--max-train-examples", "32", "--max-eval-examples", "16", "--epochs", "1"])
    assert (args.learning_rate, args.batch_size, args.seed) == (5e-5, 32, 0)
    assert nli_train_main(args, progress=False) == 0
    printed = capsys.readouterr().out
    metrics = json.loads((tmp_path / "judge" / "nli_metrics.json").read_text())
    assert metrics["train_examples"] == 32 and metrics["eval_examples"] == 16
    assert f"{metrics['accuracy']:.4f}" in printed and str(tmp_path / "judge") in printed


def test_a_judge_that_reads_explanations_reads_the_label_off_them(explanation_judge) -> None:
    """Only the explanation tells the label of these pairs: the judge trained on them with read_explanations gives
    each held-out record's label a higher log-probability with its own explanation than with another label's."""
    judge = NLIJudge.from_pretrained(explanation_judge)
    assert judge.reads_explanations and json.loads((explanation_judge / "nli_metrics.json").read_text())[
        "reads_explanations"] is True
    own, own_read = judge.label_log_probs(explained_records(30, "held"))
    other, _ = judge.label_log_probs(explained_records(30, "held", swap=True))
    assert np.mean(own > other) >= 0.9 and np.mean(own - other) > 0
    assert np.all(own <= 0) and len(own_read) == 30 and set(own_read) <= set(judge.labels)
    # a judge that does not read explanations sees one pair for every label: the same probabilities either way
    blind = NLIJudge(judge.model, judge.tokenizer, name="blind")
    np.testing.assert_allclose(blind.label_log_probs(explained_records(6, "held"))[0],
                               blind.label_log_probs(explained_records(6, "held", swap=True))[0])


def test_a_judge_that_reads_explanations_refuses_a_record_without_one(tmp_path) -> None:
    records = explained_records(3, "train")
    records[1]["rationale"] = "  "
    with pytest.raises(DataError, match=r"train-1.*field 'rationale' is empty"):
        train_nli_judge(records, tmp_path / "judge", read_explanations=True, progress=False)


def test_label_log_probs_names_a_label_the_judge_does_not_have(explanation_judge) -> None:
    records = explained_records(2, "x")
    records[0]["label"] = "maybe"
    with pytest.raises(ValueError, match=r"\['maybe'\] are not among the judge's labels"):
        NLIJudge.from_pretrained(explanation_judge).label_log_probs(records)
