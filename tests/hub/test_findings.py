"""Why a score: findings fire on constructed copies, label statements and bad input and not on a good explanation;
calibration contributions sum to the calibrated score; a bad file is refused before any model loads."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from larev_hf.cli import main
from larev_hf.evaluators import loading
from larev_hf.hub import EvaluatorBundle
from larev_hf.hub.config import read_bundle_config
from larev_hf.hub.console import format_explanation_table
from larev_hf.hub.findings import (
    FINDINGS,
    FindingThresholds,
    copied_runs,
    find,
    least_grounded_sentence,
    negation_toggles,
    word_order_margins,
)
from larev_hf.hub.inputs import build_records
from larev_hf.io import DataError, read_jsonl

PREMISE, HYPOTHESIS = "A man in a red jacket rides a bike down a wet street.", "A man is outdoors."
GOOD = "A street is outdoors, so someone riding down it is outdoors."
COPY = f"the first sentence says {PREMISE} and the second says {HYPOTHESIS}"
NLI = ("entailment", "neutral", "contradiction")


def record(rationale: str, label: str = "entailment") -> dict:
    [built] = build_records([rationale], [label], [{"premise": PREMISE, "hypothesis": HYPOTHESIS}], task="nli")
    return built


def names(rationale: str, **kwargs) -> list[str]:
    return names_with(rationale, FindingThresholds(), **kwargs)


def names_with(rationale: str, thresholds: FindingThresholds, **kwargs) -> list[str]:
    [found] = find([record(rationale)], thresholds, label_set=NLI, **kwargs)
    return [f.name for f in found]


# --------------------------------------------------------------------------- the text findings
def test_a_copy_of_the_input_is_named_with_its_span_share_and_field_and_a_good_explanation_is_not() -> None:
    [[finding]] = find([record(COPY)], FindingThresholds(), label_set=NLI)
    assert finding.name == "copies_input"
    assert finding.evidence["field"] == "premise" and "red jacket rides a bike" in finding.evidence["span"]
    assert finding.evidence["share"] > 0.6 and finding.evidence["per_field"]["hypothesis"] > 0
    assert "copies the input" in finding.short()
    assert names(HYPOTHESIS) == ["copies_input"]  # the hypothesis restated: a whole (short) field copied
    # the hypothesis restated in a template, with nothing from the premise; an explanation that links the premise
    # to the same claim is not a copy
    assert names(f"The hypothesis says that {HYPOTHESIS.lower()}") == ["copies_input"]
    assert names("A man riding a bike down a street is outdoors.") == []
    assert names(GOOD) == []
    assert copied_runs(GOOD, record(GOOD), 4)["share"] < 0.3


def test_a_label_statement_is_named_with_its_words_and_an_explanation_without_the_label_is_not() -> None:
    [[finding]] = find([record("The answer is entailment.")], FindingThresholds(), label_set=NLI)
    assert finding.name == "states_label" and finding.evidence["words"] == ["entailment"]
    assert finding.evidence["verbalization"] == "implies"  # the leakage term of the template baseline
    assert "states_label" in names(f"{GOOD} The answer is Entailment.")  # the gold with a leak (gold_leaky)
    assert "states_label" not in names(GOOD)


def test_findings_read_the_calibration_features_and_the_evaluator_where_given() -> None:
    thresholds = FindingThresholds()
    features = {"grounding": np.array([0.1, 0.9]), "explanation_lm": np.array([thresholds.explanation_lm - 1, -2.0])}
    found = find([record("Cats like warm sofas."), record(GOOD)], thresholds, label_set=NLI, features=features,
                 label_margin=[-thresholds.label_margin - 1.0, 1.0], read_label=["contradiction", "neutral"])
    assert [f.name for f in found[0]] == ["contradicts", "off_topic", "not_explanation"]  # strongest first
    assert found[0][0].evidence == {"reads": "contradiction", "margin": -thresholds.label_margin - 1.0}
    assert found[1] == []
    # without the features or the evaluator's margins, those findings are not guessed
    assert names("Cats like warm sofas.") == []


def test_a_sentence_that_names_nothing_of_the_input_is_named_with_that_sentence() -> None:
    padded = f"{GOOD} Many people have seen situations like this one."
    [[finding]] = find([record(padded)], FindingThresholds(), label_set=NLI)
    assert finding.name == "off_topic" and finding.evidence["sentence"] == "Many people have seen situations like this one."
    assert finding.evidence["sentence_grounding"] == 0.0 and "grounding" not in finding.evidence  # no feature given
    assert "Many people have seen" in finding.short()
    # two sentences, each about the input; one sentence, judged by the explanation's own grounding instead
    assert names(f"{GOOD} The man rides on a street.") == []
    assert least_grounded_sentence(GOOD, record(GOOD)) is None
    assert least_grounded_sentence(padded, record(padded)) == ("Many people have seen situations like this one.", 0.0)
    assert names(f"{GOOD} Nobody knows.") == []  # a clause too short to judge apart (sentence_words)
    # a sentence half about the input fires only under a threshold that allows it
    half = f"{GOOD} The man likes cold soup on a street."  # 2 of its 5 content stems in the input
    assert names(half) == [] and names_with(half, FindingThresholds(sentence_grounding=0.5)) == ["off_topic"]


def test_shuffled_words_are_named_by_their_word_order_and_the_explanation_in_its_own_order_is_not() -> None:
    corpus = ["a man riding a bike down a street is outdoors .", "a woman riding a horse down a road is outdoors .",
              "a dog running in a park is outdoors .", "a child playing in a field is outside ."] * 5
    state = {"explanations": corpus, "order": 3, "copy": 0.2}
    texts = ["A man riding a bike down a street is outdoors.", "street bike riding a man down a outdoors is."]
    margins = word_order_margins([record(t) for t in texts], state)
    assert margins[0] >= 0 > margins[1]  # its own order is the likeliest; a shuffle is beaten by another order
    assert np.isnan(word_order_margins([record("The man.")], state)[0])  # one content word: nothing to reorder
    thresholds = FindingThresholds(word_order=-0.1)
    found = find([record(t) for t in texts], thresholds, label_set=NLI, word_order=margins)
    assert found[0] == [] and [f.name for f in found[1]] == ["not_explanation"]
    assert found[1][0].evidence["word_order"] == margins[1] and "word order" in found[1][0].short()


def test_an_explanation_the_nli_judge_reads_as_another_label_contradicts_it() -> None:
    rows = [record(GOOD), record(GOOD)]
    thresholds = FindingThresholds(judge_log_prob=-3.0)
    found = find(rows, thresholds, judge_log_prob=[-3.2, -2.8], judge_read=["contradiction", "entailment"])
    assert [f.name for f in found[0]] == ["contradicts"] and found[1] == []
    assert found[0][0].evidence == {"judge_log_prob": -3.2, "judge_reads": "contradiction"}
    assert "the NLI judge reads contradiction, p(label) 0.04" in found[0][0].short()
    # without the judge's reading the finding reads the evaluator alone, as before
    assert find(rows, thresholds) == [[], []]


def test_an_explanation_whose_toggled_negation_reads_the_label_better_contradicts_it() -> None:
    assert negation_toggles("A man is not outdoors.") == ["A man is outdoors."]
    assert negation_toggles("A man is outdoors.") == ["A man is not outdoors."]
    thresholds = FindingThresholds()
    drifted = record("A street is not outdoors, so a man riding down it is outdoors.")
    found = find([drifted, record(GOOD)], thresholds, label_set=NLI, label_margin=[0.5, 0.5],
                 read_label=["neutral", "neutral"], negation_gain=[thresholds.negation_gain + 1, float("nan")],
                 negation_text=["A street is outdoors, so a man riding down it is outdoors.", None])
    assert [f.name for f in found[0]] == ["contradicts"] and found[1] == []
    assert found[0][0].evidence["negation_toggled"].startswith("A street is outdoors")
    assert "negation toggled" in found[0][0].short()
    # a gain under the threshold, with the given label read best, is no finding
    assert find([drifted], thresholds, label_set=NLI, label_margin=[0.5], read_label=["neutral"],
                negation_gain=[thresholds.negation_gain - 1], negation_text=["x"]) == [[]]


def test_a_restatement_inside_an_argument_of_its_own_is_not_a_copy_where_it_copies_little() -> None:
    argued = "we have no idea if the man is outdoors or not, he could be in a garage or in a shop all day"
    assert copied_runs(argued, record(argued), 5)["restates"] == "hypothesis"
    assert names(argued) == []  # the whole claim restated, but no run of it copied: under restate_share
    assert names_with(argued, FindingThresholds(restate_share=0.0)) == ["copies_input"]


def test_empty_whitespace_truncated_and_other_script_are_findings() -> None:
    records = [record(""), record("   \t"), record("long " * 5), record("Мужчина на улице, значит он снаружи.")]
    found = find(records, FindingThresholds(), label_set=NLI, tokens=[3, 3, 700, 12], max_tokens=512)
    assert [[f.name for f in row] for row in found] == [["empty"], ["whitespace"], ["truncated"], ["other_script"]]
    assert found[2][0].evidence == {"tokens": 700, "tokens_kept": 512}
    assert found[2][0].short() == "truncated (512 of 700 tokens kept)"


def test_thresholds_round_trip_and_unknown_keys_are_refused() -> None:
    thresholds = FindingThresholds(copy_share=0.7)
    assert FindingThresholds.from_dict(thresholds.to_dict()) == thresholds
    assert FindingThresholds.from_dict(None) == FindingThresholds()
    with pytest.raises(ValueError, match="unknown thresholds"):
        FindingThresholds.from_dict({"copy_shar": 0.5})


def test_the_console_shortens_a_long_rationale_and_says_how_long_it_was() -> None:
    long = "the street is wet and the man rides " * 430
    rows = [{"row": 1, "id": "a", "instance_id": None, "label": "entailment", "score": 0.1, "why": None,
             "rationale": long}]
    text = format_explanation_table(rows)
    assert len(text.splitlines()[1]) < 200 and f"({len(long.split())} words)" in text


# --------------------------------------------------------------------------- bad input, before any model loads
def test_empty_and_whitespace_rationales_are_refused_naming_every_row(tmp_path: Path) -> None:
    rows = [{"premise": PREMISE, "hypothesis": HYPOTHESIS, "label": "entailment", "rationale": r}
            for r in (GOOD, "", "  ", GOOD)]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    from larev_hf.hub.explanations import read_explanation_records

    with pytest.raises(DataError) as error:
        read_explanation_records(path, task="nli")
    message = str(error.value)
    assert "line 2: field 'rationale' (empty)" in message and "line 3: field 'rationale' (whitespace only)" in message
    assert "line 1" not in message and "--score-empty" in message
    assert len(read_explanation_records(path, task="nli", allow_empty=True)) == 4


def test_a_bad_file_is_refused_before_torch_is_imported_and_a_misspelt_name_suggests_the_nearest(
        tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"premise": PREMISE, "hypothesis": HYPOTHESIS, "label": "entailment",
                                "rationale": " "}) + "\n")
    code = ("import sys; from larev_hf.cli import main; "
            f"rc = main(['--quiet', 'evaluate', '--evaluator', 'esnli', '--data-file', {str(path)!r}, "
            f"'--output-dir', {str(tmp_path / 'out')!r}]); print(rc, 'torch' in sys.modules)")
    env = {"LAREV_HF_EVALUATORS": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**env, "PYTHONPATH": str(
        Path(__file__).resolve().parents[2])}, timeout=120)
    assert done.stdout.split() == ["2", "False"], done.stderr  # refused, no model (nor torch) loaded, no build started
    assert "line 1: field 'rationale' (whitespace only)" in done.stderr
    assert not (tmp_path / "cache").exists() and time.perf_counter() - started < 60
    with pytest.raises(ValueError, match=r"no evaluator 'esnlii'.*did you mean 'esnli'\?"):
        loading.check_evaluator_name("esnlii")
    loading.check_evaluator_name("someone/esnli-bundle")  # a Hub repo id is left to the Hub


# --------------------------------------------------------------------------- a built bundle
@pytest.fixture(scope="module")
def calibrated_bundle(data_dir: Path, tmp_path_factory) -> Path:
    """A small LAREV run on e-SNLI, bundled with a calibration fitted on its test rows' gold (acceptable) against
    their label statements and input copies (not), over the features of the `esnli` recipe that need no state."""
    from larev_hf.hub.scoring import calibration_columns
    from larev_hf.pipeline import Run, RunConfig
    from larev_hf.scores.calibration import Calibration, fit_calibration

    output = tmp_path_factory.mktemp("nli-run")
    config = RunConfig(method="larev", dataset="esnli", data_dir=str(data_dir / "esnli"), max_train_examples=48,
                       max_eval_examples=12, num_train_epochs=1.0, n_boot=50)
    run = Run(config, output, progress=False)
    run.execute()
    bundle = EvaluatorBundle.from_run(output, "larev")
    test = run.split_records("test")
    rows = [{**{k: v for k, v in r.items() if k != "id"}, "instance_id": r["id"], "rationale": text} for r in test
            for text in (r["rationale"], f"The answer is {r['label']}.", f"{r['premise']} {r['hypothesis']}")]
    records = bundle.scoring.records([r["rationale"] for r in rows], [r["label"] for r in rows], rows)
    features = ["larev", "copied_span", "grounding", "copy_excess", "premise_link"]
    stub = Calibration(features, [0.0] * 5, [1.0] * 5, [0.0] * 5, 0.0)
    columns = calibration_columns(stub, "larev", bundle.scoring.score(records).scores, records)
    calibration, _ = fit_calibration(columns, [1.0, 0.0, 0.0] * len(test), [r["instance_id"] for r in rows], features,
                                     caps=[None, 0.5, None, None, None])
    bundle.config.calibration = calibration.to_dict()
    return bundle.save_pretrained(tmp_path_factory.mktemp("nli-bundle") / "b")


def test_contributions_sum_to_the_calibrated_score_on_every_row_of_a_build(calibrated_bundle: Path) -> None:
    bundle = EvaluatorBundle.from_pretrained(calibrated_bundle)
    assert read_bundle_config(calibrated_bundle).findings == FindingThresholds().to_dict()  # written at export
    records = _every_row(bundle)
    result = bundle.scoring.score(records, check_labels=True)
    parts = np.stack(list(result.contributions.values()), axis=1)
    assert list(result.contributions) == bundle.config.calibration["features"]
    np.testing.assert_allclose(parts.sum(axis=1) + result.calibration_intercept, result.calibrated, atol=1e-6)
    assert np.abs(parts).max() > 0.1  # the features do move the score
    out = result.to_dict()
    assert abs(sum(out["contributions"][0].values()) + out["calibration_intercept"] - out["calibrated_scores"][0]) \
        < 1e-6
    assert len(out["findings"]) == len(records) and len(result.label_margin) == len(records)
    assert set(result.read_label) <= set(bundle.config.label_set)
    # every label statement has a negation to toggle ("is" → "is not"); no explanation LM in this calibration
    assert len(result.negation_gain) == len(records) and np.isfinite(result.negation_gain[2::3]).all()
    assert result.negation_text[2].startswith("The answer is not") and result.word_order is None


def _every_row(bundle: EvaluatorBundle) -> list[dict]:
    """Every gold row of the build's data (train and test splits), each also as an input copy and a label statement."""
    rows = []
    for split in ("train", "test"):
        for r in _split_rows(bundle, split):
            for text in (r["rationale"], f"{r['premise']} {r['hypothesis']}", f"The answer is {r['label']}."):
                rows.append({**r, "rationale": text})
    return bundle.scoring.records([r["rationale"] for r in rows], [r["label"] for r in rows], rows)


