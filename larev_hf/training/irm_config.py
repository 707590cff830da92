"""``IRMProbeConfig``: the training arguments of LAREV's leakage-aware evaluator Φ_LA."""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers import Seq2SeqTrainingArguments

from larev_hf.defaults import ENVIRONMENT_COLUMN, GROUP_COLUMN, PROBE_EVERY_N_STEPS
from larev_hf.modeling.presets import KIND_DEFAULTS
from larev_hf.training.settings import PENALTY_WARMUP_RATIO


@dataclass
class IRMProbeConfig(Seq2SeqTrainingArguments):
    r"""
    Configuration for [`IRMProbeTrainer`]: ``Seq2SeqTrainingArguments`` plus LAREV's fields (thesis eq. 4.9-4.10).

    Parameters that control the objective:
        lambda_irm (`float`, *optional*, defaults to `0.1`):
            Weight of the IRMv1 penalty Σ_e ‖∇_w L^e‖²; the default is the random-init presets' (`KIND_DEFAULTS` in
            `larev_hf.modeling.presets`, where every backbone's value and its source are; a run passes its own).
        lambda_probe (`float`, *optional*, defaults to `0.0`):
            Weight of the subtracted frozen-probe loss (thesis: 5e-3 e-SNLI, 5e-4 ECQA); the random-init presets'
            default, off (every value > 0 lowered the separations there); set it (and pass `probe_model`) to use it.
        penalty_warmup_ratio (`float`, *optional*, defaults to `1/3`):
            Both weights rise linearly from 0 to their value over this fraction of the training steps (§5.3.3).
        token_reduction (`str`, *optional*, defaults to `"sum"`):
            Per-example label NLL as the sum (−log p(y|·), what the scores use) or the mean of its token NLLs.
        probe_max_loss (`float` or `None`, *optional*, defaults to `None`):
            If set, the probe loss is clamped at this value before it is subtracted, so maximising it cannot
            run away (the −λ_probe term is otherwise unbounded below).
        probe_every_n_steps (`int`, *optional*, defaults to `1`):
            Compute the probe term on every n-th training step only, with weight n·λ_probe, so its expected
            gradient per step is unchanged while its cost (a second encoder pass over b̃ and ψ's decoder) is paid
            1/n of the time. 1 is the thesis's objective. Measured on t5-tiny (`benchmarks/bench_larev.py`, idle CPU,
            1 thread), step overhead over a plain `Seq2SeqTrainer` step: +26.5% with the probe on every step, +14% with
            n = 2, +7% with n = 4, +1% without a probe (`benchmarks/results/larev_speed.json`). Evaluation always computes it.

    Parameters that control the data:
        environment_column (`str`, *optional*, defaults to `"environment"`): integer environment index of a row.
        group_column (`str`, *optional*, defaults to `"group_id"`): the instance a row belongs to; a batch holds whole groups.

    > [!NOTE]
    > Differences from `Seq2SeqTrainingArguments`: `per_device_train_batch_size` counts environment *groups* (one
    > instance under all its environments), so a batch has `per_device_train_batch_size × n_environments` rows; the
    > thesis's "batch size 3" is one group of three environments. `remove_unused_columns` keeps the environment,
    > group and probe columns.
    """

    lambda_irm: float = field(default=KIND_DEFAULTS["random_init"]["lambda_irm"],
                              metadata={"help": "Weight of the IRMv1 penalty (thesis eq. 4.6)."})
    lambda_probe: float = field(default=KIND_DEFAULTS["random_init"]["lambda_probe"],
                                metadata={"help": "Weight of the subtracted frozen-probe loss (eq. 4.10)."})
    penalty_warmup_ratio: float = field(
        default=PENALTY_WARMUP_RATIO, metadata={"help": "Fraction of steps over which both penalty weights warm up linearly."}
    )
    token_reduction: str = field(default="sum", metadata={"help": "Per-example label NLL: 'sum' or 'mean' of token NLLs."})
    probe_max_loss: float | None = field(default=None, metadata={"help": "Clamp the probe loss at this value (None: no clamp)."})
    probe_every_n_steps: int = field(
        default=PROBE_EVERY_N_STEPS,
        metadata={"help": "Probe term on every n-th training step only, weighted n·λ_probe (1 = every step)."}
    )
    environment_column: str = field(default=ENVIRONMENT_COLUMN, metadata={"help": "Integer environment index column."})
    group_column: str = field(default=GROUP_COLUMN,
                              metadata={"help": "Group (instance) column; batches hold whole groups."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.lambda_irm < 0 or self.lambda_probe < 0:
            raise ValueError(f"penalty weights must be >= 0, got lambda_irm={self.lambda_irm}, lambda_probe={self.lambda_probe}")
        if not 0 <= self.penalty_warmup_ratio <= 1:
            raise ValueError(f"penalty_warmup_ratio must be in [0, 1], got {self.penalty_warmup_ratio}")
        if self.probe_every_n_steps < 1:
            raise ValueError(f"probe_every_n_steps must be >= 1, got {self.probe_every_n_steps}")
        if self.token_reduction not in ("sum", "mean"):
            raise ValueError(f"token_reduction must be 'sum' or 'mean', got {self.token_reduction!r}")
