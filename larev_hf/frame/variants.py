"""FRAME's task models F and the rationales they are measured on: the variants of F that axiom 3 trains (less data,
noisier labels, other sizes), its training subsets, and the texts of each rationale type (ŷ, r̂, ṙ, ẏ, Ψe(ŷ), Ψc(ŷ)).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from larev_hf.frame.meta_metrics import (
    NON_REFERENCE,
    RATIONALES,
    contrastive_perturbation,
    equivalent_perturbation,
)
from larev_hf.frame.settings import FrameSettings
from larev_hf.meta.family_registry import example_rng

#: The variant of F every axiom but 3 (A)-(C) uses.
BASE = "base"


@dataclass(frozen=True)
class Variant:
    """One task model F of the run: the default (``base``) or one setting of axiom 3's factors (A)-(C)."""

    name: str
    backbone: str
    train_share: float = 1.0
    noise_share: float = 0.0


def share_name(prefix: str, share: float) -> str:
    """``("train", 0.5)`` → ``"train50"``, ``("noise", 0.125)`` → ``"noise12.5"``."""
    percent = share * 100
    return f"{prefix}{round(percent)}" if abs(percent - round(percent)) < 1e-9 else f"{prefix}{percent:g}"


def backbone_slug(backbone: str) -> str:
    """A file-name-safe name of a backbone (a preset, a Hub name or a path)."""
    return re.sub(r"[^\w.-]", "-", Path(backbone.rstrip("/")).name)


def variant_plan(settings: FrameSettings) -> tuple[list[Variant], dict[str, list[str]]]:
    """F's variants (``base`` first) and, when axiom 3 is measured, the variants of each factor (A)-(C): the 100%,
    0% and ``task_backbone`` settings are ``base`` itself."""
    base = Variant(BASE, settings.task_backbone)
    variants: dict[str, Variant] = {BASE: base}
    factors: dict[str, list[str]] = {}
    if "3" in settings.axioms:
        plan = {
            "train_size": [base if share == 1.0 else Variant(share_name("train", share), base.backbone, train_share=share)
                           for share in settings.share_values("train_shares")],
            "label_noise": [base if share == 0.0 else Variant(share_name("noise", share), base.backbone,
                                                               noise_share=share)
                            for share in settings.share_values("noise_shares")],
            "capacity": [base if backbone == base.backbone else Variant(f"size-{backbone_slug(backbone)}", backbone)
                         for backbone in settings.capacity_backbones],
        }
        for factor, members in plan.items():
            factors[factor] = list(dict.fromkeys(v.name for v in members))
            for variant in members:
                variants.setdefault(variant.name, variant)
    return list(variants.values()), factors


def rationale_types(axioms: Sequence[str], base: bool) -> list[str]:
    """The rationales Φ is measured for: every one the axioms need for ``base``, ŷ alone for the other variants."""
    if not base:
        return ["y_hat"]
    kinds = ["y_hat"]
    if "1" in axioms:
        kinds += list(NON_REFERENCE)
    if "2" in axioms:
        kinds += ["psi_e", "psi_c"]
    return kinds


def rationale_texts(records: Sequence[Mapping[str, Any]], predictions: Sequence[Mapping[str, str]], seed: int,
                    kinds: Sequence[str] = RATIONALES) -> dict[str, list[str]]:
    """The text of each rationale type per record: ŷ, F's r̂, the gold ṙ and ẏ, Ψe(ŷ) and Ψc(ŷ) (appendix A.1), the
    perturbations drawn from a generator seeded by (seed, example id) (:func:`~larev_hf.meta.suite.example_rng`)."""

    out: dict[str, list[str]] = {}
    for kind in kinds:
        texts = []
        for record, prediction in zip(records, predictions, strict=True):
            label = prediction["label"]
            if kind == "y_hat":
                texts.append(label)
            elif kind == "r_hat":
                texts.append(prediction.get("rationale", ""))
            elif kind == "r_dot":
                texts.append(record["rationale"])
            elif kind == "y_dot":
                texts.append(record["label"])
            elif kind == "psi_e":
                texts.append(equivalent_perturbation(label, record["task"], example_rng(seed, record["id"], "frame-psi-e")))
            elif kind == "psi_c":
                texts.append(contrastive_perturbation(label, record["choices"],
                                                      example_rng(seed, record["id"], "frame-psi-c")))
            else:
                raise ValueError(f"unknown rationale type {kind!r}; expected one of {RATIONALES}")
        out[kind] = texts
    return out


def train_subset(records: Sequence[Mapping[str, Any]], share: float, seed: int) -> list[Mapping[str, Any]]:
    """Axiom 3 (A): the first ``round(share · n)`` records of one seeded shuffle (so smaller shares are subsets of
    larger ones); the whole split, in file order, for share 1."""
    if share >= 1.0:
        return list(records)

    order = example_rng(seed, "train-order", "frame").permutation(len(records))
    n = max(1, int(round(share * len(records))))
    return [records[i] for i in order[:n]]
