"""CPU throughput of the offline backbones: training and scoring examples/s on e-SNLI r ⊕ b inputs.

    python benchmarks/bench_backbones.py --backbones t5-tiny,minilm2minilm,minilm-choice \
        --output benchmarks/results/backbones_cpu.json

For each backbone: ``--train-steps`` steps of ``Seq2SeqTrainer`` (AdamW, the backbone's batch size, after 3 warm-up
steps) on e-SNLI training inputs r ⊕ b → label, then ``score_labels`` on ``--n-score`` test inputs (best of 3).
``minilm-choice`` is the encoder-classifier family (:mod:`larev_hf.modeling.choice_classifier`: MiniLM-L6 with a
multiple-choice head, batch 16, one (input, choice) pair per label): the same steps through its trainer, and
``choice_log_probs`` (all three labels of an input in one pass, which log p(y | ·) needs). The thread count and load
average are recorded; nothing is trained to convergence.

Internals: ``larev_hf.modeling.choice_classifier`` and ``larev_hf.training.choice_classifier``: it times the encoder-
classifier family's own forward and training steps, which a run reaches only through ``--backbone``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import transformers
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, TrainerCallback

from larev_hf.data import add_baselines, load_examples, make_baseline_builder
from larev_hf.io import write_json
from larev_hf.modeling import build_model, build_tokenizer, get_input_format, score_labels, training_defaults
from larev_hf.training import TrainSettings, tokenize_pairs


class StepClock(TrainerCallback):
    """Wall time of each training step."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.start = 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.times.append(time.perf_counter() - self.start)


def measure(backbone: str, records: list[dict], test: list[dict], args: argparse.Namespace) -> dict:
    fmt = get_input_format("larev")
    sources = [fmt.rationale_input(r["rationale"], r["baseline"]) for r in records]
    labels = [r["label"] for r in records]
    tokenizer = build_tokenizer(backbone, sources + labels)
    model = build_model(backbone, tokenizer, seed=0)
    batch_size = int(training_defaults(backbone)["batch_size"])
    clock = StepClock()
    with tempfile.TemporaryDirectory() as output_dir:
        training_args = TrainSettings(batch_size=batch_size, progress=False).training_arguments(
            output_dir, max_steps=args.train_steps + 3, save_strategy="no", logging_steps=10_000)
        trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=tokenize_pairs(tokenizer, sources, labels),
                                 data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100),
                                 processing_class=tokenizer, callbacks=[clock])
        trainer.train()
    test_sources = [fmt.rationale_input(r["rationale"], r["baseline"]) for r in test]
    test_labels = [r["label"] for r in test]
    model.eval()
    return throughput(model, batch_size, clock, len(test), lambda n: score_labels(
        model, tokenizer, test_sources[:n], test_labels[:n], batch_size=64))


def throughput(model, batch_size: int, clock: StepClock, n_test: int, score: Callable[[int | None], object]) -> dict:
    """The figures of one backbone: mean training step after 3 warm-up steps, and ``score(None)`` (all ``n_test``
    inputs) as the best of 3 after one warm-up call ``score(8)``."""
    step_s = sum(clock.times[3:]) / len(clock.times[3:])
    score(8)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        score(None)
        best = min(best, time.perf_counter() - start)
    return {"parameters_m": sum(p.numel() for p in model.parameters()) / 1e6, "batch_size": batch_size,
            "train_step_s": step_s, "train_examples_per_s": batch_size / step_s,
            "score_examples_per_s": n_test / best}


def measure_choice_classifier(records: list[dict], test: list[dict], args: argparse.Namespace) -> dict:
    """The same figures for MiniLM-L6 with a multiple-choice head over e-SNLI's three labels."""
    from larev_hf.modeling.choice_classifier import build_choice_classifier, choice_log_probs, choice_rows
    from larev_hf.training import IRMProbeConfig
    from larev_hf.training.choice_classifier import ChoiceTrainer

    fmt = get_input_format("larev")
    model, tokenizer = build_choice_classifier(seed=0)
    batch_size = 16
    rows = choice_rows(tokenizer, [fmt.rationale_input(r["rationale"], r["baseline"]) for r in records],
                       [r["choices"] for r in records], [r["label"] for r in records],
                       environment=[0] * len(records), group_id=list(range(len(records))))
    clock = StepClock()
    with tempfile.TemporaryDirectory() as output_dir:
        training_args = TrainSettings(batch_size=batch_size, progress=False).training_arguments(
            output_dir, args_class=IRMProbeConfig, max_steps=args.train_steps + 3, save_strategy="no",
            logging_steps=10_000, lambda_irm=0.0, lambda_probe=0.0)
        ChoiceTrainer(model=model, args=training_args, train_dataset=rows, processing_class=tokenizer,
                      callbacks=[clock]).train()
    inputs = [fmt.rationale_input(r["rationale"], r["baseline"]) for r in test]
    choices = [r["choices"] for r in test]
    return throughput(model, batch_size, clock, len(test), lambda n: choice_log_probs(
        model, tokenizer, inputs[:n], choices[:n], batch_size=64))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "esnli"))
    parser.add_argument("--backbones", default="t5-tiny,minilm2minilm")
    parser.add_argument("--train-steps", type=int, default=20)
    parser.add_argument("--n-score", type=int, default=256)
    parser.add_argument("--output", default="benchmarks/results/backbones_cpu.json")
    args = parser.parse_args()
    transformers.logging.set_verbosity_error()
    builder = make_baseline_builder("template", seed=0)
    records = add_baselines(load_examples("esnli", args.data_dir, "train", max_examples=2000, seed=0), builder).to_list()
    test = add_baselines(load_examples("esnli", args.data_dir, "test", max_examples=args.n_score), builder).to_list()
    load_before = os.getloadavg()[0]
    result = {"benchmark": "backbone CPU throughput (e-SNLI r ⊕ b → label)", "torch_threads": torch.get_num_threads(),
              "load_avg_1m_before": load_before,
              "backbones": {name: measure_choice_classifier(records, test, args) if name == "minilm-choice"
                            else measure(name, records, test, args) for name in args.backbones.split(",")},
              "load_avg_1m_after": os.getloadavg()[0]}
    print(json.dumps(result, indent=2))
    write_json(args.output, result)


if __name__ == "__main__":
    main()
