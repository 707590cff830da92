"""Leakage terms t_leak in the baseline b by Integrated Gradients on Φ_base (thesis §4.5.2, table 4.1).

IG (thesis eq. 4.2; Sundararajan et al. 2017) runs on the encoder input embeddings of Φ_base with
respect to log p_Φbase(y | b), so a large positive attribution marks a word that makes the gold
label more likely: a label cue. The attributions sum to log p(y | b) − log p(y | 0): where Φ_base
already gives y at the all-zero input (the label it falls back on) and is sure of y on b, that
total is near 0 and the cue that b states goes unnoticed. On StrategyQA's yes/no baselines
("…? yes.") t5-tiny's Φ_base falls back on "yes", and the answer word was t_leak for almost every "no" baseline
and few "yes" ones (measured: docs/method.md, "5. ig: leakage terms by Integrated Gradients"). ``target="log_odds"`` attributes the gold label's
log-odds against the other labels instead, log p(y | b) − log Σ_{y'≠y} p(y' | b), which does not
saturate as p(y | b) → 1 (docs/method.md, "IG's target on yes/no data"). Subword attributions (summed over the embedding dimension) are
summed into words; t_leak is the top word (or the top-k words), skipping stop words and
punctuation when the guard is on (the thesis notes IG sometimes picks function words, §6.2).

captum's ``IntegratedGradients`` is applied to the ``inputs_embeds`` of the encoder, which is the
same computation as ``LayerIntegratedGradients`` on the embedding layer; we feed embeddings
directly because T5 and BART share one embedding module between encoder and decoder, and a
layer hook would also fire on the decoder's inputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.defaults import IG_STEPS, IG_TARGET, IG_TARGETS, IG_TOP_K, STOP_WORD_GUARD
from larev_hf.modeling.precision import autocast_for
from larev_hf.modeling.scoring import pad_rows

STOP_WORDS = frozenset(
    """a an the of to in on at by for with from and or but if then than that this these those it its is are was were be been
    being am do does did has have had he she they them his her their we us our you your i me my there here as so such
    which who whom whose what when where while into onto over under about after before up down out off again once very
    can will just also both each few more most other some any all nor only own same too s t""".split()
)
_WORD_CHARS = re.compile(r"\w")


@dataclass
class LeakageTerm:
    """The leakage term of one baseline: its character span in b, its text and the word scores."""

    start: int
    end: int
    text: str
    score: float
    guard_fired: bool
    words: list[str] = field(default_factory=list)
    word_scores: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class IGSettings:
    """Integrated Gradients options: steps, batching, the attributed quantity, how many words form t_leak, the
    stop-word guard."""

    n_steps: int = IG_STEPS
    batch_size: int = 16
    internal_batch_size: int | None = None
    top_k: int = IG_TOP_K
    min_score: float | None = None
    stop_word_guard: bool = STOP_WORD_GUARD
    target: str = IG_TARGET

    def __post_init__(self) -> None:
        if self.target not in IG_TARGETS:
            raise ValueError(f"IG target must be one of {IG_TARGETS}, got {self.target!r}")


def word_spans(tokenizer: PreTrainedTokenizerBase, text: str) -> tuple[list[int | None], list[tuple[int, int]]]:
    """Token → word index (None for special tokens) and each word's character span, from the fast tokenizer."""
    encoding = tokenizer(text, return_offsets_mapping=True, truncation=True)
    word_ids = encoding.word_ids()
    offsets = encoding["offset_mapping"]
    spans: dict[int, list[int]] = {}
    for word, (start, end) in zip(word_ids, offsets, strict=True):
        if word is None or end <= start:
            continue
        span = spans.setdefault(word, [start, end])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    ordered = sorted(spans)
    index = {w: i for i, w in enumerate(ordered)}
    return [index.get(w) if w is not None else None for w in word_ids], [tuple(spans[w]) for w in ordered]


def _is_guarded(word: str) -> bool:
    return word.lower() in STOP_WORDS or not _WORD_CHARS.search(word)


def select_leakage_term(
    text: str,
    spans: list[tuple[int, int]],
    scores: Sequence[float],
    settings: IGSettings,
    region: tuple[int, int] | None = None,
) -> LeakageTerm:
    """Pick t_leak from word scores: the top-k words (merged into one span), guard and minimum score applied.

    Only words inside ``region`` (a character range of ``text``, e.g. where b sits in a templated input) compete.
    """
    words = [text[s:e] for s, e in spans]
    inside = [i for i, (s, e) in enumerate(spans) if region is None or (region[0] <= s and e <= region[1])]
    order = sorted(inside or range(len(words)), key=lambda i: scores[i], reverse=True)
    chosen, fired = [], False
    for i in order:
        if settings.stop_word_guard and _is_guarded(words[i]):
            fired = fired or not chosen
            continue
        if settings.min_score is not None and scores[i] < settings.min_score:
            break
        chosen.append(i)
        if len(chosen) == settings.top_k:
            break
    if not chosen:  # everything guarded or below the minimum: fall back to the top word
        chosen = order[:1]
    start, end = min(spans[i][0] for i in chosen), max(spans[i][1] for i in chosen)
    return LeakageTerm(start, end, text[start:end], float(max(scores[i] for i in chosen)), fired, words, [float(s) for s in scores])


