"""LAREV as a method of a run: Φ_LA trained on the rationale-side environments."""

from __future__ import annotations

import torch


def test_larev_run_with_rationale_environments_trains_phi_la_on_five_environments(tmp_path):
    from larev_hf.io import read_json, read_jsonl
    from larev_hf.pipeline import Run, RunConfig

    torch.set_num_threads(1)
    config = RunConfig(method="larev", dataset="synthetic", max_train_examples=24, max_eval_examples=8,
                       num_train_epochs=1.0, n_boot=20, rationale_environments=True)
    run = Run(config, tmp_path, progress=False)
    run.execute(until="phi_la")
    from larev_hf.leakage import mask_token_of, rationale_environments

    rows = [row for _, row in read_jsonl(tmp_path / "leakage" / "train_environments.jsonl")]
    mask = mask_token_of(run.tokenizer())
    assert [row["rationales"] for row in rows] == [rationale_environments(r, mask, seed=config.training.seed)
                                                   for r in run.split_records("train")]
    assert read_json(tmp_path / "models" / "phi_la" / "larev_weights.json")["environments"] == [
        "original", "mask", "antonym", "rationale_mask", "rationale_swap"]


def test_the_verbalization_leakage_term_is_the_stated_answer_and_its_antonym_the_other_answer(tmp_path, data_dir):
    # StrategyQA's baselines state the answer ("…? yes."); IG from an all-zero input can miss the answer a model
    # falls back on, the verbalization term cannot
    from larev_hf.io import read_json, read_jsonl
    from larev_hf.pipeline import Run, RunConfig

    torch.set_num_threads(1)
    config = RunConfig(method="larev", dataset="strategyqa", data_dir=str(data_dir / "strategyqa"),
                       max_train_examples=16, max_eval_examples=4, num_train_epochs=1.0, n_boot=20,
                       leakage_term="verbalization")
    run = Run(config, tmp_path, progress=False)
    run.execute(until="environments")
    records = {r["id"]: r for r in run.split_records("train")}
    terms = [row for _, row in read_jsonl(tmp_path / "leakage" / "train_terms.jsonl")]
    assert len(terms) == 16 and {row["source"] for row in terms} == {"verbalization"}
    for row in terms:
        baseline = records[row["id"]]["baseline"]
        assert row["text"] == records[row["id"]]["label"] == baseline[row["start"]:row["end"]]
    assert {row["label"] for row in records.values()} == {"yes", "no"}
    for row in read_jsonl(tmp_path / "leakage" / "train_environments.jsonl"):
        row = row[1]
        label = records[row["id"]]["label"]
        other = "no" if label == "yes" else "yes"
        assert row["original"].endswith(f" {label}.") and row["antonym"].endswith(f" {other}.")
    assert read_json(tmp_path / "leakage" / "summary.json")["sources"] == {"verbalization": 16}
