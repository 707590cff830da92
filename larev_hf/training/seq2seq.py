"""Supervised training of an evaluator (Φ_base, Φ) with HF ``Seq2SeqTrainer``.

REV eq. 3-4: each evaluator maximises log p(y | input) on the training split. The trainer
checkpoints every epoch into ``<output_dir>/checkpoints`` and resumes from the last checkpoint
when a stage is restarted after an interruption; the final model is written atomically.

A resume does so without a false alarm about tied weights (:class:`TiedWeightsResumeMixin`, which
:class:`~larev_hf.training.IRMProbeTrainer` shares): a checkpoint saved with safetensors keeps one copy of a tensor
that several parameters share (tied input and output embeddings: T5's ``lm_head``, BERT2BERT's decoder
``cls.predictions.decoder``), so on resume the others are "missing keys". They are not missing: loading keeps them
tied to the copy that was saved. HF's ``Trainer`` stays silent only when the model lists them in
``_keys_to_ignore_on_save``; the models here do not, so it warned on every resume.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
from transformers import (
    DataCollatorForSeq2Seq,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Seq2SeqTrainer,
    TrainerCallback,
)
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from transformers.trainer_utils import get_last_checkpoint

from larev_hf.modeling.lora import is_peft_model, save_adapter
from larev_hf.training.sampler import LengthGroupedShuffledSampler, grouping_lengths
from larev_hf.training.settings import TrainSettings


def tied_parameter_names(model: Any) -> set[str]:
    """The names of parameters that share their tensor with another named parameter."""
    by_storage: dict[int, list[str]] = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        by_storage.setdefault(parameter.data_ptr(), []).append(name)
    return {name for names in by_storage.values() if len(names) > 1 for name in names}


class TiedWeightsResumeMixin:
    """For a ``Trainer`` subclass: leave tied parameters out of the "missing keys" warning after a resume (every other
    missing key is still reported), and re-tie the weights as HF does when it knows the keys."""

    def _issue_warnings_after_load(self, load_result: Any) -> None:
        tied = tied_parameter_names(self.model)
        missing = [key for key in load_result.missing_keys if key not in tied]
        if len(missing) < len(load_result.missing_keys):
            self.model.tie_weights()
        super()._issue_warnings_after_load(load_result._replace(missing_keys=missing))


class EvaluatorTrainer(TiedWeightsResumeMixin, Seq2SeqTrainer):
    """``Seq2SeqTrainer`` whose ``train_sampling_strategy="group_by_length"`` also shuffles the order of the
    length-grouped batches (:class:`~larev_hf.training.sampler.LengthGroupedShuffledSampler`); any other strategy,
    or a dataset without ``input_ids``, is HF's."""

    def _get_train_sampler(self, train_dataset=None):
        lengths = grouping_lengths(self.args, train_dataset if train_dataset is not None else self.train_dataset)
        if lengths is None:
            return super()._get_train_sampler(train_dataset)
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        return LengthGroupedShuffledSampler(lengths, self.args.train_batch_size, seed)


def tokenize_pairs(
    tokenizer: PreTrainedTokenizerBase,
    sources: Sequence[str],
    targets: Sequence[str],
    max_input_length: int = 256,
    max_label_length: int = 32,
    extra_columns: dict[str, list] | None = None,
) -> datasets.Dataset:
    """A ``datasets.Dataset`` of ``input_ids`` / ``attention_mask`` / ``labels`` (plus ``extra_columns``)."""
    encoded = tokenizer(list(sources), truncation=True, max_length=max_input_length)
    labels = tokenizer(text_target=list(targets), truncation=True, max_length=max_label_length)["input_ids"]
    columns = {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"], "labels": labels}
    columns.update(extra_columns or {})
    return datasets.Dataset.from_dict(columns)


def train_seq2seq(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sources: Sequence[str],
    targets: Sequence[str],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    trainer_class: type[Seq2SeqTrainer] = EvaluatorTrainer,
    decoder_only: bool = False,
    eval_sources: Sequence[str] | None = None,
    eval_targets: Sequence[str] | None = None,
) -> PreTrainedModel:
    """Train ``model`` on ``sources -> targets`` and save it (with the tokenizer) to ``output_dir``.

    With ``settings.lora`` only LoRA adapters train (on decoder layers only if ``decoder_only``) and
    the directory holds the adapter (see :mod:`larev_hf.modeling.lora`). With ``eval_sources`` /
    ``eval_targets`` (the validation split) the loss on them is computed after every epoch and the
    epoch with the lowest one is saved (model selection, thesis §5.3.2).

    Resumes from ``output_dir/checkpoints`` if an earlier attempt was interrupted. The final
    directory appears only when training has finished (written to a temporary sibling and renamed).
    """
    output_dir = Path(output_dir)
    model = settings.prepare_model(model, decoder_only=decoder_only)
    train_dataset = tokenize_pairs(tokenizer, sources, targets, settings.max_input_length, settings.max_label_length)
    selection = {}
    eval_dataset = None
    if eval_sources is not None and eval_targets is not None:
        eval_dataset = tokenize_pairs(tokenizer, eval_sources, eval_targets, settings.max_input_length,
                                      settings.max_label_length)
        selection = dict(eval_strategy="epoch", load_best_model_at_end=True, metric_for_best_model="loss",
                         greater_is_better=False)
    trainer = trainer_class(
        model=model,
        args=settings.training_arguments(checkpoint_dir_for(output_dir), **selection),
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100),
        processing_class=tokenizer,
    )
    return fit_and_save(trainer, tokenizer, output_dir)


