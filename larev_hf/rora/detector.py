"""RoRA's leakage detector: a weakly contextual r → y classifier, IG attributions, global n-gram masking.

RoRA §3.1 fits a small model Φ_small: R → P(Y) on the rationale alone and attributes its
predictions to input features with Integrated Gradients; the attributions are averaged per feature
over the training split ("global" attribution, appendix A.1) and the features scoring above a
threshold are the leaking spans R_L. Following the authors' StrategyQA configuration
(``shared/REFERENCE-IMPLEMENTATIONS.md``):

- features are word n-grams of a rationale: unigrams **and** bigrams (the released helper yields only
  bigrams when asked for ≤ 2-grams; we do not reproduce that bug); vocabulary min_freq 1, max 10,000;
- Φ_small is fastText-style (Joulin et al., 2017): the mean of the n-gram embeddings (dim 100) → a
  linear layer; AdamW lr 0.1, batch 256, 20 epochs (RoRA appendix C.2);
- IG (Sundararajan et al., 2017) with captum: zero-embedding baseline, 20 steps, target = the softmax
  probability of the gold class; a position's attribution is Σ_dim(ḡ × e), the path-averaged gradient
  times the embedding (the released code's "IG × embedding"; see :class:`DetectorSettings` ``attribution``);
  attributions are averaged per vocabulary n-gram over the training split and applied to every split;
- masking: if more than ``max_ngrams`` (8) of a rationale's n-grams exceed ``threshold`` all of them are
  masked, else its ``top_k`` (2) highest-scoring n-grams regardless of the threshold; overlapping or
  adjacent n-grams merge into one span and each span becomes a sentinel ``<extra_id_k>`` (the T5
  span-corruption format the infiller is trained on, RoRA §3.2).

The label set is the union of every training example's ``choices``; each example's softmax runs over
its own choices only, so yes/no, NLI and multiple-choice QA data all train the same classifier (RoRA
used an LSTM bi-encoder for ECQA instead; see ``docs/rora.md``).

This module holds the classifier, its training, the attributions and the masking rule; the n-gram features are
:mod:`larev_hf.rora.ngrams` and the masked rationales it returns (spans, sentinels, their files)
:mod:`larev_hf.rora.masking`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from larev_hf.defaults import IG_STEPS, RORA_THRESHOLD, RORA_TOP_K
from larev_hf.io import DataError, atomic_path, read_json, where, write_json
from larev_hf.rora.masking import NUM_SENTINELS, MaskedRationale, merge_spans
from larev_hf.rora.ngrams import NGram, NGramVocab

ATTRIBUTION_MODES = ("ig", "ig_x_embedding")
#: ``DetectorSettings(threshold=AUTO_THRESHOLD)``: tune the threshold on the training rationales (RoRA appendix C.2).
AUTO_THRESHOLD = "auto"

DETECTOR_CONFIG = "detector_config.json"
DETECTOR_WEIGHTS = "detector.pt"
ATTRIBUTIONS = "attributions.json"


class FastTextClassifier(nn.Module):
    """fastText-style classifier (Joulin et al., 2017): mean of n-gram embeddings → linear layer.

    Args:
        vocab_size (`int`): number of n-gram ids including the padding id 0.
        num_labels (`int`): size of the global label set.
        dim (`int`, *optional*, defaults to 100): embedding size (RoRA's StrategyQA configuration).
    """

    def __init__(self, vocab_size: int, num_labels: int, dim: int = 100) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.head = nn.Linear(dim, num_labels)

    def forward_embeds(self, embeds: torch.Tensor, mask: torch.Tensor, choice_mask: torch.Tensor) -> torch.Tensor:
        """Logits over the label set from n-gram embeddings ``[B, L, D]``; labels outside an example's choices get −inf."""
        mask = mask.to(embeds.dtype).unsqueeze(-1)
        mean = (embeds * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(mean).masked_fill(~choice_mask, float("-inf"))

    def forward(self, ids: torch.Tensor, choice_mask: torch.Tensor) -> torch.Tensor:
        return self.forward_embeds(self.embedding(ids), ids.ne(0), choice_mask)


@dataclass
class DetectorSettings:
    """Settings of the leakage detector (RoRA §3.1, appendix C.2; the released code's StrategyQA values).

    Parameters that control the classifier:
        max_n (`int`, *optional*, defaults to `2`): longest n-gram (unigrams and bigrams).
        min_freq (`int`, *optional*, defaults to `1`) / max_vocab (`int`, *optional*, defaults to `10000`): vocabulary.
        dim (`int`, *optional*, defaults to `100`): n-gram embedding size.
        learning_rate (`float`, *optional*, defaults to `0.1`), batch_size (`int`, *optional*, defaults to `256`),
        num_epochs (`int`, *optional*, defaults to `20`): AdamW training of Φ_small.

    Parameters that control the attributions and the masking:
        ig_steps (`int`, *optional*, defaults to `20`): Integrated Gradients steps.
        ig_batch_size (`int`, *optional*, defaults to `64`): rationales per IG call.
        attribution (`str`, *optional*, defaults to `"ig"`): ``"ig"`` scores a position by Σ_dim(ḡ × e), the
            path-averaged gradient ḡ times the embedding e (IG with a zero baseline); ``"ig_x_embedding"`` multiplies
            captum's IG attributions (already ḡ × e) by e once more, a literal reading of the released code that
            squares the embedding and so loses the sign of its direction (``docs/rora.md``).
        threshold (`float` or `"auto"`, *optional*, defaults to `0.001`): global attribution above which an n-gram
            leaks (the authors' configs; the paper quotes 0.01 for RoRA and 0.005 for RoRA_DeBERTa, appendix C.2).
            ``"auto"`` applies the paper's tuning rule (appendix C.2) to the training rationales: the largest
            threshold at which at least ``auto_min_share`` of them get more than the top-k masked
            (:meth:`LeakageDetector.calibrate_threshold`); the chosen value replaces ``"auto"`` in the fitted settings.
        auto_min_share (`float`, *optional*, defaults to `0.5`): "at least the majority of the samples" for ``"auto"``.
        max_ngrams (`int`, *optional*, defaults to `8`): if *more* than this many n-grams of a rationale exceed
            the threshold, all of them are masked ...
        top_k (`int`, *optional*, defaults to `2`): ... otherwise its ``top_k`` highest-scoring n-grams are.
        seed (`int`, *optional*, defaults to `0`): initialisation and shuffling.
    """

    max_n: int = 2
    min_freq: int = 1
    max_vocab: int = 10_000
    dim: int = 100
    learning_rate: float = 0.1
    batch_size: int = 256
    num_epochs: int = 20
    ig_steps: int = IG_STEPS
    ig_batch_size: int = 64
    attribution: str = "ig"
    threshold: float | str = RORA_THRESHOLD
    auto_min_share: float = 0.5
    max_ngrams: int = 8
    top_k: int = RORA_TOP_K
    seed: int = 0

    def __post_init__(self) -> None:
        if self.attribution not in ATTRIBUTION_MODES:
            raise ValueError(f"attribution must be one of {ATTRIBUTION_MODES}, got {self.attribution!r}")
        if isinstance(self.threshold, str) and self.threshold != AUTO_THRESHOLD:
            raise ValueError(f"threshold must be a number or {AUTO_THRESHOLD!r}, got {self.threshold!r}")
        if not 0.0 < self.auto_min_share <= 1.0:
            raise ValueError(f"auto_min_share must be in (0, 1], got {self.auto_min_share}")
        if self.max_n < 1 or self.top_k < 1 or self.max_ngrams < 0:
            raise ValueError(f"max_n and top_k must be >= 1 and max_ngrams >= 0, got {self.max_n}, {self.top_k}, {self.max_ngrams}")


class LeakageDetector:
    """Finds leaking n-grams of rationales (RoRA §3.1) and masks them.

    Build one with :meth:`fit` on the training records (fields ``rationale``, ``label``, ``choices``),
    then :meth:`mask` any rationale of any split. :meth:`save` / :meth:`load` round-trip it.

    Example:

    ```python
    detector = LeakageDetector.fit(train_records)  # schema records of the training split
    masked = detector.mask("Chuck Norris is a person. The answer is yes.")
    masked.masked     # e.g. "Chuck Norris is a person. The answer <extra_id_0>"
    masked.originals  # e.g. ["is yes."]: what the infiller learns to predict
    ```
    """

    def __init__(
        self,
        vocab: NGramVocab,
        labels: list[str],
        model: FastTextClassifier,
        attributions: np.ndarray,
        settings: DetectorSettings,
        history: dict[str, Any] | None = None,
    ) -> None:
        if len(attributions) != len(vocab):
            raise ValueError(f"got {len(attributions)} attributions for a vocabulary of {len(vocab)} ids")
        self.vocab, self.labels, self.model, self.settings = vocab, labels, model, settings
        self.attributions = np.asarray(attributions, dtype=np.float64)
        self.history = history or {}

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(
        cls, records: Sequence[Mapping[str, Any]], settings: DetectorSettings | None = None, progress: bool = False
    ) -> LeakageDetector:
        """Train Φ_small on r → y, then average IG attributions per n-gram over ``records`` (RoRA §3.1)."""
        settings = settings or DetectorSettings()
        _check_records(records)
        rationales = [record["rationale"] for record in records]
        vocab = NGramVocab.build(rationales, settings.max_n, settings.min_freq, settings.max_vocab)
        labels = sorted({choice for record in records for choice in record["choices"]})
        ids, choice_mask, gold = _encode(vocab, labels, records)
        torch.manual_seed(settings.seed)
        model = FastTextClassifier(len(vocab), len(labels), settings.dim)
        history = _train(model, ids, choice_mask, gold, settings, progress)
        attributions = _global_attributions(model, ids, choice_mask, gold, len(vocab), settings, progress)
        detector = cls(vocab, labels, model, attributions, settings, history)
        if settings.threshold == AUTO_THRESHOLD:
            threshold = detector.calibrate_threshold(rationales, settings.auto_min_share)
            detector.settings = replace(settings, threshold=threshold)
            detector.history["calibrated_threshold"] = threshold
        return detector

    def calibrate_threshold(self, rationales: Sequence[str], min_share: float = 0.5) -> float:
        """RoRA appendix C.2's tuning rule: the largest threshold at which at least ``min_share`` of ``rationales``
        have more than ``max_ngrams`` n-grams above it (so they get all of those masked, not just the top-k).

        A rationale passes at threshold t iff its (max_ngrams + 1)-th highest n-gram attribution exceeds t, so the
        answer is just below the ⌈min_share · n⌉-th largest of those values.
        """
        rank = self.settings.max_ngrams + 1
        values = []
        for text in rationales:
            _, grams = self.vocab.encode(text)
            scores = sorted((self.attributions[self.vocab.id(gram.key)] for gram in grams), reverse=True)
            values.append(scores[rank - 1] if len(scores) >= rank else -np.inf)
        values.sort(reverse=True)
        kth = values[max(math.ceil(min_share * len(values)), 1) - 1]
        if not np.isfinite(kth):
            raise ValueError(f"threshold 'auto': fewer than {min_share:.0%} of the rationales have more than "
                             f"{self.settings.max_ngrams} n-grams; set a number instead")
        return float(np.nextafter(kth, -np.inf))

    # ------------------------------------------------------------------ use
    def score(self, key: str) -> float | None:
        """Global attribution of an n-gram key (``None`` when it is out of vocabulary)."""
        index = self.vocab.id(key)
        return float(self.attributions[index]) if index else None

    def select(self, text: str) -> list[NGram]:
        """The n-grams of ``text`` to mask: all above the threshold if more than ``max_ngrams``, else the top ``top_k``."""
        _, grams = self.vocab.encode(text)
        if not grams:
            return []
        scores = [self.attributions[self.vocab.id(gram.key)] for gram in grams]
        above = [gram for gram, score in zip(grams, scores, strict=True) if score > self.settings.threshold]
        if len(above) > self.settings.max_ngrams:
            return above
        order = sorted(range(len(grams)), key=lambda i: (-scores[i], grams[i].first, grams[i].last))
        return [grams[i] for i in order[: self.settings.top_k]]

    def mask(self, text: str, example_id: str | None = None) -> MaskedRationale:
        """``text`` with its leaking spans (merged) marked for sentinel replacement."""
        spans = merge_spans(self.select(text))
        if len(spans) >= NUM_SENTINELS:
            raise DataError(f"{where(example_id=example_id)}: {len(spans)} masked spans; at most {NUM_SENTINELS - 1} "
                            "fit the sentinel format (raise the detector threshold)")
        return MaskedRationale(text, spans)

    def top_ngrams(self, k: int = 25) -> list[tuple[str, float]]:
        """The ``k`` n-grams with the highest global attribution (for reports)."""
        order = np.argsort(-self.attributions[1:], kind="stable")[:k]
        return [(self.vocab.ngrams[i], float(self.attributions[i + 1])) for i in order]

    def accuracy(self, records: Sequence[Mapping[str, Any]]) -> float:
        """Accuracy of Φ_small on ``records`` (how predictable y is from r alone)."""
        _check_records(records, known_labels=self.labels)
        ids, choice_mask, gold = _encode(self.vocab, self.labels, records)
        with torch.no_grad():
            predictions = self.model.eval()(ids, choice_mask).argmax(-1)
        return float((predictions == gold).float().mean())

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | os.PathLike) -> None:
        """Write the config, weights and the global attribution table (each file atomically)."""
        directory = Path(directory)
        write_json(directory / DETECTOR_CONFIG, {
            "settings": asdict(self.settings), "labels": self.labels, "ngrams": self.vocab.ngrams, "history": self.history,
        })
        with atomic_path(directory / DETECTOR_WEIGHTS) as tmp:
            torch.save(self.model.state_dict(), tmp)
        write_json(directory / ATTRIBUTIONS, dict(self.top_ngrams(len(self.vocab.ngrams))))

    @classmethod
    def load(cls, directory: str | os.PathLike) -> LeakageDetector:
        directory = Path(directory)
        if not (directory / DETECTOR_CONFIG).is_file():
            raise FileNotFoundError(f"{directory}: no {DETECTOR_CONFIG}; expected a directory written by LeakageDetector.save")
        config = read_json(directory / DETECTOR_CONFIG)
        settings = DetectorSettings(**config["settings"])
        vocab = NGramVocab(config["ngrams"], settings.max_n)
        model = FastTextClassifier(len(vocab), len(config["labels"]), settings.dim)
        model.load_state_dict(torch.load(directory / DETECTOR_WEIGHTS, weights_only=True))
        table = read_json(directory / ATTRIBUTIONS)
        attributions = np.zeros(len(vocab))
        attributions[1:] = [table[key] for key in vocab.ngrams]
        return cls(vocab, config["labels"], model.eval(), attributions, settings, config.get("history"))


def _check_records(records: Sequence[Mapping[str, Any]], known_labels: Sequence[str] | None = None) -> None:
    if not records:
        raise DataError("the leakage detector needs at least one record")
    for record in records:
        for name in ("rationale", "label", "choices"):
            if name not in record:
                raise DataError(f"{where(example_id=record.get('id'))}: missing field {name!r}; the detector needs "
                                "'rationale', 'label' and 'choices'")
        if record["label"] not in record["choices"]:
            raise DataError(f"{where(example_id=record.get('id'))}: field 'label' is {record['label']!r}, "
                            f"outside its choices {list(record['choices'])}")
        if known_labels is not None and record["label"] not in known_labels:
            raise DataError(f"{where(example_id=record.get('id'))}: label {record['label']!r} was never seen in training")


def _encode(
    vocab: NGramVocab, labels: list[str], records: Sequence[Mapping[str, Any]]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded n-gram ids ``[N, L]``, each example's allowed labels ``[N, K]`` and its gold label index."""
    index = {label: i for i, label in enumerate(labels)}
    rows = [vocab.encode(record["rationale"])[0] for record in records]
    width = max(1, max(len(row) for row in rows))
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    choice_mask = torch.zeros((len(records), len(labels)), dtype=torch.bool)
    for i, record in enumerate(records):
        choice_mask[i, [index[c] for c in record["choices"] if c in index]] = True
    gold = torch.tensor([index[record["label"]] for record in records], dtype=torch.long)
    return ids, choice_mask, gold


def _train(
    model: FastTextClassifier, ids: torch.Tensor, choice_mask: torch.Tensor, gold: torch.Tensor,
    settings: DetectorSettings, progress: bool,
) -> dict[str, Any]:
    """AdamW on the cross-entropy of the gold label among each example's choices; returns the loss per epoch."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    generator = torch.Generator().manual_seed(settings.seed)
    losses = []
    model.train()
    for _ in tqdm(range(settings.num_epochs), desc="leakage detector", disable=not progress):
        order, total = torch.randperm(len(ids), generator=generator), 0.0
        for start in range(0, len(ids), settings.batch_size):
            batch = order[start : start + settings.batch_size]
            loss = nn.functional.cross_entropy(model(ids[batch], choice_mask[batch]), gold[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        losses.append(total / len(ids))
    model.eval()
    with torch.no_grad():
        accuracy = float((model(ids, choice_mask).argmax(-1) == gold).float().mean())
    return {"epoch_loss": losses, "train_accuracy": accuracy}


def _global_attributions(
    model: FastTextClassifier, ids: torch.Tensor, choice_mask: torch.Tensor, gold: torch.Tensor,
    vocab_size: int, settings: DetectorSettings, progress: bool,
) -> np.ndarray:
    """Mean over all training occurrences of each n-gram of Σ_dim(IG × embedding) (RoRA §3.1, appendix A.1)."""
    from captum.attr import IntegratedGradients

    def gold_probability(embeds, mask, allowed):
        return torch.softmax(model.forward_embeds(embeds, mask, allowed), dim=-1)

    # "ig": multiply_by_inputs=False returns the path-averaged gradient, multiplied by the embedding (the input minus
    # the zero baseline) exactly once below, so the scores are IG attributions (completeness holds).
    ig = IntegratedGradients(gold_probability, multiply_by_inputs=settings.attribution == "ig_x_embedding")
    sums, counts = np.zeros(vocab_size), np.zeros(vocab_size)
    for start in tqdm(range(0, len(ids), settings.ig_batch_size), desc="detector IG", disable=not progress):
        batch_ids = ids[start : start + settings.ig_batch_size]
        mask = batch_ids.ne(0)
        with torch.no_grad():
            embeds = model.embedding(batch_ids)
        attributions = ig.attribute(
            embeds, baselines=torch.zeros_like(embeds), target=gold[start : start + settings.ig_batch_size],
            additional_forward_args=(mask, choice_mask[start : start + settings.ig_batch_size]),
            n_steps=settings.ig_steps,
        )
        scores = (attributions * embeds).sum(-1).detach()
        np.add.at(sums, batch_ids[mask].numpy(), scores[mask].double().numpy())
        np.add.at(counts, batch_ids[mask].numpy(), 1.0)
    attributions = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    attributions[0] = 0.0
    return attributions


