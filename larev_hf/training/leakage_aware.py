"""LAREV's training stages after Φ_base and Φ: the leakage probe ψ and Φ_LA's environment rows (thesis A.1 steps 8-9);
Φ_LA itself trains through :func:`~larev_hf.training.train_irm` with :class:`~larev_hf.training.IRMProbeTrainer`."""

from __future__ import annotations

import os
from collections.abc import Sequence

import datasets
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from larev_hf.modeling.input_formats import InputFormat
from larev_hf.training.seq2seq import train_seq2seq
from larev_hf.training.settings import TrainSettings


def freeze_encoder(model: PreTrainedModel) -> PreTrainedModel:
    """Freeze the encoder (with the input embeddings it owns or shares) so only the decoder side trains (§4.5.3)."""
    model.get_encoder().requires_grad_(False)
    return model


def train_probe(
    phi: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    masked_baselines: Sequence[str],
    labels: Sequence[str],
    output_dir: str | os.PathLike,
    settings: TrainSettings,
) -> PreTrainedModel:
    """ψ: initialised from Φ, encoder frozen, decoder trained on b̃ → y (thesis §4.5.3-4.5.4, eq. 4.8).

    With LoRA, Φ's adapter is already merged (``load_evaluator``) and ψ's adapters go on decoder layers only.
    """
    return train_seq2seq(freeze_encoder(phi), tokenizer, masked_baselines, labels, output_dir, settings,
                         decoder_only=True)


def environment_rows(
    records: Sequence[dict],
    environments: Sequence[dict],
    input_format: InputFormat,
    environment_names: Sequence[str] = ("original", "mask", "antonym"),
    unsure_environments: Sequence[str] = (),
) -> list[dict]:
    """One text row per (instance, environment): ``source`` = r_e ⊕ b_e, ``label``, ``environment`` (index),
    ``group_id`` (instance index) and ``record`` — whatever model family then encodes them.

    An environment's baseline b_e is ``envs[name]`` (the original b when absent); its rationale r_e is
    ``envs["rationales"][name]`` when given (the rationale-side environments), the record's r otherwise. An environment
    in ``unsure_environments`` gets one row per label of the record's ``choices`` instead of one with its label: its
    risk, the mean NLL over those rows, is the cross-entropy against a uniform target over the labels (outlier
    exposure, Hendrycks et al. 2019) — what an input the model should not be sure about is trained towards."""
    rows = []
    for group, (record, envs) in enumerate(zip(records, environments, strict=True)):
        for env_index, name in enumerate(environment_names):
            rationale = envs.get("rationales", {}).get(name, record["rationale"])
            source = input_format.rationale_input(rationale, envs.get(name, envs["original"]))
            targets = list(record["choices"]) if name in unsure_environments else [record["label"]]
            rows.extend({"source": source, "label": label, "environment": env_index, "group_id": group,
                         "record": record} for label in targets)
    return rows


def environment_dataset(
    records: Sequence[dict],
    environments: Sequence[dict[str, str]],
    tokenizer: PreTrainedTokenizerBase,
    input_format: InputFormat,
    environment_names: Sequence[str] = ("original", "mask", "antonym"),
    max_input_length: int = 256,
    max_label_length: int = 32,
    unsure_environments: Sequence[str] = (),
) -> datasets.Dataset:
    """One tokenized row per (instance, environment) of :func:`environment_rows` (one per label for
    ``unsure_environments``): r_e ⊕ b_e → y, with ``environment``, ``group_id`` and the probe's b̃."""
    rows = environment_rows(records, environments, input_format, environment_names, unsure_environments)
    sources = [row["source"] for row in rows]
    targets = [row["label"] for row in rows]
    env_ids = [row["environment"] for row in rows]
    groups = [row["group_id"] for row in rows]
    probe_sources = [input_format.baseline_input(environments[group]["mask"]) for group in groups]
    encoded = tokenizer(sources, truncation=True, max_length=max_input_length)
    return datasets.Dataset.from_dict({
        "input_ids": encoded["input_ids"],
        "attention_mask": encoded["attention_mask"],
        "labels": tokenizer(text_target=targets, truncation=True, max_length=max_label_length)["input_ids"],
        "environment": env_ids,
        "group_id": groups,
        "probe_input_ids": tokenizer(probe_sources, truncation=True, max_length=max_input_length)["input_ids"],
    })

