"""Pointwise conditional V-information scores from a pair of trained evaluators.

REV (REV eq. 5-6; thesis eq. 3.2):   REV(r)   = log p_Φ(y | r ⊕ b)    − log p_Φbase(y | b)
LAREV (thesis eq. 4.4):              LAREV(r) = log p_ΦLA(y | r ⊕ b)  − log p_Φbase(y | b)

Both are the same computation with a different rationale-augmented model, so one class
serves both (and any other "model with r" vs "model without r" metric). Corpus scores are the
mean of the pointwise scores (REV eq. 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.modeling.input_formats import InputFormat, get_input_format
from larev_hf.modeling.scoring import score_labels


@dataclass
class CVIScores:
    """Pointwise scores and their two terms (all in nats)."""

    scores: np.ndarray
    log_p_with_rationale: np.ndarray
    log_p_baseline: np.ndarray

    @property
    def corpus(self) -> float:
        """Corpus score: the mean pointwise score (REV eq. 6)."""
        return float(np.mean(self.scores)) if len(self.scores) else float("nan")


class ConditionalVScorer:
    """Scores rationales with a baseline model Φ_base (b → y) and a rationale model (r ⊕ b → y).

    Args:
        baseline_model (`PreTrainedModel`): Φ_base, trained on b → y.
        rationale_model (`PreTrainedModel`): Φ (REV) or Φ_LA (LAREV), trained on r ⊕ b → y.
        tokenizer (`PreTrainedTokenizerBase`): shared by both models.
        input_format (`str` or `InputFormat`, *optional*, defaults to `"larev"`): how r and b become encoder text.
        reduction (`str`, *optional*, defaults to `"sum"`): "sum" = log p(y | ·); "mean" = REV code's per-token mean.
        batch_size (`int`, *optional*, defaults to 64): scoring batch size.
    """

    def __init__(
        self,
        baseline_model: PreTrainedModel,
        rationale_model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        input_format: str | InputFormat = "larev",
        reduction: str = "sum",
        batch_size: int = 64,
    ) -> None:
        self.baseline_model = baseline_model
        self.rationale_model = rationale_model
        self.tokenizer = tokenizer
        self.input_format = get_input_format(input_format) if isinstance(input_format, str) else input_format
        self.reduction = reduction
        self.batch_size = batch_size

    def baseline_log_probs(self, baselines: Sequence[str], labels: Sequence[str], progress: bool = False) -> np.ndarray:
        """log p_Φbase(y | b) per example."""
        inputs = [self.input_format.baseline_input(b) for b in baselines]
        return score_labels(
            self.baseline_model, self.tokenizer, inputs, labels, batch_size=self.batch_size, progress=progress, desc="Φ_base"
        ).reduce(self.reduction)

    def rationale_log_probs(
        self, rationales: Sequence[str], baselines: Sequence[str], labels: Sequence[str], progress: bool = False
    ) -> np.ndarray:
        """log p(y | r ⊕ b) per example under the rationale model."""
        inputs = [self.input_format.rationale_input(r, b) for r, b in zip(rationales, baselines, strict=True)]
        return score_labels(
            self.rationale_model, self.tokenizer, inputs, labels, batch_size=self.batch_size, progress=progress, desc="Φ(r⊕b)"
        ).reduce(self.reduction)

    def score(
        self,
        rationales: Sequence[str],
        baselines: Sequence[str],
        labels: Sequence[str],
        baseline_log_probs: np.ndarray | None = None,
        progress: bool = False,
    ) -> CVIScores:
        """Pointwise scores of ``rationales``; pass ``baseline_log_probs`` to reuse the Φ_base term across variants."""
        if not (len(rationales) == len(baselines) == len(labels)):
            raise ValueError(
                f"rationales ({len(rationales)}), baselines ({len(baselines)}) and labels ({len(labels)}) must have one entry per example"
            )
        base = self.baseline_log_probs(baselines, labels, progress) if baseline_log_probs is None else baseline_log_probs
        with_rationale = self.rationale_log_probs(rationales, baselines, labels, progress)
        return CVIScores(scores=with_rationale - base, log_p_with_rationale=with_rationale, log_p_baseline=base)
