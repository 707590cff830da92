"""LAREV-NI: Φ_NI's training environments, and what its score does by construction — no rationale scores exactly 0,
and a rationale scores the same whichever label it states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from larev_hf.io import read_json, read_jsonl

PREMISE, HYPOTHESIS = "A man rides a bike down a wet street .", "A man is outdoors ."


@pytest.fixture(scope="module")
def ni_run(data_dir: Path, tmp_path_factory) -> Path:
    """A small LAREV-NI run on e-SNLI (its baselines state the label verbatim); too small to trust."""
    from larev_hf.pipeline import Run, RunConfig

    output = tmp_path_factory.mktemp("ni-run")
    config = RunConfig(method="larev_ni", dataset="esnli", data_dir=str(data_dir / "esnli"), max_train_examples=40,
                       max_eval_examples=12, num_train_epochs=1.0, n_boot=20, leakage_term="verbalization")
    Run(config, output, progress=False).execute()
    return output


@pytest.mark.slow
def test_phi_ni_trains_on_the_uninformative_environment_and_the_report_has_its_terms(ni_run: Path) -> None:
    weights = read_json(ni_run / "models" / "phi_ni" / "larev_weights.json")
    assert weights["environments"] == ["original", "mask", "antonym", "uninformative"]
    assert weights["uninformative_kinds"] == ["empty", "label", "copy", "other_instance"]
    report = read_json(ni_run / "report.json")
    assert set(report["methods"]) == {"larev_ni"} and "phi_ni" in report["accuracy"]
    rows = [row for _, row in read_jsonl(ni_run / "scores" / "test_scores.jsonl")]
    gold = np.array([row["larev_ni/gold"] for row in rows])
    reference = np.array([row["log_p_reference_ni"] for row in rows])
    # the reference is a log-probability, and no score exceeds what the input alone leaves to learn: −log p(y | ∅ ⊕ b̃)
    assert (reference <= 0).all() and (gold <= -reference + 1e-6).all()


@pytest.mark.slow
def test_no_rationale_scores_zero_and_the_stated_label_changes_nothing(ni_run: Path, tmp_path: Path) -> None:
    from larev_hf.hub import EvaluatorBundle

    bundle = EvaluatorBundle.from_run(ni_run, "larev_ni")
    rows = [("", "entailment"), ("The answer is entailment .", "entailment"),
            ("The answer is contradiction .", "entailment"), ("The answer is neutral .", "entailment"),
            ("a street is outdoors , so he is outdoors .", "entailment"),
            ("a street is outdoors , so he is outdoors . This is entailment .", "entailment"),
            ("a street is outdoors , so he is outdoors . This is neutral .", "entailment"),
            ("The text supports the conclusion .", "entailment"),
            ("The hypothesis says that a man is outdoors .", "entailment"),
            ("a street is outdoors , so he is outdoors . Two dogs play in the snow .", "entailment")]
    inputs = [{"premise": PREMISE, "hypothesis": HYPOTHESIS}] * len(rows)
    scores = bundle.score([r for r, _ in rows], [y for _, y in rows], inputs).scores
    assert scores[0] == pytest.approx(0.0, abs=1e-6)  # τ(∅) ⊕ b̃ is the reference's own input
    # a bare label statement is dropped (scoring's default): it scores exactly as no rationale, whichever label
    assert np.allclose(scores[1:4], 0.0, atol=1e-6)
    # appended to an explanation it changes nothing
    assert scores[5] == pytest.approx(scores[4], abs=1e-6) == pytest.approx(scores[6], abs=1e-6)
    # a sentence about nothing in the input, and a copy of the input, add nothing: exactly 0, and nothing appended
    assert np.allclose(scores[7:9], 0.0, atol=1e-6)
    assert scores[9] == pytest.approx(scores[4], abs=1e-6)
    # the same score through the saved bundle (the scorer reads its setting from the bundle's training record)
    saved = bundle.save_pretrained(tmp_path / "b")
    # the card says what this score's sign means, not the generic sentence of a score against Φ_base
    assert "0 means nothing new (no rationale, a bare label statement, a copy of the input: exactly 0)" in (saved / "README.md").read_text()
    loaded = EvaluatorBundle.from_pretrained(saved)
    assert np.allclose(loaded.score([r for r, _ in rows], [y for _, y in rows], inputs).scores, scores, atol=1e-5)


def test_bundles_that_record_no_copy_or_grounding_setting_are_scored_without_them() -> None:
    from larev_hf.methods.new_information import NewInformationInputs, NewInformationSettings

    record = {"task": "nli", "premise": PREMISE, "hypothesis": HYPOTHESIS, "label": "entailment",
              "choices": ["entailment", "neutral", "contradiction"]}
    text = "The hypothesis says that a man is outdoors . It is clear ."
    old = NewInformationInputs.from_settings("M", {"mask_rationale_labels": True})
    assert old.rationale(text, record) == text  # as the bundle was trained and measured
    new = NewInformationInputs.from_settings("M", {"input_copies": "mask", "ungrounded_sentences": "drop"})
    assert new.rationale(text, record) == ""
    assert NewInformationInputs.from_settings("M", {"input_copies": "mask", "ungrounded_sentences": "keep"}
                                              ).rationale(text, record) == "The hypothesis says that M . It is clear ."
    with pytest.raises(ValueError, match="--copy-run 0"):
        NewInformationSettings(copy_run=0).validate(None)
