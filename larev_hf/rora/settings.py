"""RoRA's settings, importable without torch (the CLI builds ``--rora.*`` from them): one dataclass for the run's flags
and :func:`~larev_hf.rora.fit_rora` alike."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, ClassVar

from larev_hf.defaults import RORA_THRESHOLD, RORA_TOP_K
from larev_hf.modeling.presets import KIND_DEFAULTS, backbone_default
from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION, IRMArguments, trainer_field

#: The stages that train RoRA's evaluators: what the choice of evaluator (and its IRM weight) changes; the detector,
#: the infiller and the counterfactual rationales stay.
RORA_EVALUATOR_STAGES = ("rora_phi", "rora_theta")
#: The infiller: the longest span target (tokens) it learns; greedy infilling's batch size and longest fill.
INFILLER_MAX_LENGTH = 128
GENERATION_BATCH_SIZE = 32
MAX_NEW_TOKENS = 64
#: Examples (each with all its environments) per batch of Φ where no backbone decides (the random-init presets').
RORA_GROUPS_PER_BATCH = KIND_DEFAULTS["random_init"]["rora.groups_per_batch"]


def rora_threshold_type(text: str) -> float | str:
    """argparse type of ``--rora.threshold``: a number, or ``"auto"`` (RoRA appendix C.2's tuning rule)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {text!r}") from None


@dataclass
class RoRASettings:
    """RoRA's settings (RoRA §3, appendix C.2): the leakage detector's threshold and top-k fallback, Φ's IRMv1 weight
    (a field of its trainer's config, :class:`~larev_hf.rora.RoRAConfig`) and the classifier variant (§4.1). The rest
    of the detector is :class:`~larev_hf.rora.DetectorSettings`, the rest of Φ's training its config.

    A nested section (``namespace``): its fields keep their own names, and a run spells them ``rora.<name>`` (the
    flag ``--rora.lambda-irm``, the ``run_config.json`` key ``rora.lambda_irm``), beside LAREV's ``lambda_irm``."""

    #: The prefix of these fields among a run's settings (:func:`~larev_hf.methods.settings.setting_key`).
    namespace: ClassVar[str] = "rora"

    threshold: float | str = field(default=RORA_THRESHOLD, metadata={
        "help": "global attribution above which an n-gram leaks (more than 8 above: all masked, else the top 2); "
                "'auto': RoRA's tuning rule (appendix C.2), the largest value at which most training rationales get "
                "more than the top 2 masked", "type": rora_threshold_type})
    top_k: int = field(default=RORA_TOP_K, metadata={
        "help": "n-grams masked per rationale when no more than 8 exceed the threshold (RoRA's top-k fallback); 3 "
                "covers 'yes', 'is yes' and 'yes .' so every label's mask has the same shape"})
    lambda_irm: float | None = trainer_field(IRMArguments, "lambda_irm", default=None, stages=RORA_EVALUATOR_STAGES)
    classifier: str | None = field(default=None, metadata={
        "help": "RoRA's classifier variant (§4.1): Φ and Θ are this pretrained encoder with a classification head "
                "('minilm' = the offline MiniLM-L6, or a checkpoint such as microsoft/deberta-v3-large); default: "
                "seq2seq evaluators on --backbone", "metavar": "ENCODER", "stages": RORA_EVALUATOR_STAGES})

    def decided_by(self, config: Any) -> str:
        """The backbone that decides what a run leaves unset here (λ): the classifier encoder when there is one,
        else the run's backbone (:meth:`~larev_hf.config.RunConfig._fill_backbone_defaults`)."""
        return evaluator_backbone(self, config.model.backbone)

    def phi_arguments(self) -> IRMArguments:
        """Φ's trainer fields (:class:`~larev_hf.rora.RoRAConfig`'s own) from these settings: this IRMv1 weight (once
        the backbone has decided it), no probe, the library's summed label NLL."""
        if self.lambda_irm is None:
            raise ValueError("rora.lambda_irm is undecided: a RunConfig fills it from the backbone "
                             "(larev_hf.modeling.presets.fill_backbone_defaults)")
        return IRMArguments(lambda_irm=self.lambda_irm, lambda_probe=0.0, token_reduction=LIBRARY_TOKEN_REDUCTION)

    def validate(self, config: Any) -> None:
        """A run's checks: ``classifier`` needs RoRA among the run's methods and full fine-tuning."""
        if self.classifier and "rora" not in config.methods:
            raise ValueError(f"--rora.classifier {self.classifier!r} applies to RoRA; add rora to "
                             f"--method {config.run.method!r}")
        if self.classifier and config.peft.lora:
            raise ValueError("--rora.classifier trains its encoder in full; LoRA (--lora) applies to the seq2seq models only")

    def detector_settings(self, seed: int = 0) -> Any:
        """The leakage detector's :class:`~larev_hf.rora.DetectorSettings`: this threshold and top-k, its other
        defaults."""
        # imported here: the detector module loads torch, and the CLI imports this one to build its flags
        from larev_hf.rora.detector import DetectorSettings

        return DetectorSettings(threshold=self.threshold, top_k=self.top_k, seed=seed)


def evaluator_backbone(settings: RoRASettings, backbone: str) -> str:
    """The backbone of RoRA's Φ and Θ: ``settings``' classifier encoder (§4.1), else ``backbone``."""
    return settings.classifier or backbone


def phi_groups_per_batch(backbone: str) -> int:
    """Examples (each with all its environments) per batch of Φ on ``backbone`` (its ``rora.groups_per_batch``:
    :data:`~larev_hf.modeling.presets.KIND_DEFAULTS`, a fixed property of the backbone, not a setting)."""
    return backbone_default(backbone, "rora.groups_per_batch")
