"""LoRA adapters (PEFT) for every trainable evaluator: Φ_base, Φ, the probe ψ and Φ_LA.

An adapter-trained evaluator is saved as PEFT saves it (``adapter_config.json`` +
``adapter_model.safetensors``) plus, when its base weights exist nowhere else, the base model in
``<dir>/base_model`` — an offline preset is a random initialisation, and the probe's base is Φ
with its adapter merged. A base that is a Hub checkpoint (``t5-large``) is referenced by name in
``adapter_config.json`` and not copied. :func:`larev_hf.modeling.load_evaluator` loads either
layout and merges the adapter for scoring.

The probe keeps its frozen-encoder semantics (thesis §4.5.3): it starts from Φ (adapter merged),
and only decoder modules receive adapters, so the encoder — base weights and all — stays fixed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from torch import nn
from transformers import PreTrainedModel

from larev_hf.modeling.lora_settings import LoraSettings

#: Where an adapter directory keeps base weights that cannot be reloaded by name.
BASE_MODEL_DIR = "base_model"
ADAPTER_CONFIG = "adapter_config.json"


def lora_target_modules(model: nn.Module, suffixes: list[str] | None = None, decoder_only: bool = False) -> list[str]:
    """Full names of the linear layers to adapt: those ending in one of ``suffixes`` (all, if ``None``),
    never the output projection, and only decoder layers when ``decoder_only``."""
    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    names = []
    for name, module in model.named_modules():
        if not isinstance(module, nn.Linear) or module is output:
            continue
        if suffixes is not None and name.rsplit(".", 1)[-1] not in suffixes:
            continue
        if decoder_only and "decoder" not in name.split("."):
            continue
        names.append(name)
    if not names:
        raise ValueError(f"no linear layer of {type(model).__name__} matches LoRA target_modules={suffixes} "
                         f"(decoder_only={decoder_only})")
    return names


def apply_lora(model: PreTrainedModel, settings: LoraSettings, decoder_only: bool = False):
    """Wrap ``model`` in a PEFT LoRA model; only the adapters (and ``modules_to_save``) train. With
    ``decoder_only`` (the probe) both the adapters and the fully trained modules are decoder-side."""
    from peft import LoraConfig, TaskType, get_peft_model

    check_modules_to_save(model, settings.modules_to_save)
    modules_to_save = settings.modules_to_save
    if decoder_only and modules_to_save:  # PEFT matches name suffixes: "decoder.embed_tokens" spares the encoder's
        modules_to_save = [f"decoder.{name}" for name in modules_to_save]
    config = LoraConfig(
        task_type=TaskType.SEQ_2_SEQ_LM, r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
        target_modules=lora_target_modules(model, settings.target_modules, decoder_only),
        modules_to_save=modules_to_save,
    )
    return get_peft_model(model, config)


def check_modules_to_save(model: nn.Module, names: list[str] | None) -> None:
    """Refuse a ``modules_to_save`` entry that the model's forward never calls.

    PEFT trains a copy of each such module in place of the named attribute only. T5's and BART's
    ``shared`` embedding shares its weights with ``encoder.embed_tokens`` / ``decoder.embed_tokens``,
    which are the modules the forward calls, so a trained copy of ``shared`` would get no gradient.
    Checked with one single-token forward pass and forward hooks.
    """
    if not names:
        return
    import torch

    called: set[str] = set()
    hooks = [module.register_forward_hook(lambda *_, name=name: called.add(name))
             for name, module in model.named_modules() if name.rsplit(".", 1)[-1] in names]
    start = getattr(model.config, "decoder_start_token_id", None) or 0
    device = next(model.parameters()).device
    try:
        with torch.no_grad():
            model(input_ids=torch.tensor([[start]], device=device), decoder_input_ids=torch.tensor([[start]], device=device))
    finally:
        for hook in hooks:
            hook.remove()
    for wanted in names:
        if not any(name.rsplit(".", 1)[-1] == wanted for name in called):
            raise ValueError(
                f"LoRA modules_to_save {wanted!r}: the forward never calls a module of that name (a tied alias such as "
                "T5's 'shared' is reached as 'embed_tokens'), so its trained copy would get no gradient"
            )


def is_peft_model(model: nn.Module) -> bool:
    from peft import PeftModel

    return isinstance(model, PeftModel)


def save_adapter(model, directory: str | os.PathLike) -> None:
    """Save the adapter, and the base weights in ``base_model/`` unless the base is a reloadable checkpoint name."""
    directory = Path(directory)
    model.save_pretrained(directory)
    if not _reloadable(model.get_base_model().name_or_path):
        _save_base_weights(model, directory / BASE_MODEL_DIR)


def _save_base_weights(model, directory: Path) -> None:
    """Write the base model without adapters: a copy with the LoRA layers unloaded (not merged)."""
    import copy

    bare = copy.deepcopy(model).unload()
    bare.save_pretrained(directory)


def _reloadable(name_or_path: str) -> bool:
    """Whether ``name_or_path`` names weights that load again later: a Hub id (not a local path)."""
    return bool(name_or_path) and not Path(name_or_path).exists() and not os.path.isabs(name_or_path)


def is_adapter_dir(directory: str | os.PathLike) -> bool:
    return Path(directory, ADAPTER_CONFIG).is_file()


def load_adapter_model(directory: str | os.PathLike, merge: bool = True, **model_kwargs: Any) -> PreTrainedModel:
    """Load an adapter directory onto its base (``base_model/`` if saved, else the name in ``adapter_config.json``)."""
    from peft import PeftConfig, PeftModel
    from transformers import AutoModelForSeq2SeqLM

    directory = Path(directory)
    local_base = directory / BASE_MODEL_DIR
    base_name = str(local_base) if local_base.is_dir() else PeftConfig.from_pretrained(directory).base_model_name_or_path
    base = AutoModelForSeq2SeqLM.from_pretrained(base_name, **model_kwargs)
    model = PeftModel.from_pretrained(base, directory)
    if not merge:
        return model
    merged = model.merge_and_unload()
    # The merged weights exist only here: an adapter trained on top of them must save them as its base.
    merged.name_or_path = merged.config._name_or_path = ""
    return merged
