"""``IRMProbeTrainer``: a drop-in ``Seq2SeqTrainer`` that trains LAREV's Φ_LA (thesis §4.5-4.6, eq. 4.10), and its
config ``IRMProbeConfig``, the base of every IRM trainer's config (RoRA's :class:`~larev_hf.rora.RoRAConfig` adds its
normalisation).

Swap the class and the config, give the dataset an environment column (and a group column):

```python
trainer = IRMProbeTrainer(model=model, args=IRMProbeConfig(output_dir="phi_la", lambda_irm=1.0),
                          train_dataset=environments, processing_class=tokenizer, probe_model=probe)
trainer.train()
```

:func:`train_irm` is the one routine every IRM-trained evaluator of the library goes through: the trainer's config
built from the run's :class:`~larev_hf.training.TrainSettings` and a typed
:class:`~larev_hf.training.settings.IRMArguments`, the trainer over the prepared model, fit (resuming from the last
epoch checkpoint) and saved atomically.
"""

from __future__ import annotations

import dataclasses
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import datasets
import torch
from torch.utils.data import DataLoader
from transformers import PreTrainedModel, PreTrainedTokenizerBase, Seq2SeqTrainer, Seq2SeqTrainingArguments
from transformers.utils import logging

from larev_hf.modeling.backbones import load_evaluator
from larev_hf.training.checks import (
    check_probe,
    check_training_groups,
    count_groups,
    single_environment_batches,
)
from larev_hf.training.collator import EnvironmentCollator, TrainerColumnsCollator
from larev_hf.training.irm_evaluation import IRMEvaluationMixin
from larev_hf.training.losses import IRMProbeLoss, PenaltyWeights
from larev_hf.training.sampler import EnvironmentGroupBatchSampler, grouping_lengths
from larev_hf.training.seq2seq import TiedWeightsResumeMixin, checkpoint_dir_for, fit_and_save
from larev_hf.training.settings import IRMArguments, TrainSettings


