"""Training: plain evaluators through ``Seq2SeqTrainer`` and LAREV's ``IRMProbeTrainer``.

Names load on first use (:mod:`larev_hf.lazy`): :class:`TrainSettings` and the penalty constants without torch.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.training.collator import EnvironmentCollator
    from larev_hf.training.irm_config import IRMProbeConfig
    from larev_hf.training.irm_trainer import IRMProbeTrainer
    from larev_hf.training.losses import IRMProbeLoss, irm_penalty, label_nll
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
    from larev_hf.training.settings import PENALTY_WARMUP_RATIO, TrainSettings


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("PENALTY_WARMUP_RATIO", "TrainSettings"),
    "collator": ("EnvironmentCollator",),
    "irm_config": ("IRMProbeConfig",),
    "irm_trainer": ("IRMProbeTrainer",),
    "losses": ("IRMProbeLoss", "irm_penalty", "label_nll"),
    "sampler": ("EnvironmentGroupBatchSampler", "GroupOrderSampler", "LengthGroupedShuffledSampler",
                "length_grouped_batches"),
    "seq2seq": ("EvaluatorTrainer", "checkpoint_dir_for", "fit_and_save", "save_model_atomically", "tokenize_pairs",
                "train_on_records", "train_seq2seq"),
})
