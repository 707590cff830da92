"""RoRA end to end on training records: detector → masked rationales → infiller → D^e → Φ (IRM) and Θ.

The steps are the released code's pipeline (RoRA §3, figure 1): each is a function of the previous
step's output, so :class:`larev_hf.pipeline.Run` runs them as separate resumable stages and
:func:`fit_rora` runs them in one call (tests, benchmarks, notebooks).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from transformers import PreTrainedTokenizerBase

from larev_hf.io import write_json
from larev_hf.modeling.backbones import build_model, build_tokenizer
from larev_hf.modeling.presets import backbone_default, is_preset
from larev_hf.rora.detector import DetectorSettings, LeakageDetector
from larev_hf.rora.evaluator import NORMALIZATIONS, RoRAScorer, counterfactual_dataset, train_phi, train_theta
from larev_hf.rora.formats import TEMPLATE_WORDS, task_text
from larev_hf.rora.infiller import (
    Counterfactuals,
    build_infiller,
    generate_counterfactuals,
    save_counterfactuals,
    train_infiller,
)
from larev_hf.rora.masking import MaskedRationale, save_masked
from larev_hf.training.settings import PENALTY_WARMUP_RATIO, TrainSettings


@dataclass
class RoRASettings:
    """What RoRA adds to a run's training settings (RoRA §3, appendix C.2).

    Args:
        detector (`DetectorSettings`, *optional*): leakage detector and masking (threshold, top-k fallback).
        lambda_irm (`float`, *optional*): IRMv1 weight λ of eq. 7; default: the backbone's (``rora_lambda_irm`` of
            :data:`~larev_hf.modeling.presets.KIND_DEFAULTS`).
        normalization (`str`, *optional*, defaults to `"label_set"`): the penalty's probability, renormalised over the
            candidate labels (eq. 7) or over the vocabulary (``"vocab"``).
        penalty_warmup_ratio (`float`, *optional*, defaults to `1/3`): linear warm-up of λ over this share of steps.
        groups_per_batch (`int`, *optional*): examples per Φ batch, each with all its environments.
        infiller_max_length (`int`, *optional*, defaults to `128`): longest span target (tokens) the infiller learns.
        generation_batch_size (`int`, *optional*, defaults to `32`) / max_new_tokens (`int`, *optional*, defaults to
            `64`): greedy infilling.
    """

    detector: DetectorSettings = field(default_factory=DetectorSettings)
    lambda_irm: float | None = None
    normalization: str = "label_set"
    penalty_warmup_ratio: float = PENALTY_WARMUP_RATIO
    groups_per_batch: int | None = None
    infiller_max_length: int = 128
    generation_batch_size: int = 32
    max_new_tokens: int = 64

    def __post_init__(self) -> None:
        if isinstance(self.detector, Mapping):
            self.detector = DetectorSettings(**self.detector)
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {self.normalization!r}")
        if self.lambda_irm is not None and self.lambda_irm < 0:
            raise ValueError(f"lambda_irm must be >= 0, got {self.lambda_irm}")

    def resolved(self, backbone: str) -> RoRASettings:
        """A copy with ``lambda_irm`` / ``groups_per_batch`` filled from the backbone kind's defaults."""
        return replace(self, lambda_irm=backbone_default(backbone, "rora_lambda_irm") if self.lambda_irm is None
                       else self.lambda_irm,
                       groups_per_batch=self.groups_per_batch or backbone_default(backbone, "rora_groups_per_batch"))


