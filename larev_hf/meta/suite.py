"""VARSuite: adversarial rationales for meta-evaluating rationale metrics (VARIF proposal §4).

Every example ``(x, y, r)`` yields one row per family; a family may skip an example (no place for a
negation edit, no content word). Families (letters as in VARIF §4):

- ``gold``: the human rationale ``r`` — the reference every other family is compared with.
- ``gold_leaky``: ``r`` + ``"The answer is {label}."`` (:data:`~larev_hf.data.baseline_builders.LEAKY_TEMPLATE`).
- ``vacuous`` (A): label-free filler, "The answer follows from the evidence provided."
- ``leak`` (B): states the label verbatim, "The label is entailment."
- ``circular`` (C): the label justified by itself, "This is entailment because the premise entails the
  hypothesis."
- ``pseudo_specific`` (D): "Because the text mentions {a content word of x}, the conclusion follows."
- ``drift`` (E): ``r`` with exactly one negation inserted or deleted (:func:`is_negation_edit` holds).
- ``label_swap`` (F): ``r`` paired with a wrong label; the row's baseline is built for that label.

A-D draw one of at least five surface templates per task, so no metric passes by memorising one
string. All randomness comes from :func:`example_rng`, seeded by a SHA-256 of ``(seed, family, id)``,
so a suite is byte-identical across processes and adding a family never changes another's rows.

The templates are in :mod:`larev_hf.meta.family_registry`; ``drift`` is below (:func:`drift_family`, its rule-based
edits from :mod:`larev_hf.data.negation`, or an HF text2text model's, :func:`hf_negation_editor`); ``padding`` with the surface-proof families in
:mod:`larev_hf.meta.surface_families`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.data.baseline_builders import LEAKY_TEMPLATE, make_baseline_builder
from larev_hf.data.negation import (  # noqa: F401 - NEGATORS, is_negation_edit: served with drift (larev_hf.meta)
    NEGATORS,
    is_negation_edit,
    negation_edits,
)
from larev_hf.data.schema import COLUMNS, validate_example
from larev_hf.data.vacuous import BaselineBuilder
from larev_hf.io import DataError, read_jsonl, where, write_jsonl
from larev_hf.meta.family_registry import (  # noqa: F401 - FAMILIES, FamilyFn, register_family: this module's API
    FAMILIES,
    STOPWORDS,
    TEMPLATES,
    WORD,
    FamilyFn,
    example_rng,
    pick_template,
    register_family,
)
from larev_hf.meta.settings import DEFAULT_FAMILIES


def drift_family(editor: Callable[[str, np.random.Generator], str | None] | None = None) -> FamilyFn:
    """Family E: one negation edit of the gold rationale, drawn with the example's rng.

    ``editor(gold, rng)`` is an optional hook (e.g. a wrapped HF text2text pipeline, see ``docs/meta.md``);
    its output is kept only if :func:`is_negation_edit` accepts it, otherwise the rule-based edit is used.
    """

    def drift(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        gold = record["rationale"]
        if editor is not None:
            edited = editor(gold, rng)
            if edited and is_negation_edit(gold, edited):
                return {"template_id": "drift:editor", "rationale": edited}
        edits = negation_edits(gold)
        if not edits:
            return None
        op, edited = edits[int(rng.integers(len(edits)))]
        return {"template_id": f"drift:{op}", "rationale": edited}

    return drift


def hf_negation_editor(model_name_or_path: str, prompt: str = "Negate the main claim of this sentence: {rationale}",
                       max_new_tokens: int = 96, device: str | None = None) -> Callable[[str, np.random.Generator], str]:
    """An ``editor`` for :func:`drift_family` from an HF text2text model, by Hub name (e.g. ``"google/flan-t5-large"``)
    or local path: greedy decoding of ``prompt`` (deterministic, so the suite stays byte-identical for a seed).

    VARIF §4 (E) allows "an LLM minimal edit"; the output is used only when :func:`is_negation_edit` accepts it, so a
    model that rewrites more than one negation falls back to the rule-based edit (``template_id`` says which).
    """
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path).eval()
    if device is not None:
        model.to(device)

    def editor(gold: str, rng: np.random.Generator) -> str:
        import torch

        inputs = tokenizer(prompt.format(rationale=gold), return_tensors="pt", truncation=True).to(model.device)
        with torch.no_grad():
            output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        return tokenizer.decode(output[0], skip_special_tokens=True).strip()

    return editor


logger = logging.getLogger(__name__)

#: Keys every suite row carries, in this order (a family's extra keys follow).
ROW_KEYS: tuple[str, ...] = ("id", "family", "template_id", "rationale", "label_used", "gold_label", "label",
                             "task", "premise", "hypothesis", "question", "choices", "baseline")


def content_words(record: Mapping[str, Any]) -> list[str]:
    """Candidate "entities" for family D, in text order, deduplicated case-insensitively.

    Runs of capitalised content words that do not open a sentence ("Mount Fuji") are entities; when x has
    none, the content words are used. Stop words (:data:`STOPWORDS`), words of at most two letters and
    words of any answer choice are left out, so the pick never states the label.
    """
    texts = [record["premise"], record["hypothesis"]] if record["task"] == "nli" else [record["question"]]
    banned = {w.lower() for choice in record["choices"] for w in WORD.findall(choice)}
    entities: list[str] = []
    words: list[str] = []
    for text in texts:
        end: int | None = None  # end of the previous entity word while an entity run is open
        for match in WORD.finditer(text):
            word = re.sub(r"['’]s$", "", match.group())
            before = text[: match.start()].rstrip()
            if len(word) <= 2 or word.lower() in STOPWORDS or word.lower() in banned:
                end = None
                continue
            if word[0].isupper() and before and before[-1] not in ".?!":
                if end is not None and text[end : match.start()] == " ":
                    entities[-1] += f" {word}"
                else:
                    entities.append(word)
                end = match.end()
            else:
                words.append(word.lower() if not before or before[-1] in ".?!" else word)
                end = None
    unique: dict[str, str] = {}
    for word in entities or words:
        unique.setdefault(word.lower(), word)
    return list(unique.values())


def _gold(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict[str, Any]:
    return {"template_id": "gold", "rationale": record["rationale"]}


def _gold_leaky(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict[str, Any]:
    leaky = LEAKY_TEMPLATE.format(label=record["label"])
    return {"template_id": "gold_leaky", "rationale": f"{record['rationale']} {leaky}"}


def template_family(name: str) -> FamilyFn:
    """A family that draws one of its task's templates per example (how A-C are built; see :func:`register_family`)."""

    def family(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict[str, Any]:
        return pick_template(name, record, rng, templates)

    return family


def _pseudo_specific(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
    candidates = content_words(record)
    if not candidates:
        return None
    return pick_template("pseudo_specific", record, rng, templates, entity=candidates[int(rng.integers(len(candidates)))])


def _label_swap(record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
    others = [c for c in dict.fromkeys(record["choices"]) if c != record["label"]]
    if not others:
        return None
    return {"template_id": "label_swap", "rationale": record["rationale"],
            "label_used": others[int(rng.integers(len(others)))]}


for _name, _fn in (("gold", _gold), ("gold_leaky", _gold_leaky), ("vacuous", template_family("vacuous")),
                   ("leak", template_family("leak")), ("circular", template_family("circular")),
                   ("pseudo_specific", _pseudo_specific), ("drift", drift_family()), ("label_swap", _label_swap)):
    register_family(_name, _fn)


# --------------------------------------------------------------------------- user families


class UserFamily:
    """A family read from a JSONL of ``{"id", "rationale", "label_used"?}`` rows, joined to records by id."""

    def __init__(self, path: str | os.PathLike, name: str) -> None:
        self.path, self.name = str(path), name
        self.rows: dict[str, tuple[int, str, str | None]] = {}
        for line, raw in read_jsonl(path):
            example_id = raw.get("id")
            loc = where(self.path, line, None if example_id is None else str(example_id))
            if not isinstance(example_id, (str, int)) or isinstance(example_id, bool) or not str(example_id).strip():
                raise DataError(f"{loc}: field 'id' is {example_id!r}; expected a non-empty example id")
            rationale, label_used = raw.get("rationale"), raw.get("label_used")
            if not isinstance(rationale, str) or not rationale.strip():
                raise DataError(f"{loc}: field 'rationale' is {rationale!r}; expected a non-empty string")
            if label_used is not None and not isinstance(label_used, str):
                raise DataError(f"{loc}: field 'label_used' is {label_used!r}; expected a label string")
            if str(example_id) in self.rows:
                raise DataError(f"{loc}: duplicate id (first on line {self.rows[str(example_id)][0]})")
            self.rows[str(example_id)] = (line, rationale, label_used)

    def check_records(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Raise :class:`DataError` naming file, line and id for an unknown id or a label outside ``choices``."""
        by_id = {record["id"]: record for record in records}
        for example_id, (line, _, label_used) in self.rows.items():
            loc = where(self.path, line, example_id)
            if example_id not in by_id:
                raise DataError(f"{loc}: unknown id; no example of the suite's {len(by_id)} records has it")
            if label_used is not None and label_used not in by_id[example_id]["choices"]:
                raise DataError(f"{loc}: field 'label_used' is {label_used!r}; expected one of "
                                f"{list(by_id[example_id]['choices'])}")

    def __call__(self, record: Mapping[str, Any], rng: np.random.Generator, templates: Sequence[str]) -> dict | None:
        entry = self.rows.get(record["id"])
        if entry is None:
            return None
        row: dict[str, Any] = {"template_id": f"user:{self.name}", "rationale": entry[1]}
        if entry[2] is not None:
            row["label_used"] = entry[2]
        return row


def load_user_family(path: str | os.PathLike, name: str, *, records: Sequence[Mapping[str, Any]] | None = None,
                     register: bool = True) -> UserFamily:
    """Read a user's rationales (JSONL: ``id``, ``rationale``, optional ``label_used``) as family ``name``.

    With ``records`` the ids and labels are checked at once; :func:`build_suite` checks them again.
    ``register=True`` adds (or replaces) the family in :data:`FAMILIES`; built-in names are refused.
    """
    if name in DEFAULT_FAMILIES:
        raise ValueError(f"family {name!r} is built in; choose another name for a user family")
    family = UserFamily(path, name)
    if records is not None:
        family.check_records(list(records))
    if register:
        register_family(name, family, overwrite=True)
    return family


# --------------------------------------------------------------------------- building and writing


def build_suite_with_skips(records: Iterable[Mapping[str, Any]], families: Sequence[str] | None = None,
                           seed: int = 0, baseline_builder: BaselineBuilder | None = None,
                           ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """:func:`build_suite` that also returns ``{family: [ids it skipped]}``."""
    records = [dict(record) for record in records]
    seen: set[str] = set()
    for record in records:
        validate_example(record)
        if record["id"] in seen:
            raise DataError(f"{where(example_id=record['id'])}: duplicate id; expected unique example ids")
        seen.add(record["id"])
    names = list(DEFAULT_FAMILIES if families is None else families)
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; registered: {list(FAMILIES)}")
    for name in names:
        if hasattr(FAMILIES[name], "check_records"):
            FAMILIES[name].check_records(records)
        if hasattr(FAMILIES[name], "prepare"):  # a family that draws from other records (off_topic) indexes them
            FAMILIES[name].prepare(records)
    builder = baseline_builder or make_baseline_builder("template", seed=seed)
    rows: list[dict[str, Any]] = []
    skipped: dict[str, list[str]] = {name: [] for name in names}
    for record in records:
        for name in names:
            templates = TEMPLATES.get(name, {}).get(record["task"], ())
            fields = FAMILIES[name](record, example_rng(seed, record["id"], name), templates)
            if fields is None:
                skipped[name].append(record["id"])
                continue
            rows.append(_row(record, name, fields))
    for row, baseline in zip(rows, label_baselines(records, [(row["id"], row["label_used"]) for row in rows], builder),
                             strict=True):
        row["baseline"] = baseline
    counts = {name: len(ids) for name, ids in skipped.items() if ids}
    if counts:
        logger.info("VARSuite: %d examples; skipped per family: %s", len(records), counts)
    return rows, skipped


def label_baselines(records: Sequence[Mapping[str, Any]], pairs: Sequence[tuple[str, str]],
                    builder: BaselineBuilder) -> list[str]:
    """The vacuous baseline b of each ``(example id, label)`` pair: one per distinct pair, built by ``builder`` from
    the record's x and that label; a record's own ``baseline`` (a run's, made by its builder) is kept for its own
    label. Used for rows whose label is not the gold one (label swaps, FRAME's predicted labels ŷ)."""
    by_id = {record["id"]: record for record in records}
    baselines = {(r["id"], r["label"]): r["baseline"] for r in records if isinstance(r.get("baseline"), str) and r["baseline"]}
    keys = [key for key in dict.fromkeys(pairs) if key not in baselines]
    examples = [{c: by_id[i][c] for c in COLUMNS if c != "rationale"} | {"label": label} for i, label in keys]
    if examples:
        baselines.update(zip(keys, builder(examples), strict=True))
    return [baselines[pair] for pair in pairs]


def _row(record: Mapping[str, Any], family: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    rationale, label_used = fields.get("rationale"), fields.get("label_used", record["label"])
    loc = where(example_id=record["id"])
    if not isinstance(rationale, str) or not rationale.strip():
        raise DataError(f"{loc}: family {family!r} returned rationale {rationale!r}; expected a non-empty string")
    if label_used not in record["choices"]:
        raise DataError(f"{loc}: family {family!r} used label {label_used!r}; "
                        f"expected one of {list(record['choices'])}")
    row = {"id": record["id"], "family": family, "template_id": str(fields.get("template_id", family)),
           "rationale": rationale, "label_used": label_used, "gold_label": record["label"], "label": label_used,
           **{c: record[c] for c in ("task", "premise", "hypothesis", "question")},
           "choices": list(record["choices"]), "baseline": ""}
    row.update({k: v for k, v in fields.items() if k not in row})
    return row


def build_suite(records: Iterable[Mapping[str, Any]], families: Sequence[str] | None = None, seed: int = 0,
                baseline_builder: BaselineBuilder | None = None) -> list[dict[str, Any]]:
    """Build the VARSuite rows (VARIF §4) for schema ``records`` (a list or a ``datasets.Dataset``).

    Args:
        records (`Iterable[Mapping]`): schema records with a gold ``rationale``; ids must be unique.
        families (`Sequence[str]`, *optional*): names in :data:`FAMILIES`; defaults to :data:`DEFAULT_FAMILIES`.
        seed (`int`, defaults to 0): seeds every per-example draw (and the default baseline builder).
        baseline_builder (`BaselineBuilder`, *optional*): builds each row's ``baseline`` from
            ``(x, label_used)``; defaults to ``make_baseline_builder("template", seed=seed)``. A record that
            carries a ``baseline`` keeps it for the rows that use its gold label.

    Returns:
        Rows with the keys :data:`ROW_KEYS`, example by example and in ``families`` order within one.
        ``label`` repeats ``label_used`` so each row is a schema record a scorer can take as is; the gold
        label is ``gold_label``. Skipped examples are logged; :func:`build_suite_with_skips` returns them.
    """
    return build_suite_with_skips(records, families, seed, baseline_builder)[0]


def write_suite(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write suite rows as JSON Lines, atomically (:func:`larev_hf.io.write_jsonl`)."""
    write_jsonl(path, (dict(row) for row in rows))


def load_suite(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a suite written by :func:`write_suite`; a row missing a key of :data:`ROW_KEYS` is a :class:`DataError`."""
    for line, row in (rows := list(read_jsonl(path))):
        if missing := [key for key in ROW_KEYS if key not in row]:
            raise DataError(f"{where(path, line, row.get('id'))}: missing fields {missing}; expected {list(ROW_KEYS)}")
    return [row for _, row in rows]


# The families a surface heuristic cannot pass register themselves on import (through the family registry).
from larev_hf.meta import surface_families  # noqa: E402, F401
