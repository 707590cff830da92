"""LoRA hyper-parameters, importable without torch or peft (the CLI builds its ``--lora-*`` flags from them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class LoraSettings:
    """LoRA hyper-parameters (Hu et al. 2022) shared by every model of a run.

    Args:
        r (`int`, *optional*, defaults to 16): adapter rank.
        alpha (`int`, *optional*, defaults to 32): scaling numerator (the update is scaled by alpha / r).
        dropout (`float`, *optional*, defaults to 0.05): dropout on the adapter's input.
        target_modules (`list[str]`, *optional*): module-name suffixes to adapt (``["q", "v"]`` is PEFT's
            T5 default); ``None`` adapts every linear layer except the output projection, which is what
            a randomly initialised preset needs to learn at all.
        modules_to_save (`list[str]`, *optional*): modules trained in full and saved with the adapter
            (e.g. ``["embed_tokens"]`` for a preset's input embeddings; not ``"shared"``, whose trained copy
            the encoder and decoder would never call).
    """

    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] | None = None
    modules_to_save: list[str] | None = field(default=None)

    def __post_init__(self) -> None:
        if self.r < 1:
            raise ValueError(f"LoRA rank r must be >= 1, got {self.r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"LoRA dropout must be in [0, 1), got {self.dropout}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