def _split_rows(bundle: EvaluatorBundle, split: str) -> list[dict]:
    from larev_hf.data import load_examples

    run = bundle.config.training
    n = run["max_train_examples"] if split == "train" else run["max_eval_examples"]
    return [{k: v for k, v in dict(r).items() if k != "id"}
            for r in load_examples("esnli", run["data_dir"], split, max_examples=n)]


def test_evaluate_writes_findings_contributions_and_counts(calibrated_bundle: Path, tmp_path: Path, capsys) -> None:
    rows = [{"instance_id": "bike", "premise": PREMISE, "hypothesis": HYPOTHESIS, "label": "entailment",
             "rationale": text} for text in (GOOD, "The answer is entailment.", COPY, "", "wet " * 800)]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    assert main(["--quiet", "evaluate", "--evaluator", str(calibrated_bundle), "--data-file", str(path),
                 "--output-dir", str(out), "--force"]) == 2  # the empty rationale, refused
    assert "line 4: field 'rationale' (empty)" in capsys.readouterr().err
    assert main(["--quiet", "evaluate", "--evaluator", str(calibrated_bundle), "--data-file", str(path),
                 "--output-dir", str(out), "--force", "--score-empty"]) == 0
    printed = capsys.readouterr().out
    scored = [row for _, row in read_jsonl(out / "scores.jsonl")]
    # (this tiny evaluator reads every explanation as another label: "contradicts" may come first)
    assert "states_label" in scored[1]["findings"] and "copies_input" in scored[2]["findings"]
    assert "copies_input" not in scored[0]["findings"] and "states_label" not in scored[0]["findings"]
    assert scored[3]["findings"] == ["empty"] and "truncated" in scored[4]["findings"]
    assert scored[4]["rationale"] == "wet " * 800  # the file keeps it whole
    truncated = next(f for f in scored[4]["finding_evidence"] if f["name"] == "truncated")
    assert truncated["tokens"] > truncated["tokens_kept"]
    for row in scored:
        assert abs(sum(row["contributions"].values()) + row["calibration_intercept"] - row["calibrated"]) < 1e-6
    assert "1 truncated" in printed and "moved by" in printed
    assert max(len(line) for line in printed.splitlines()) < 400  # the 800-word rationale is shortened
    report = (out / "report.md").read_text()
    assert "## Findings" in report and f"| {FINDINGS['states_label']} | 1 |" in report


