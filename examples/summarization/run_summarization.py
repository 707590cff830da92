#!/usr/bin/env python
# Copyright 2026 the larev-hf authors.
# SPDX-License-Identifier: Apache-2.0 (see LICENSE at the repository root)
"""Summarization fine-tuning with IRMProbeTrainer, laid out like HuggingFace's seq2seq example scripts.

Our own script, in the shape a user of transformers' ``examples/pytorch/summarization`` knows: dataclass arguments
read by ``HfArgumentParser`` (flags, or one JSON file), ``datasets`` splits tokenized by a batched ``map``, HF's
``DataCollatorForSeq2Seq``, ROUGE as ``compute_metrics`` under ``--predict_with_generate``, then train, evaluate and
predict. What differs from a ``Seq2SeqTrainer`` script is the trainer: ``IRMProbeConfig`` holds the training
arguments (every ``Seq2SeqTrainingArguments`` flag plus ``--lambda_irm``, ``--lambda_probe``,
``--environment_column``, ``--group_column``, ``--probe_column``, ...), the tokenizing maps keep the trainer's columns
(``training_args.removable_columns``) and ``IRMProbeTrainer`` trains, optionally with a frozen leakage probe
(``--probe_model_name_or_path``). ROUGE comes from the ``rouge_score`` package, so nothing is downloaded.

Data: JSON-lines (or CSV) files with a text column, a summary column, an integer ``environment`` column and a
``group_id`` column (one row per document and environment); with a probe, also the probe's input (token ids or text,
e.g. ``--probe_column masked_document``). ``--per_device_train_batch_size`` counts groups.

    python examples/summarization/run_summarization.py --model_name_or_path MODEL_DIR \\
        --train_file train.json --validation_file validation.json --test_file test.json \\
        --text_column document --summary_column summary --output_dir runs/summarization \\
        --do_train --do_eval --do_predict --predict_with_generate --per_device_train_batch_size 2 \\
        --max_steps 100 --lambda_irm 1.0 --report_to none
"""

import logging
import os
import re
import sys
from dataclasses import dataclass, field

import datasets
import numpy as np
import transformers
from rouge_score import rouge_scorer
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    HfArgumentParser,
    set_seed,
)

from larev_hf.training import IRMProbeConfig, IRMProbeTrainer

log = logging.getLogger(__name__)
ROUGE_KEYS = ("rouge1", "rouge2", "rougeL", "rougeLsum")


@dataclass
class ModelArguments:
    """Which seq2seq model to fine-tune, and the optional frozen probe."""

    model_name_or_path: str = field(metadata={"help": "Model directory or Hub id of the seq2seq model to train."})
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer, if not the model's own."})
    cache_dir: str | None = field(default=None, metadata={"help": "Where downloaded models are cached."})
    probe_model_name_or_path: str | None = field(
        default=None, metadata={"help": "A trained leakage probe (model directory); its term is weighted by --lambda_probe."})


@dataclass
class DataTrainingArguments:
    """The data files, their columns and how much of each split to tokenize."""

    train_file: str | None = field(default=None, metadata={"help": "Training rows (.json lines or .csv)."})
    validation_file: str | None = field(default=None, metadata={"help": "Rows for --do_eval."})
    test_file: str | None = field(default=None, metadata={"help": "Rows for --do_predict."})
    text_column: str = field(default="document", metadata={"help": "Column with the text to summarize."})
    summary_column: str = field(default="summary", metadata={"help": "Column with the reference summary."})
    source_prefix: str = field(default="", metadata={"help": "Put before every input, e.g. 'summarize: ' for T5."})
    max_source_length: int = field(default=1024, metadata={"help": "Inputs are cut to this many tokens."})
    max_target_length: int = field(default=128, metadata={"help": "Training summaries are cut to this many tokens."})
    val_max_target_length: int | None = field(
        default=None, metadata={"help": "Cut for evaluation/test summaries and default generation length "
                                        "(defaults to --max_target_length)."})
    pad_to_max_length: bool = field(default=False, metadata={"help": "Pad every row to the maximum lengths."})
    ignore_pad_token_for_loss: bool = field(default=True, metadata={"help": "Padded label positions get -100."})
    num_beams: int | None = field(default=None, metadata={"help": "Beams for generate() in evaluation."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Keep the first N training rows."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Keep the first N validation rows."})
    max_predict_samples: int | None = field(default=None, metadata={"help": "Keep the first N test rows."})
    preprocessing_num_workers: int | None = field(default=None, metadata={"help": "Processes for the maps."})
    overwrite_cache: bool = field(default=False, metadata={"help": "Tokenize again instead of reusing the cache."})

    def __post_init__(self):
        if self.val_max_target_length is None:
            self.val_max_target_length = self.max_target_length


def parse_arguments():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, IRMProbeConfig))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):  # all three groups from one JSON file
        return parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    return parser.parse_args_into_dataclasses()


def load_splits(data_args, training_args):
    """The splits the run needs, by name, from the given files."""
    wanted = {"train": ("do_train", data_args.train_file), "validation": ("do_eval", data_args.validation_file),
              "test": ("do_predict", data_args.test_file)}
    files = {}
    for split, (flag, path) in wanted.items():
        if getattr(training_args, flag) and path is None:
            raise ValueError(f"--{flag} needs --{split}_file")
        if path is not None:
            files[split] = path
    if not files:
        raise ValueError("give at least one of --train_file, --validation_file, --test_file")
    builder = "csv" if next(iter(files.values())).endswith(".csv") else "json"
    return datasets.load_dataset(builder, data_files=files)


def sentence_lines(text: str) -> str:
    """One sentence a line, which rougeLsum scores by."""
    return "\n".join(part for part in re.split(r"(?<=[.!?])\s+", text.strip()) if part)


