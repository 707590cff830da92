"""Training: plain evaluators through ``Seq2SeqTrainer``; LAREV's ``IRMProbeTrainer`` (and its subclasses) through one
routine, :func:`train_irm`.

Names load on first use (:mod:`larev_hf.lazy`): :class:`TrainSettings`, :class:`IRMArguments` and the penalty
constants without torch.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.training.collator import EnvironmentCollator
    from larev_hf.training.irm_trainer import IRMProbeConfig, IRMProbeTrainer, train_irm
    from larev_hf.training.losses import IRMProbeLoss, PenaltyWeights, irm_loss_parts, irm_penalty, label_nll
    from larev_hf.training.nli_judge import NLIJudge, explained_premise, train_esnli_judge, train_nli_judge
    from larev_hf.training.sampler import (
        EnvironmentGroupBatchSampler,
        GroupOrderSampler,
        LengthGroupedShuffledSampler,
        length_grouped_batches,
    )
    from larev_hf.training.seq2seq import (
        EvaluatorTrainer,
        checkpoint_dir_for,
        fit_and_save,
        save_model_atomically,
        tokenize_pairs,
        train_on_records,
        train_seq2seq,
    )
    from larev_hf.training.settings import (
        PENALTY_WARMUP_RATIO,
        IRMArguments,
        TrainSettings,
        trainer_field,
        trainer_values,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("PENALTY_WARMUP_RATIO", "IRMArguments", "TrainSettings", "trainer_field", "trainer_values"),
    "collator": ("EnvironmentCollator",),
    "irm_trainer": ("IRMProbeConfig", "IRMProbeTrainer", "train_irm"),
    "losses": ("IRMProbeLoss", "PenaltyWeights", "irm_loss_parts", "irm_penalty", "label_nll"),
    "nli_judge": ("NLIJudge", "explained_premise", "train_esnli_judge", "train_nli_judge"),
    "sampler": ("EnvironmentGroupBatchSampler", "GroupOrderSampler", "LengthGroupedShuffledSampler",
                "length_grouped_batches"),
    "seq2seq": ("EvaluatorTrainer", "checkpoint_dir_for", "fit_and_save", "save_model_atomically", "tokenize_pairs",
                "train_on_records", "train_seq2seq"),
})