@dataclass
class IRMProbeConfig(IRMArguments, Seq2SeqTrainingArguments):
    r"""
    Configuration for [`IRMProbeTrainer`]: ``Seq2SeqTrainingArguments`` plus LAREV's fields (thesis eq. 4.9-4.10),
    declared once in :class:`~larev_hf.training.settings.IRMArguments` (torch-free, so the run's flags take them).

    Parameters that control the objective:
        lambda_irm (`float`, *optional*, defaults to `0.1`):
            Weight of the IRMv1 penalty Σ_e ‖∇_w L^e‖²; the default is the random-init presets' (`KIND_DEFAULTS` in
            `larev_hf.modeling.presets`, where every backbone's value and its source are; a run passes its own).
        lambda_probe (`float`, *optional*, defaults to `0.0`):
            Weight of the subtracted frozen-probe loss; the random-init presets' default, off; set it (and pass
            `probe_model`) to use it. docs/method.md ("Penalty weights", "Measured defaults") gives the thesis's
            values and the measured ones.
        penalty_warmup_ratio (`float`, *optional*, defaults to `1/3`):
            Both weights rise linearly from 0 to their value over this fraction of the training steps (§5.3.3).
        token_reduction (`str`, *optional*, defaults to `"mean"`):
            Per-example label NLL as the mean of its token NLLs (nats per token, the scale of `Seq2SeqTrainer`'s loss,
            so `loss`, `grad_norm` and the penalty read as in a plain run) or their sum (−log p(y|·), what the scores
            use). The library's own evaluators train with the sum (`LIBRARY_TOKEN_REDUCTION`, passed by `train_irm`).
        probe_max_loss (`float` or `None`, *optional*, defaults to `None`):
            If set, the probe loss is clamped at this value before it is subtracted, so maximising it cannot
            run away (the −λ_probe term is otherwise unbounded below).
        probe_every_n_steps (`int`, *optional*, defaults to `1`):
            Compute the probe term on every n-th training step only, with weight n·λ_probe, so its expected
            gradient per step is unchanged while its cost (a second encoder pass over b̃ and ψ's decoder) is paid
            1/n of the time. 1 is the thesis's objective; docs/trainer.md measures the overhead.

    Parameters that control the data:
        environment_column (`str`, *optional*, defaults to `"environment"`): integer environment index of a row.
        group_column (`str`, *optional*, defaults to `"group_id"`): the instance a row belongs to; a batch holds whole groups.
        probe_column (`str`, *optional*, defaults to `"probe_input_ids"`): token ids of the probe's masked baseline b̃.

    `removable_columns(column_names)` gives the columns a tokenizing `map` may remove while these survive.

    > [!NOTE]
    > Differences from `Seq2SeqTrainingArguments`: `per_device_train_batch_size` counts environment *groups* (one
    > instance under all its environments), so a batch has `per_device_train_batch_size × n_environments` rows; the
    > thesis's "batch size 3" is one group of three environments. `remove_unused_columns` keeps the environment,
    > group and probe columns.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate_irm()


#: Steps between two logged training metrics of an IRM trainer (the plain evaluators log every 50).
IRM_LOGGING_STEPS = 25

# HF's Trainer logger: the batch line appears beside its "Total train batch size", under the same verbosity
# (HF's scripts set transformers' verbosity, not the root logger's)
logger = logging.get_logger("transformers.trainer")


class IRMProbeTrainer(IRMEvaluationMixin, TiedWeightsResumeMixin, Seq2SeqTrainer):
    """Trains with L = ERM + λ_IRM·IRMv1 − λ_probe·L_probe(ψ frozen), both weights warmed up linearly.

    Args:
        model: the evaluator Φ_LA (a fresh model: the thesis does not start it from Φ).
        args (`IRMProbeConfig`): training arguments with LAREV's fields.
        probe_model (`PreTrainedModel` or `str`, *optional*): the leakage probe ψ (or its path, a full model
            or a LoRA adapter directory); frozen and used in evaluation mode only. Without it the probe term is 0.
        loss (`IRMProbeLoss`, *optional*): the objective; built from ``args`` by default.
        Other arguments are those of ``Seq2SeqTrainer``.

    Logged metrics (train and ``eval_``-prefixed in evaluation): ``erm/loss``, ``irm/penalty``,
    ``probe/loss``, ``weights/lambda_irm``, ``weights/lambda_probe``, ``env/<e>/loss``. ``evaluate()``, ``predict()``
    and ``predict_with_generate`` work with or without environments in the rows (:mod:`.irm_evaluation`); any collator
    works (:meth:`trainer_collator`); settings that would do nothing are refused or warned about before training
    (:mod:`.checks`).
    """

    _tag_names = ["larev", "irm", "rationale-evaluation"]
    _name = "IRMProbe"
    #: The config :func:`train_irm` builds for this trainer.
    config_class: type[IRMProbeConfig] = IRMProbeConfig

    def __init__(
        self,
        model: PreTrainedModel,
        args: IRMProbeConfig,
        probe_model: PreTrainedModel | str | None = None,
        loss: IRMProbeLoss | None = None,
        **kwargs,
    ) -> None:
        if not isinstance(args, IRMProbeConfig):
            raise TypeError(f"IRMProbeTrainer needs an IRMProbeConfig, got {type(args).__name__}")
        if probe_model is not None and probe_model is model:
            raise ValueError("probe_model is the model being trained; the probe must be a separate, frozen copy")
        train_dataset = kwargs.get("train_dataset")
        check_probe(probe_model is not None, args.lambda_probe, getattr(train_dataset, "column_names", None),
                    args.probe_column)
        kwargs["data_collator"] = self.trainer_collator(kwargs.get("data_collator"), kwargs.get("processing_class"), args)
        super().__init__(model=model, args=args, **kwargs)
        # The custom loss is already a per-batch mean; gradient accumulation must not rescale it by token counts.
        self.model_accepts_loss_kwargs = False
        if hasattr(self.model, "add_model_tags"):  # the Trainer's push_to_hub puts a model's tags on its card
            self.model.add_model_tags(self._tag_names)
        self.loss_module = loss or IRMProbeLoss(args.token_reduction, args.probe_max_loss)
        self.probe = None
        if probe_model is not None:
            probe = load_evaluator(probe_model, device="cpu")[0] if isinstance(probe_model, str) else probe_model
            probe.requires_grad_(False).eval()
            self.probe = self.accelerator.prepare_model(probe, evaluation_mode=True)
        self._metrics: dict[str, dict[str, list[float]]] = {"train": defaultdict(list), "eval": defaultdict(list)}

    @staticmethod
    def trainer_collator(collator: Any, processing_class: Any, args: IRMProbeConfig) -> Any:
        """The collator the trainer uses: :class:`EnvironmentCollator` by default; a given one as is if it reads the
        environment, group and probe columns itself (``reads_trainer_columns``), else wrapped in
        :class:`TrainerColumnsCollator`, so HF's ``DataCollatorForSeq2Seq`` never sees them."""
        columns = dict(environment_column=args.environment_column, group_column=args.group_column,
                       probe_column=args.probe_column)
        if collator is None:
            return None if processing_class is None else EnvironmentCollator(processing_class, **columns)
        if getattr(collator, "reads_trainer_columns", False):
            return collator
        tokenizer = getattr(collator, "tokenizer", None) or processing_class
        if getattr(tokenizer, "pad_token_id", None) is None:
            raise ValueError("a data_collator without the trainer's columns needs a tokenizer with a pad token (as "
                             "data_collator.tokenizer or processing_class) to pad the probe inputs")
        return TrainerColumnsCollator(collator, tokenizer, **columns)

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            args = self.args
            self._signature_columns = [
                "input_ids", "attention_mask", "labels", "decoder_input_ids", "decoder_attention_mask",
                args.environment_column, args.group_column, args.probe_column,
            ]

    def penalty_weights(self) -> PenaltyWeights:
        """The config's λ_IRM and λ_probe at the current step: linear warm-up over ``penalty_warmup_ratio`` of the
        steps (§5.3.3)."""
        warmup_steps = self.args.penalty_warmup_ratio * max(self.state.max_steps, 1)
        factor = 1.0 if warmup_steps == 0 else min(1.0, self.state.global_step / warmup_steps)
        return PenaltyWeights(lambda_irm=self.args.lambda_irm * factor, lambda_probe=self.args.lambda_probe * factor)

    def probe_weight_this_step(self, lambda_probe: float, training: bool) -> float:
        """The probe weight applied now: n·λ_probe on every n-th training step, 0 on the others (``probe_every_n_steps``)."""
        every = self.args.probe_every_n_steps
        if not training or every == 1:
            return lambda_probe
        return lambda_probe * every if self.state.global_step % every == 0 else 0.0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """The objective on a batch with environments (:class:`IRMProbeLoss`, its parts logged); on one without
        (evaluation rows of plain pairs) the ERM part alone, the label NLL per row with ``token_reduction``."""
        if "environment" not in inputs:
            return self.plain_loss(model, inputs, return_outputs)
        weights = self.penalty_weights()
        mode = "train" if model.training else "eval"
        applied_probe = self.probe_weight_this_step(weights.lambda_probe, model.training)
        parts = self.loss_module(model, inputs, self.probe, dataclasses.replace(weights, lambda_probe=applied_probe))
        with torch.no_grad():
            values = {
                "erm/loss": parts.erm_loss,
                "irm/penalty": parts.irm_penalty,
                **{f"env/{env}/loss": risk for env, risk in parts.environment_losses.items()},
            }
            if self.probe is not None and applied_probe > 0:  # not computed (so not logged) while its weight is 0
                values["probe/loss"] = parts.probe_loss
            for key, value in values.items():
                self._metrics[mode][key].append(self.accelerator.gather_for_metrics(value.detach().reshape(1)).mean().item())
            self._metrics[mode]["weights/lambda_irm"].append(weights.lambda_irm)
            self._metrics[mode]["weights/lambda_probe"].append(weights.lambda_probe)
        return (parts.loss, parts.outputs if parts.outputs is not None else {}) if return_outputs else parts.loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        # evaluation's parts reach the metrics of evaluate()/predict() in evaluation_loop, so here only training's
        metrics = {}
        if self.model.training:
            metrics = {key: sum(values) / len(values) for key, values in self._metrics["train"].items() if values}
            self._metrics["train"].clear()
        super().log({**logs, **metrics}, start_time)

    def get_batch_sampler(self, dataset) -> EnvironmentGroupBatchSampler:
        """Override point: the batch sampler of the training set (whole environment groups per batch)."""
        column = self.args.group_column
        if column not in dataset.column_names:
            raise ValueError(f"the training set needs a {column!r} column; it has {dataset.column_names}")
        return EnvironmentGroupBatchSampler(dataset[column], self.args.per_device_train_batch_size, seed=self.args.seed,
                                            lengths=grouping_lengths(self.args, dataset))

    def get_train_dataloader(self) -> DataLoader:
        if self.train_dataset is None:
            raise ValueError("IRMProbeTrainer: training requires a train_dataset.")
        dataset = self.train_dataset
        missing = [c for c in (self.args.environment_column,) if c not in dataset.column_names]
        if missing:
            raise ValueError(f"the training set needs the column {missing[0]!r}; it has {dataset.column_names}")
        dataset = self._remove_unused_columns(dataset, description="training")
        batch_sampler = self.get_batch_sampler(dataset)
        self.check_training_set(dataset, batch_sampler)
        loader = DataLoader(
            dataset,
            batch_sampler=batch_sampler,
            collate_fn=self.data_collator,
            num_workers=self.args.dataloader_num_workers,
            pin_memory=self.args.dataloader_pin_memory,
        )
        # Under DDP accelerate shards a batch sampler by whole batches (split_batches=False): batch i goes to
        # process i % num_processes, so an environment group never spans two processes. even_batches stays on:
        # a short epoch is padded with whole batches from its start, never with parts of groups.
        return self.accelerator.prepare(loader)

    def check_training_set(self, dataset, batch_sampler) -> None:
        """Before the first step: refuse or warn about groups and batches the IRM penalty cannot compare
        (:mod:`larev_hf.training.checks`), and say what a batch is in rows and groups (HF's log counts groups)."""
        args = self.args
        environments = dataset[args.environment_column]
        counts = count_groups(environments, dataset[args.group_column])
        check_training_groups(counts, single_environment_batches(batch_sampler, environments), args.lambda_irm,
                              args.group_column, args.environment_column)
        logger.info(f"  IRM batches: {args.per_device_train_batch_size} groups per device "
                    f"(about {args.per_device_train_batch_size * counts.rows_per_group:.0f} rows); {counts.n_groups} "
                    f"groups of {counts.rows_per_group:.2f} rows on average, environments {list(counts.environments)}")

    def create_model_card(self, *args, tags: str | list[str] | None = None, **kwargs) -> None:
        """HF's model card, with the trainer's tags (``larev``, ``irm``, ...) among its tags."""
        tags = [tags] if isinstance(tags, str) else list(tags or [])
        super().create_model_card(*args, tags=tags + [tag for tag in self._tag_names if tag not in tags], **kwargs)


