"""Explanation likelihood (our extension, a metric baseline): how likely ``r`` is as an explanation *of this input*.

    EL(r, x) = 1/(|r|+1) · Σ_i log[(1 − λ) · p_LM(w_i | w_{i−n+1} … w_{i−1}) + λ · 1[w_i ∈ x] / |x|_types]

``p_LM`` is an n-gram language model of the run's training explanations (the gold ones, whatever
``--train-rationale`` trains the evaluators on; with ``--explanation-lm-corpus dataset`` every training row of the
data set, not only those the run trains on; Witten-Bell interpolation, ``nltk.lm``; order
``--explanation-lm-order``) with a uniform floor of weight :data:`UNSEEN_WORD_WEIGHT` over its vocabulary, mixed with a
copy distribution over the input's words (weight ``--explanation-lm-copy``, a cache/pointer mixture): the mean
log-probability per word, the end of the sentence included (from order 2: a unigram model is fitted without it).

Why, and what it measures: LAREV and LAREV-G ask how much label evidence a rationale adds; nothing in them asks
whether the rationale is an explanation of this input at all, and a learned evaluator that reads label cues scores
another instance's explanation, the gold's words shuffled and "the answer is entailment ." like the gold
(docs/meta.md). A language model of explanations, conditioned on the input only through the words it can copy,
gives the missing half: text that is not written like an explanation (a label statement, a template, shuffled
words) or not about this input (another instance's explanation, whose words are not in x) is unlikely. It is the
open, local counterpart of GPT-3's own NLL in the acceptability study (Wiegreffe et al., 2022), which agrees with
people better than any learned metric here. It does not read the label: it is a grounding and fluency feature for a
calibration beside a label-evidence metric (``--calibrate larev_grounded,explanation_lm,...``), not a metric of new
label information on its own, and an explanation that copies the input gains from the copy term (docs/human.md).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from larev_hf.methods.base import RunSettings
from larev_hf.methods.heuristics import HeuristicBaseline, input_text
from larev_hf.methods.settings import help_field

#: Weight of a uniform distribution over the vocabulary (nltk's, with its ``<UNK>``) inside ``p_LM``, so that a word
#: the training explanations never used has a finite log-probability (Witten-Bell's unigram level gives it 0).
UNSEEN_WORD_WEIGHT = 1e-3
#: Bound of each model's cache of word probabilities (one entry per distinct word and context scored).
PROBABILITY_CACHE = 2**20


#: Where the language model's explanations come from (``--explanation-lm-corpus``).
EXPLANATION_CORPORA = ("run", "dataset")


@dataclass
class ExplanationLMSettings:
    """The explanation language model's settings (read only when ``explanation_lm`` is scored)."""

    explanation_lm_order: int = help_field(
        3, "explanation_lm: the n-gram order of the language model of the run's training explanations",
        report_only=True)
    explanation_lm_copy: float = help_field(
        0.2, "explanation_lm: the weight λ of copying a word of the input x (0: an unconditional language model, "
        "blind to which input the rationale explains; chosen on the select half of the SNLI acceptability file)",
        report_only=True)
    explanation_lm_corpus: str = help_field(
        "run", "explanation_lm: the gold explanations the language model is fitted on: 'run', the run's training "
        "split (as --max-train-examples keeps it), or 'dataset', every training row of --dataset/--data-dir (no "
        "evaluator is retrained)", report_only=True, choices=EXPLANATION_CORPORA)

    def validate(self, config: RunSettings | None) -> None:
        if self.explanation_lm_order < 1:
            raise ValueError(f"--explanation-lm-order {self.explanation_lm_order}: expected an integer ≥ 1")
        if not 0.0 <= self.explanation_lm_copy < 1.0:
            raise ValueError(f"--explanation-lm-copy {self.explanation_lm_copy}: expected a weight in [0, 1)")
        if self.explanation_lm_corpus not in EXPLANATION_CORPORA:
            raise ValueError(f"--explanation-lm-corpus {self.explanation_lm_corpus!r}: expected one of "
                             f"{list(EXPLANATION_CORPORA)}")


def words(text: str) -> list[str]:
    """Lower-cased words and punctuation (``nltk``'s regular-expression tokenizer: no data files needed)."""
    from nltk.tokenize import wordpunct_tokenize

    return wordpunct_tokenize(str(text).lower())


