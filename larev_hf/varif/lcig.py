"""LC-IG, VARIF's leakage-controlled information gain (``papers/varif-proposal.md`` §3.2).

Three predictors are trained on the gold rationales of a training split (Step A):

- h₀ = p₀(y | x) on x → y,
- d = p_d(y | r) on r → y (the leakage detector: how much of the label the rationale gives away by itself),
- h₁ = p₁(y | x ⊕ r⁻) on x ⊕ r⁻ → y, r⁻ the masked rationale of Step B,

plus h₁ᵘ = p(y | x ⊕ r) on the unmasked rationale, for the comparison of hypothesis H2 (masking lowers the score of
leaky rationales). Then every explanation method's rationales are masked the same way and scored (Step C):
I_i = log p₁(y_i | x_i ⊕ r_i⁻) − log p₀(y_i | x_i).

The predictors are the library's seq2seq evaluators (any preset or checkpoint, :func:`larev_hf.modeling.build_model`),
so open-label tasks (CoS-E's answer choices) work as well as fixed label sets; p(y | ·) is normalised over the
example's label set (its ``choices``), as a classifier's softmax would be
(:func:`~larev_hf.explain.choices.choice_log_probs`).

**Masking, and why it is label-symmetric.** RoRA's appendix A.1 warns that the *shape* of a mask can leak the label
(and this project measured it on StrategyQA: docs/varif.md, "Label-symmetric masking (r⁻)"). r⁻ is built so that it depends
on the rationale's content only, never on which label the rationale names or which label is gold:

1. every explicit label string of the example's label set (each choice and, for NLI, its inflections
   :data:`LABEL_FORMS`) is replaced by one mask token — one per phrase, however many words or subwords the phrase has;
2. IG (captum, :func:`~larev_hf.leakage.attribution.integrated_gradients_word_scores`) runs on d over the text of
   step 1 — so two rationales that differ only in the label they state get the same attributions — towards the
   logit of *every* label of the set (``ig_labels="all"``), and a word's score is its largest attribution to any
   label; the top ``mask_share`` of the words (at least one, at most ``max_masked``; the proposal's 10%, 10) are
   masked, one mask token each; punctuation never competes.

So the number and positions of the masks are a function of the label-stripped rationale alone
(:func:`mask_rationales`; ``ig_labels="gold"`` is the proposal's literal reading, kept as a setting).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from transformers import AutoTokenizer

from larev_hf.defaults import IG_STEPS, LCIG_IG_LABELS, LCIG_MASK_SHARE, LCIG_MAX_MASKED
from larev_hf.explain.choices import augmented_input, choice_log_probs
from larev_hf.io import read_jsonl, write_jsonl
from larev_hf.leakage.attribution import IGSettings, integrated_gradients_word_scores
from larev_hf.leakage.environments import mask_token_of
from larev_hf.modeling import build_model, build_tokenizer, load_evaluator
from larev_hf.modeling.input_formats import task_text
from larev_hf.training import TrainSettings, train_seq2seq

#: Inflections of the NLI label names masked with them (the "keyword safety mask" of §3.2 Step B).
LABEL_FORMS: dict[str, tuple[str, ...]] = {
    "entailment": ("entailment", "entailments", "entails", "entail", "entailed", "entailing"),
    "contradiction": ("contradiction", "contradictions", "contradicts", "contradict", "contradicted",
                      "contradicting", "contradictory"),
    "neutral": ("neutral",),
}
_PUNCTUATION_ONLY = re.compile(r"^\W+$")


@dataclass
class MaskSettings:
    """Step B of §3.2: which share of r's words IG masks (and the cap), towards which labels, with how many steps."""

    mask_share: float = LCIG_MASK_SHARE
    max_masked: int = LCIG_MAX_MASKED
    ig_labels: str = LCIG_IG_LABELS  # "all": the largest attribution towards any label (label-symmetric); "gold": the proposal
    ig_steps: int = IG_STEPS
    mask_label_strings: bool = True

    def __post_init__(self) -> None:
        if self.ig_labels not in ("all", "gold"):
            raise ValueError(f"ig_labels must be 'all' or 'gold', got {self.ig_labels!r}")
        if not 0.0 <= self.mask_share <= 1.0:
            raise ValueError(f"mask_share must be in [0, 1], got {self.mask_share}")

    def n_masked(self, n_words: int) -> int:
        """How many words IG masks in a rationale of ``n_words`` words: ⌈share · n⌉, at least 1, at most the cap."""
        if n_words == 0 or self.mask_share == 0.0:
            return 0
        return min(self.max_masked, n_words, max(1, math.ceil(self.mask_share * n_words)))


def label_phrases(record: Mapping[str, Any]) -> list[str]:
    """The explicit label strings of a record's label set (every choice, and the NLI inflections), longest first."""
    phrases = {choice.strip().lower() for choice in record["choices"] if choice.strip()}
    for choice in list(phrases):
        phrases.update(LABEL_FORMS.get(choice, ()))
    return sorted(phrases, key=lambda p: (-len(p), p))


