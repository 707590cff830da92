"""The self-rationalizing task model F of FRAME (§2.2) and VARIF's self-rationalizer generator (§6).

F reads the task input x (:func:`~larev_hf.modeling.templates.task_text`) and writes its prediction and its
rationale in one sequence, ``"ŷ explanation: r̂"``, as FRAME's T5 does ("[ŷ, r̂]"). It is trained on the gold
labels and gold rationales of a split with the library's seq2seq trainer and predicts by greedy decoding. A
generated label that is none of the example's choices (rare once trained) is mapped to the most similar choice,
and the count of such repairs is kept (:attr:`SelfRationalizer.repaired`).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: Between the label and the rationale in F's output.
SEPARATOR = " explanation: "
#: The separator as decoded text may show it (tokenizers can detach the colon: ``"explanation :"``).
_SEPARATOR_PATTERN = re.compile(r"\s*\bexplanation\s*:\s*")


def self_rationalization_target(label: str, rationale: str) -> str:
    """F's training target for one example: ``"{label} explanation: {rationale}"``."""
    return f"{label}{SEPARATOR}{rationale.strip()}"


def parse_self_rationalization(text: str, choices: Sequence[str]) -> tuple[str, str, bool]:
    """``(label, rationale, repaired)`` from F's output: the text before the separator is the label, mapped to the
    most similar of ``choices`` when it is none of them (``repaired``)."""
    parts = _SEPARATOR_PATTERN.split(text, maxsplit=1)
    label, rationale = parts[0].strip(), parts[1].strip() if len(parts) > 1 else ""
    if label in choices:
        return label, rationale, False
    lowered = {choice.lower(): choice for choice in choices}
    if label.lower() in lowered:
        return lowered[label.lower()], rationale, False
    best = max(choices, key=lambda choice: difflib.SequenceMatcher(None, label.lower(), choice.lower()).ratio())
    return best, rationale, True


@dataclass
class SelfRationalizer:
    """FRAME's task model F: x → ``"ŷ explanation: r̂"`` (a seq2seq model and its tokenizer)."""

    model: Any
    tokenizer: Any
    repaired: int = field(default=0, init=False)

    @classmethod
    def train(cls, records: Sequence[Mapping[str, Any]], output_dir: str | os.PathLike, backbone: str = "t5-tiny",
              settings: Any = None, labels: Sequence[str] | None = None, tokenizer: Any = None,
              seed: int = 0) -> SelfRationalizer:
        """Train F on ``records`` (their ``label``, or ``labels`` instead — e.g. noisy ones for FRAME's axiom 3 — and
        their ``rationale``) and save it to ``output_dir``; a finished ``output_dir`` is loaded instead."""
        from larev_hf.modeling import build_model, build_tokenizer, load_evaluator
        from larev_hf.modeling.templates import task_text
        from larev_hf.training import TrainSettings, train_seq2seq

        if (Path(output_dir) / "config.json").is_file():
            return cls.load(output_dir)
        labels = [r["label"] for r in records] if labels is None else list(labels)
        sources = [task_text(r) for r in records]
        targets = [self_rationalization_target(y, r["rationale"]) for y, r in zip(labels, records, strict=True)]
        tokenizer = tokenizer or build_tokenizer(backbone, sources + targets)
        settings = settings or TrainSettings(seed=seed, progress=False)
        # targets hold a whole rationale; a copy, so the caller's settings are left as they were
        settings = replace(settings, max_label_length=max(settings.max_label_length, 96))
        train_seq2seq(build_model(backbone, tokenizer, seed=seed), tokenizer, sources, targets, output_dir, settings)
        model, tokenizer = load_evaluator(output_dir, device="cpu")
        return cls(model, tokenizer)

    @classmethod
    def load(cls, directory: str | os.PathLike) -> SelfRationalizer:
        """A saved F (``save_pretrained`` layout, as any evaluator)."""
        from larev_hf.modeling import load_evaluator

        model, tokenizer = load_evaluator(directory, device="cpu")
        return cls(model, tokenizer)

    def predict(self, records: Sequence[Mapping[str, Any]], batch_size: int = 64,
                max_new_tokens: int = 64) -> list[dict[str, str]]:
        """``{"label": ŷ, "rationale": r̂}`` per record by greedy decoding (inputs sorted by length, results in input
        order); ŷ is always one of the record's ``choices``."""
        from larev_hf.modeling.generation import generate_texts
        from larev_hf.modeling.templates import task_text

        outputs = generate_texts(self.model, self.tokenizer, [task_text(r) for r in records], batch_size=batch_size,
                                 max_new_tokens=max_new_tokens)
        predictions, repaired = parse_outputs(outputs, records)
        self.repaired += sum(repaired)
        return predictions


def parse_outputs(outputs: Sequence[str], records: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, str]], list[bool]]:
    """F's decoded outputs as ``{"label", "rationale"}`` per record (:func:`parse_self_rationalization`) and whether
    each label had to be repaired to one of the record's choices."""
    predictions, repaired = [], []
    for text, record in zip(outputs, records, strict=True):
        label, rationale, was_repaired = parse_self_rationalization(text, list(record["choices"]))
        predictions.append({"label": label, "rationale": rationale})
        repaired.append(bool(was_repaired))
    return predictions, repaired
