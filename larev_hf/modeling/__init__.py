"""Evaluator backbones and the one batched label-scoring routine.

Names load on first use (:mod:`larev_hf.lazy`): the presets and input formats without torch, the rest with it.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.modeling.backbones import (
        build_model,
        build_tokenizer,
        check_backbone,
        hub_offline,
        load_evaluator,
        resolve_device,
        save_evaluator,
    )
    from larev_hf.modeling.input_formats import INPUT_FORMATS, InputFormat, get_input_format, task_text
    from larev_hf.modeling.presets import (
        KIND_DEFAULTS,
        PRESETS,
        BackbonePreset,
        backbone_default,
        backbone_defaults,
        is_preset,
        is_pretrained,
        training_defaults,
    )
    from larev_hf.modeling.scoring import (
        LabelScores,
        choice_scores,
        generate_texts,
        predict_choices,
        score_labels,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "presets": ("KIND_DEFAULTS", "PRESETS", "BackbonePreset", "backbone_default", "backbone_defaults", "is_preset",
                "is_pretrained", "training_defaults"),
    "backbones": ("build_model", "build_tokenizer", "check_backbone", "hub_offline", "load_evaluator", "resolve_device",
                  "save_evaluator"),
    "scoring": ("LabelScores", "choice_scores", "generate_texts", "predict_choices", "score_labels"),
    "input_formats": ("INPUT_FORMATS", "InputFormat", "get_input_format", "task_text"),
})
