"""``RoRAConfig``: the training arguments of RoRA's Φ, :class:`~larev_hf.training.IRMProbeConfig` plus the
normalisation of the penalty (RoRA eq. 7)."""

from __future__ import annotations

from dataclasses import dataclass, field

from larev_hf.training.irm_config import IRMProbeConfig

#: Over what the penalty's probability is normalised: the example's candidate labels (eq. 7) or the vocabulary.
NORMALIZATIONS = ("label_set", "vocab")


@dataclass
class RoRAConfig(IRMProbeConfig):
    r"""
    Configuration for [`RoRATrainer`]: :class:`~larev_hf.training.IRMProbeConfig` (λ, warm-up, environment and group
    columns) plus the normalisation of RoRA eq. 7. RoRA has no probe: ``lambda_probe`` must stay 0.

    Parameters that control the objective:
        normalization (`str`, *optional*, defaults to `"label_set"`):
            The penalty's probability renormalised over the example's candidate labels (eq. 7) or, ``"vocab"``, the
            full-vocabulary NLL (LAREV's IRMv1).
    """

    normalization: str = field(default=NORMALIZATIONS[0], metadata={
        "help": "the IRM penalty's probability over the candidate labels (label_set, RoRA eq. 7) or the vocabulary",
        "choices": NORMALIZATIONS})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {self.normalization!r}")
