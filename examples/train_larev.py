"""Train LAREV's leakage-aware evaluator Φ_LA with ``IRMProbeTrainer``, on one process or many.

The script is a plain ``Seq2SeqTrainer`` recipe with two swaps: ``IRMProbeConfig`` for the arguments and
``IRMProbeTrainer`` for the trainer. Every ``Seq2SeqTrainingArguments`` flag works, plus LAREV's own
(``--lambda_irm``, ``--lambda_probe``, ``--penalty_warmup_ratio``, ``--token_reduction``, ...).
``--per_device_train_batch_size`` counts environment *groups* (one instance under its three environments),
so the global batch is ``per_device_train_batch_size × num_processes × gradient_accumulation_steps`` groups.

Usage:

    # One process, CPU (a smoke run of a few seconds on the offline synthetic task)
    python examples/train_larev.py \\
        --output_dir runs/example-larev --max_steps 20 --per_device_train_batch_size 4 \\
        --learning_rate 1e-3 --logging_steps 5 --report_to none

    # Two processes on CPU (DDP over gloo), the same global batch of 4 groups as above
    accelerate launch --cpu --num_processes 2 examples/train_larev.py \\
        --output_dir runs/example-larev-ddp --max_steps 20 --per_device_train_batch_size 2 \\
        --learning_rate 1e-3 --logging_steps 5 --report_to none

    # NOTE: accelerate 1.15 runs that `--cpu` line as ONE process unless MPI is set up (`--mpirun_hostfile`);
    # `train_losses.json` then says "num_processes": 1. On a machine without MPI reach torchrun's launcher with
    # --multi_gpu, which uses gloo on CPU (ACCELERATE_USE_CPU=1 keeps a GPU machine on the CPU):
    ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2 --num_machines 1 \\
        --mixed_precision no --dynamo_backend no examples/train_larev.py \\
        --output_dir runs/example-larev-ddp --max_steps 20 --per_device_train_batch_size 2 \\
        --learning_rate 1e-3 --logging_steps 5 --report_to none

    # e-SNLI on 4 GPUs with bf16, a pretrained backbone and the probe ψ of an earlier `larev-hf run`
    accelerate launch --multi_gpu --num_processes 4 --mixed_precision bf16 examples/train_larev.py \\
        --dataset esnli --data_dir ../shared/data/esnli --max_train_examples 20000 \\
        --backbone google-t5/t5-base --probe_model_path runs/esnli-larev/models/probe \\
        --lambda_irm 25 --lambda_probe 5e-3 --learning_rate 3e-5 --num_train_epochs 8 \\
        --per_device_train_batch_size 8 --bf16 --logging_steps 50 --output_dir runs/esnli-phi-la

    # LoRA adapters (PEFT) on every linear layer of a T5-large Φ_LA, one GPU, bf16
    accelerate launch --config_file examples/accelerate_configs/single_gpu.yaml examples/train_larev.py \
        --dataset esnli --data_dir ../shared/data/esnli --backbone t5-large --lora_r 16 --lora_alpha 32 \
        --lambda_irm 5 --learning_rate 1e-4 --num_train_epochs 3 --per_device_train_batch_size 8 --bf16 \
        --output_dir runs/esnli-phi-la-lora

Accelerate configs for single GPU, DDP, FSDP, DeepSpeed ZeRO-2 and two CPU processes are in
``examples/accelerate_configs/``; pass one with ``accelerate launch --config_file <file>``.

Steps:

1. load the training split and build the vacuous baselines b;
2. the tokenizer (for an offline preset: trained once on the training text, on the main process) and a fresh Φ_LA;
3. the environments E1 (b), E2 (the leakage term masked) and E3 (it rewritten to another label). This
   script takes the leakage term to be the gold label's verbalization in b, an offline shortcut that needs
   no trained Φ_base; the full method finds it by Integrated Gradients on Φ_base: ``larev-hf run --method larev``;
4. ``IRMProbeTrainer.train()``;
5. ``save_pretrained`` of the model and tokenizer to ``--output_dir``, and ``train_losses.json`` beside them
   (the logged losses and the final train loss; main process only).

Before training the script also logs ``initial_erm``: the ERM loss of the untrained model on the first global
batch, in evaluation mode (no dropout). It does not depend on the number of processes when the batch sampler
hands every process whole environment groups, so it is a cheap check of a multi-process launch.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import AutoTokenizer, HfArgumentParser, PreTrainedTokenizerBase

from larev_hf.data import add_baselines, load_examples, make_baseline_builder
from larev_hf.leakage import mask_token_of, verbalization_environments
from larev_hf.modeling import build_model, build_tokenizer, get_input_format, is_preset
from larev_hf.modeling.lora import LoraSettings, apply_lora, is_peft_model, save_adapter
from larev_hf.training import IRMProbeConfig, IRMProbeTrainer, PenaltyWeights
from larev_hf.training.leakage_aware import environment_dataset

logger = logging.getLogger(__name__)


@dataclass
class ScriptArguments:
    """What to train on and which backbone to train; the training itself is configured by ``IRMProbeConfig``."""

    dataset: str = field(default="synthetic", metadata={"help": "Data set kind: synthetic, esnli, ecqa, cose, ..."})
    data_dir: str | None = field(default=None, metadata={"help": "Directory of the data set (not needed for synthetic)."})
    backbone: str = field(
        default="t5-tiny", metadata={"help": "An offline preset (t5-tiny, bart-tiny, ...) or a Hub name / local path."}
    )
    max_train_examples: int | None = field(default=None, metadata={"help": "Use at most this many training examples."})
    probe_model_path: str | None = field(
        default=None,
        metadata={"help": "The frozen leakage probe ψ (a save_pretrained directory, e.g. runs/<run>/models/probe). "
                  "Without it the probe term is 0. For an offline preset its tokenizer is used, so the vocabularies match."},
    )
    tokenizer_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A saved tokenizer to use (e.g. the output_dir of an earlier run). By default an offline preset "
                  "trains one on the training text, once, on the main process."},
    )
    input_format: str = field(default="larev", metadata={"help": "Encoder template: larev (r b) or rev."})
    lora_r: int | None = field(default=None, metadata={"help": "Train LoRA adapters of this rank instead of every weight."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling numerator (update × alpha / r)."})
    lora_target_modules: str | None = field(
        default=None, metadata={"help": "Comma-separated module-name suffixes to adapt (default: every linear layer)."}
    )


def load_tokenizer(
    script_args: ScriptArguments, training_args: IRMProbeConfig, records: list[dict[str, Any]]
) -> PreTrainedTokenizerBase:
    """The tokenizer: a saved one if given (or the probe's, for a preset), the checkpoint's, or one trained on the text.

    A preset's tokenizer is trained on the main process only and loaded from ``output_dir`` by the others: WordPiece
    training in 🤗 Tokenizers is not deterministic (huggingface/tokenizers#1794), so processes that each trained
    their own could disagree on the vocabulary. Several machines need a shared ``output_dir`` for this.
    """
    if script_args.tokenizer_name_or_path:
        return AutoTokenizer.from_pretrained(script_args.tokenizer_name_or_path)
    if script_args.probe_model_path and is_preset(script_args.backbone):
        return AutoTokenizer.from_pretrained(script_args.probe_model_path)
    if not is_preset(script_args.backbone):
        return build_tokenizer(script_args.backbone)
    with training_args.main_process_first(local=False, desc="training the tokenizer"):
        if training_args.process_index == 0:
            texts = [text for r in records for text in (r["baseline"], r["rationale"], *r["choices"])]
            tokenizer = build_tokenizer(script_args.backbone, texts)
            tokenizer.save_pretrained(training_args.output_dir)
        else:
            tokenizer = AutoTokenizer.from_pretrained(training_args.output_dir)
    return tokenizer


def initial_erm(trainer: IRMProbeTrainer) -> float:
    """ERM loss of the current model on the first global training batch, in evaluation mode, averaged over processes."""
    loader = trainer.get_train_dataloader()
    batches = iter(loader)
    batch = next(batches, None)
    batches.close()
    if hasattr(loader, "end"):
        loader.end()  # deregister the half-read loader from accelerate's GradientState
    if batch is None:
        raise RuntimeError(f"process {trainer.accelerator.process_index} got no training batch")
    model = trainer.model
    was_training = model.training
    model.eval()
    with torch.no_grad():
        erm = trainer.loss_module(model, batch, None, PenaltyWeights(lambda_irm=0.0)).erm_loss.detach().reshape(1)
    model.train(was_training)
    return trainer.accelerator.gather(erm).mean().item()


def loss_summary(log_history: list[dict[str, Any]], num_processes: int, groups_per_step: int) -> dict[str, Any]:
    """The logged training losses (with their steps) and the final train loss, from ``trainer.state.log_history``."""
    logged = [entry for entry in log_history if "loss" in entry]
    final = [entry["train_loss"] for entry in log_history if "train_loss" in entry]
    return {
        "steps": [entry["step"] for entry in logged],
        "losses": [entry["loss"] for entry in logged],
        "erm_losses": [entry.get("erm/loss") for entry in logged],
        "train_loss": final[-1] if final else None,
        "num_processes": num_processes,
        "groups_per_step": groups_per_step,
    }


def main(script_args: ScriptArguments, training_args: IRMProbeConfig) -> None:
    """Run the five steps of the module docstring."""
    logging.basicConfig(level=logging.INFO if training_args.should_log else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    # 1. Training split and vacuous baselines b (REV's template).
    with training_args.main_process_first(desc="loading the training split"):
        train = load_examples(script_args.dataset, script_args.data_dir, "train",
                              max_examples=script_args.max_train_examples, seed=training_args.seed)
    records = add_baselines(train, make_baseline_builder("template", seed=training_args.seed)).to_list()

    # 2. Tokenizer (the same on every process) and a fresh Φ_LA (the thesis does not start Φ_LA from Φ).
    tokenizer = load_tokenizer(script_args, training_args, records)
    model = build_model(script_args.backbone, tokenizer, seed=training_args.seed)
    if script_args.lora_r:
        targets = script_args.lora_target_modules.split(",") if script_args.lora_target_modules else None
        model = apply_lora(model, LoraSettings(r=script_args.lora_r, alpha=script_args.lora_alpha, target_modules=targets))

    # 3. Environments E1/E2/E3 from a leakage term covering the label verbalization (offline shortcut;
    #    the Integrated-Gradients leakage terms of the full method: `larev-hf run --method larev`).
    kept, environments = verbalization_environments(records, mask_token_of(tokenizer))
    if len(kept) < len(records):
        logger.warning("%d of %d baselines do not state the label verbatim and are skipped", len(records) - len(kept),
                       len(records))
    if not kept:
        raise ValueError("no training example has its label verbalization in the baseline")
    train_dataset = environment_dataset(kept, environments, tokenizer, get_input_format(script_args.input_format))
    logger.info("%d groups x 3 environments = %d rows", len(kept), len(train_dataset))

    # 4. Train with ERM + λ_IRM·IRMv1 − λ_probe·L_probe(ψ frozen).
    trainer = IRMProbeTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        processing_class=tokenizer,
        probe_model=script_args.probe_model_path,
    )
    initial = initial_erm(trainer)
    if trainer.is_world_process_zero():
        logger.info("initial_erm (untrained model, first global batch): %.6f", initial)
    trainer.train()

    # 5. Save the model and tokenizer (save_pretrained on the main process) and the logged losses. A LoRA model is
    #    saved as its adapter plus, for a randomly initialised preset, its base weights (`larev_hf.modeling.lora`).
    if is_peft_model(trainer.model):
        if trainer.is_world_process_zero():
            save_adapter(trainer.model, training_args.output_dir)
            tokenizer.save_pretrained(training_args.output_dir)
    else:
        trainer.save_model(training_args.output_dir)
    if trainer.is_world_process_zero():
        accelerator = trainer.accelerator
        groups = training_args.per_device_train_batch_size * accelerator.num_processes * training_args.gradient_accumulation_steps
        summary = {"initial_erm": initial, **loss_summary(trainer.state.log_history, accelerator.num_processes, groups)}
        if not all(math.isfinite(loss) for loss in summary["losses"]):
            logger.warning("non-finite training loss logged: %s", summary["losses"])
        os.makedirs(training_args.output_dir, exist_ok=True)
        with open(os.path.join(training_args.output_dir, "train_losses.json"), "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=2)
        logger.info("final train loss %.4f; saved to %s", summary["train_loss"], training_args.output_dir)
    # Every process waits for the main one, then the process group is torn down in order: a rank that simply
    # exits while the others still hold the group can abort in gloo's destructor ("terminate called ...").
    num_processes = trainer.accelerator.num_processes
    trainer.accelerator.wait_for_everyone()
    trainer.accelerator.end_training()
    if num_processes > 1:
        exit_without_gloo_teardown()


def exit_without_gloo_teardown() -> None:
    """End a finished multi-process run here, skipping the destructors of DDP's reducer and gloo's process group.

    Under load a rank could hang forever at exit: freeing the DDP reducer (main thread, GIL held) runs
    ``~ProcessGroupGloo``, which joins gloo's worker threads, while a worker still freeing a finished collective
    that holds a Python tensor waits for the GIL (py-spy, torch 2.13: ``Reducer`` dealloc → ``~ProcessGroupGloo``
    → ``std::thread::join`` against ``~AsyncAllgatherWork`` → ``gil_scoped_acquire``; 1 launch in 3 with two
    busy cores). Everything is saved, every rank has passed the final barrier and the group is destroyed before
    this, so exiting with ``os._exit`` loses nothing; logs and streams are flushed first.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    parser = HfArgumentParser((ScriptArguments, IRMProbeConfig))
    main(*parser.parse_args_into_dataclasses())
