"""The least time a full ``larev-hf run --method rev,larev`` can take on this machine: measured per-row costs × work.

Can the pretrained evaluator (``minilm2minilm``) can run full e-SNLI REV+LAREV in ≤ 30 minutes on
2 cores and score ≥ 500 examples/s? Before changing the pipeline, this measures the floor its computation sets:

- a **training step** per row (forward + backward + AdamW on length-sorted batches of real e-SNLI Φ inputs, r ⊕ b,
  so almost no padding), with all weights trained and with the word embeddings frozen (``--freeze`` variants);
- **Integrated Gradients** per training baseline through the library's own routine (length-sorted batches, frozen
  weights, ``n_steps`` interpolations, each a forward and a backward to the input embeddings);
- the **forward-pass limit** of scoring (the scoring benchmark's pre-padded, length-sorted forward alone) and
  ``score_labels`` itself, in fp32 and with dynamic int8 linear layers (``torch.ao.quantization.quantize_dynamic``),
  with how far int8 moves the per-example log-probabilities.

Then the floor of a full run = Σ stage rows × per-row cost, with the work of the run's settings: Φ_base and Φ each
``epochs × n_train`` rows, Φ_LA ``epochs × 3 × n_train`` (E1/E2/E3), IG ``n_train`` baselines. Scoring is left out
of the sum (the floor is a lower bound). Nothing here trains a useful model; the weights only need the right shapes.

    python benchmarks/compute_floor.py --backbone minilm2minilm --threads 2 \
        --output benchmarks/results/compute_floor_minilm.json

Internals: ``larev_hf.leakage.attribution``'s ``integrated_gradients_word_scores``, ``larev_hf.modeling.backbones``'
``freeze_word_embeddings`` and ``larev_hf.modeling.scoring``'s ``decoder_inputs``: it measures the least compute each
stage's own step needs.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from bench_scoring import forward_limit_loop, length_sorted_batches
from scipy.stats import spearmanr

from larev_hf.data import add_baselines, add_variants, load_examples, make_baseline_builder
from larev_hf.io import write_json
from larev_hf.leakage import IGSettings
from larev_hf.leakage.attribution import integrated_gradients_word_scores
from larev_hf.modeling import (
    build_model,
    build_tokenizer,
    get_input_format,
    load_evaluator,
    score_labels,
    training_defaults,
)
from larev_hf.modeling.backbones import freeze_word_embeddings
from larev_hf.modeling.scoring import decoder_inputs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "esnli"


def train_seconds_per_row(model, tokenizer, inputs, labels, batch_size: int, freeze: bool, steps: int) -> float:
    """Seconds per row of a training step (forward, backward, AdamW) on length-sorted batches, after one warm-up."""
    model.train()
    frozen = freeze_word_embeddings(model) if freeze else []
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    batches = length_sorted_batches(tokenizer, inputs, labels, batch_size)[: steps + 1]
    elapsed, rows_done = 0.0, 0
    for k, (input_ids, attention_mask, label_ids) in enumerate(batches):
        start = time.perf_counter()
        loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=label_ids,
                     decoder_input_ids=decoder_inputs(model, label_ids)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if k:  # the first step warms up allocators and kernels
            elapsed += time.perf_counter() - start
            rows_done += len(input_ids)
    for parameter in frozen:
        parameter.requires_grad_(True)
    model.eval()
    return elapsed / rows_done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="minilm2minilm")
    parser.add_argument("--model", default=None, help="a trained evaluator directory for the scoring part "
                        "(int8 moves a trained model's log-probabilities differently from random weights)")
    parser.add_argument("--data-dir", default=str(DATA))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-train", type=int, default=9842, help="training rows of the run the floor is for")
    parser.add_argument("--n-test", type=int, default=2000)
    parser.add_argument("--epochs", type=float, default=None, help="default: the backbone's training default")
    parser.add_argument("--batch-size", type=int, default=None, help="default: the backbone's training default")
    parser.add_argument("--ig-steps", type=int, default=20)
    parser.add_argument("--sample", type=int, default=320, help="rows timed per measurement")
    parser.add_argument("--output", default="benchmarks/results/compute_floor.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    warnings.filterwarnings("ignore", message=".*quantiz.*")

    defaults = training_defaults(args.backbone)
    epochs = args.epochs or defaults["num_train_epochs"]
    batch_size = args.batch_size or int(defaults["batch_size"])
    fmt = get_input_format("larev")
    train = add_baselines(load_examples("esnli", args.data_dir, "train", max_examples=args.sample, seed=0),
                          make_baseline_builder("template", seed=0))
    phi_inputs = [fmt.rationale_input(r, b) for r, b in zip(train["rationale"], train["baseline"], strict=True)]
    labels = list(train["label"])
    tokenizer = build_tokenizer(args.backbone, phi_inputs + labels)
    model = build_model(args.backbone, tokenizer, seed=0)

    baseline_inputs = [fmt.baseline_input(b) for b in train["baseline"]]
    print("timing training steps ...", flush=True)
    steps = args.sample // batch_size - 1
    step = {(kind, freeze): train_seconds_per_row(model, tokenizer, texts, labels, batch_size, freeze, steps)
            for kind, texts in (("r+b", phi_inputs), ("b", baseline_inputs)) for freeze in (False, True)}
    print("timing integrated gradients ...", flush=True)
    ig_sample = args.sample // 4
    baselines = baseline_inputs[:ig_sample]
    integrated_gradients_word_scores(model, tokenizer, baselines[:4], labels[:4], IGSettings(n_steps=args.ig_steps))
    start = time.perf_counter()
    integrated_gradients_word_scores(model, tokenizer, baselines, labels[:ig_sample], IGSettings(n_steps=args.ig_steps))
    ig_per_row = (time.perf_counter() - start) / ig_sample

    print("timing scoring ...", flush=True)
    test = add_variants(add_baselines(load_examples("esnli", args.data_dir, "test", max_examples=args.sample * 2),
                                      make_baseline_builder("template", seed=0)))
    score_inputs = [fmt.rationale_input(r, b) for r, b in zip(test["rationale"], test["baseline"], strict=True)]
    score_targets = list(test["label"])
    scorer, score_tokenizer = load_evaluator(args.model, device="cpu") if args.model else (model.eval(), tokenizer)
    scoring = {}
    for precision in ("fp32", "int8"):
        if precision == "int8":
            from torch.ao.quantization import quantize_dynamic

            scorer = quantize_dynamic(scorer, {torch.nn.Linear}, dtype=torch.qint8)
        score_labels(scorer, score_tokenizer, score_inputs[:8], score_targets[:8])
        limit = forward_limit_loop(scorer, score_tokenizer, score_inputs, score_targets, 64)
        best_scorer, best_limit = float("inf"), float("inf")
        for _ in range(2):
            start = time.perf_counter()
            sums = score_labels(scorer, score_tokenizer, score_inputs, score_targets, batch_size=64).sum
            best_scorer = min(best_scorer, time.perf_counter() - start)
            start = time.perf_counter()
            limit()
            best_limit = min(best_limit, time.perf_counter() - start)
        scoring[precision] = {"examples_per_s": len(score_inputs) / best_scorer,
                              "forward_limit_examples_per_s": len(score_inputs) / best_limit, "sums": sums}
    fp32_sums, int8_sums = scoring["fp32"].pop("sums"), scoring["int8"].pop("sums")
    scoring["int8"].update({
        "max_abs_log_prob_change": float(np.max(np.abs(int8_sums - fp32_sums))),
        "mean_abs_log_prob_change": float(np.mean(np.abs(int8_sums - fp32_sums))),
        "spearman_with_fp32": float(spearmanr(int8_sums, fp32_sums)[0]),
    })

    # Φ trains on r ⊕ b; Φ_base on b; Φ_LA on E1/E2/E3, each a baseline (b, b masked, b with another label).
    work = {"phi_base": epochs * args.n_train, "phi": epochs * args.n_train, "phi_la": epochs * 3 * args.n_train,
            "ig": args.n_train}
    inputs_of = {"phi_base": "b", "phi": "r+b", "phi_la": "b"}
    floors = {}
    for name, freeze in (("all_weights_trained", False), ("word_embeddings_frozen", True)):
        stages = {stage: work[stage] * step[inputs_of[stage], freeze] for stage in inputs_of}
        stages["ig"] = args.n_train * ig_per_row
        floors[name] = {"stage_seconds": stages, "total_minutes": sum(stages.values()) / 60}
    result = {
        "benchmark": "compute floor of a full REV+LAREV run",
        "backbone": args.backbone, "scoring_model": args.model or f"{args.backbone} (random-init head)",
        "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(), "load_avg_1m": os.getloadavg()[0],
        "settings": {"n_train": args.n_train, "n_test": args.n_test, "epochs": epochs, "batch_size": batch_size,
                     "ig_steps": args.ig_steps, "timed_rows": args.sample},
        "train_rows_per_s": {f"{kind} inputs, {'word embeddings frozen' if freeze else 'all weights trained'}": 1 / seconds
                             for (kind, freeze), seconds in step.items()},
        "ig_baselines_per_s": 1 / ig_per_row,
        "work_rows": work,
        "floor_without_scoring": floors,
        "scoring": scoring,
        "targets": {"full_run_minutes": 30, "scoring_examples_per_s": 500},
    }
    print(json.dumps(result, indent=2))
    write_json(args.output, result)


if __name__ == "__main__":
    main()
