"""RoRA's text formats: the task input x, the infiller's input and target, and the evaluators' input.

From the authors' released StrategyQA code (``shared/REFERENCE-IMPLEMENTATIONS.md``):

- infiller (RoRA §3.2): ``"answer: {label} question: {q} rationale: {masked r}"`` → the masked spans in
  T5's span-corruption format ``"<extra_id_0> span0 <extra_id_1> span1 <extra_id_2>"``;
- evaluator Φ (eq. 7): ``"question: {q} rationale: {r}"`` → the label;
- baseline Θ (eq. 8): the same text with an EMPTY rationale, ``"question: {q} rationale:"``.

``x`` is ``"question: {q}"`` for yes/no questions (exactly the released format), ``"question: {q}
options: (1) {c1} (2) {c2} ..."`` for multiple-choice QA (the released ECQA evaluator also lists the
options) and ``"premise: {p} hypothesis: {h}"`` for NLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from larev_hf.modeling.input_formats import RORA_FORMAT, task_text
from larev_hf.rora.masking import sentinel

INFILLER_TEMPLATE = "answer: {label} {x} rationale: {rationale}"
#: The words the templates add to every input (for training a preset tokenizer on RoRA's texts).
TEMPLATE_WORDS = "answer: question: options: rationale: premise: hypothesis:"


def evaluator_input(record: Mapping[str, Any], rationale: str) -> str:
    """Φ's encoder text: ``"{x} rationale: {r}"`` (RoRA eq. 7)."""
    return RORA_FORMAT.rationale_input(rationale, task_text(record))


def baseline_input(record: Mapping[str, Any]) -> str:
    """Θ's encoder text: x with an empty rationale, ``"{x} rationale:"`` (RoRA eq. 8)."""
    return RORA_FORMAT.baseline_input(task_text(record))


def infiller_input(record: Mapping[str, Any], label: str, masked_rationale: str) -> str:
    """The infiller's encoder text for candidate ``label`` (RoRA §3.2: y ⊕ x ⊕ masked r)."""
    return INFILLER_TEMPLATE.format(label=label, x=task_text(record), rationale=masked_rationale.strip())


def span_target(originals: Sequence[str]) -> str:
    """T5 span-corruption target: each masked span after its sentinel, closed by the next sentinel."""
    pieces = [f"{sentinel(k)} {text.strip()}" for k, text in enumerate(originals)]
    return " ".join([*pieces, sentinel(len(originals))])


__all__ = ["RORA_FORMAT", "INFILLER_TEMPLATE", "TEMPLATE_WORDS", "task_text", "evaluator_input", "baseline_input",
           "infiller_input", "span_target"]
