"""``IRMProbeConfig``: the training arguments of LAREV's leakage-aware evaluator Φ_LA, the base of every IRM trainer's
config (RoRA's :class:`~larev_hf.rora.RoRAConfig` adds its normalisation)."""

from __future__ import annotations

from dataclasses import dataclass

from transformers import Seq2SeqTrainingArguments

from larev_hf.training.settings import IRMArguments


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
