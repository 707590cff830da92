"""Evaluator backbones and the one batched label-scoring routine."""

from larev_hf.modeling.backbones import (
    PRESETS,
    BackbonePreset,
    build_model,
    build_tokenizer,
    check_backbone,
    hub_offline,
    is_preset,
    load_evaluator,
    resolve_device,
    save_evaluator,
    training_defaults,
)
from larev_hf.modeling.scoring import LabelScores, predict_choices, score_labels
from larev_hf.modeling.templates import INPUT_FORMATS, InputFormat, get_input_format

__all__ = [
    "PRESETS", "BackbonePreset", "build_model", "build_tokenizer", "check_backbone", "hub_offline", "is_preset", "load_evaluator", "resolve_device",
    "save_evaluator", "training_defaults", "LabelScores", "predict_choices", "score_labels", "INPUT_FORMATS",
    "InputFormat", "get_input_format",
]
