"""RoRA end to end on training records: detector → masked rationales → infiller → D^e → Φ (IRM) and Θ.

The steps are the released code's pipeline (RoRA §3, figure 1): each is a function of the previous
step's output, so :class:`larev_hf.pipeline.Run` runs them as separate resumable stages and
:func:`fit_rora` runs them in one call (tests, benchmarks, notebooks).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from transformers import PreTrainedTokenizerBase

from larev_hf.io import write_json
from larev_hf.modeling.backbones import build_model, build_tokenizer
from larev_hf.modeling.presets import fill_backbone_defaults, is_preset
from larev_hf.rora.detector import DetectorSettings, LeakageDetector
from larev_hf.rora.evaluator import RoRAScorer, counterfactual_dataset, train_phi, train_theta
from larev_hf.rora.infiller import (
    Counterfactuals,
    build_infiller,
    generate_counterfactuals,
    save_counterfactuals,
    train_infiller,
)
from larev_hf.rora.masking import TEMPLATE_WORDS, MaskedRationale, save_masked, task_text
from larev_hf.rora.settings import (
    GENERATION_BATCH_SIZE,
    INFILLER_MAX_LENGTH,
    MAX_NEW_TOKENS,
    RoRASettings,
    phi_groups_per_batch,
)
from larev_hf.training.settings import TrainSettings


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
    detector_settings: DetectorSettings | None = None,
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
        settings (`RoRASettings`, *optional*): the detector's threshold and top-k and Φ's λ (default: the backbone's).
        detector_settings (`DetectorSettings`, *optional*): the whole detector, instead of ``settings``' threshold and
            top-k.
    """
    output_dir = Path(output_dir)
    settings = replace(settings or RoRASettings())
    fill_backbone_defaults(settings, backbone)  # what it leaves unset (λ), the backbone decides, as in a run
    if train_settings is None:
        train_settings = TrainSettings.for_backbone(backbone, progress=progress)
    if tokenizer is None:
        tokenizer = build_tokenizer(backbone, tokenizer_texts(train_records) if is_preset(backbone) else None)
    seed = train_settings.seed
    detector = LeakageDetector.fit(train_records, detector_settings or settings.detector_settings(seed),
                                   progress=progress)
    detector.save(output_dir / "detector")
    masked = mask_rationales(detector, train_records)
    save_masked(output_dir / "masked_train.jsonl", [r["id"] for r in train_records], masked)
    infiller_tokenizer = copy.deepcopy(tokenizer)
    infiller = build_infiller(backbone, infiller_tokenizer, seed=seed)
    train_infiller(infiller, infiller_tokenizer, train_records, masked, output_dir / "infiller",
                   replace(train_settings, max_label_length=INFILLER_MAX_LENGTH))
    counterfactuals, stats = generate_counterfactuals(
        infiller, infiller_tokenizer, train_records, masked, batch_size=GENERATION_BATCH_SIZE,
        max_new_tokens=MAX_NEW_TOKENS, progress=progress)
    save_counterfactuals(output_dir / "counterfactuals_train.jsonl", counterfactuals)
    dataset = counterfactual_dataset(train_records, counterfactuals, tokenizer, train_settings.max_input_length,
                                     train_settings.max_label_length)
    arguments, groups = settings.phi_arguments(), phi_groups_per_batch(backbone)
    phi = train_phi(build_model(backbone, tokenizer, seed=seed), tokenizer, dataset, output_dir / "phi", train_settings,
                    arguments, groups)
    theta = train_theta(build_model(backbone, tokenizer, seed=seed), tokenizer, train_records, output_dir / "theta",
                        train_settings)
    write_json(output_dir / "rora_settings.json", {"backbone": backbone, **asdict(settings),
                                                   "lambda_irm": arguments.lambda_irm, "groups_per_batch": groups,
                                                   "counterfactuals": stats})
    return RoRAFit(detector, masked, counterfactuals, stats, RoRAScorer(theta.eval(), phi.eval(), tokenizer), settings)
