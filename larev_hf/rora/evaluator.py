"""RoRA's evaluators: Φ trained with IRMv1 across the counterfactual environments, the baseline Θ, and the score.

RoRA §3.3:

- Φ is trained on the union of the D^e (one environment per candidate label e) with the IRMv1
  penalty of Arjovsky et al. (2019) applied per environment to the label-set-normalised
  log-probability (eq. 7)::

      L(Φ) = Σ_e E_{D^e}[−log p_Φ(y | x, r)] + λ Σ_e ‖∇_{w|w=1} E_{D^e}[−log (p_wΦ(y | x, r) / Σ_{y'} p_wΦ(y' | x, r))]‖²

  The ERM term keeps the full-vocabulary sequence likelihood (so greedy decoding still works), the
  penalty normalises over the example's candidate labels. ``normalization="vocab"`` instead applies
  the penalty to the full-vocabulary NLL (LAREV's :func:`~larev_hf.training.irm_penalty`).
- Θ is trained on x with an empty rationale (eq. 8).
- RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅) per example; the corpus score is the mean (eq. 9).

Training reuses LAREV's :class:`~larev_hf.training.IRMProbeTrainer` (environment-grouped batches,
linear penalty warm-up, logged ``irm/penalty`` and ``env/<e>/loss``) with the probe switched off, its config
(:class:`RoRAConfig`: LAREV's plus the normalisation) and the loss module below; scoring reuses :class:`~larev_hf.scores.ConditionalVScorer`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import datasets
import numpy as np
import torch
from accelerate.utils import extract_model_from_parallel
from torch import nn
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.citations import bibtex
from larev_hf.io import DataError, where
from larev_hf.rora.infiller import Counterfactuals
from larev_hf.rora.masking import RORA_FORMAT, baseline_input, evaluator_input, task_text
from larev_hf.scores.cvi import ConditionalVScorer, CVIScores
from larev_hf.training.collator import EnvironmentCollator
from larev_hf.training.irm_trainer import IRMProbeConfig, IRMProbeTrainer, train_irm
from larev_hf.training.losses import (
    IRMProbeLoss,
    LossParts,
    PenaltyWeights,
    irm_loss_parts,
    label_nll_and_scale_gradient,
)
from larev_hf.training.seq2seq import tokenize_pairs, train_on_records
from larev_hf.training.settings import IRMArguments, TrainSettings

#: Over what the penalty's probability is normalised: the example's candidate labels (eq. 7) or the vocabulary.
NORMALIZATIONS = ("label_set", "vocab")


@dataclass
class RoRAConfig(IRMProbeConfig):
    r"""
    Configuration for [`RoRATrainer`]: :class:`~larev_hf.training.IRMProbeConfig` (λ, warm-up, environment and group
    columns) plus the normalisation of RoRA eq. 7. RoRA has no probe: ``lambda_probe`` must stay 0.

    Parameters that control the objective:
        normalization (`str`, *optional*, defaults to `"label_set"`):
            The penalty's probability renormalised over the example's candidate labels (eq. 7) or, ``"vocab"``, the
            full-vocabulary NLL (LAREV's IRMv1).
    """

    normalization: str = field(default=NORMALIZATIONS[0], metadata={
        "help": "the IRM penalty's probability over the candidate labels (label_set, RoRA eq. 7) or the vocabulary",
        "choices": NORMALIZATIONS})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {self.normalization!r}")


CITATION = bibtex("jiang-etal-2024-rora")


def counterfactual_dataset(
    records: Sequence[Mapping[str, Any]],
    counterfactuals: Sequence[Counterfactuals],
    tokenizer: PreTrainedTokenizerBase,
    max_input_length: int = 256,
    max_label_length: int = 32,
) -> datasets.Dataset:
    """Φ's training rows: one per (example, candidate label e), ``"{x} rationale: {r^e}"`` → y.

    Columns: ``input_ids``, ``attention_mask``, ``labels``, ``environment`` (the index of e among the example's
    choices: for yes/no and NLI exactly the environment D^e of RoRA §3.2), ``group_id`` (the example, so a batch
    holds all of its environments), ``candidate_labels`` (token ids of every choice) and ``gold_index``.
    """
    by_id = {c.id: c for c in counterfactuals}
    sources, targets, environments, groups, candidates, gold = [], [], [], [], [], []
    for group, record in enumerate(records):
        if record["id"] not in by_id:
            raise DataError(f"{where(example_id=record['id'])}: no counterfactual rationales; run generate_counterfactuals "
                            "on these records first")
        rationales = by_id[record["id"]].rationales
        choice_ids = tokenizer(text_target=list(record["choices"]), truncation=True, max_length=max_label_length)["input_ids"]
        for env, label in enumerate(record["choices"]):
            if label not in rationales:
                raise DataError(f"{where(example_id=record['id'])}: no counterfactual rationale for label {label!r}")
            sources.append(evaluator_input(record, rationales[label]))
            targets.append(record["label"])
            environments.append(env)
            groups.append(group)
            candidates.append(choice_ids)
            gold.append(list(record["choices"]).index(record["label"]))
    return tokenize_pairs(tokenizer, sources, targets, max_input_length, max_label_length, extra_columns={
        "environment": environments, "group_id": groups, "candidate_labels": candidates, "gold_index": gold,
    })


@dataclass
class CandidateCollator(EnvironmentCollator):
    """:class:`~larev_hf.training.EnvironmentCollator` plus each row's candidate labels ``[rows, K, T]`` (−100 padded),
    their mask ``[rows, K]`` and the gold candidate's index, for the label-set normalisation of RoRA eq. 7."""

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = super().__call__(features)
        if features and "candidate_labels" in features[0]:
            n_candidates = max(len(f["candidate_labels"]) for f in features)
            width = max(len(ids) for f in features for ids in f["candidate_labels"])
            candidates = torch.full((len(features), n_candidates, width), -100, dtype=torch.long)
            mask = torch.zeros((len(features), n_candidates), dtype=torch.bool)
            for row, feature in enumerate(features):
                for k, ids in enumerate(feature["candidate_labels"]):
                    candidates[row, k, : len(ids)] = torch.tensor(ids, dtype=torch.long)
                    mask[row, k] = True
            batch["candidate_labels"], batch["candidate_mask"] = candidates, mask
            batch["gold_index"] = torch.tensor([int(f["gold_index"]) for f in features], dtype=torch.long)
        return batch


def label_set_irm_penalty(
    logits: torch.Tensor,
    candidates: torch.Tensor,
    valid: torch.Tensor,
    gold: torch.Tensor,
    environments: torch.Tensor,
    token_reduction: str = "sum",
) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
    """RoRA eq. 7's IRMv1 penalty and the per-environment ERM risks.

    Args:
        logits (`torch.Tensor`): ``[rows × K, T, V]`` decoder logits, candidate k of row i at ``i × K + k``.
        candidates (`torch.Tensor`): ``[rows × K, T]`` candidate label ids, −100 = padding.
        valid (`torch.Tensor`): ``[rows, K]`` which candidates exist.
        gold (`torch.Tensor`): ``[rows]`` index of the gold label among the candidates.
        environments (`torch.Tensor`): ``[rows]`` environment of each row.

    Returns:
        `tuple`: Σ_e (∂/∂w mean_{i ∈ e} −log p̃_w(y_i) at w = 1)², where log p̃_w(y) = log p_w(y) − log Σ_k p_w(c_k) and
        p_w is computed from the logits scaled by w; and ``{e: mean_{i ∈ e} −log p(y_i)}`` (full-vocabulary NLL).
    """
    rows, n_candidates = valid.shape
    # d(−log p̃_w(y))/dw = g_y − Σ_k q_k g_k, with g_c = d(−log p_w(c))/dw in closed form and q = p̃ over the candidates.
    nll, scale_gradient = label_nll_and_scale_gradient(logits, candidates, token_reduction)
    log_p, scale_gradient = -nll.view(rows, n_candidates), scale_gradient.view(rows, n_candidates)
    candidate_weights = torch.softmax(log_p.masked_fill(~valid, float("-inf")), dim=1)
    row_gradient = scale_gradient.gather(1, gold.unsqueeze(1)).squeeze(1) - (candidate_weights * scale_gradient).sum(1)
    gold_log_p = log_p.gather(1, gold.unsqueeze(1)).squeeze(1)
    risks: dict[int, torch.Tensor] = {}
    penalty = nll.new_zeros(())
    for env in torch.unique(environments).tolist():
        in_env = environments == env
        penalty = penalty + row_gradient[in_env].mean().pow(2)
        risks[int(env)] = -gold_log_p[in_env].mean()
    return penalty, risks


class LabelSetIRMLoss(IRMProbeLoss):
    """RoRA eq. 7: Σ_e ERM^e + λ · Σ_e (∂/∂w E_{D^e}[−log p̃_w(y)] at w = 1)², p̃ normalised over the candidate labels.

    Args:
        normalization (`str`, *optional*, defaults to `"label_set"`): ``"label_set"`` (eq. 7: the penalty's
            probability is renormalised over the example's choices) or ``"vocab"`` (the penalty on the full
            vocabulary NLL, LAREV's IRMv1).
        token_reduction (`str`, *optional*, defaults to `"sum"`): a label's log-probability as the sum (log p(y|·)) or
            the mean of its token log-probabilities.

    Inputs of ``forward``: the model and a batch from :class:`CandidateCollator`; the probe arguments of
    :class:`~larev_hf.training.IRMProbeLoss` are ignored (RoRA has no probe). Returned ``erm_loss`` is the *sum* of the
    environment risks, as in eq. 7 (LAREV's loss averages them).
    """

    def __init__(self, normalization: str = NORMALIZATIONS[0], token_reduction: str = "sum") -> None:
        super().__init__(token_reduction)
        if normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}")
        self.normalization = normalization

    def forward(self, model: nn.Module, batch: dict[str, torch.Tensor], probe: nn.Module | None,
                weights: PenaltyWeights) -> LossParts:
        if self.normalization == "vocab":
            parts = super().forward(model, batch, None, weights)
            return irm_loss_parts(parts.environment_losses, parts.irm_penalty, weights, erm_reduction="sum")
        candidates, valid, gold = batch["candidate_labels"], batch["candidate_mask"], batch["gold_index"]
        rows, n_candidates, width = candidates.shape
        flat = candidates.reshape(rows * n_candidates, width)
        unwrapped = extract_model_from_parallel(model)
        # The encoder runs once per row; its states are repeated for the K candidates, so only the (short) label
        # decoding is paid K times. As in LAREV's probe term, the encoder is called on the unwrapped model (its
        # gradients are still synchronised under DDP) and the decoder through the possibly wrapped one.
        attention_mask = batch["attention_mask"].repeat_interleave(n_candidates, 0)
        encoded = unwrapped.get_encoder()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        encoded.last_hidden_state = encoded.last_hidden_state.repeat_interleave(n_candidates, 0)
        logits = model(
            encoder_outputs=encoded,
            attention_mask=attention_mask,
            decoder_input_ids=unwrapped.prepare_decoder_input_ids_from_labels(labels=flat),
            use_cache=False,
        ).logits
        penalty, risks = label_set_irm_penalty(logits, flat, valid, gold, batch["environment"], self.token_reduction)
        return irm_loss_parts(risks, penalty, weights, erm_reduction="sum")

    def get_config_dict(self) -> dict[str, object]:
        return {"normalization": self.normalization, "token_reduction": self.token_reduction}

    @property
    def citation(self) -> str:
        return CITATION


