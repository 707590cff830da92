"""A synthetic rationale task with known ground truth: the embedded default data set.

Why: REV-style metrics compare a rationale ``r`` with a vacuous baseline ``b`` that already
contains the label (REV §3.2). When ``b`` states the label, an evaluator can score a rationale
that merely restates the label as highly as one that carries new, label-relevant information —
the baseline-leakage problem the LAREV thesis (§4.4) addresses. This task makes the
difference measurable because we know exactly which information a rationale carries:

- Each example asks where an invented object (a pseudo-word such as ``"blorvex"``) is kept;
  the label is a place (``kitchen``, ``garage``, ``garden``, ``bathroom``).
- Every object belongs to one *category* and every category to one place
  (:data:`SYNTHETIC_CATEGORIES`). Object names are random syllable strings, so the question
  alone says nothing about the place.
- The gold rationale states the needed fact without naming the label:
  ``"A blorvex is a kind of spice."``; a model must learn category → place to use it.
- Objects are split so that validation/test objects never occur in train (every category does),
  so the object → place mapping cannot be memorised; only the rationale's fact generalises.

:func:`synthetic_ground_truth` returns, for any example, the category, the fact-carrying gold
rationale and a rationale that only restates the label, so tests can check that a metric
rewards the first and not the second. Everything is seeded and deterministic.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import datasets

from larev_hf.data.schema import make_example, to_dataset, validate_example
from larev_hf.io import DataError, where

SYNTHETIC_PLACES: tuple[str, ...] = ("kitchen", "garage", "garden", "bathroom")

#: category -> place; two categories per place, so the rationale's category is not a label synonym.
SYNTHETIC_CATEGORIES: dict[str, str] = {
    "spice": "kitchen",
    "cookware": "kitchen",
    "tool": "garage",
    "vehicle": "garage",
    "plant": "garden",
    "flower": "garden",
    "soap": "bathroom",
    "towel": "bathroom",
}

SYNTHETIC_SPLITS: dict[str, int] = {"train": 1200, "validation": 200, "test": 200}
"""Default number of examples per split."""

#: Objects per category assigned to each split (disjoint), so held-out objects are never seen in train.
_ITEMS_PER_CATEGORY: dict[str, int] = {"train": 24, "validation": 8, "test": 8}
_NUM_CHOICES = 3
_QUESTION = "Where is the {item} kept?"
_QUESTION_RE = re.compile(r"^Where is the (?P<item>\w+) kept\?$")
_ID_RE = re.compile(r"^synthetic-s(?P<seed>-?\d+)-(?P<split>\w+)-\d+$")

_ONSETS = ("b", "bl", "br", "d", "dr", "f", "fl", "g", "gl", "gr", "k", "kl", "m", "n", "p", "pl",
           "pr", "r", "s", "sk", "sn", "st", "t", "tr", "v", "z")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ee")
_CODAS = ("", "", "n", "r", "x", "m", "l", "sk", "th", "nd")


def _article(word: str) -> str:
    return "An" if word[0] in "aeiou" else "A"


def _pseudo_word(rng: random.Random) -> str:
    syllables = rng.choice((2, 2, 3))
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))


@lru_cache(maxsize=8)
def _item_table(seed: int) -> dict[str, dict[str, str]]:
    """Return ``split -> {item: category}``; the whole universe depends on ``seed`` only."""
    rng = random.Random(f"larev-synthetic-items:{seed}")
    reserved = set(SYNTHETIC_PLACES) | set(SYNTHETIC_CATEGORIES)  # no label or category hidden in a name
    per_category = sum(_ITEMS_PER_CATEGORY.values())
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < per_category * len(SYNTHETIC_CATEGORIES):
        name = _pseudo_word(rng)
        if name not in seen and not any(word in name for word in reserved):
            seen.add(name)
            names.append(name)
    table: dict[str, dict[str, str]] = {split: {} for split in _ITEMS_PER_CATEGORY}
    for c, category in enumerate(SYNTHETIC_CATEGORIES):
        block = iter(names[c * per_category : (c + 1) * per_category])
        for split, count in _ITEMS_PER_CATEGORY.items():
            table[split].update({next(block): category for _ in range(count)})
    return table


def _fact_rationale(item: str, category: str) -> str:
    return f"{_article(item)} {item} is a kind of {category}."


def make_synthetic_split(split: str, n: int, seed: int = 0) -> datasets.Dataset:
    """Generate ``n`` examples of one split of the synthetic task.

    Args:
        split (`str`): ``"train"``, ``"validation"`` or ``"test"``; each uses its own, disjoint objects.
        n (`int`): number of examples. Example ``i`` depends only on ``(seed, split, i)`` draws made
            before it, so a smaller ``n`` gives a prefix of a larger one.
        seed (`int`, defaults to 0): seeds object names, their categories and the examples.

    Returns:
        `datasets.Dataset`: schema columns only (``task="qa"``, 3 place choices, the place as label).
    """
    if split not in _ITEMS_PER_CATEGORY:
        raise ValueError(f"unknown synthetic split {split!r}; expected one of {tuple(_ITEMS_PER_CATEGORY)}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    items = sorted(_item_table(seed)[split].items())
    rng = random.Random(f"larev-synthetic-examples:{seed}:{split}")
    records = []
    for i in range(n):
        item, category = rng.choice(items)
        place = SYNTHETIC_CATEGORIES[category]
        others = rng.sample([p for p in SYNTHETIC_PLACES if p != place], _NUM_CHOICES - 1)
        choices = [place, *others]
        rng.shuffle(choices)
        record = make_example(
            id=f"synthetic-s{seed}-{split}-{i:05d}",
            task="qa",
            question=_QUESTION.format(item=item),
            choices=choices,
            label=place,
            rationale=_fact_rationale(item, category),
        )
        validate_example(record)
        records.append(record)
    return to_dataset(records)


def load_synthetic(split: str, n: int | None = None, seed: int = 0) -> datasets.Dataset:
    """Load one split of the synthetic task with its default size (:data:`SYNTHETIC_SPLITS`) unless ``n`` is given."""
    if split not in SYNTHETIC_SPLITS:
        raise ValueError(f"unknown synthetic split {split!r}; expected one of {tuple(SYNTHETIC_SPLITS)}")
    return make_synthetic_split(split, SYNTHETIC_SPLITS[split] if n is None else n, seed=seed)


def synthetic_ground_truth(example: Mapping[str, Any]) -> dict[str, str]:
    """Return what is known about a synthetic example, independent of its current rationale.

    Returns:
        `dict[str, str]`: ``item``, ``category``, ``place`` (the gold label), ``fact_rationale``
        (carries the category fact, does not name the label) and ``restating_rationale``
        (names the label, carries no fact: ``"The {item} is kept in the {place}."``).
    """
    loc = where(example_id=example.get("id"))
    id_match = _ID_RE.match(str(example.get("id", "")))
    question_match = _QUESTION_RE.match(str(example.get("question", "")))
    if not (id_match and question_match):
        raise DataError(f"{loc}: not a synthetic example (expected an id 'synthetic-s<seed>-<split>-<n>' "
                        f"and a question like {_QUESTION!r})")
    seed, split, item = int(id_match["seed"]), id_match["split"], question_match["item"]
    category = _item_table(seed).get(split, {}).get(item)
    if category is None:
        raise DataError(f"{loc}: object {item!r} is not in the synthetic {split!r} split for seed {seed}")
    place = SYNTHETIC_CATEGORIES[category]
    return {
        "item": item,
        "category": category,
        "place": place,
        "fact_rationale": _fact_rationale(item, category),
        "restating_rationale": f"The {item} is kept in the {place}.",
    }
