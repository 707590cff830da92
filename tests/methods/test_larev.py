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