def train_on_records(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    make_source: Callable[[Mapping[str, Any]], str],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    eval_records: Sequence[Mapping[str, Any]] | None = None,
) -> PreTrainedModel:
    """:func:`train_seq2seq` on ``make_source(record) → record["label"]``; ``eval_records`` (the validation split)
    turn on model selection by validation loss."""
    evaluation = {} if not eval_records else {
        "eval_sources": [make_source(r) for r in eval_records], "eval_targets": [r["label"] for r in eval_records],
    }
    return train_seq2seq(model, tokenizer, [make_source(r) for r in records], [r["label"] for r in records], output_dir,
                         settings, **evaluation)


def checkpoint_dir_for(output_dir: str | os.PathLike) -> Path:
    """Where the epoch checkpoints of the model that will be saved to ``output_dir`` live."""
    output_dir = Path(output_dir)
    return output_dir.parent / f"{output_dir.name}.checkpoints"


class NamedProgressCallback(ProgressCallback):
    """Trainer's progress bar, named after the model (``phi_la train``), that prints no metric dicts between the bars
    (:class:`LogFileCallback` keeps them)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def on_train_begin(self, args, state, control, **kwargs):
        super().on_train_begin(args, state, control, **kwargs)
        if self.training_bar is not None:
            self.training_bar.set_description(f"{self.name} train")

    def on_log(self, args, state, control, logs=None, **kwargs):
        pass


class LogFileCallback(TrainerCallback):
    """Appends every dict the Trainer logs (loss, learning rate, the IRM/probe terms) to a JSON Lines file."""

    def __init__(self, log_file: str | os.PathLike) -> None:
        self.log_file = Path(log_file)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            with self.log_file.open("a") as handle:
                handle.write(json.dumps({"step": state.global_step, **logs}, default=str) + "\n")


def log_to_file(trainer: Seq2SeqTrainer, output_dir: str | os.PathLike) -> Path:
    """Route ``trainer``'s printed metrics to ``<output_dir>.log.jsonl`` (a sibling of the model directory) and name
    its progress bar, if it shows one, after the model. Returns the log file."""
    output_dir = Path(output_dir)
    log_file = output_dir.parent / f"{output_dir.name}.log.jsonl"
    had_bar = any(type(cb) is ProgressCallback for cb in trainer.callback_handler.callbacks)
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    if had_bar:
        trainer.add_callback(NamedProgressCallback(output_dir.name))
    trainer.add_callback(LogFileCallback(log_file))
    return log_file


def fit_and_save(trainer: Seq2SeqTrainer, tokenizer: PreTrainedTokenizerBase, output_dir: str | os.PathLike) -> PreTrainedModel:
    """Train (resuming from the last checkpoint in ``trainer.args.output_dir``), save atomically, drop checkpoints.
    The Trainer's logged metrics go to ``<output_dir>.log.jsonl`` (:func:`log_to_file`), not the console."""
    log_to_file(trainer, output_dir)
    last = last_complete_checkpoint(trainer.args.output_dir)
    try:
        trainer.train(resume_from_checkpoint=last)
        save_model_atomically(trainer.model, tokenizer, output_dir)
    except Exception as error:
        # safetensors reports a refused write (full disk, file size limit) as its own error type: give it back as the
        # OSError it is, so the CLI can say so in one line
        match = None if isinstance(error, OSError) else re.search(r"os error (\d+)", str(error))
        if match is None:
            raise
        code = int(match.group(1))
        raise OSError(code, os.strerror(code), str(output_dir)) from error
    shutil.rmtree(trainer.args.output_dir, ignore_errors=True)
    return trainer.model


def last_complete_checkpoint(checkpoint_dir: str | os.PathLike) -> str | None:
    """The newest ``checkpoint-N`` that the Trainer finished writing, or ``None``.

    ``Trainer._save_checkpoint`` writes ``trainer_state.json`` last, so a checkpoint without it was
    interrupted mid-write (a run killed while saving an epoch); resuming from it would fail. Such
    checkpoints are deleted and the previous complete one is returned.
    """
    checkpoint_dir = Path(checkpoint_dir)
    while checkpoint_dir.is_dir() and (last := get_last_checkpoint(str(checkpoint_dir))) is not None:
        if (Path(last) / "trainer_state.json").is_file():
            return last
        shutil.rmtree(last)
    return None


def save_model_atomically(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, output_dir: str | os.PathLike) -> None:
    """``save_pretrained`` (or :func:`save_adapter` for a LoRA model) into a temporary sibling directory,
    then rename it to ``output_dir``."""
    output_dir = Path(output_dir)
    tmp = output_dir.parent / f".{output_dir.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    save_adapter(model, tmp) if is_peft_model(model) else model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if output_dir.exists():
        shutil.rmtree(output_dir)
    os.replace(tmp, output_dir)
