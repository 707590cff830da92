"""Training: plain evaluators through ``Seq2SeqTrainer`` and LAREV's ``IRMProbeTrainer``."""

from larev_hf.training.collator import EnvironmentCollator
from larev_hf.training.irm_config import THESIS_PENALTIES, IRMProbeConfig
from larev_hf.training.irm_trainer import IRMProbeTrainer
from larev_hf.training.losses import IRMProbeLoss, irm_penalty, label_nll
from larev_hf.training.sampler import EnvironmentGroupBatchSampler, GroupOrderSampler
from larev_hf.training.seq2seq import (
    TrainSettings,
    checkpoint_dir_for,
    fit_and_save,
    save_model_atomically,
    tokenize_pairs,
    train_on_records,
    train_seq2seq,
)

__all__ = [
    "EnvironmentCollator", "THESIS_PENALTIES", "IRMProbeConfig", "IRMProbeTrainer", "IRMProbeLoss", "irm_penalty",
    "label_nll", "EnvironmentGroupBatchSampler", "GroupOrderSampler", "TrainSettings", "save_model_atomically",
    "tokenize_pairs", "train_on_records", "train_seq2seq", "checkpoint_dir_for", "fit_and_save",
]
