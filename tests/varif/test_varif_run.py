"""VARIF end to end (larev_hf.varif.run), specificity from embeddings, the summaries and the hypotheses."""

from __future__ import annotations

import numpy as np
import pytest

from larev_hf.varif.measures import identity_aware
from larev_hf.varif.report import check_hypotheses, summarize_varif
from larev_hf.varif.settings import VarifSettings, generator_name
from larev_hf.varif.specificity import other_inputs, specificity_scores


def test_identical_texts_entail_each_other_without_asking_the_judge() -> None:
    asked: list[tuple[str, str]] = []

    def judge(premises, hypotheses):
        asked.extend(zip(premises, hypotheses, strict=True))
        return np.full(len(premises), 0.25)

    out = identity_aware(judge)(["same .", "a", "b "], ["same .", "c", "b"])
    np.testing.assert_allclose(out, [1.0, 0.25, 1.0])
    assert asked == [("a", "c")]


def test_other_inputs_never_include_the_example_and_are_distinct() -> None:
    others = other_inputs(30, 10, seed=4)
    assert others.shape == (30, 10)
    for i, row in enumerate(others):
        assert i not in row and len(set(row)) == 10 and row.max() < 30
    np.testing.assert_array_equal(others, other_inputs(30, 10, seed=4))
    assert other_inputs(5, 50).shape == (5, 4)  # M is capped at n − 1
    with pytest.raises(ValueError, match="at least 2"):
        other_inputs(1, 3)


def test_specificity_from_embeddings_matches_a_hand_count() -> None:
    """A copy of its own input is specific (S = 1); one shared vector is as close to any input (ties: S = 0 here,
    since the inputs are orthogonal and it matches none better)."""
    inputs = np.eye(4)
    own = inputs.copy()
    shared = np.tile(np.full(4, 0.5), (4, 1))
    others = other_inputs(4, 3, seed=0)
    np.testing.assert_allclose(specificity_scores(own, inputs, others), 1.0)
    np.testing.assert_allclose(specificity_scores(shared, inputs, others), 0.0)
    # example 0 points between its own input and input 1: beats 2 and 3, ties 1
    mixed = own.copy()
    mixed[0] = np.array([1.0, 1.0, 0.0, 0.0]) / np.sqrt(2)
    assert specificity_scores(mixed, inputs, others)[0] == pytest.approx(2 / 3)


def test_generator_names() -> None:
    assert [generator_name(s) for s in ("gold", "tfidf:3", "hf:org/para-model", "mine=jsonl:/x/y.jsonl",
                                        "jsonl:/a/b/llm_rationales.jsonl")] == \
        ["gold", "tfidf3", "hf-para-model", "mine", "llm_rationales"]


def _rows(n: int, robust: float | None, info: float, info_unmasked: float, spec: float) -> list[dict]:
    rng = np.random.default_rng(0)
    return [{"R": robust, "I": info + 0.01 * rng.standard_normal(), "I_unmasked": info_unmasked, "S": spec,
             "n_perturbations": 3,
             "d_correct": True, "d_masked_correct": False, "h1_correct": True} for _ in range(n)]


def test_summary_frontier_and_hypotheses_on_constructed_methods() -> None:
    scores = {
        "gold": _rows(40, None, 1.0, 1.1, 0.95),
        "self_rationalizer": _rows(40, 0.7, 0.6, 0.7, 0.9),
        "pseudo_specific": _rows(40, 0.8, 0.2, 0.2, 0.8),
        "vacuous": _rows(40, 1.0, 0.0, 0.0, 0.5),
        "leak": _rows(40, 1.0, 0.05, 1.5, 0.5),
    }
    base = [{"h0_correct": i % 2 == 0} for i in range(40)]
    report = summarize_varif(scores, base, VarifSettings(n_boot=200))
    methods = report["methods"]
    assert methods["gold"]["R"]["mean"] is None and not methods["gold"]["regenerable"]
    assert methods["vacuous"]["I_tilde"]["mean"] < 0.01
    assert methods["vacuous"]["VARIF"]["mean"] == pytest.approx(0.5 * methods["vacuous"]["H"]["mean"])
    # Ĩ = 1 − e^(−I) per example, then averaged
    assert methods["self_rationalizer"]["I_tilde"]["mean"] == pytest.approx(1 - np.exp(-0.6), abs=0.01)
    assert report["frontier"] == ["leak", "pseudo_specific", "self_rationalizer"]
    assert report["h0_accuracy"] == 0.5
    hyp = report["hypotheses"]
    assert hyp["H1"]["holds"] and hyp["H2"]["holds"] and hyp["H5"]["holds"]
    # a vacuous method whose S is as high as gold's breaks H1, and a leak that masking does not lower breaks H2
    methods["vacuous"]["S"]["mean"] = 0.99
    methods["leak"]["masking_drop"] = {"mean": 0.0, "ci95": [-0.1, 0.1], "n": 40}
    broken = check_hypotheses(methods)
    assert not broken["H1"]["checks"]["S below gold's"] and not broken["H1"]["holds"]
    assert not broken["H2"]["holds"]
    methods["pseudo_specific"]["I_tilde"]["mean"] = 0.9
    assert not check_hypotheses(methods)["H5"]["I_tilde"]["holds"]


@pytest.mark.slow
def test_varif_run_end_to_end_resumes_and_adds_a_generator(data_dir, tmp_path) -> None:
    """A small e-SNLI comparison through every stage (the judge, the perturbations, LC-IG, S), then a rerun that
    skips everything, then one more generator that runs only its own stage."""
    from larev_hf.varif.run import VarifRun

    settings = VarifSettings(
        dataset="esnli", data_dir=str(data_dir / "esnli"), generators=["gold", "vacuous", "leak", "tfidf"],
        max_train_examples=48, max_eval_examples=10, nli_train_examples=48, nli_eval_examples=16, num_train_epochs=1.0, ig_steps=4,
        other_inputs=5, n_boot=50)
    run = VarifRun(settings, tmp_path / "varif", progress=False)
    report = run.execute()
    assert set(report["methods"]) == {"gold", "vacuous", "leak", "tfidf"}
    vacuous = report["methods"]["vacuous"]
    assert vacuous["R"]["mean"] == pytest.approx(1.0)  # one text, whatever the paraphrase
    assert report["methods"]["gold"]["R"]["mean"] is None
    assert (tmp_path / "varif" / "frontier.png").stat().st_size > 0
    assert "Hypotheses" in (tmp_path / "varif" / "varif_report.md").read_text()
    rerun = VarifRun(settings, tmp_path / "varif", progress=False)
    rerun.execute()
    assert rerun.runner.timings == {}
    more = VarifRun(VarifSettings(**{**settings.__dict__, "generators": [*settings.generators, "circular"]}),
                    tmp_path / "varif", progress=False)
    report = more.execute()
    assert list(more.runner.timings) == ["generator-circular"]
    assert "circular" in report["methods"]
    with pytest.raises(ValueError, match="different settings"):
        VarifRun(VarifSettings(**{**settings.__dict__, "mask_share": 0.5}), tmp_path / "varif", progress=False).execute()