def integrated_gradients_word_scores(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: Sequence[str],
    labels: Sequence[str],
    settings: IGSettings | None = None,
    progress: bool = False,
    candidates: Sequence[Sequence[str]] | None = None,
) -> list[tuple[list[tuple[int, int]], list[float]]]:
    """IG of log p(y | text) (or, with ``settings.target == "log_odds"``, of y's log-odds against the other labels
    among the row's ``candidates``: the task's labels or the instance's answer choices) over the encoder input embeddings (thesis eq. 4.2), summed over the embedding dimension and over
    each word's subwords: per text, the words' character spans and their attributions."""
    from captum.attr import IntegratedGradients

    settings = settings or IGSettings()
    device = next(model.parameters()).device
    model.eval()
    embed = model.get_encoder().get_input_embeddings()

    def log_prob(inputs_embeds, attention_mask, label_ids):
        label_mask = label_ids.ne(-100)
        logits = model(
            inputs_embeds=inputs_embeds,
            attention_mask=attention_mask,
            decoder_input_ids=model.prepare_decoder_input_ids_from_labels(labels=label_ids),
            use_cache=False,
        ).logits
        token = torch.log_softmax(logits.float(), -1).gather(-1, label_ids.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        return (token * label_mask).sum(-1)

    def log_odds(inputs_embeds, attention_mask, label_ids, other_label_ids):
        others = torch.stack([log_prob(inputs_embeds, attention_mask, other_label_ids[:, k])
                              for k in range(other_label_ids.shape[1])])
        return log_prob(inputs_embeds, attention_mask, label_ids) - torch.logsumexp(others, dim=0)

    others: list[list[str]] = []
    if settings.target == "log_odds":
        if candidates is None or len(candidates) != len(texts):
            raise ValueError("IG's log-odds target needs each row's candidate labels (the task's labels or choices)")
        others = [[c for c in dict.fromkeys(row) if c != label] for row, label in zip(candidates, labels, strict=True)]
        bad = [i for i, (row, label) in enumerate(zip(candidates, labels, strict=True)) if label not in row]
        if bad or len({len(row) for row in others}) != 1 or not others[0]:
            row = bad[0] if bad else 0
            raise ValueError(f"IG's log-odds target: row {row} has label {labels[row]!r} and candidates "
                             f"{list(candidates[row])}; every row needs its label among the same number (≥ 2) of them")
    ig = IntegratedGradients(log_odds if settings.target == "log_odds" else log_prob)
    # Batches of similar length (little padding); results go back in input order. Weights need no gradient: only
    # the input embeddings' is used, and frozen weights keep autograd from saving what their gradients would need.
    source_ids = tokenizer(list(texts), truncation=True)["input_ids"]  # tokenized once: sort key and batches
    order = sorted(range(len(texts)), key=lambda i: len(source_ids[i]))
    out: list[tuple[list[tuple[int, int]], list[float]] | None] = [None] * len(texts)
    trainable = [p for p in model.parameters() if p.requires_grad]
    for parameter in trainable:
        parameter.requires_grad_(False)
    try:
        for start in tqdm(range(0, len(texts), settings.batch_size), desc="integrated gradients", disable=not progress):
            index = order[start : start + settings.batch_size]
            input_ids, attention_mask = pad_rows([source_ids[i] for i in index], tokenizer.pad_token_id)
            input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
            label_ids = _label_ids(tokenizer, [labels[i] for i in index]).to(device)
            forward_args: tuple = (attention_mask, label_ids)
            if others:  # the log-odds target: each row's other labels, (rows, K, length)
                flat = _label_ids(tokenizer, [label for i in index for label in others[i]])
                forward_args += (flat.view(len(index), len(others[0]), -1).to(device),)
            with torch.no_grad():
                inputs_embeds = embed(input_ids)
            with autocast_for(model):  # bf16 for a model trained in it (larev_hf.modeling.precision), else fp32
                attributions = ig.attribute(
                    inputs_embeds,
                    baselines=torch.zeros_like(inputs_embeds),
                    additional_forward_args=forward_args,
                    n_steps=settings.n_steps,
                    internal_batch_size=settings.internal_batch_size or len(index) * settings.n_steps,
                )
            token_scores = (attributions.sum(-1) * attention_mask).detach().cpu()
            for row, i in enumerate(index):
                token_words, spans = word_spans(tokenizer, texts[i])
                scores = [0.0] * len(spans)
                for position, word in enumerate(token_words):
                    if word is not None:
                        scores[word] += float(token_scores[row, position])
                out[i] = (spans, scores)
    finally:
        for parameter in trainable:
            parameter.requires_grad_(True)
    return out  # type: ignore[return-value]


def _label_ids(tokenizer: PreTrainedTokenizerBase, labels: Sequence[str]) -> torch.Tensor:
    """The labels' target token ids, padded with -100 (ignored) to one length."""
    ids = tokenizer(text_target=list(labels), return_tensors="pt", padding=True)["input_ids"]
    return ids.masked_fill(ids == tokenizer.pad_token_id, -100)


def integrated_gradients_terms(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: Sequence[str],
    labels: Sequence[str],
    settings: IGSettings | None = None,
    progress: bool = False,
    regions: Sequence[tuple[int, int]] | None = None,
    candidates: Sequence[Sequence[str]] | None = None,
) -> list[LeakageTerm]:
    """t_leak for every (b, y): IG of log p_Φbase(y | b) (or y's log-odds, ``settings.target``) over b's input
    embeddings, summed to words.

    ``regions`` optionally restricts, per text, the character range t_leak may come from; ``candidates`` are each
    row's possible labels, needed by the log-odds target.
    """
    settings = settings or IGSettings()
    scored = integrated_gradients_word_scores(model, tokenizer, texts, labels, settings, progress, candidates)
    return [select_leakage_term(text, spans, scores, settings, regions[i] if regions is not None else None)
            for i, (text, (spans, scores)) in enumerate(zip(texts, scored, strict=True))]
