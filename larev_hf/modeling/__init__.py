"""Evaluator backbones and the one batched label-scoring routine.

Names load on first use (:mod:`larev_hf.lazy`): the presets and input formats without torch, the rest with it.
"""

from larev_hf.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "presets": ("PRESETS", "BackbonePreset", "is_preset", "is_pretrained", "training_defaults"),
    "backbones": ("build_model", "build_tokenizer", "check_backbone", "hub_offline", "load_evaluator", "resolve_device",
                  "save_evaluator"),
    "scoring": ("LabelScores", "choice_scores", "predict_choices", "score_labels"),
    "generation": ("generate_texts",),
    "templates": ("INPUT_FORMATS", "InputFormat", "get_input_format"),
})
