"""The extractive heuristics of VARIF §2.2 at word level: the top-k TF-IDF words of x, and k random words of x.

Both read the same candidate words (sklearn's ``TfidfVectorizer`` token pattern, lowercased, English stop words
removed, each once, as first written in x), so they differ only in the selection rule; both are label-independent.
sklearn loads when a generator is built.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from larev_hf.explain.generators.base import raw_input_text, resolve_labels
from larev_hf.io import DataError, where
from larev_hf.meta.family_registry import example_rng

_FIRST_WORD = re.compile(r"\w+")


def _first_word(record: Mapping[str, Any], text: str) -> str:
    """The fallback of the extractive heuristics: the first word of x (a DataError naming the id when x is empty)."""
    match = _FIRST_WORD.search(text)
    if match:
        return match.group()
    if text.split():
        return text.split()[0]
    field = "premise and hypothesis" if record.get("task") == "nli" else "question"
    raise DataError(f"{where(example_id=record.get('id'))}: field {field} is empty; expected input text to extract from")


class _WordTokenizer:
    """The words a TF-IDF vectorizer sees (lowercased, its token pattern, English stop words removed), each with its
    first position and its surface form as written in x."""

    def __init__(self, vectorizer: Any) -> None:
        self.pattern = re.compile(vectorizer.token_pattern)
        self.stop_words = vectorizer.get_stop_words() or frozenset()

    def candidates(self, text: str) -> tuple[dict[str, str], dict[str, int]]:
        """``(surface, counts)``: term → its first surface form in ``text`` (text order), term → its count."""
        surface: dict[str, str] = {}
        counts: dict[str, int] = {}
        for match in self.pattern.finditer(text):
            term = match.group().lower()
            if term in self.stop_words:
                continue
            surface.setdefault(term, match.group())
            counts[term] = counts.get(term, 0) + 1
        return surface, counts


def _vectorizer() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, stop_words="english")


class TfidfTopKGenerator:
    """The extractive TF-IDF heuristic of VARIF §2.2 at word level: the ``k`` words of x with the highest TF-IDF weight.

    x is the raw input (:func:`raw_input_text`: premise + hypothesis, or the question). Words are what sklearn's
    ``TfidfVectorizer`` (lowercase, English stop words removed) sees; the weight of a word is its count in x times its
    smoothed idf from the vectorizer fit on ``fit_texts`` (e.g. the training inputs), which ranks words exactly as the
    vectorizer's l2-normalised row does. A word the fit corpus lacks gets the idf of document frequency 0 (the rarest).
    Without ``fit_texts`` the vectorizer is fit on the records of the first :meth:`explain` call and kept, so perturbed
    inputs explained later are weighted by the same idf. The chosen words are returned in their order in x, each once
    and as first written there, joined by spaces; ties are broken by position. With fewer than ``k`` candidate words
    all are used; with none, the first word of x. Label-independent; deterministic.
    """

    regenerable = True

    def __init__(self, k: int = 5, fit_texts: Sequence[str] | None = None) -> None:
        if k < 1:
            raise ValueError(f"k must be a positive integer, got {k}")
        self.k, self.name = k, f"tfidf_top{k}"
        self.vectorizer: Any = None
        if fit_texts is not None:
            self.fit(fit_texts)

    def fit(self, texts: Sequence[str]) -> TfidfTopKGenerator:
        """Fit the idf on ``texts`` (raw inputs, one per document)."""
        texts = [str(text) for text in texts]
        if not texts:
            raise ValueError("fit_texts is empty; expected the input texts to compute idf from")
        vectorizer = _vectorizer()
        try:
            vectorizer.fit(texts)
            self._vocabulary, self._idf = dict(vectorizer.vocabulary_), [float(v) for v in vectorizer.idf_]
        except ValueError:  # every text is stop words only: no vocabulary, every word gets the df = 0 idf
            self._vocabulary, self._idf = {}, []
        self.vectorizer, self.n_documents = vectorizer, len(texts)
        self._unseen_idf = math.log((1 + len(texts)) / 1) + 1.0  # sklearn's smoothed idf at df = 0
        self._tokenizer = _WordTokenizer(vectorizer)
        return self

    def weights(self, text: str) -> dict[str, float]:
        """TF-IDF weight (count × idf) of each candidate word of ``text``, keyed by the lowercased term."""
        if self.vectorizer is None:
            raise RuntimeError("TfidfTopKGenerator is not fit; pass fit_texts or call explain/fit first")
        _, counts = self._tokenizer.candidates(text)
        return {term: count * (self._idf[self._vocabulary[term]] if term in self._vocabulary else self._unseen_idf)
                for term, count in counts.items()}

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        resolve_labels(records, labels)
        texts = [raw_input_text(record) for record in records]
        if self.vectorizer is None:
            self.fit(texts)
        out = []
        for record, text in zip(records, texts, strict=True):
            surface, _ = self._tokenizer.candidates(text)
            weights = self.weights(text)
            position = {term: i for i, term in enumerate(surface)}
            chosen = sorted(surface, key=lambda term: (-weights[term], position[term]))[: self.k]
            words = [surface[term] for term in sorted(chosen, key=position.__getitem__)]
            out.append(" ".join(words) if words else _first_word(record, text))
        return out


class RandomKGenerator:
    """The random-k extractive baseline of VARIF §2.2 at word level: ``k`` random candidate words of x, in text order.

    Candidates are the same words :class:`TfidfTopKGenerator` ranks (sklearn's token pattern, English stop words
    removed, each once, as first written in x), so the two differ only in the selection rule. The draw uses
    ``example_rng(seed, id, "random_k")`` (SHA-256 of seed and id): stable across processes, and a perturbed record
    keeps its id. Fewer than ``k`` candidates: all of them; none: the first word of x. Label-independent.
    """

    regenerable = True

    def __init__(self, k: int = 5, seed: int = 0) -> None:
        if k < 1:
            raise ValueError(f"k must be a positive integer, got {k}")
        self.k, self.seed, self.name = k, seed, f"random_k{k}"
        self._tokenizer = _WordTokenizer(_vectorizer())

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        resolve_labels(records, labels)
        out = []
        for record in records:
            text = raw_input_text(record)
            words = list(self._tokenizer.candidates(text)[0].values())
            if not words:
                out.append(_first_word(record, text))
                continue
            rng = example_rng(self.seed, str(record["id"]), "random_k")
            picked = sorted(rng.choice(len(words), size=min(self.k, len(words)), replace=False).tolist())
            out.append(" ".join(words[i] for i in picked))
        return out
