"""The leakage detector's features: the word n-grams of a rationale and their vocabulary (RoRA §3.1).

RoRA's detector reads a rationale as a bag of word n-grams, unigrams **and** bigrams (the released helper yields only
bigrams when asked for ≤ 2-grams; we do not reproduce that bug). :func:`extract_ngrams` lists every occurrence with
its token and character span, so the masking (:mod:`larev_hf.rora.masking`) can cut the chosen ones out of the text;
:class:`NGramVocab` numbers the training rationales' n-grams (vocabulary min_freq 1, max 10,000, as the authors'
StrategyQA configuration).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

#: Words and single punctuation marks; apostrophe contractions stay one word ("isn't").
TOKEN_PATTERN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")


@dataclass(frozen=True)
class NGram:
    """One n-gram occurrence in a text: its lower-cased ``key``, tokens ``[first, last]`` and character span."""

    key: str
    first: int
    last: int
    start: int
    end: int


def tokenize_words(text: str) -> list[tuple[str, int, int]]:
    """``(lower-cased word, start, end)`` for every word or punctuation mark of ``text``."""
    return [(m.group().lower(), m.start(), m.end()) for m in TOKEN_PATTERN.finditer(text)]


def extract_ngrams(text: str, max_n: int = 2) -> list[NGram]:
    """Every 1- to ``max_n``-gram of ``text``, ordered by first token then length (deterministic)."""
    words = tokenize_words(text)
    grams = []
    for i in range(len(words)):
        for n in range(1, max_n + 1):
            if i + n > len(words):
                break
            span = words[i : i + n]
            grams.append(NGram(" ".join(w for w, _, _ in span), i, i + n - 1, span[0][1], span[-1][2]))
    return grams


@dataclass
class NGramVocab:
    """The detector's feature vocabulary: n-gram keys, index 0 reserved for padding.

    Built from the training rationales by descending count, ties broken alphabetically, so the same
    texts always give the same ids (RoRA's ``min_freq`` 1, ``max_size`` 10,000).
    """

    ngrams: list[str]
    max_n: int = 2

    def __post_init__(self) -> None:
        self._index = {key: i + 1 for i, key in enumerate(self.ngrams)}

    @classmethod
    def build(cls, texts: Sequence[str], max_n: int = 2, min_freq: int = 1, max_size: int = 10_000) -> NGramVocab:
        counts = Counter(gram.key for text in texts for gram in extract_ngrams(text, max_n))
        ranked = sorted((item for item in counts.items() if item[1] >= min_freq), key=lambda item: (-item[1], item[0]))
        return cls([key for key, _ in ranked[:max_size]], max_n)

    def __len__(self) -> int:
        return len(self.ngrams) + 1

    def id(self, key: str) -> int:
        """The id of ``key``, 0 when it is out of vocabulary."""
        return self._index.get(key, 0)

    def encode(self, text: str) -> tuple[list[int], list[NGram]]:
        """Ids and occurrences of the in-vocabulary n-grams of ``text`` (out-of-vocabulary ones are dropped)."""
        grams = [gram for gram in extract_ngrams(text, self.max_n) if gram.key in self._index]
        return [self._index[gram.key] for gram in grams], grams