def test_a_raw_score_at_the_baselines_ceiling_is_shown_as_such_and_counted() -> None:
    from larev_hf.hub.console import summary_line
    from larev_hf.hub.explanations import explanation_table

    records = [record(GOOD), record("The answer is entailment.")]
    found = find(records, FindingThresholds(), label_set=NLI)
    rows = explanation_table(records, [0.0, 1.2], [0.3, 1.5], [0.4, -1.3], findings=found,
                             contributions={"larev": [0.1, 0.2], "copied_span": [-0.9, 0.05]},
                             raw_informative=[False, True])
    text = format_explanation_table(rows)
    first, second = text.splitlines()[1:3]
    assert first.count("ceiling") == 2 and "+0.300" not in first  # raw and label-centred alike
    assert "+1.200" in second and "states the label ('entailment')" in second
    assert "copied span of the input: -0.90" in first  # the largest contribution names what moved the score
    assert summary_line(rows) == ("of 2 explanations: 1 states the label; raw score at the baseline's ceiling for 1 "
                                  "(read the calibrated score there)")


def test_a_bundle_carries_an_nli_judge_that_reads_the_explanation(calibrated_bundle: Path, explanation_judge: Path,
                                                                  tmp_path: Path) -> None:
    """The judge travels with the bundle (checked like its models, outside the hashcode: it changes no score), and
    *contradicts the label* reads its log-probability of the given label at the bundle's threshold."""
    import dataclasses
    import shutil

    from larev_hf.training.nli_judge import NLIJudge

    plain = EvaluatorBundle.from_pretrained(calibrated_bundle)
    saved = plain.with_nli_judge(explanation_judge).save_pretrained(tmp_path / "judged")
    bundle = EvaluatorBundle.from_pretrained(saved)
    assert bundle.config.judge_dir == "nli_judge" and bundle.hashcode == plain.hashcode
    assert bundle.config.nli_judge["metrics"]["reads_explanations"] is True
    records = bundle.scoring.records([GOOD, "The answer is entailment.", COPY], ["entailment", "neutral", "entailment"],
                                     [{"premise": PREMISE, "hypothesis": HYPOTHESIS}] * 3)
    expected, _ = NLIJudge.from_pretrained(explanation_judge).label_log_probs(records)
    for threshold, fires in ((0.0, True), (-np.inf, False)):  # log p ≤ 0 always; ≤ −∞ never
        bundle.config = dataclasses.replace(bundle.config, findings={
            **FindingThresholds().to_dict(), "judge_log_prob": threshold, "label_margin": 1e9, "negation_gain": 1e9})
        result = bundle.scoring.score(records, check_labels=True)
        np.testing.assert_allclose(result.judge_log_prob, expected, atol=1e-6)
        assert set(result.judge_read) <= set(bundle.config.label_set)
        judged = [next((f for f in row if f.name == "contradicts"), None) for row in result.findings]
        assert all((f is not None) == fires for f in judged)
        if fires:
            assert judged[0].evidence["judge_log_prob"] == pytest.approx(expected[0])
            assert judged[0].short().startswith("contradicts the label (the NLI judge reads ")
    # a changed judge file fails the check at load, naming it
    weights = next(p for p in (saved / "nli_judge").iterdir() if p.suffix == ".safetensors")
    weights.write_bytes(weights.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ValueError, match=r"nli_judge/model\.safetensors has SHA-256"):
        EvaluatorBundle.from_pretrained(saved)
    # a judge trained without explanations is refused, and so is a directory that is not a judge
    blind = tmp_path / "blind"
    shutil.copytree(explanation_judge, blind)
    metrics = json.loads((blind / "nli_metrics.json").read_text())
    (blind / "nli_metrics.json").write_text(json.dumps({**metrics, "reads_explanations": False}))
    with pytest.raises(ValueError, match="trained without explanations"):
        plain.with_nli_judge(blind)
    with pytest.raises(FileNotFoundError, match="no config.json and nli_metrics.json"):
        plain.with_nli_judge(tmp_path)