def tokenizer_texts(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Texts a preset tokenizer for RoRA is trained on: x, rationales, labels and the templates' words (twice, so they
    pass the tokenizer's minimum count)."""
    return [TEMPLATE_WORDS] * 2 + [text for r in records for text in (task_text(r), r["rationale"], *r["choices"])]


def mask_rationales(
    detector: LeakageDetector, records: Sequence[Mapping[str, Any]], rationales: Sequence[str] | None = None
) -> list[MaskedRationale]:
    """The detector's masking of each record's rationale (or of ``rationales``)."""
    texts = [r["rationale"] for r in records] if rationales is None else rationales
    return [detector.mask(text, r.get("id")) for r, text in zip(records, texts, strict=True)]


@dataclass
class RoRAFit:
    """Everything :func:`fit_rora` produced; ``scorer`` computes RoRA eq. 9."""

    detector: LeakageDetector
    masked: list[MaskedRationale]
    counterfactuals: list[Counterfactuals]
    counterfactual_stats: dict[str, int]
    scorer: RoRAScorer
    settings: RoRASettings


def fit_rora(
    train_records: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike,
    backbone: str = "t5-tiny",
    tokenizer: PreTrainedTokenizerBase | None = None,
    train_settings: TrainSettings | None = None,
    settings: RoRASettings | None = None,
    progress: bool = False,
) -> RoRAFit:
    """Run RoRA's training pipeline on ``train_records`` (schema records) and return the fitted pieces.

    Artifacts go to ``output_dir``: ``detector/``, ``masked_train.jsonl``, ``infiller/``,
    ``counterfactuals_train.jsonl``, ``phi/``, ``theta/`` and ``rora_settings.json``.

    Args:
        train_records (`Sequence[Mapping]`): training examples with ``id``, ``task``, the input fields, ``choices``,
            ``label`` and ``rationale``.
        output_dir (`str` or `os.PathLike`): where the models and intermediate files are written.
        backbone (`str`, *optional*, defaults to `"t5-tiny"`): an offline preset or a seq2seq checkpoint; the infiller,
            Φ and Θ all use it.
        tokenizer (`PreTrainedTokenizerBase`, *optional*): shared by Φ and Θ (the infiller gets a copy with sentinels);
            by default the backbone's, trained on the records for a preset.
        train_settings (`TrainSettings`, *optional*): optimiser settings of the three seq2seq models; default: the
            backbone's (:meth:`~larev_hf.training.TrainSettings.for_backbone`).
        settings (`RoRASettings`, *optional*): the detector, λ and generation settings.
    """
    output_dir = Path(output_dir)
    settings = (settings or RoRASettings()).resolved(backbone)
    if train_settings is None:
        train_settings = TrainSettings.for_backbone(backbone, progress=progress)
    if tokenizer is None:
        tokenizer = build_tokenizer(backbone, tokenizer_texts(train_records) if is_preset(backbone) else None)
    seed = train_settings.seed
    detector = LeakageDetector.fit(train_records, settings.detector, progress=progress)
    detector.save(output_dir / "detector")
    masked = mask_rationales(detector, train_records)
    save_masked(output_dir / "masked_train.jsonl", [r["id"] for r in train_records], masked)
    infiller_tokenizer = copy.deepcopy(tokenizer)
    infiller = build_infiller(backbone, infiller_tokenizer, seed=seed)
    train_infiller(infiller, infiller_tokenizer, train_records, masked, output_dir / "infiller",
                   replace(train_settings, max_label_length=settings.infiller_max_length))
    counterfactuals, stats = generate_counterfactuals(
        infiller, infiller_tokenizer, train_records, masked, batch_size=settings.generation_batch_size,
        max_new_tokens=settings.max_new_tokens, progress=progress)
    save_counterfactuals(output_dir / "counterfactuals_train.jsonl", counterfactuals)
    dataset = counterfactual_dataset(train_records, counterfactuals, tokenizer, train_settings.max_input_length,
                                     train_settings.max_label_length)
    phi = train_phi(build_model(backbone, tokenizer, seed=seed), tokenizer, dataset, output_dir / "phi", train_settings,
                    settings.lambda_irm, settings.groups_per_batch, settings.normalization, settings.penalty_warmup_ratio)
    theta = train_theta(build_model(backbone, tokenizer, seed=seed), tokenizer, train_records, output_dir / "theta",
                        train_settings)
    write_json(output_dir / "rora_settings.json", {"backbone": backbone, **asdict(settings), "counterfactuals": stats})
    return RoRAFit(detector, masked, counterfactuals, stats, RoRAScorer(theta.eval(), phi.eval(), tokenizer), settings)