def mask_label_strings(text: str, phrases: Sequence[str], mask_token: str) -> str:
    """``text`` with every whole-word occurrence of a phrase (case-insensitive) replaced by one ``mask_token``."""
    if not phrases:
        return text
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(p) for p in phrases) + r")(?!\w)", re.IGNORECASE)
    return pattern.sub(mask_token, text)


def maskable_words(text: str, spans: Sequence[tuple[int, int]], mask_token: str) -> list[int]:
    """The words that may be masked: neither punctuation alone nor an existing mask token."""
    return [i for i, (start, end) in enumerate(spans)
            if not _PUNCTUATION_ONLY.match(text[start:end]) and mask_token not in text[start:end]]


def mask_words(text: str, spans: Sequence[tuple[int, int]], scores: Sequence[float], n_masked: int,
               mask_token: str) -> tuple[str, list[str]]:
    """Replace the ``n_masked`` highest-scoring words (character ``spans`` of ``text``; punctuation and existing mask
    tokens never compete; ties broken by position) with ``mask_token``; returns the text and the masked words."""
    candidates = maskable_words(text, spans, mask_token)
    chosen = sorted(sorted(candidates, key=lambda i: (-scores[i], i))[:n_masked])
    out, last = [], 0
    for i in chosen:
        start, end = spans[i]
        out += [text[last:start], mask_token]
        last = end
    out.append(text[last:])
    return "".join(out), [text[spans[i][0]:spans[i][1]] for i in chosen]


def mask_rationales(detector: Any, tokenizer: Any, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                    labels: Sequence[str] | None = None, settings: MaskSettings | None = None,
                    progress: bool = False) -> list[dict[str, Any]]:
    """r⁻ for every rationale (§3.2 Step B, label-symmetric as in the module docstring).

    Returns per rationale ``{"masked": r⁻, "masked_words": [...], "n_label_strings": k}``.
    """

    settings = settings or MaskSettings()
    labels = [r["label"] for r in records] if labels is None else list(labels)
    if not (len(records) == len(rationales) == len(labels)):
        raise ValueError(f"got {len(records)} records, {len(rationales)} rationales and {len(labels)} labels")
    mask_token = mask_token_of(tokenizer)
    stripped = []
    for record, rationale in zip(records, rationales, strict=True):
        text = rationale.strip()
        if settings.mask_label_strings:
            text = mask_label_strings(text, label_phrases(record), mask_token)
        stripped.append(text)
    # IG towards every label of the set ("all") or the gold one: one (text, label) pair each
    pairs = [(i, label) for i, (record, gold) in enumerate(zip(records, labels, strict=True))
             for label in (record["choices"] if settings.ig_labels == "all" else [gold])]
    scored = integrated_gradients_word_scores(detector, tokenizer, [stripped[i] for i, _ in pairs],
                                              [label for _, label in pairs], IGSettings(n_steps=settings.ig_steps),
                                              progress=progress) if pairs else []
    best: dict[int, tuple[list[tuple[int, int]], np.ndarray]] = {}
    for (i, _), (spans, scores) in zip(pairs, scored, strict=True):
        previous = best.get(i)
        best[i] = (spans, np.asarray(scores) if previous is None else np.maximum(previous[1], scores))
    out = []
    for i, text in enumerate(stripped):
        spans, scores = best.get(i, ([], np.zeros(0)))
        n_masked = settings.n_masked(len(maskable_words(text, spans, mask_token)))
        masked, words = mask_words(text, spans, list(scores), n_masked, mask_token)
        out.append({"masked": masked, "masked_words": words, "n_label_strings": text.count(mask_token)})
    return out


#: The four predictors and what each reads.
PREDICTORS = ("h0", "detector", "h1", "h1_unmasked")


