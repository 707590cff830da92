"""Metric baselines (VARIF proposal §5): heuristic scores a learned rationale metric must beat.

- ``rouge_l``: ROUGE-L F1 between the rationale and the task input x (lexical overlap; ``rouge-score``, the
  package behind ``evaluate``'s ROUGE);
- ``length``: the rationale's length in words;
- ``grounding``: the share of the rationale's content words that occur in x (stemmed, stop words out), a
  grounding cue that, unlike ROUGE-L, cannot exceed 1 by writing more of the input: a robust calibration caps it;
- ``copied_span``: the longest span of x copied into the rationale, over the rationale's length (a calibration
  feature, capped like ``grounding``); ``copy_excess``: how far that share exceeds where acceptable explanations'
  stop, negated (a calibration feature that penalises restating the input); ``premise_link``: the share of the
  rationale's content words from the premise and not the hypothesis (a calibration feature against restating the
  hypothesis);
- ``rationale_only``: whether the run's simulator, given the rationale alone, predicts the label (the ``r`` view of
  the LAS/RQ simulator, Hase et al. 2020: a leakage detector rather than a quality score).

They are registered as methods with ``kind = "baseline"`` so they appear in every report and meta-evaluation table
next to the learned metrics; a learned metric that does not beat them on an attack family has learned nothing
there. Each reads "higher = better rationale", the orientation a naive user would give them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

import numpy as np

from larev_hf.methods.base import Method, MethodResult, RunContext, RunSettings, Stage
from larev_hf.methods.registry import get_method, method_names
from larev_hf.methods.simulatability import SIMULATORS, simulator_correctness
from larev_hf.scores import summarize_variants


def input_text(record: Mapping[str, Any]) -> str:
    """The task input x as plain text, without field names (which would match "premise"/"hypothesis" in a circular
    rationale): premise + hypothesis (NLI), question + answer choices (multiple-choice QA), question (yes/no)."""
    if record.get("task") == "nli":
        return f"{record['premise']} {record['hypothesis']}"
    if record.get("task") == "qa":
        return " ".join([record["question"], *record["choices"]])
    return str(record["question"])


class HeuristicBaseline(Method):
    """A score computed from the rationale and the record alone (no trained model unless :meth:`stages` says so)."""

    kind = "baseline"
    #: computed from the rationale and its record alone, so a bundle's calibration may read it (:meth:`text_scores`)
    text_feature = True
    #: whether the score needs more than r and x: then the subclass defines ``calibration_state(context)``, what a
    #: calibration must carry to compute it outside the run, and it cannot be scored there without that state
    needs_state: bool = False

    def stages(self, config: RunSettings) -> list[Stage]:
        return []

    def text_scores(self, records: Sequence[Mapping[str, Any]], texts: Sequence[str],
                    state: Mapping[str, Any] | None) -> np.ndarray:
        """This score of ``texts`` outside a run (a bundle's calibration), from the ``state`` a calibration carries
        (``None`` where :attr:`needs_state` is false)."""
        return self.pointwise(None, list(records), {"r": list(texts)}, {})["r"]

    def score(self, context: RunContext, records, variants, shared) -> MethodResult:
        scores = self.pointwise(context, records, variants, shared)
        summary = summarize_variants(scores, n_boot=context.config.evaluation.n_boot,
                                     seed=context.config.training.seed)
        summary.update(unit=self.unit, kind=self.kind)
        columns = {f"{self.name}/{variant}": [float(x) for x in values] for variant, values in scores.items()}
        return MethodResult(summary, scores, columns)


def text_models(features: Sequence[str], context: RunContext) -> dict[str, dict[str, Any]]:
    """The calibration states of the metric baselines among ``features`` that need more than the text
    (:attr:`HeuristicBaseline.needs_state`), read from the run ``context``."""
    return {name: get_method(name).calibration_state(context) for name in features
            if name in method_names() and getattr(get_method(name), "needs_state", False)}


class RougeL(HeuristicBaseline):
    """ROUGE-L F1 of the rationale against x (Lin, 2004; VARIF §5's "lexical overlap" baseline)."""

    name = "rouge_l"
    title = "ROUGE-L(r, x)"
    formula = "ROUGE-L F1(r, x): longest common subsequence of words, harmonic mean of precision and recall"
    citation_keys = ("lin-2004-rouge",)
    unit = "ROUGE-L F1"

    def pointwise(self, context, records: Sequence[dict[str, Any]], variants: Mapping[str, Sequence[str]],
                  shared) -> dict[str, np.ndarray]:
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
        inputs = [input_text(record) for record in records]
        return {variant: np.array([scorer.score(x, r)["rougeL"].fmeasure for x, r in zip(inputs, texts, strict=True)])
                for variant, texts in variants.items()}


@functools.cache
def _content_tokenizer() -> tuple[Any, frozenset[str]]:
    """ROUGE's stemming tokenizer and scikit-learn's English stop words, built once (imported here: the registry is
    read by ``larev-hf --help``, which must not load scikit-learn)."""
    from rouge_score.tokenizers import DefaultTokenizer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return DefaultTokenizer(use_stemmer=True), ENGLISH_STOP_WORDS


def content_tokens(text: str) -> list[str]:
    """``text``'s words as ROUGE tokenizes them (lower case, Porter-stemmed), without scikit-learn's English stop
    words: the words that carry content."""
    tokenizer, stop_words = _content_tokenizer()
    return [token for token in tokenizer.tokenize(text) if token not in stop_words]


def share_of_content_words_in(word_sets: Sequence[set[str]], variants: Mapping[str, Sequence[str]]
                              ) -> dict[str, np.ndarray]:
    """Per variant, each rationale's share of content words (:func:`content_tokens`) found in its example's set of
    ``word_sets`` (0 for a rationale without content words)."""
    out = {}
    for variant, texts in variants.items():
        values = []
        for words, text in zip(word_sets, texts, strict=True):
            tokens = content_tokens(text)
            values.append(sum(token in words for token in tokens) / len(tokens) if tokens else 0.0)
        out[variant] = np.array(values, dtype=np.float64)
    return out


class Grounding(HeuristicBaseline):
    """The share of the rationale's content words found in x (0 for a rationale without content words).

    Annotators of the SNLI acceptability study prefer explanations that talk about the input's own words (alone it
    agrees with them about as well as ROUGE-L: docs/human.md, "A calibration that cannot be gamed"); unlike ROUGE-L F1
    it is bounded by the rationale's own words, so a calibration can cap it where acceptable explanations sit and a
    copy of the input gains nothing over a grounded explanation (docs/human.md "A calibration that cannot be gamed").
    """

    name = "grounding"
    in_all = False  # a calibration feature: `meta` and `human` score it as every baseline; a run's report when asked
    title = "Grounding(r, x)"
    formula = "|content words of r found in x| / |content words of r| (stemmed, stop words removed)"
    unit = "share of words"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        return share_of_content_words_in([set(content_tokens(input_text(record))) for record in records], variants)


def _longest_run_share(rationale_tokens: Sequence[str], input_tokens: Sequence[str]) -> float:
    """The longest block of consecutive ``input_tokens`` found in ``rationale_tokens``, over the rationale's length."""
    if not rationale_tokens or not input_tokens:
        return 0.0
    match = SequenceMatcher(None, rationale_tokens, input_tokens, autojunk=False).find_longest_match(
        0, len(rationale_tokens), 0, len(input_tokens))
    return match.size / len(rationale_tokens)


def longest_copied_run(rationale: str, text: str) -> float:
    """The longest run of consecutive ``text`` tokens (ROUGE's stemming tokenizer) found in ``rationale``, over the
    rationale's length in tokens: 1 for a verbatim copy, near 0 for an explanation in its own words."""
    tokenizer, _ = _content_tokenizer()
    return _longest_run_share(tokenizer.tokenize(rationale), tokenizer.tokenize(text))


class CopiedSpan(HeuristicBaseline):
    """The longest span of x copied into the rationale, as a share of the rationale.

    A calibration feature beside ``grounding``: people prefer explanations that restate part of the input (on the
    select half of ``snli_accept_train`` it correlates with acceptability), and a calibration can cap it where the
    acceptable explanations sit, so a copy of the whole input earns no more than an explanation that quotes a phrase
    (docs/human.md "A calibration that cannot be gamed").
    """

    name = "copied_span"
    in_all = False  # a calibration feature, as grounding
    title = "Copied span(r, x)"
    formula = "longest run of x's tokens in r / |r| (stemmed tokens)"
    unit = "share of tokens"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        tokenizer, _ = _content_tokenizer()
        inputs = [tokenizer.tokenize(input_text(record)) for record in records]  # once, not once per variant
        return {variant: np.array([_longest_run_share(tokenizer.tokenize(text), x)
                                   for x, text in zip(inputs, texts, strict=True)], dtype=np.float64)
                for variant, texts in variants.items()}


#: Where ``copy_excess`` starts to count: the 0.95 quantile of the copied span among the acceptable explanations of
#: the select half of the SNLI acceptability file (measured: docs/human.md, "Candidate recipes for the calibrated
#: score").
COPY_EXCESS_FROM = 0.5


class CopyExcess(HeuristicBaseline):
    """−max(0, copied span − :data:`COPY_EXCESS_FROM`): 0 for a rationale that quotes no more of x than acceptable
    explanations do, below 0 for a restatement of the input.

    A calibration feature beside ``copied_span``: a cap on the copied span only stops a copy from *gaining* over a
    quote, so a restatement of the hypothesis ties with the gold wherever the method scores them alike (LAREV on
    entailment rows, where the hypothesis entails itself); this penalises it (docs/human.md, "Candidate recipes for
    the calibrated score"). Higher = better, like every baseline; a cap at acceptable explanations' values is inert.
    """

    name = "copy_excess"
    in_all = False  # a calibration feature, as copied_span
    title = "Copy excess(r, x)"
    formula = f"−max(0, copied span(r, x) − {COPY_EXCESS_FROM:g})"
    unit = "share of tokens"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        spans = CopiedSpan().pointwise(context, records, variants, shared)
        return {variant: -np.maximum(0.0, values - COPY_EXCESS_FROM) for variant, values in spans.items()}


def premise_and_claim(record: Mapping[str, Any]) -> tuple[str, str]:
    """The part of x a conclusion is drawn from and the conclusion: (premise, hypothesis) for NLI, (question, the
    label's answer) for multiple-choice QA, (question, "") for yes/no."""
    if record.get("task") == "nli":
        return str(record["premise"]), str(record["hypothesis"])
    claim = str(record.get("label", "")) if record.get("task") == "qa" else ""
    return str(record["question"]), claim


class PremiseLink(HeuristicBaseline):
    """The share of the rationale's content words that come from the premise and not from the hypothesis (NLI; for
    QA the question and not the answer).

    A calibration feature against restating the claim: an explanation links what is given to what is concluded
    ("a young lady and a group of girls implies they are women"), so it uses words of the premise that the hypothesis
    lacks; the hypothesis restated uses none (mean 0.00 on e-SNLI's test entailment rows against the gold's 0.30),
    whatever its template. LAREV cannot tell the two apart on entailment rows, where the hypothesis entails itself,
    and the copied span cannot either, because people reward quoting the input (docs/human.md, "Candidate recipes for
    the calibrated score"). Stemmed content words, as ``grounding``; 0 for a rationale without content words.
    """

    name = "premise_link"
    in_all = False  # a calibration feature, as grounding
    title = "Premise link(r, x)"
    formula = "|content words of r in the premise but not the hypothesis| / |content words of r|"
    unit = "share of words"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        linked = []
        for record in records:
            premise, claim = premise_and_claim(record)
            linked.append(set(content_tokens(premise)) - set(content_tokens(claim)))
        return share_of_content_words_in(linked, variants)


class Length(HeuristicBaseline):
    """The rationale's length in whitespace-separated words (VARIF §5's length heuristic)."""

    name = "length"
    title = "Length"
    formula = "|r| in words"
    unit = "words"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        return {variant: np.array([len(text.split()) for text in texts], dtype=np.float64)
                for variant, texts in variants.items()}


class RationaleOnly(HeuristicBaseline):
    """1[S(r) = y]: the simulator of LAS/RQ given only the rationale (VARIF §5's rationale-only accuracy)."""

    name = "rationale_only"
    title = "Rationale-only accuracy"
    formula = "1[S(r) = y], S the LAS/RQ simulator"
    citation_keys = ("hase-etal-2020-leakage",)
    unit = "accuracy"
    text_feature = False  # it reads the run's trained simulator, which a bundle does not ship

    def stages(self, config: RunSettings) -> list[Stage]:
        return [SIMULATORS]

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        correct = simulator_correctness(context, records, variants, shared)
        return {variant: np.asarray(views["r"], dtype=np.float64) for variant, views in correct.items()}
