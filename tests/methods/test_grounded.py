"""The grounded evaluator's environments, the ``label_only`` family and per-label figures."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from larev_hf.data import load_examples
from larev_hf.io import read_json, read_jsonl
from larev_hf.leakage import GROUNDING_ENVIRONMENTS, grounding_rationales
from larev_hf.leakage.environments import word_shuffle
from larev_hf.meta import build_suite_with_skips
from larev_hf.meta.report import by_label_aucs
from larev_hf.meta.stats import auc
from larev_hf.scores.stats import summarize_by_label


@pytest.fixture(scope="module")
def esnli(data_dir: Path) -> list[dict]:
    return load_examples("esnli", str(data_dir / "esnli"), "test", max_examples=60).to_list()


def test_grounding_rationales_come_from_elsewhere_or_lose_their_order(esnli: list[dict]) -> None:
    rows = grounding_rationales(esnli, seed=0)
    by_text = {record["rationale"] for record in esnli}
    for record, row in zip(esnli, rows, strict=True):
        assert set(row) == set(GROUNDING_ENVIRONMENTS)
        assert row["other_instance"] != record["rationale"] and row["other_instance"] in by_text
        words = record["rationale"].split()
        if len(set(words)) > 1:
            assert Counter(row["word_shuffle"].split()) == Counter(words) and row["word_shuffle"] != record["rationale"]
    # any label: the other instance's label differs from this one's as often as chance says, not never
    label_of = {record["rationale"]: record["label"] for record in esnli}
    different = np.mean([label_of[row["other_instance"]] != record["label"] for record, row in zip(esnli, rows, strict=True)])
    assert 0.4 < different < 0.9
    assert grounding_rationales(esnli, seed=0) == rows and grounding_rationales(esnli, seed=1) != rows


def test_word_shuffle_keeps_a_single_word_and_errors_on_one_text() -> None:
    assert word_shuffle("yes", random.Random(0)) == "yes"
    same = [{"id": str(k), "rationale": "the same ."} for k in range(3)]
    with pytest.raises(ValueError, match="two different training rationales"):
        grounding_rationales(same)


def test_label_only_states_the_label_and_nothing_of_the_input(esnli: list[dict]) -> None:
    rows, skipped = build_suite_with_skips(esnli, families=["gold", "label_only"], seed=0)
    label_only = [row for row in rows if row["family"] == "label_only"]
    assert len(label_only) == len(esnli) and not skipped["label_only"]
    by_id = {record["id"]: record for record in esnli}
    for row in label_only:
        record = by_id[row["id"]]
        assert record["label"] in row["rationale"] and row["rationale"].endswith(" .")
        content = {w for w in record["premise"].lower().split() if len(w) > 3}
        assert not content & set(row["rationale"].split())
    assert len({row["template_id"] for row in label_only}) >= 4


def test_summarize_by_label_is_each_labels_own_mean_and_win_rate() -> None:
    scores = {"gold": np.array([1.0, 2.0, 0.0, 5.0]), "leaky": np.array([0.0, 3.0, 1.0, 1.0])}
    labels = ["a", "a", "b", "b"]
    out = summarize_by_label(scores, labels)
    assert out["a"]["n"] == 2 and out["a"]["separations"]["gold_minus_leaky"] == pytest.approx((1 - 1) / 2)
    assert out["b"]["separations"]["gold_minus_leaky"] == pytest.approx((-1 + 4) / 2)
    assert out["a"]["win_rate"]["leaky"] == 0.5 and out["b"]["win_rate"]["leaky"] == 0.5


def test_by_label_aucs_restrict_both_groups_to_the_label() -> None:
    rows = [{"id": i, "family": f, "score": s} for i, f, s in [
        ("1", "gold", 1.0), ("2", "gold", 2.0), ("3", "gold", 0.0), ("1", "x", 3.0), ("2", "x", 0.0), ("3", "x", -1.0)]]
    labels = {"1": "e", "2": "e", "3": "c"}
    out = by_label_aucs(rows, labels)
    assert out["e"]["x"]["auc"] == pytest.approx(auc([1.0, 2.0], [3.0, 0.0]))
    assert out["e"]["x"]["win_rate"] == 0.5 and out["e"]["x"]["n"] == 2
    assert out["c"]["x"]["auc"] == 1.0 and out["c"]["x"]["n"] == 1


@pytest.mark.slow
def test_grounded_evaluator_trains_on_the_larger_groups(tmp_path: Path) -> None:
    from larev_hf.pipeline import Run, RunConfig

    config = RunConfig(method="larev,larev_grounded", dataset="synthetic", max_train_examples=48, max_eval_examples=12,
                       num_train_epochs=1.0, n_boot=20)
    report = Run(config, tmp_path, progress=False).execute()
    weights = read_json(tmp_path / "models" / "phi_grounded" / "larev_weights.json")
    assert weights["environments"] == ["original", "mask", "antonym", *GROUNDING_ENVIRONMENTS]
    assert weights["grounding_target"] == "label" and weights["grounding_baseline"] == "mask"
    assert read_json(tmp_path / "models" / "phi_la" / "larev_weights.json")["environments"] == [
        "original", "mask", "antonym"]
    assert set(report["methods"]) == {"larev", "larev_grounded"}
    assert report["methods"]["larev"]["absolute"] != report["methods"]["larev_grounded"]["absolute"]
    labels = {record["label"] for _, record in read_jsonl(tmp_path / "data" / "test.jsonl")}
    assert set(report["methods"]["larev_grounded"]["by_label"]) == labels


def test_an_unsure_environment_gets_one_row_per_label_and_its_risk_is_the_uniform_cross_entropy() -> None:
    from dataclasses import fields

    import torch

    from larev_hf.leakage import GROUNDING_TARGETS
    from larev_hf.methods.larev_grounded import GroundedSettings
    from larev_hf.modeling.input_formats import get_input_format
    from larev_hf.training.leakage_aware import environment_rows
    from larev_hf.training.losses import irm_penalty

    # the flag's choices (spelled out in the settings: the leakage package is not loaded for --help) are the table's
    target = next(f for f in fields(GroundedSettings) if f.name == "grounding_target")
    assert tuple(target.metadata["choices"]) == tuple(GROUNDING_TARGETS)

    records = [{"id": "a", "rationale": "r a", "label": "yes", "choices": ["yes", "no", "maybe"]},
               {"id": "b", "rationale": "r b", "label": "no", "choices": ["yes", "no", "maybe"]}]
    envs = [{"original": "b a", "mask": "m a", "word_shuffle": "m a", "rationales": {"word_shuffle": "a r"}},
            {"original": "b b", "mask": "m b", "word_shuffle": "m b", "rationales": {"word_shuffle": "b r"}}]
    names = ("original", "mask", "word_shuffle")
    fmt = get_input_format("larev")
    plain = environment_rows(records, envs, fmt, names)
    unsure = environment_rows(records, envs, fmt, names, unsure_environments=("word_shuffle",))
    assert len(plain) == 6 and len(unsure) == 10
    shuffled = [row for row in unsure if row["environment"] == 2]
    assert [(row["group_id"], row["label"]) for row in shuffled] == [
        (0, "yes"), (0, "no"), (0, "maybe"), (1, "yes"), (1, "no"), (1, "maybe")]
    assert {row["source"] for row in shuffled if row["group_id"] == 0} == {fmt.rationale_input("a r", "m a")}
    # the environment's risk is the mean NLL over its rows: −(1/K) Σ_k log p(k), the cross-entropy against a uniform
    # target, which equal probabilities minimise (one-token labels 0, 1, 2 over a 3-token vocabulary)
    labels = torch.tensor([[0], [1], [2]])
    environments = torch.zeros(3, dtype=torch.long)
    for logits, expected in ((torch.zeros(3, 1, 3), np.log(3)), (torch.tensor([2.0, 0.0, 0.0]).repeat(3, 1, 1), None)):
        _, risks, _ = irm_penalty(logits, labels, environments)
        log_p = torch.log_softmax(logits[0, 0], -1)
        assert float(risks[0]) == pytest.approx(float(-log_p.mean()), rel=1e-5)
        if expected is not None:
            assert float(risks[0]) == pytest.approx(expected, rel=1e-5)
        else:
            assert float(risks[0]) > np.log(3)