class LCIG:
    """The trained LC-IG predictors of one dataset (a directory of four evaluators sharing one tokenizer)."""

    def __init__(self, directory: str | os.PathLike, mask_settings: MaskSettings | None = None,
                 batch_size: int = 64) -> None:
        self.dir = Path(directory)
        self.mask_settings = mask_settings or MaskSettings()
        self.batch_size = batch_size
        self.models = {}
        for name in PREDICTORS:
            model, tokenizer = load_evaluator(self.dir / name, device="cpu")
            self.models[name] = model
            self.tokenizer = tokenizer

    @staticmethod
    def train(records: Sequence[Mapping[str, Any]], directory: str | os.PathLike, backbone: str = "t5-tiny",
              settings: Any = None, mask_settings: MaskSettings | None = None, progress: bool = False,
              null_rationales: float = 0.0) -> LCIG:
        """Step A of §3.2 on ``records``' gold rationales; each finished predictor directory is kept (resume).

        ``null_rationales``: the share of the training examples h₁ and h₁ᵘ also see with an *empty* rationale
        (x ⊕ ∅ → y, a seeded draw), so that they fall back to p(y | x) when a rationale says nothing instead of
        reading an out-of-distribution text; 0 is the proposal's h₁, trained on gold rationales only (docs/varif.md).
        """

        directory = Path(directory)
        settings = settings or TrainSettings(progress=progress)
        mask_settings = mask_settings or MaskSettings()
        texts = [task_text(r) for r in records] + [r["rationale"] for r in records]
        tokenizer_dir = directory / "tokenizer"
        if (tokenizer_dir / "tokenizer_config.json").is_file():
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        else:
            tokenizer = build_tokenizer(backbone, texts)
            tokenizer.save_pretrained(tokenizer_dir)
        labels = [r["label"] for r in records]
        rng = np.random.default_rng(settings.seed)
        null = sorted(rng.choice(len(records), size=round(null_rationales * len(records)), replace=False).tolist())
        null_sources = [augmented_input(records[i], "") for i in null]

        def fit(name: str, sources: list[str], seed_offset: int, with_null: bool = False) -> Any:
            if not (directory / name / "config.json").is_file():
                model = build_model(backbone, tokenizer, seed=settings.seed + seed_offset)
                targets = labels + [labels[i] for i in null] if with_null else labels
                train_seq2seq(model, tokenizer, sources + (null_sources if with_null else []), targets,
                              directory / name, settings)
            model, _ = load_evaluator(directory / name, device="cpu")
            return model

        fit("h0", [task_text(r) for r in records], 0)
        detector = fit("detector", [r["rationale"] for r in records], 1)
        fit("h1_unmasked", [augmented_input(r, r["rationale"]) for r in records], 2, with_null=True)
        if not (directory / "h1" / "config.json").is_file():
            masks_path = directory / "train_masks.jsonl"
            if masks_path.is_file():
                masked = [row["masked"] for _, row in read_jsonl(masks_path)]
            else:
                rows = mask_rationales(detector, tokenizer, records, [r["rationale"] for r in records],
                                       settings=mask_settings, progress=progress)
                write_jsonl(masks_path, [{"id": r["id"], **row} for r, row in zip(records, rows, strict=True)])
                masked = [row["masked"] for row in rows]
            fit("h1", [augmented_input(r, m) for r, m in zip(records, masked, strict=True)], 3, with_null=True)
        return LCIG(directory, mask_settings)

    def score(self, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
              labels: Sequence[str] | None = None, base: np.ndarray | None = None,
              progress: bool = False) -> dict[str, Any]:
        """Step C of §3.2 for one method's rationales: per example I (masked), I unmasked, log p_d(y | r) and
        log p_d(y | r⁻) (how much of the label r and r⁻ give away alone), and r⁻ itself.

        ``base`` (log p₀(y | x), shared by every method on the same records) is computed when not given.
        """
        labels = [r["label"] for r in records] if labels is None else list(labels)

        def log_p(name: str, inputs: Sequence[str]) -> tuple[np.ndarray, list[str]]:
            return choice_log_probs(self.models[name], self.tokenizer, inputs, records, labels, self.batch_size,
                                    progress)

        if base is None:
            base = log_p("h0", [task_text(r) for r in records])[0]
        masks = mask_rationales(self.models["detector"], self.tokenizer, records, rationales, labels,
                                self.mask_settings, progress)
        masked = [m["masked"] for m in masks]
        with_masked, predicted = log_p("h1", [augmented_input(r, m) for r, m in zip(records, masked, strict=True)])
        with_plain = log_p("h1_unmasked", [augmented_input(r, t) for r, t in zip(records, rationales, strict=True)])[0]
        detector_plain, detector_pred = log_p("detector", list(rationales))
        detector_masked, detector_masked_pred = log_p("detector", masked)
        return {
            "I": with_masked - base, "I_unmasked": with_plain - base, "log_p0": base,
            "log_p1": with_masked, "h1_correct": np.array([p == y for p, y in zip(predicted, labels, strict=True)]),
            "log_pd": detector_plain, "log_pd_masked": detector_masked,
            "d_correct": np.array([p == y for p, y in zip(detector_pred, labels, strict=True)]),
            "d_masked_correct": np.array([p == y for p, y in zip(detector_masked_pred, labels, strict=True)]),
            "masked": masked, "masked_words": [m["masked_words"] for m in masks],
        }

    def base_log_probs(self, records: Sequence[Mapping[str, Any]], progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """log p₀(y | x) per record and whether h₀ predicts y."""

        values, predicted = choice_log_probs(self.models["h0"], self.tokenizer, [task_text(r) for r in records], records,
                                             batch_size=self.batch_size, progress=progress)
        return values, np.array([p == r["label"] for p, r in zip(predicted, records, strict=True)])