def train_irm(
    trainer_class: type[IRMProbeTrainer],
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train_dataset: datasets.Dataset,
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    arguments: IRMArguments,
    groups_per_batch: int,
    probe: PreTrainedModel | None = None,
    loss: IRMProbeLoss | None = None,
) -> PreTrainedModel:
    """Train ``model`` with ``trainer_class`` on environment groups and save it (with ``tokenizer``) to ``output_dir``.

    Args:
        trainer_class: :class:`IRMProbeTrainer` or a subclass; its ``config_class`` is built.
        settings: optimiser settings (learning rate, epochs, seed, LoRA, ...) shared with every trained model.
        arguments: the trainer's own fields (penalty weights, warm-up, token reduction, columns), each copied into
            the config as it is; the library's evaluators pass ``token_reduction=LIBRARY_TOKEN_REDUCTION``.
        groups_per_batch: environment groups per batch (``per_device_train_batch_size`` of an IRM config).
        probe: LAREV's frozen probe ψ (needed when ``arguments.lambda_probe`` > 0).
        loss: the trainer's loss module, instead of the one it builds from its config.
    """
    args = settings.training_arguments(
        checkpoint_dir_for(output_dir), args_class=trainer_class.config_class,
        per_device_train_batch_size=groups_per_batch, logging_steps=IRM_LOGGING_STEPS,
        **{f.name: getattr(arguments, f.name) for f in dataclasses.fields(IRMArguments)},
    )
    trainer = trainer_class(model=settings.prepare_model(model), args=args, train_dataset=train_dataset,
                            processing_class=tokenizer, **({"probe_model": probe} if probe is not None else {}),
                            **({"loss": loss} if loss is not None else {}))
    return fit_and_save(trainer, tokenizer, output_dir)
