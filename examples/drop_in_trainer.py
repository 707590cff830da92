"""An ordinary ``Seq2SeqTrainer`` script for an r ⊕ b → y evaluator, and the four lines that make it LAREV's Φ_LA.

Run it as written (``--trainer seq2seq``) and it trains REV's Φ; with ``--trainer irm`` the same script trains
the leakage-aware Φ_LA. The differences, marked ``# LAREV:`` below, are:

1. the arguments class: ``IRMProbeConfig`` (a ``Seq2SeqTrainingArguments`` with ``lambda_irm``, ``lambda_probe``, ...);
2. the dataset: one row per (example, environment) with ``environment`` and ``group_id`` columns
   (``environment_dataset``), instead of one row per example;
3. the trainer class: ``IRMProbeTrainer`` (it brings its own collator and group batch sampler);
4. optionally ``probe_model=`` a trained leakage probe ψ.

Usage (offline, CPU, seconds):

    python examples/drop_in_trainer.py --trainer seq2seq --output_dir runs/dropin-phi --max_steps 30
    python examples/drop_in_trainer.py --trainer irm --output_dir runs/dropin-phi-la --max_steps 30 --lambda_irm 1

    # LoRA: add --lora_r 16 to either line.
"""

from __future__ import annotations

import argparse
import json
import os

from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

from larev_hf.data import add_baselines, load_examples, make_baseline_builder
from larev_hf.leakage import mask_token_of, verbalization_environments
from larev_hf.modeling import build_model, build_tokenizer, get_input_format
from larev_hf.modeling.lora import LoraSettings, apply_lora, save_adapter
from larev_hf.training import IRMProbeConfig, IRMProbeTrainer, tokenize_pairs
from larev_hf.training.leakage_aware import environment_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainer", choices=("seq2seq", "irm"), default="seq2seq")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--dataset", default="synthetic")
    parser.add_argument("--data_dir", default=None)
    parser.add_argument("--max_train_examples", type=int, default=256)
    parser.add_argument("--max_steps", type=int, default=30)
    parser.add_argument("--lambda_irm", type=float, default=1.0)
    parser.add_argument("--lora_r", type=int, default=None)
    args = parser.parse_args()

    records = add_baselines(load_examples(args.dataset, args.data_dir, "train", max_examples=args.max_train_examples),
                            make_baseline_builder("template")).to_list()
    tokenizer = build_tokenizer("t5-tiny", [t for r in records for t in (r["baseline"], r["rationale"], *r["choices"])])
    model = build_model("t5-tiny", tokenizer, seed=0)
    if args.lora_r:
        model = apply_lora(model, LoraSettings(r=args.lora_r))
    fmt = get_input_format("larev")
    common = dict(output_dir=args.output_dir, max_steps=args.max_steps, learning_rate=1e-3, per_device_train_batch_size=8,
                  logging_steps=10, save_strategy="no", report_to="none", seed=0)

    if args.trainer == "seq2seq":
        training_args = Seq2SeqTrainingArguments(**common)
        train_dataset = tokenize_pairs(tokenizer, [fmt.rationale_input(r["rationale"], r["baseline"]) for r in records],
                                       [r["label"] for r in records])
        trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=train_dataset, processing_class=tokenizer,
                                 data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100))
    else:
        training_args = IRMProbeConfig(**common, lambda_irm=args.lambda_irm)  # LAREV: 1. the config
        kept, environments = verbalization_environments(records, mask_token_of(tokenizer))  # LAREV: 2. the dataset
        train_dataset = environment_dataset(kept, environments, tokenizer, fmt)
        trainer = IRMProbeTrainer(model=model, args=training_args, train_dataset=train_dataset,  # LAREV: 3. the trainer
                                  processing_class=tokenizer, probe_model=None)  # LAREV: 4. a trained ψ, if any

    trainer.train()
    save_adapter(trainer.model, args.output_dir) if args.lora_r else trainer.save_model(args.output_dir)
    tokenizer.save_pretrained(args.output_dir)
    history = [entry for entry in trainer.state.log_history if "loss" in entry]
    with open(os.path.join(args.output_dir, "log_history.json"), "w", encoding="utf-8") as handle:
        json.dump(history, handle, indent=2)


if __name__ == "__main__":
    main()