class RoRATrainer(IRMProbeTrainer):
    """:class:`~larev_hf.training.IRMProbeTrainer` for RoRA's Φ: keeps the candidate-label columns and uses
    :class:`LabelSetIRMLoss` with :class:`CandidateCollator` unless others are given. No probe.

    Logged metrics: ``erm/loss`` (the sum over environments), ``irm/penalty``, ``env/<e>/loss``, ``weights/lambda_irm``.
    """

    _tag_names = ["rora", "irm", "rationale-evaluation"]
    _name = "RoRA"
    config_class = RoRAConfig

    def __init__(self, model: PreTrainedModel, args: RoRAConfig, **kwargs) -> None:
        if not isinstance(args, RoRAConfig):
            raise TypeError(f"RoRATrainer needs a RoRAConfig, got {type(args).__name__}")
        if kwargs.get("probe_model") is not None or args.lambda_probe:
            raise ValueError("RoRA's evaluator has no leakage probe: leave probe_model unset and lambda_probe = 0")
        if kwargs.get("data_collator") is None and kwargs.get("processing_class") is not None:
            kwargs["data_collator"] = CandidateCollator(kwargs["processing_class"], args.environment_column, args.group_column)
        kwargs.setdefault("loss", LabelSetIRMLoss(args.normalization, args.token_reduction))
        super().__init__(model=model, args=args, **kwargs)

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            super()._set_signature_columns_if_needed()
            self._signature_columns += ["candidate_labels", "gold_index"]


