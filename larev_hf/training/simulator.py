"""The LAS / RQ simulator (Hase et al., 2020; Wiegreffe et al., 2021): a seq2seq model trained on every view of
every example — the task input with the rationale (``x_r``), the input alone (``x``) and the rationale alone (``r``) —
and its per-view correctness, which :mod:`larev_hf.scores.simulatability` turns into LAS and RQ.

Hase et al. train one simulator on x, r and (x, r) by dropping parts of the input at random; ours sees every view of
every training example (deterministic). Pass ``labels`` (e.g. a task model's predictions ŷ) to simulate those instead of
the gold labels, as Hase et al.'s original LAS does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.io import DataError, where
from larev_hf.modeling.input_formats import RORA_FORMAT, task_text
from larev_hf.modeling.scoring import predict_choices
from larev_hf.scores.simulatability import SIMULATOR_VIEWS, SimulatabilityScores, correctness
from larev_hf.training.seq2seq import train_seq2seq
from larev_hf.training.settings import TrainSettings


def simulator_input(record: Mapping[str, Any], rationale: str, view: str) -> str:
    """Encoder text of one simulator view: ``"{x} rationale: {r}"`` (x_r), ``"{x} rationale:"`` (x) or
    ``"rationale: {r}"`` (r); x is :func:`larev_hf.rora.task_text` (the RoRA evaluators' format)."""
    if view == "x_r":
        return RORA_FORMAT.rationale_input(rationale, task_text(record))
    if view == "x":
        return RORA_FORMAT.baseline_input(task_text(record))
    if view == "r":
        return f"rationale: {rationale.strip()}".strip()
    raise ValueError(f"unknown simulator view {view!r}; expected one of {SIMULATOR_VIEWS}")


def _labels(records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None) -> list[str]:
    if labels is None:
        return [r["label"] for r in records]
    if len(labels) != len(records):
        raise ValueError(f"got {len(labels)} labels for {len(records)} records; expected one label per record")
    for record, label in zip(records, labels, strict=True):
        if label not in record["choices"]:
            raise DataError(f"{where(example_id=record.get('id'))}: simulated label {label!r} is not one of its choices "
                            f"{list(record['choices'])}")
    return list(labels)


def train_simulator(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
    views: Sequence[str] = SIMULATOR_VIEWS,
    rationales: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> PreTrainedModel:
    """Train a seq2seq simulator on every ``view`` of every record → its label (gold unless ``labels`` is given).

    Args:
        model (`PreTrainedModel`): a fresh seq2seq model (e.g. ``build_model(backbone, tokenizer)``).
        records (`Sequence[Mapping]`): training examples (schema fields).
        output_dir (`str` or `os.PathLike`): where the trained simulator is saved (atomically).
        settings (`TrainSettings`): optimiser settings.
        views (`Sequence[str]`, *optional*, defaults to `SIMULATOR_VIEWS`): which inputs the simulator learns; one
            simulator per view (Wiegreffe et al.'s two models) is ``views=("x_r",)`` and ``views=("x",)``.
        rationales (`Sequence[str]`, *optional*): training rationales (default: each record's ``rationale``).
        labels (`Sequence[str]`, *optional*): the labels to simulate (default: gold).
    """
    unknown = [view for view in views if view not in SIMULATOR_VIEWS]
    if unknown or not views:
        raise ValueError(f"views must be a non-empty subset of {SIMULATOR_VIEWS}, got {list(views)}")
    targets = _labels(records, labels)
    rationales = [r["rationale"] for r in records] if rationales is None else list(rationales)
    sources, outputs = [], []
    for record, rationale, label in zip(records, rationales, targets, strict=True):
        for view in views:
            sources.append(simulator_input(record, rationale, view))
            outputs.append(label)
    return train_seq2seq(model, tokenizer, sources, outputs, output_dir, settings)


def simulate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    rationales: Sequence[str],
    labels: Sequence[str] | None = None,
    views: Sequence[str] = SIMULATOR_VIEWS,
    **predict_kwargs: Any,
) -> dict[str, np.ndarray]:
    """Per-example correctness of the simulator's choice in each view (``predict_choices``, argmax over choices)."""
    targets = _labels(records, labels)
    if len(rationales) != len(records):
        raise ValueError(f"got {len(rationales)} rationales for {len(records)} records; expected one per record")
    choices = [r["choices"] for r in records]
    correct = {}
    for view in views:
        inputs = [simulator_input(r, text, view) for r, text in zip(records, rationales, strict=True)]
        correct[view] = correctness(predict_choices(model, tokenizer, inputs, choices, **predict_kwargs), choices, targets)
    return correct


def simulatability(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[Mapping[str, Any]],
    rationales: Sequence[str],
    labels: Sequence[str] | None = None,
    **predict_kwargs: Any,
) -> SimulatabilityScores:
    """LAS and RQ of ``rationales`` under a simulator trained on all three views (see :func:`train_simulator`)."""
    return SimulatabilityScores.from_correctness(simulate(model, tokenizer, records, rationales, labels, **predict_kwargs))
