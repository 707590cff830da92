"""The generator a command-line spec names (``larev-hf varif --generators gold,tfidf:5,hf:NAME,...``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from larev_hf.explain.generators.base import ExplanationGenerator
from larev_hf.explain.generators.extractive import RandomKGenerator, TfidfTopKGenerator
from larev_hf.explain.generators.fixed import GoldGenerator, JsonlGenerator
from larev_hf.explain.generators.models import SelfRationalizerGenerator, Text2TextGenerator
from larev_hf.explain.generators.templates import TEMPLATE_FAMILIES, TemplateGenerator

if TYPE_CHECKING:
    from larev_hf.explain.task_model import SelfRationalizer

#: The spec forms :func:`build_generator` accepts (shown in its error message).
SPEC_FORMS: tuple[str, ...] = ("gold", *TEMPLATE_FAMILIES, "tfidf", "tfidf:K", "random", "random:K",
                               "self_rationalizer", "self_rationalizer:unconditional", "hf:NAME_OR_PATH",
                               "NAME=hf:NAME_OR_PATH", "jsonl:PATH", "NAME=jsonl:PATH")

_NAMED_SPEC = re.compile(r"([A-Za-z_][\w.-]*)=((?:jsonl|hf):.+)")


def _positive_k(spec: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"generator spec {spec!r}: K must be a positive integer, got {value!r}")
    return int(value)


def build_generator(spec: str, *, seed: int = 0, fit_texts: Sequence[str] | None = None,
                    self_rationalizer: SelfRationalizer | None = None) -> ExplanationGenerator:
    """The generator a CLI spec names (forms in :data:`SPEC_FORMS`).

    ``"gold"``; a template family (``"vacuous"``, ``"leak"``, ``"circular"``, ``"pseudo_specific"``, drawn with
    ``seed``); ``"tfidf"`` / ``"tfidf:K"`` (idf fit on ``fit_texts``, e.g. the training inputs; K defaults to 5);
    ``"random"`` / ``"random:K"`` (with ``seed``); ``"self_rationalizer"`` (label-conditional) or
    ``"self_rationalizer:unconditional"``, both needing the trained ``self_rationalizer``; ``"hf:NAME_OR_PATH"``;
    ``"jsonl:PATH"``. ``"NAME=hf:…"`` and ``"NAME=jsonl:…"`` give the generator the name NAME.
    """
    text = spec.strip()
    spec, name = text, None
    if match := _NAMED_SPEC.fullmatch(text):
        name, spec = match.group(1), match.group(2)
    kind, _, argument = spec.partition(":")
    if spec == "gold":
        return GoldGenerator()
    if spec in TEMPLATE_FAMILIES:
        return TemplateGenerator(spec, seed=seed)
    if kind == "tfidf" and (spec == "tfidf" or argument):
        return TfidfTopKGenerator(k=_positive_k(text, argument) if argument else 5, fit_texts=fit_texts)
    if kind == "random" and (spec == "random" or argument):
        return RandomKGenerator(k=_positive_k(text, argument) if argument else 5, seed=seed)
    if spec in ("self_rationalizer", "self_rationalizer:unconditional"):
        if self_rationalizer is None:
            raise ValueError(f"generator spec {text!r}: the self-rationalizer must be trained first; pass the "
                             "trained SelfRationalizer as self_rationalizer=")
        return SelfRationalizerGenerator(self_rationalizer, unconditional=spec.endswith(":unconditional"))
    if kind == "hf" and argument.strip():
        return Text2TextGenerator(argument.strip(), name=name)
    if kind == "jsonl" and argument.strip():
        return JsonlGenerator(argument.strip(), name=name)
    raise ValueError(f"unknown generator spec {text!r}; expected one of: {', '.join(SPEC_FORMS)}")
