"""The VARSuite family registry: family name → the function that writes a family's rationale for a record, and the
helpers every family module uses (a seeded generator per example, template drawing, the word pattern). The built-in
families (:mod:`larev_hf.meta.suite`) and the surface-proof ones (:mod:`larev_hf.meta.surface_families`) register
here, so neither imports the other's module to add a family."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.io import DataError, where
from larev_hf.meta.templates import _NLI_RELATION, _TRUTH, TEMPLATES

FamilyFn = Callable[[Mapping[str, Any], np.random.Generator, Sequence[str]], "dict[str, Any] | None"]
"""``(record, rng, templates for the record's task) -> row fields`` (``rationale``; optionally
``template_id``, ``label_used``, extra keys) or ``None`` to skip the example."""

#: A word: letters, with inner apostrophes or hyphens.
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")


# --------------------------------------------------------------------------- seeding and registry


def example_rng(seed: int, example_id: str, family: str) -> np.random.Generator:
    """A generator seeded from SHA-256 of ``(seed, family, id)``: stable across processes (never ``hash()``)."""
    digest = hashlib.sha256(f"{seed}\x1f{family}\x1f{example_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


FAMILIES: dict[str, FamilyFn] = {}


def register_family(name: str, fn: FamilyFn, templates: Mapping[str, Sequence[str]] | None = None,
                    *, overwrite: bool = False) -> None:
    """Add a family to :data:`FAMILIES` (and optional per-task ``templates`` to :data:`TEMPLATES`).

    ``fn(record, rng, templates)`` returns the row fields (``rationale``, optionally ``template_id`` and
    ``label_used``, which defaults to the gold label) or ``None`` to skip the example.
    """
    if not re.fullmatch(r"[A-Za-z_][\w-]*", name):
        raise ValueError(f"family name {name!r}: expected letters, digits, '_' or '-'")
    if name in FAMILIES and not overwrite:
        raise ValueError(f"family {name!r} is already registered; pass overwrite=True to replace it")
    FAMILIES[name] = fn
    if templates is not None:
        TEMPLATES[name] = {task: tuple(items) for task, items in templates.items()}


def pick_template(name: str, record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str],
          **fields: str) -> dict[str, Any]:
    """Draw one template with ``rng`` and render it for the record's gold label."""
    if not templates:
        raise DataError(f"{where(example_id=record['id'])}: family {name!r} has no templates "
                        f"for task {record['task']!r}")
    k = int(rng.integers(len(templates)))
    label = record["label"]
    text = templates[k].format(label=label, relation=_NLI_RELATION.get(label, "supports"),
                               truth=_TRUTH.get(label, "true"), **fields)
    return {"template_id": f"{name}:{record['task']}:{k}", "rationale": text}
