"""The one training routine of every IRM-trained evaluator: LAREV's Φ_LA, the choice classifiers, RoRA's Φ (seq2seq
and classifier) and Θ.

Build the trainer's config from the run's :class:`~larev_hf.training.TrainSettings` and the trainer's own fields, build
the trainer (its ``config_class``) over the prepared model, fit (resuming from the last epoch checkpoint) and save
atomically (:func:`~larev_hf.training.seq2seq.fit_and_save`).
"""

from __future__ import annotations

import os
from typing import Any

import datasets
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.training.irm_trainer import IRMProbeTrainer
from larev_hf.training.seq2seq import checkpoint_dir_for, fit_and_save
from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION, TrainSettings

#: Steps between two logged training metrics of an IRM trainer (the plain evaluators log every 50).
IRM_LOGGING_STEPS = 25


def train_irm(
    trainer_class: type[IRMProbeTrainer],
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train_dataset: datasets.Dataset,
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    groups_per_batch: int,
    probe: PreTrainedModel | None = None,
    trainer_kwargs: dict[str, Any] | None = None,
    **config_values: Any,
) -> PreTrainedModel:
    """Train ``model`` with ``trainer_class`` on environment groups and save it (with ``tokenizer``) to ``output_dir``.

    Args:
        trainer_class: :class:`~larev_hf.training.IRMProbeTrainer` or a subclass; its ``config_class`` is built.
        settings: optimiser settings (learning rate, epochs, seed, LoRA, ...) shared with every trained model.
        groups_per_batch: environment groups per batch (``per_device_train_batch_size`` of an IRM config).
        probe: LAREV's frozen probe ψ; without it λ_probe is 0 unless ``config_values`` say otherwise.
        trainer_kwargs: further arguments of the trainer (a ``loss`` module).
        config_values: fields of the trainer's config (``lambda_irm``, ``penalty_warmup_ratio``, ``normalization``);
            ``token_reduction`` is :data:`~larev_hf.training.settings.LIBRARY_TOKEN_REDUCTION` unless given.
    """
    if probe is None:
        config_values.setdefault("lambda_probe", 0.0)
    config_values.setdefault("token_reduction", LIBRARY_TOKEN_REDUCTION)  # the evaluators' recorded objective
    args = settings.training_arguments(
        checkpoint_dir_for(output_dir), args_class=trainer_class.config_class,
        per_device_train_batch_size=groups_per_batch, logging_steps=IRM_LOGGING_STEPS, **config_values,
    )
    trainer = trainer_class(model=settings.prepare_model(model), args=args, train_dataset=train_dataset,
                            processing_class=tokenizer, **({"probe_model": probe} if probe is not None else {}),
                            **(trainer_kwargs or {}))
    return fit_and_save(trainer, tokenizer, output_dir)
