"""Training the encoder-classifier evaluators (:mod:`larev_hf.modeling.choice_classifier`) for REV and LAREV.

Φ_base and Φ are trained with cross-entropy over each example's choices; Φ_LA with LAREV's objective on the choice
logits, ERM + λ_IRM · IRMv1 over the environment groups (thesis eq. 4.10), through the same
:class:`~larev_hf.training.IRMProbeTrainer` (environment-group batches, penalty warm-up, logged parts). The leakage
probe term is not offered: ψ would be a head on Φ's frozen encoder, which λ_probe = 0 (the default for the offline
backbones: docs/method.md, "Measured defaults") never trains.
"""

from __future__ import annotations

import os

import datasets
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.modeling.choice_classifier import ChoiceCollator
from larev_hf.training.irm_trainer import IRMProbeConfig, IRMProbeTrainer, train_irm
from larev_hf.training.losses import IRMProbeLoss, LossParts, PenaltyWeights, irm_loss_parts, irm_penalty
from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION, IRMArguments, TrainSettings

#: The encoder inputs of a choice batch (``token_type_ids`` marks input vs choice in BERT-style encoders).
CHOICE_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class ChoiceIRMLoss(IRMProbeLoss):
    """Mean over environments of the choice cross-entropy + λ_IRM · Σ_e (∂L^e(w · logits)/∂w |_{w=1})² (eq. 4.10)."""

    def forward(self, model, batch, probe, weights: PenaltyWeights) -> LossParts:
        outputs = model(**{key: batch[key] for key in CHOICE_INPUTS if key in batch})
        penalty, risks, _ = irm_penalty(outputs.logits.unsqueeze(1), batch["labels"][:, :1], batch["environment"])  # [rows, K]
        parts = irm_loss_parts(risks, penalty, weights)
        parts.outputs = outputs
        return parts


class ChoiceTrainer(IRMProbeTrainer):
    """:class:`~larev_hf.training.IRMProbeTrainer` for multiple-choice evaluators: :class:`ChoiceCollator` batches,
    :class:`ChoiceIRMLoss`, no probe."""

    _name = "ChoiceIRM"

    def __init__(self, model: PreTrainedModel, args: IRMProbeConfig, **kwargs) -> None:
        if kwargs.get("probe_model") is not None or args.lambda_probe:
            raise ValueError("the choice-classifier evaluators have no leakage probe: set lambda_probe = 0")
        if kwargs.get("data_collator") is None and kwargs.get("processing_class") is not None:
            kwargs["data_collator"] = ChoiceCollator(kwargs["processing_class"])
        kwargs.setdefault("loss", ChoiceIRMLoss())
        super().__init__(model=model, args=args, **kwargs)

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            super()._set_signature_columns_if_needed()
            self._signature_columns.append("token_type_ids")


def train_choice_classifier(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    dataset: datasets.Dataset,
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    arguments: IRMArguments | None = None,
    groups_per_batch: int | None = None,
) -> PreTrainedModel:
    """Train and save Φ_base / Φ (one environment: rows without ``environment`` get environment 0, each its own
    group) or Φ_LA (``environment`` and ``group_id`` columns, ``arguments.lambda_irm`` > 0, ``groups_per_batch``
    groups). ``arguments``: the :class:`~larev_hf.training.IRMProbeConfig` fields; default: no penalty, the library's
    summed label NLL."""
    if "environment" not in dataset.column_names:
        dataset = dataset.add_column("environment", [0] * len(dataset)).add_column("group_id", list(range(len(dataset))))
    if arguments is None:
        arguments = IRMArguments(lambda_irm=0.0, lambda_probe=0.0, token_reduction=LIBRARY_TOKEN_REDUCTION)
    return train_irm(ChoiceTrainer, model, tokenizer, dataset, output_dir, settings, arguments,
                     groups_per_batch or settings.batch_size)
