"""Reading a label off a trained seq2seq reader: the input x ⊕ r, and log p(y | ·) over the record's own choices.

VARIF's LC-IG predictors (:mod:`larev_hf.varif.lcig`: h₀ = p(y | x), d = p(y | r), h₁ = p(y | x ⊕ r⁻)) and FRAME's
trained simulators G (x → y) and H (x ⊕ r → y) (:mod:`larev_hf.frame.simulators`) read labels the same way: p(y | ·)
is normalised over the example's label set (its ``choices``), as a classifier's softmax would be, so open-label tasks
(CoS-E's answer choices) work as well as fixed label sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.io import DataError, where
from larev_hf.modeling.input_formats import task_text
from larev_hf.modeling.scoring import choice_scores

#: The encoder text of a reader of x ⊕ r: the task input, then the rationale (RoRA's eq. 7 layout).
RATIONALE_SEPARATOR = " rationale: "


def augmented_input(record: Mapping[str, Any], rationale: str) -> str:
    """The encoder text x ⊕ r (LC-IG's h₁, FRAME's H)."""

    return f"{task_text(record)}{RATIONALE_SEPARATOR}{rationale.strip()}"


def choice_log_probs(model: Any, tokenizer: Any, inputs: Sequence[str], records: Sequence[Mapping[str, Any]],
                     labels: Sequence[str] | None = None, batch_size: int = 64,
                     progress: bool = False) -> tuple[np.ndarray, list[str]]:
    """log p(y | input) normalised over the record's label set (a softmax over its choices of the summed label-token
    log-probabilities, :func:`~larev_hf.modeling.score_labels`), and the most probable choice, per input."""
    from scipy.special import logsumexp


    labels = [r["label"] for r in records] if labels is None else list(labels)
    rows = choice_scores(model, tokenizer, inputs, [list(r["choices"]) for r in records], batch_size=batch_size,
                         progress=progress, desc="scoring the choices")
    out, predicted = np.zeros(len(inputs)), []
    for i, (record, row) in enumerate(zip(records, rows, strict=True)):
        choices = list(record["choices"])
        if labels[i] not in choices:
            raise DataError(f"{where(example_id=record.get('id'))}: label {labels[i]!r} is not one of {choices}")
        out[i] = row[choices.index(labels[i])] - logsumexp(row)
        predicted.append(choices[int(np.argmax(row))])
    return out, predicted
