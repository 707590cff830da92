"""Training: plain evaluators through ``Seq2SeqTrainer`` and LAREV's ``IRMProbeTrainer``.

Names load on first use (:mod:`larev_hf.lazy`): :class:`TrainSettings` and the penalty constants without torch.
"""

from larev_hf.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("PENALTY_WARMUP_RATIO", "THESIS_PENALTIES", "TrainSettings"),
    "collator": ("EnvironmentCollator",),
    "irm_config": ("IRMProbeConfig",),
    "irm_trainer": ("IRMProbeTrainer",),
    "losses": ("IRMProbeLoss", "irm_penalty", "label_nll"),
    "sampler": ("EnvironmentGroupBatchSampler", "GroupOrderSampler", "LengthGroupedShuffledSampler",
                "length_grouped_batches"),
    "seq2seq": ("EvaluatorTrainer", "checkpoint_dir_for", "fit_and_save", "save_model_atomically", "tokenize_pairs",
                "train_on_records", "train_seq2seq"),
})