def train_phi(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train_dataset: datasets.Dataset,
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    arguments: IRMArguments,
    groups_per_batch: int,
) -> PreTrainedModel:
    """Φ: ``model`` trained on :func:`counterfactual_dataset` rows with RoRA eq. 7 and saved to ``output_dir``.

    ``arguments`` are the trainer's fields (``lambda_irm``; ``penalty_warmup_ratio``: the penalty weight rises
    linearly over that share of the steps, where the released code switches it on after warm-up epochs);
    ``groups_per_batch`` examples (each with all its environments) form a batch.
    """
    return train_irm(RoRATrainer, model, tokenizer, train_dataset, output_dir, settings, arguments, groups_per_batch)


def train_theta(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
) -> PreTrainedModel:
    """Θ: ``"{x} rationale:"`` (an empty rationale) → y (RoRA eq. 8)."""
    return train_on_records(model, tokenizer, records, baseline_input, output_dir, settings)


def train_plain_evaluator(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
) -> PreTrainedModel:
    """RoRA's ablation evaluator: ``"{x} rationale: {r}"`` → y by plain ERM on the original rationales (RoRA §4, eq. 3):
    no detection, no counterfactuals, no IRM."""
    return train_on_records(model, tokenizer, records, lambda r: evaluator_input(r, r["rationale"]), output_dir, settings)


