"""The VARSuite template families A–D as explanation methods (VARIF §2.3, §4), drawn per example as the suite draws
them (:mod:`larev_hf.meta.suite`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from larev_hf.explain.generators.base import resolve_labels
from larev_hf.io import DataError, where
from larev_hf.meta.family_registry import example_rng
from larev_hf.meta.suite import FAMILIES, TEMPLATES

#: The VARSuite families :class:`TemplateGenerator` can run (VARIF §4 A–D, and gold + "The answer is {label}.").
TEMPLATE_FAMILIES: tuple[str, ...] = ("vacuous", "leak", "circular", "pseudo_specific", "gold_leaky")
#: Template families built on the gold rationale: fixed text like gold, so not regenerable.
_GOLD_BASED = ("gold_leaky",)


class TemplateGenerator:
    """A VARSuite template family as an explanation method (VARIF §2.3, §4 A–D): ``vacuous``, ``leak``, ``circular``,
    ``pseudo_specific``; and ``gold_leaky`` (the gold rationale + "The answer is {label}.", fixed text like gold, so
    not regenerable), the leaky method of hypothesis H2.

    Each record is passed to ``FAMILIES[family]`` with its ``label`` replaced by the requested one and the rng
    ``example_rng(seed, id, family)``, so the template drawn depends only on (seed, id, family): a perturbed record
    keeps its id, hence its template, while pseudo-specific's word may change with the paraphrased text. When the
    family skips an example (pseudo-specific with no content word in x), the vacuous family's rationale for that
    example is used instead and counted in :attr:`fallbacks` (cumulative over calls).
    """

    regenerable = True

    def __init__(self, family: str, seed: int = 0) -> None:
        if family not in TEMPLATE_FAMILIES:
            raise ValueError(f"template family {family!r}: expected one of {list(TEMPLATE_FAMILIES)}")
        self.name, self.family, self.seed = family, family, seed
        self.regenerable = family not in _GOLD_BASED
        self.fallbacks = 0

    def _draw(self, family: str, record: Mapping[str, Any]) -> dict[str, Any] | None:
        templates = TEMPLATES.get(family, {}).get(record["task"], ())
        return FAMILIES[family](record, example_rng(self.seed, record["id"], family), templates)

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        out = []
        for record, label in zip(records, labels, strict=True):
            conditioned = {**record, "label": label}
            fields = self._draw(self.family, conditioned)
            if fields is None:
                self.fallbacks += 1
                fields = self._draw("vacuous", conditioned)
            if fields is None or not isinstance(fields.get("rationale"), str) or not fields["rationale"].strip():
                raise DataError(f"{where(example_id=record.get('id'))}: family {self.family!r} gave no rationale")
            out.append(fields["rationale"])
        return out