class ExplanationLanguageModel:
    """An n-gram model of explanations (Witten-Bell, ``nltk.lm``) with a copy distribution over an input's words."""

    def __init__(self, explanations: Sequence[str], order: int = 3) -> None:
        from nltk.lm import WittenBellInterpolated
        from nltk.lm.preprocessing import padded_everygram_pipeline

        texts = [words(text) for text in explanations if text is not None and str(text).strip()]
        if not texts:
            raise ValueError("explanation_lm: the run's training split has no rationale to fit the language model on")
        self.order = order
        self.model = WittenBellInterpolated(order)
        ngrams, vocabulary = padded_everygram_pipeline(order, texts)
        self.model.fit(ngrams, vocabulary)
        self.unseen = 1.0 / len(self.model.vocab)
        self.probability = functools.lru_cache(maxsize=PROBABILITY_CACHE)(self._probability)

    def _probability(self, word: str, context: tuple[str, ...]) -> float:
        return (1 - UNSEEN_WORD_WEIGHT) * self.model.score(word, list(context)) + UNSEEN_WORD_WEIGHT * self.unseen

    def mean_log_probability(self, text: str, source: str, copy: float) -> float:
        """EL(r, x) of the module docstring: ``text`` is r, ``source`` is x."""
        source_words = set(words(source))
        padded = ["<s>"] * (self.order - 1) + words(text) + ["</s>"]
        total = 0.0
        for i in range(self.order - 1, len(padded)):
            word = padded[i]
            copied = 1.0 / len(source_words) if word in source_words else 0.0
            context = tuple(padded[i - self.order + 1:i])
            total += math.log((1 - copy) * self.probability(word, context) + copy * copied)
        return total / (len(padded) - self.order + 1)


@functools.lru_cache(maxsize=4)
def fitted_language_model(explanations: tuple[str, ...], order: int) -> ExplanationLanguageModel:
    """One fit per (training explanations, order) in a process: meta and human score many passes with it."""
    return ExplanationLanguageModel(explanations, order)


def training_records(context: Any, corpus: str) -> list[dict[str, Any]]:
    """The training records whose gold explanations the model is fitted on: the run's training split (``run``) or
    every training row of the run's data set (``dataset``: loaded again from ``--dataset``/``--data-dir``; measured:
    docs/human.md, "Candidate recipes for the calibrated score")."""
    if corpus == "run":
        return context.split_records("train")
    from larev_hf.data import load_examples

    data = context.config.data
    return load_examples(data.dataset, data.data_dir, "train", **data.loader_options).to_list()


class ExplanationLM(HeuristicBaseline):
    """EL(r, x), the explanation likelihood (see the module docstring)."""

    name = "explanation_lm"
    in_all = False  # a calibration feature, as grounding: `meta` and `human` score it; a run's report when asked
    title = "Explanation LM(r | x)"
    formula = "mean log[(1 − λ) p_LM(w | n-gram context) + λ 1[w ∈ x] / |x|_types], p_LM of the training explanations"
    unit = "nats per word"
    settings_class = ExplanationLMSettings

    needs_state = True

    def calibration_state(self, context: Any) -> dict[str, Any]:
        """The run's gold training explanations and the model's settings: a calibration that reads this score carries
        them, so a bundle fits the same language model (seconds for ten thousand explanations; the bundle's
        ``config_larev.json`` grows by their size) and scores as the run did."""
        if context is None:
            raise ValueError("explanation_lm reads a run's training explanations: score it in a run (`larev-hf meta "
                             "--run-dir`, `larev-hf human`) or through a calibration that carries them")
        settings = context.config.method_settings(ExplanationLMSettings)
        return {"order": settings.explanation_lm_order, "copy": settings.explanation_lm_copy,
                "explanations": [record.get("rationale_gold", record["rationale"])
                                 for record in training_records(context, settings.explanation_lm_corpus)]}

    def text_scores(self, records: Sequence[Mapping[str, Any]], texts: Sequence[str],
                    state: Mapping[str, Any] | None) -> np.ndarray:
        if not state:
            raise ValueError("explanation_lm: this calibration carries no explanation language model (text_models); "
                             "fit it again with `larev-hf human --calibrate ...` so that it does")
        settings = ExplanationLMSettings(explanation_lm_order=int(state["order"]), explanation_lm_copy=float(state["copy"]))
        settings.validate(None)
        model = fitted_language_model(tuple(state["explanations"]), settings.explanation_lm_order)
        return np.array([model.mean_log_probability(text, input_text(record), settings.explanation_lm_copy)
                         for record, text in zip(records, texts, strict=True)])

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        state = self.calibration_state(context)
        return {variant: self.text_scores(records, texts, state) for variant, texts in variants.items()}
