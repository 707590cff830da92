"""VARSuite's family E, ``drift`` (VARIF proposal §4): the gold rationale with exactly one negation inserted or deleted.

A drifted rationale reads like the gold and says the opposite, so a metric that rewards wording rather than what
supports the label scores it near the gold. The edit is rule-based (:func:`~larev_hf.data.negation.negation_edits`), or
an HF text2text model's (:func:`hf_negation_editor`) where :func:`~larev_hf.data.negation.is_negation_edit` accepts it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.data.negation import NEGATORS, is_negation_edit, negation_edits
from larev_hf.meta.family_registry import FamilyFn

__all__ = ["NEGATORS", "drift_family", "hf_negation_editor", "is_negation_edit", "negation_edits"]


def drift_family(editor: Callable[[str, np.random.Generator], str | None] | None = None) -> FamilyFn:
    """Family E: one negation edit of the gold rationale, drawn with the example's rng.

    ``editor(gold, rng)`` is an optional hook (e.g. a wrapped HF text2text pipeline, see ``docs/meta.md``);
    its output is kept only if :func:`is_negation_edit` accepts it, otherwise the rule-based edit is used.
    """

    def drift(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        gold = record["rationale"]
        if editor is not None:
            edited = editor(gold, rng)
            if edited and is_negation_edit(gold, edited):
                return {"template_id": "drift:editor", "rationale": edited}
        edits = negation_edits(gold)
        if not edits:
            return None
        op, edited = edits[int(rng.integers(len(edits)))]
        return {"template_id": f"drift:{op}", "rationale": edited}

    return drift


def hf_negation_editor(model_name_or_path: str, prompt: str = "Negate the main claim of this sentence: {rationale}",
                       max_new_tokens: int = 96, device: str | None = None) -> Callable[[str, np.random.Generator], str]:
    """An ``editor`` for :func:`drift_family` from an HF text2text model, by Hub name (e.g. ``"google/flan-t5-large"``)
    or local path: greedy decoding of ``prompt`` (deterministic, so the suite stays byte-identical for a seed).

    VARIF §4 (E) allows "an LLM minimal edit"; the output is used only when :func:`is_negation_edit` accepts it, so a
    model that rewrites more than one negation falls back to the rule-based edit (``template_id`` says which).
    """
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path).eval()
    if device is not None:
        model.to(device)

    def editor(gold: str, rng: np.random.Generator) -> str:
        import torch

        inputs = tokenizer(prompt.format(rationale=gold), return_tensors="pt", truncation=True).to(model.device)
        with torch.no_grad():
            output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        return tokenizer.decode(output[0], skip_special_tokens=True).strip()

    return editor