def main():
    model_args, data_args, training_args = parse_arguments()
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO,
                        handlers=[logging.StreamHandler(sys.stdout)])
    level = training_args.get_process_log_level()
    log.setLevel(level)
    datasets.utils.logging.set_verbosity(level)
    transformers.utils.logging.set_verbosity(level)
    log.info("training arguments: %s", training_args)
    set_seed(training_args.seed)

    raw = load_splits(data_args, training_args)
    tokenizer = AutoTokenizer.from_pretrained(model_args.tokenizer_name or model_args.model_name_or_path,
                                              cache_dir=model_args.cache_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_args.model_name_or_path, cache_dir=model_args.cache_dir)
    if len(tokenizer) > model.get_input_embeddings().weight.shape[0]:
        model.resize_token_embeddings(len(tokenizer))
    if model.config.decoder_start_token_id is None:
        raise ValueError("the model's config has no decoder_start_token_id; generation cannot start")

    padding = "max_length" if data_args.pad_to_max_length else False

    def tokenize(batch, target_length):
        sources = [data_args.source_prefix + (text or "") for text in batch[data_args.text_column]]
        encoded = tokenizer(sources, max_length=data_args.max_source_length, padding=padding, truncation=True)
        targets = tokenizer(text_target=[summary or "" for summary in batch[data_args.summary_column]],
                            max_length=target_length, padding=padding, truncation=True)["input_ids"]
        if padding and data_args.ignore_pad_token_for_loss:
            targets = [[t if t != tokenizer.pad_token_id else -100 for t in row] for row in targets]
        encoded["labels"] = targets
        return encoded

    def prepare(split, limit, target_length):
        """Split ``split`` cut to ``limit`` rows and tokenized; the trainer's columns stay (removable_columns)."""
        rows = raw[split]
        for column in (data_args.text_column, data_args.summary_column):
            if column not in rows.column_names:
                raise ValueError(f"the {split} file has no column {column!r}; it has {rows.column_names}")
        if limit is not None:
            rows = rows.select(range(min(limit, len(rows))))
        with training_args.main_process_first(desc=f"tokenizing {split}"):
            return rows.map(tokenize, batched=True, fn_kwargs={"target_length": target_length},
                            num_proc=data_args.preprocessing_num_workers,
                            remove_columns=training_args.removable_columns(rows.column_names),
                            load_from_cache_file=not data_args.overwrite_cache, desc=f"tokenizing {split}")

    train_set = prepare("train", data_args.max_train_samples, data_args.max_target_length) if training_args.do_train else None
    eval_set = (prepare("validation", data_args.max_eval_samples, data_args.val_max_target_length)
                if training_args.do_eval else None)
    test_set = (prepare("test", data_args.max_predict_samples, data_args.val_max_target_length)
                if training_args.do_predict else None)

    label_pad = -100 if data_args.ignore_pad_token_for_loss else tokenizer.pad_token_id
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=label_pad,
                                      pad_to_multiple_of=8 if training_args.fp16 else None)

    scorer = rouge_scorer.RougeScorer(list(ROUGE_KEYS), use_stemmer=True)

    def decode(ids):
        ids = np.where(ids != -100, ids, tokenizer.pad_token_id)
        return [text.strip() for text in tokenizer.batch_decode(ids, skip_special_tokens=True)], ids

    def compute_metrics(prediction):
        generated, references = prediction.predictions, prediction.label_ids
        if isinstance(generated, tuple):
            generated = generated[0]
        texts, generated = decode(generated)
        gold, _ = decode(references)
        scores = [scorer.score(sentence_lines(ref), sentence_lines(hyp)) for hyp, ref in zip(texts, gold, strict=True)]
        metrics = {key: round(100 * float(np.mean([s[key].fmeasure for s in scores])), 4) for key in ROUGE_KEYS}
        metrics["gen_len"] = float(np.mean(np.count_nonzero(generated != tokenizer.pad_token_id, axis=-1)))
        return metrics

    if training_args.generation_max_length is None:
        training_args.generation_max_length = data_args.val_max_target_length
    if data_args.num_beams is not None:
        training_args.generation_num_beams = data_args.num_beams

    trainer = IRMProbeTrainer(
        model=model, args=training_args, train_dataset=train_set, eval_dataset=eval_set, processing_class=tokenizer,
        data_collator=collator, compute_metrics=compute_metrics if training_args.predict_with_generate else None,
        probe_model=model_args.probe_model_name_or_path)

    if training_args.do_train:
        outcome = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
        trainer.save_model()
        metrics = {**outcome.metrics, "train_samples": len(train_set)}
        trainer.log_metrics("train", metrics)
        trainer.save_metrics("train", metrics)
        trainer.save_state()

    if training_args.do_eval:
        metrics = {**trainer.evaluate(metric_key_prefix="eval"), "eval_samples": len(eval_set)}
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)

    if training_args.do_predict:
        outcome = trainer.predict(test_set, metric_key_prefix="predict")
        metrics = {**outcome.metrics, "predict_samples": len(test_set)}
        trainer.log_metrics("predict", metrics)
        trainer.save_metrics("predict", metrics)
        if training_args.predict_with_generate and trainer.is_world_process_zero():
            texts, _ = decode(outcome.predictions[0] if isinstance(outcome.predictions, tuple) else outcome.predictions)
            path = os.path.join(training_args.output_dir, "generated_predictions.txt")
            with open(path, "w", encoding="utf-8") as out:
                out.write("\n".join(texts))

    card = {"finetuned_from": model_args.model_name_or_path, "tasks": "summarization"}
    if training_args.push_to_hub:
        trainer.push_to_hub(**card)
    else:
        trainer.create_model_card(**card)


if __name__ == "__main__":
    main()