class RoRAScorer(ConditionalVScorer):
    """RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅) (RoRA eq. 9) for schema records.

    Args:
        theta (`PreTrainedModel`): Θ, trained on x with an empty rationale.
        phi (`PreTrainedModel`): Φ (or the ablation evaluator), trained on ``"{x} rationale: {r}"``.
        tokenizer (`PreTrainedTokenizerBase`): shared by both models.
        reduction (`str`, *optional*, defaults to `"sum"`): ``"sum"`` = log p(y | ·); ``"mean"`` per token.
        batch_size (`int`, *optional*, defaults to 64): scoring batch size.
    """

    def __init__(self, theta: PreTrainedModel, phi: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
                 reduction: str = "sum", batch_size: int = 64) -> None:
        super().__init__(theta, phi, tokenizer, RORA_FORMAT, reduction, batch_size)

    def theta_log_probs(self, records: Sequence[Mapping[str, Any]], progress: bool = False) -> np.ndarray:
        """log p_Θ(y | x, ∅) per record (shared by every rationale variant)."""
        return self.baseline_log_probs([task_text(r) for r in records], [r["label"] for r in records], progress)

    def score_records(
        self,
        records: Sequence[Mapping[str, Any]],
        rationales: Sequence[str] | None = None,
        theta_log_probs: np.ndarray | None = None,
        progress: bool = False,
    ) -> CVIScores:
        """Pointwise RoRA scores of ``rationales`` (default: each record's ``rationale``); corpus = ``.corpus`` (mean)."""
        rationales = [r["rationale"] for r in records] if rationales is None else list(rationales)
        return self.score(rationales=rationales, baselines=[task_text(r) for r in records],
                          labels=[r["label"] for r in records], baseline_log_probs=theta_log_probs, progress=progress)
