"""Agreement with human judgments (``larev-hf human``): statistics against scipy/sklearn and hand counts, the judged
file reader's errors, the run-level evaluation, and the VARSuite families a surface heuristic cannot pass."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import roc_auc_score

from larev_hf.cli import main
from larev_hf.data import make_example
from larev_hf.io import DataError, read_jsonl, write_jsonl
from larev_hf.meta import (
    acceptability_auc,
    agreement_table,
    build_suite_with_skips,
    difference,
    human_evaluate,
    instance_bootstrap_indices,
    instance_half,
    kendall,
    load_judgments,
    pairwise_agreement,
    spearman,
)
from larev_hf.meta.surface_families import content_word_spans
from larev_hf.methods import get_method
from larev_hf.methods.explanation_lm import ExplanationLMSettings
from larev_hf.pipeline import Run

# --------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("seed", [0, 1])
def test_spearman_and_kendall_equal_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    human = rng.choice([0, 1 / 3, 2 / 3, 1], size=60)
    scores = rng.integers(0, 7, size=60).astype(float)  # many ties on both sides
    assert spearman(scores, human) == pytest.approx(spearmanr(scores, human).statistic, abs=1e-12)
    assert kendall(scores, human) == pytest.approx(kendalltau(scores, human, variant="b").statistic, abs=1e-12)
    assert np.isnan(spearman(np.ones(60), human)) and np.isnan(kendall(np.ones(60), human))


def test_pairwise_agreement_equals_a_hand_count_with_ties() -> None:
    instances = ["a", "a", "a", "b", "b", "c", "c"]
    human = [1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 2 / 3]
    scores = [3.0, 1.0, 3.0, 0.0, 5.0, 2.0, 1.0]
    # a: (0 > 1) metric 3 > 1 agrees: 1; (0 > 2) metric 3 = 3 ties: ½; (2 > 1) metric 3 > 1 agrees: 1
    # b: the annotators tie, no pair; c: (6 > 5) metric 1 < 2 disagrees: 0  →  2.5 of 4 pairs
    assert pairwise_agreement(scores, human, instances) == (pytest.approx(2.5 / 4), 4)
    assert np.isnan(pairwise_agreement([1.0, 2.0], [1.0, 1.0], ["x", "x"])[0])


def test_acceptability_auc_equals_sklearn_on_the_judged_extremes() -> None:
    rng = np.random.default_rng(3)
    human = rng.choice([0, 1 / 3, 2 / 3, 1], size=80)
    scores = rng.integers(0, 5, size=80).astype(float) + human
    extreme = (human >= 0.5) | (human == 0)
    expected = roc_auc_score(human[extreme] >= 0.5, scores[extreme])
    assert acceptability_auc(scores, human) == pytest.approx(expected, abs=1e-12)


def test_the_instance_bootstrap_keeps_an_instances_explanations_together() -> None:
    instances = [f"i{k // 3}" for k in range(12)] + ["j", "j"]  # sizes 3, 3, 3, 3 and 2
    for rows in instance_bootstrap_indices(instances, n_boot=50, seed=1):
        drawn = [instances[r] for r in rows]
        counts = {i: drawn.count(i) for i in set(drawn)}
        for instance, count in counts.items():
            assert count % instances.count(instance) == 0  # every draw brings all of the instance's rows
        assert len({instances[r] for r in rows}) <= 5 and sum(count // instances.count(i)
                                                                for i, count in counts.items()) == 5


def test_agreement_table_differences_are_paired() -> None:
    rng = np.random.default_rng(0)
    instances = [f"i{k // 5}" for k in range(200)]
    human = rng.choice([0, 1 / 3, 2 / 3, 1], size=200)
    good, noise = human + rng.normal(0, 0.3, 200), rng.normal(0, 1, 200)
    table = agreement_table({"good": good, "same": good.copy(), "noise": noise}, human, instances, n_boot=200)
    assert table["n_instances"] == 40 and table["n_pairs"] == pairwise_agreement(good, human, instances)[1]
    same = difference(table, "good", "same", "spearman")
    assert same["value"] == 0 and same["ci95"] == [0.0, 0.0] and not same["established"]  # paired: identical draws
    better = difference(table, "good", "noise", "pairwise")
    assert better["established"] and better["ci95"][0] > 0
    low, high = table["metrics"]["good"]["spearman"]["ci95"]
    assert low <= table["metrics"]["good"]["spearman"]["value"] <= high


# --------------------------------------------------------------------------- judged files


def _nli_line(instance: str, rationale: str, acceptable: float, **extra) -> dict:
    return {"id": instance, "premise": "A dog runs.", "hypothesis": "An animal moves.", "label": 0,
            "rationale": rationale, "acceptable": acceptable, **extra}


def test_judged_rows_get_row_ids_instances_and_esnli_label_ids(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_jsonl(path, [_nli_line("p", "a dog is an animal", 1.0), _nli_line("p", "dogs", 0.0),
                       _nli_line("q", "", 0.0) | {"label": 2, "hypothesis": "Nothing moves."}])
    records = load_judgments(path, "nli", ["acceptable"])
    assert [r["id"] for r in records] == ["p#0", "p#1", "q#0"] and [r["instance"] for r in records] == ["p", "p", "q"]
    assert [r["label"] for r in records] == ["entailment", "entailment", "contradiction"]
    assert records[2]["rationale"] == "" and records[0]["numbers"] == {"acceptable": 1.0}
    assert len(load_judgments(path, "nli", ["acceptable"], max_instances=1)) == 2


@pytest.mark.parametrize("lines, message", [
    ([{"id": "p", "premise": "A.", "hypothesis": "B.", "label": 0, "rationale": "r"}],
     r"line 1; example id 'p': missing column 'acceptable'"),
    ([_nli_line("p", "r", "yes")], r"line 1; example id 'p': column 'acceptable' is 'yes'; expected a number"),
    ([_nli_line("p", "r", 1.0), _nli_line("p", "s", 0.0) | {"hypothesis": "Another input."}],
     r"line 2; example id 'p': the explanations of one instance must share its input and label, but \['hypothesis'\]"),
    ([_nli_line("p", "r", 1.0) | {"label": "maybe"}], r"line 1; example id 'p': field 'label' is 'maybe'"),
    ([_nli_line(None, "r", 1.0)], r"line 1: column 'id' is None; expected the instance id"),
])
def test_a_malformed_judged_file_is_one_clear_line(tmp_path: Path, tiny_run: Path, capsys, lines, message) -> None:
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, lines)
    with pytest.raises(DataError, match=message):
        load_judgments(path, "nli", ["acceptable"])
    # through the CLI (the tiny run is QA: a missing 'question' column is named first there, so check one case)
    write_jsonl(tmp_path / "qa.jsonl", [{"id": "x", "question": "Where?", "choices": ["a", "b"], "label": "a",
                                        "rationale": "r", "acceptable": "high"}])
    assert main(["--quiet", "human", "--run-dir", str(tiny_run), "--judgments", str(tmp_path / "qa.jsonl"),
                 "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "column 'acceptable' is 'high'; expected a number" in err
    assert not (tmp_path / "out").exists()


def test_instance_halves_are_deterministic_and_even() -> None:
    instances = [f"i{k}" for k in range(101)]
    halves = instance_half(instances, seed=0)
    assert list(halves.values()).count("select") == 51 and halves == instance_half(list(reversed(instances)), seed=0)
    assert halves != instance_half(instances, seed=1)


def test_the_shared_judgment_files_load(data_dir: Path) -> None:
    snli = load_judgments(data_dir / "human" / "snli_accept_train.jsonl", "nli", ["acceptable", "gpt3_nll"])
    csqa = load_judgments(data_dir / "human" / "csqa_accept_train.jsonl", "qa", ["acceptable"])
    assert len({r["instance"] for r in snli}) == 1000 and {r["label"] for r in snli} == {
        "entailment", "neutral", "contradiction"}
    assert all(len(r["choices"]) == 5 and r["label"] in r["choices"] for r in csqa)


# --------------------------------------------------------------------------- a run's metrics on a judged file


def test_human_scores_every_explanation_with_every_method(tiny_run: Path, judged_file: Path, tmp_path: Path) -> None:
    report = human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, baseline_columns=["nll:lower"],
                            n_boot=50)
    run = Run.load(tiny_run, progress=False)
    assert list(report["metrics"])[: len(run.config.methods)] == list(run.config.methods)
    nll = report["human"]["acceptable"]["metrics"]["nll"]
    lines = [row for _, row in read_jsonl(judged_file)]
    expected = spearmanr([-row["nll"] for row in lines], [row["acceptable"] for row in lines]).statistic
    assert nll["pairwise"]["value"] == 1.0 and nll["spearman"]["value"] == pytest.approx(expected)  # direction applied
    # REV's score of the gold explanation is the run's own pointwise score: five choices do not change log p(y | ·)
    rev = {row["id"]: row["score"] for _, row in read_jsonl(tmp_path / "h" / "scores" / "rev.jsonl")}
    records = run.split_records("test")
    own = get_method("rev").pointwise(run, records, {"gold": [r["rationale"] for r in records]}, {})["gold"]
    assert [rev[f"{r['id']}#0"] for r in records] == pytest.approx(own.tolist(), abs=1e-5)
    for name in report["metrics"]:  # every method scored every explanation, with five choices per question
        if name != "nll":
            assert len(list(read_jsonl(tmp_path / "h" / "scores" / f"{name}.jsonl"))) == 3 * len(records)
    assert (tmp_path / "h" / "human_agreement.png").stat().st_size > 0
    assert "Pairwise agreement" in (tmp_path / "h" / "human_report.md").read_text()


def test_human_resumes_and_reports_one_half(tiny_run: Path, judged_file: Path, tmp_path: Path) -> None:
    human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["rev"], n_boot=20)
    stamp = (tmp_path / "h" / "stages" / "score-rev.done").stat().st_mtime_ns
    held = human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["rev", "length"],
                          half="held", n_boot=20)
    assert (tmp_path / "h" / "stages" / "score-rev.done").stat().st_mtime_ns == stamp  # not rescored
    n = len(Run.load(tiny_run, progress=False).split_records("test"))
    assert held["human"]["acceptable"]["n_instances"] == n // 2 and list(held["metrics"]) == ["rev", "length"]


# --------------------------------------------------------------------------- surface families


def _nli(i: str, label: str, rationale: str, hypothesis: str = "A musician performs outside.") -> dict:
    return make_example(id=i, task="nli", premise="A man in a red hat is playing guitar in Paris.",
                        hypothesis=hypothesis, choices=("entailment", "neutral", "contradiction"), label=label,
                        rationale=rationale)


def test_input_copies_contain_the_inputs_words() -> None:
    records = [_nli(f"n{k}", "entailment", f"reason {k} about guitars and men") for k in range(8)]
    rows, skipped = build_suite_with_skips(records, ["gold", "input_copy", "hypothesis_copy"], seed=0)
    words = lambda text: set(re.findall(r"[a-z]+", text.lower()))  # noqa: E731
    for row in rows:
        if row["family"] == "input_copy":
            assert words(row["premise"]) | words(row["hypothesis"]) <= words(row["rationale"])
        if row["family"] == "hypothesis_copy":
            assert words(row["hypothesis"]) <= words(row["rationale"]) and "paris" not in words(row["rationale"])
    qa = make_example(id="q", task="qa", question="Where is a spice kept?", choices=["kitchen", "garage"],
                      label="kitchen", rationale="Spices are kept in the kitchen.")
    rows, skipped = build_suite_with_skips([qa], ["input_copy", "hypothesis_copy"], seed=0)
    assert skipped["hypothesis_copy"] == ["q"] and "Where is a spice kept" in rows[0]["rationale"]


def test_off_topic_comes_from_another_instance_with_the_same_label() -> None:
    records = [_nli(f"n{k}", label, f"{label} reason {k}") for k, label in
               enumerate(["entailment", "contradiction", "entailment", "neutral", "contradiction", "entailment"])]
    rows, skipped = build_suite_with_skips(records, ["off_topic"], seed=0)
    by_id = {r["id"]: r for r in records}
    assert skipped["off_topic"] == ["n3"]  # the only neutral instance has no other
    for row in rows:
        source = by_id[row["source_id"]]
        assert source["id"] != row["id"] and source["label"] == row["label"] and row["rationale"] == source["rationale"]
    qa = [make_example(id=f"q{k}", task="qa", question=f"Question {k}?", choices=[a, "other"], label=a,
                       rationale=f"You keep it in the {a} usually.") for k, a in enumerate(["kitchen", "garage"])]
    rows, _ = build_suite_with_skips(qa, ["off_topic"], seed=0)
    assert [row["rationale"] for row in rows] == ["You keep it in the kitchen usually.",
                                                  "You keep it in the garage usually."]
    assert [row["source_id"] for row in rows] == ["q1", "q0"]  # the other question's text, this question's answer


def test_shuffled_keeps_the_words_and_moves_the_content_words() -> None:
    records = [_nli(f"n{k}", "entailment", "a man playing guitar is a musician and he is not inside .")
               for k in range(5)]
    rows, _ = build_suite_with_skips(records, ["shuffled"], seed=0)
    gold = records[0]["rationale"]
    for row in rows:
        assert sorted(row["rationale"].split()) == sorted(gold.split()) and row["rationale"] != gold
        spans = content_word_spans(gold)
        assert [gold[a:b] for a, b in spans] != [row["rationale"][a:b] for a, b in content_word_spans(row["rationale"])]
    assert build_suite_with_skips([_nli("x", "entailment", "it is not .")], ["shuffled"])[1] == {"shuffled": ["x"]}
    assert json.dumps(rows) == json.dumps(build_suite_with_skips(records, ["shuffled"], seed=0)[0])  # seeded


# --------------------------------------------------------------------------- the calibrated score


def _calibration_data(seed: int = 0) -> tuple[dict, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    instances = [f"i{k // 5}" for k in range(400)]
    human = rng.choice([0, 1 / 3, 2 / 3, 1], size=400)
    columns = {"good": human + rng.normal(0, 0.5, 400), "noise": rng.normal(0, 1, 400),
               "length": rng.integers(3, 40, 400).astype(float)}
    return columns, human, instances


def test_the_calibration_equals_sklearn_on_standardised_features_and_round_trips(tmp_path: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    from larev_hf.scores.calibration import Calibration, fit_calibration

    columns, human, instances = _calibration_data()
    calibration, out_of_fold = fit_calibration(columns, human, instances, ["good", "noise", "length"])
    x = np.stack([columns["good"], columns["noise"], np.log1p(columns["length"])], axis=1)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    reference = LogisticRegression(C=calibration.fitted_on["C"], max_iter=1000).fit(z, human >= 0.5)
    assert calibration(columns) == pytest.approx(reference.decision_function(z), abs=1e-4)
    assert calibration.coef[0] > 0 and abs(calibration.coef[0]) > abs(calibration.coef[1])  # the informative feature
    assert out_of_fold.shape == (400,) and not np.allclose(out_of_fold, calibration(columns))  # held-out predictions
    calibration.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json")(columns) == pytest.approx(calibration(columns))
    with pytest.raises(ValueError, match="one entry per feature"):
        Calibration.from_dict({**calibration.to_dict(), "coef": [1.0]})
    with pytest.raises(ValueError, match=r"needs the scores \['noise'\]"):
        calibration({"good": columns["good"], "length": columns["length"]})


def test_human_calibrate_reports_a_held_out_calibrated_score(tiny_run: Path, judged_file: Path, tmp_path: Path) -> None:
    report = human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["larev", "length"],
                            calibrate=["larev", "length"], half="held", n_boot=20)
    assert "calibrated" in report["metrics"] and (tmp_path / "h" / "calibration.json").is_file()
    with pytest.raises(ValueError, match=r"--calibrate: \['nll'\] are not scored methods"):
        human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["larev", "length"],
                       baseline_columns=["nll:lower"], calibrate=["larev", "nll"], n_boot=20)


def test_a_calibrated_bundle_returns_the_calibrated_score_through_evaluate_load(tiny_run: Path, tmp_path: Path,
                                                                                capsys, monkeypatch) -> None:
    import evaluate
    from rouge_score import rouge_scorer
    from rouge_score.tokenizers import DefaultTokenizer

    from larev_hf.scores.calibration import Calibration

    calibration = Calibration(features=["larev", "length", "rouge_l", "copied_span"], mean=[0.0, 1.0, 0.2, 0.3],
                              scale=[1.0, 0.5, 0.1, 0.2], coef=[0.7, -0.3, 0.4, 0.25], intercept=0.1)
    calibration.save(tmp_path / "calibration.json")
    assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir",
                 str(tmp_path / "bundle"), "--calibration", str(tmp_path / "calibration.json"), "--force"]) == 0
    records = Run.load(tiny_run, progress=False).split_records("test")[:6]
    monkeypatch.chdir(tmp_path)  # evaluate.load from another directory
    module = evaluate.load(str(Path(__file__).resolve().parents[2] / "metrics" / "bundle"),
                           evaluator=str(tmp_path / "bundle"), keep_in_memory=True)
    out = module.compute(rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
                         inputs=[{"question": r["question"], "choices": r["choices"]} for r in records])
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    rouge = [scorer.score(" ".join([r["question"], *r["choices"]]), r["rationale"])["rougeL"].fmeasure for r in records]
    tokenize = DefaultTokenizer(use_stemmer=True).tokenize  # the tokenizer of the ROUGE scorer above

    def longest_run(rationale: str, text: str) -> float:  # every start pair, by brute force
        r, x = tokenize(rationale), tokenize(text)
        runs = [next((k for k in range(min(len(r) - i, len(x) - j)) if r[i + k] != x[j + k]),
                     min(len(r) - i, len(x) - j)) for i in range(len(r)) for j in range(len(x))]
        return max(runs, default=0) / len(r) if r else 0.0

    copied = [longest_run(r["rationale"], " ".join([r["question"], *r["choices"]])) for r in records]
    z = [(np.asarray(out["scores"]) - 0.0) / 1.0, (np.log1p([len(r["rationale"].split()) for r in records]) - 1.0) / 0.5,
         (np.asarray(rouge) - 0.2) / 0.1, (np.asarray(copied) - 0.3) / 0.2]
    expected = 0.7 * z[0] - 0.3 * z[1] + 0.4 * z[2] + 0.25 * z[3] + 0.1
    assert out["calibrated_scores"] == pytest.approx(expected.tolist(), abs=1e-6)
    refused = Calibration(**{**calibration.to_dict(), "features": ["rev", "length", "rouge_l", "copied_span"]})
    refused.save(tmp_path / "refused.json")
    assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir",
                 str(tmp_path / "b2"), "--calibration", str(tmp_path / "refused.json"), "--force"]) == 2
    assert "calibration reads ['rev'], which a larev bundle cannot compute" in capsys.readouterr().err


def test_a_calibration_reading_the_explanation_lm_carries_it_into_a_bundle(tiny_run: Path, judged_file: Path,
                                                                           tmp_path: Path, capsys) -> None:
    """The explanation language model needs the run's training explanations; the calibration carries them,
    so a bundle's calibrated score equals the calibration applied to the run's own explanation_lm scores."""
    from larev_hf.hub import EvaluatorBundle
    from larev_hf.scores.calibration import Calibration

    human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["larev", "explanation_lm"],
                   calibrate=["larev", "explanation_lm"], calibration_fit="agreement", half="held", n_boot=20)
    calibration = Calibration.load(tmp_path / "h" / "calibration.json")
    run = Run.load(tiny_run, progress=False)
    state = calibration.text_models["explanation_lm"]
    assert state["explanations"] == [r["rationale"] for r in run.split_records("train")]
    settings = run.config.method_settings(ExplanationLMSettings)
    assert (state["order"], state["copy"]) == (settings.explanation_lm_order, settings.explanation_lm_copy)
    assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir",
                 str(tmp_path / "bundle"), "--calibration", str(tmp_path / "h" / "calibration.json"), "--force"]) == 0
    records = run.split_records("test")[:6]
    texts = [r["rationale"] for r in records][:3] + ["the answer is " + r["label"] for r in records][3:]
    out = EvaluatorBundle.from_pretrained(tmp_path / "bundle").score(texts, [r["label"] for r in records], records)
    own = get_method("explanation_lm").pointwise(run, records, {"r": texts}, {})["r"]
    assert out.calibrated == pytest.approx(calibration({"larev": out.scores, "explanation_lm": own}).tolist())
    stripped = Calibration(**{**calibration.to_dict(), "text_models": {}})
    assert "text_models" not in stripped.to_dict()  # readable by a larev-hf that predates the key
    with pytest.raises(ValueError, match="carries no explanation language model"):
        from larev_hf.hub.scoring import calibrated_scores

        calibrated_scores(stripped, "larev", out.scores, records)
    stripped.save(tmp_path / "stripped.json")  # refused at export, not at the first score
    assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir",
                 str(tmp_path / "b2"), "--calibration", str(tmp_path / "stripped.json"), "--force"]) == 2
    assert "calibration reads ['explanation_lm'] but carries no text_models" in capsys.readouterr().err
