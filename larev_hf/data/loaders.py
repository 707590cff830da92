"""Loaders that map rationale data sets onto the one schema (:mod:`larev_hf.data.schema`).

Every loader reads either a local directory (``{split}.jsonl``; a file path is read as is) or,
where noted, a Hub data set by name through :func:`datasets.load_dataset`. Each record is checked
with :func:`~larev_hf.data.schema.validate_example`, so bad input stops with a
:class:`~larev_hf.io.DataError` naming the file and line (or the example id), the field and what
was expected; a source column that is missing is reported with the columns the line does have.

Supported sources (see ``../shared/data/README.md`` for the local copies):

- e-SNLI (Camburu et al., 2018): NLI, rationale = ``explanation_1`` (the first of the three annotations).
- StrategyQA (Geva et al., 2021): yes/no, rationale = the facts joined with spaces (as RoRA did).
- CoS-E (Rajani et al., 2019) on CommonsenseQA: multiple choice, rationale = the open-ended explanation.
- ECQA (Aggarwal et al., 2021), Hub layout of ``yangdong/ecqa``: rationale = the free-flow ``taskB``
  explanation (the LAREV thesis's open-label set).
- A user's own JSONL/CSV with a column mapping, and the synthetic task (:mod:`larev_hf.data.synthetic`).

Where the rows come from and how they are validated is :mod:`larev_hf.data.sources`; recognising a file's format
(the schema, a data set's layout, the "my explanations" format) is :mod:`larev_hf.data.formats`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import datasets

from larev_hf.data.schema import COLUMNS, NLI_LABELS, TASKS, YESNO_LABELS, make_example
from larev_hf.data.sources import collect, local_file, read_local, read_rows
from larev_hf.data.synthetic import load_synthetic
from larev_hf.io import DataError, where

# --------------------------------------------------------------------------- field helpers


def _text(value: Any) -> str:
    """Source value as stripped text (``None`` → ``""`` so that validation reports it as empty)."""
    return "" if value is None else str(value).strip()


def _texts(values: Iterable[Any]) -> list[str]:
    return [_text(value) for value in values]


def _yes_no(value: Any) -> str:
    """Map a boolean (or "true"/"false"/"yes"/"no") answer to ``"yes"``/``"no"``; other values pass through."""
    if isinstance(value, bool):
        return YESNO_LABELS[0] if value else YESNO_LABELS[1]
    text = _text(value)
    return {"true": "yes", "yes": "yes", "false": "no", "no": "no"}.get(text.lower(), text)


def _choice_list(value: Any) -> list[str]:
    """A choices cell: a list, or (CSV) a JSON list string or a ``|``-separated string."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except json.JSONDecodeError:
                value = [stripped]
        else:
            value = stripped.split("|") if stripped else []
    if not isinstance(value, (list, tuple)):
        value = [value]
    return _texts(value)


# --------------------------------------------------------------------------- public data sets


def load_esnli(source: str | os.PathLike, split: str, max_examples: int | None = None) -> datasets.Dataset:
    """Load e-SNLI (Camburu et al., 2018) as NLI examples; the rationale is ``explanation_1``.

    Args:
        source (`str` or `os.PathLike`): a directory with ``{split}.jsonl`` (columns ``id, premise,
            hypothesis, label, explanation_1..3``, label 0 entailment / 1 neutral / 2 contradiction),
            a JSONL file, or a Hub name such as ``"esnli"`` (same columns, no ``id``: ids become
            ``esnli-{split}-{row}``; rows with label -1 have no gold label and are skipped).
        split (`str`): ``"train"``, ``"validation"`` or ``"test"``.
        max_examples (`int`, *optional*): keep the first N examples.
    """

    def convert(raw: dict[str, Any], index: int, line: int | None) -> dict[str, Any] | None:
        label = raw["label"]
        if label == -1:
            return None
        if isinstance(label, int) and not isinstance(label, bool) and 0 <= label < len(NLI_LABELS):
            label = NLI_LABELS[label]
        return make_example(
            id=_text(raw["id"]) if "id" in raw else f"esnli-{split}-{index}",
            task="nli",
            premise=_text(raw["premise"]),
            hypothesis=_text(raw["hypothesis"]),
            choices=NLI_LABELS,
            label=_text(label),
            rationale=_text(raw["explanation_1"]),
        )

    path, rows = read_rows(source, split)
    return collect(rows, convert, path, max_examples, columns={"rationale": "explanation_1"})


def load_strategyqa(source: str | os.PathLike, split: str, max_examples: int | None = None) -> datasets.Dataset:
    """Load StrategyQA (Geva et al., 2021) as yes/no examples.

    The rationale is the annotated ``facts`` joined with single spaces (each fact stripped), as
    RoRA did; the label is ``"yes"``/``"no"`` from the boolean ``answer``. ``source`` is a directory
    with ``{split}.jsonl`` (columns ``qid, question, answer, facts``), a JSONL file or a Hub name.
    """

    def convert(raw: dict[str, Any], index: int, line: int | None) -> dict[str, Any]:
        facts = raw["facts"]
        facts = [facts] if isinstance(facts, str) else facts
        return make_example(
            id=_text(raw["qid"]),
            task="yesno",
            question=_text(raw["question"]),
            choices=YESNO_LABELS,
            label=_yes_no(raw["answer"]),
            rationale=" ".join(fact for fact in _texts(facts) if fact),
        )

    path, rows = read_rows(source, split)
    return collect(rows, convert, path, max_examples,
                    columns={"id": "qid", "label": "answer", "rationale": "facts"})


def load_cose(
    source: str | os.PathLike, split: str, max_examples: int | None = None, *, hub_config: str | None = None
) -> datasets.Dataset:
    """Load CoS-E (Rajani et al., 2019) on CommonsenseQA as multiple-choice examples.

    Two layouts are recognised per row by their field names:

    - CommonsenseQA's (the local ``../shared/data/cose``): ``id, question, choices {label, text},
      answerKey, explanation``; the label is the text of the choice lettered ``answerKey``.
    - The Hub's ``cos_e`` (config ``"v1.11"``, the default for that name): ``id, question, choices``
      (a list of strings), ``answer`` (text), ``abstractive_explanation``.

    The rationale is the open-ended (abstractive) explanation; choices are the answer texts.
    """

    def convert(raw: dict[str, Any], index: int, line: int | None) -> dict[str, Any]:
        if "answerKey" in raw or "answer" not in raw:
            letters, texts = _texts(raw["choices"]["label"]), _texts(raw["choices"]["text"])
            key = _text(raw["answerKey"])
            if key not in letters:
                raise DataError(
                    f"{where(path, line, _text(raw['id']))}: field 'answerKey' is {key!r}; "
                    f"expected one of the choice letters {letters}"
                )
            label, rationale = texts[letters.index(key)], raw["explanation"]
        else:
            texts, label, rationale = _texts(raw["choices"]), _text(raw["answer"]), raw["abstractive_explanation"]
        return make_example(
            id=_text(raw["id"]),
            task="qa",
            question=_text(raw["question"]),
            choices=texts,
            label=label,
            rationale=_text(rationale),
        )

    if hub_config is None and str(source).split("/")[-1] == "cos_e":
        hub_config = "v1.11"
    path, rows = read_rows(source, split, hub_config)
    return collect(rows, convert, path, max_examples, columns={"rationale": "explanation (or abstractive_explanation)"})


def load_ecqa(source: str | os.PathLike, split: str, max_examples: int | None = None) -> datasets.Dataset:
    """Load ECQA (Aggarwal et al., 2021) in the Hub layout of ``yangdong/ecqa``.

    Fields ``q_no, q_text, q_op1..q_op5, q_ans, taskA_pos, taskA_neg, taskB``: the choices are
    ``q_op1..q_op5``, the label is the answer text ``q_ans`` and the rationale is the free-flow
    explanation ``taskB`` (the LAREV thesis's open-label setting). ``source`` is a directory with
    ``{split}.jsonl``, a JSONL file or a Hub name.
    """

    def convert(raw: dict[str, Any], index: int, line: int | None) -> dict[str, Any]:
        return make_example(
            id=_text(raw["q_no"]),
            task="qa",
            question=_text(raw["q_text"]),
            choices=[_text(raw[f"q_op{k}"]) for k in range(1, 6)],
            label=_text(raw["q_ans"]),
            rationale=_text(raw["taskB"]),
        )

    path, rows = read_rows(source, split)
    return collect(rows, convert, path, max_examples,
                    columns={"id": "q_no", "question": "q_text", "label": "q_ans", "rationale": "taskB"})


def load_jsonl(
    path_or_dir: str | os.PathLike,
    split: str = "test",
    column_mapping: Mapping[str, str] | None = None,
    task: str = "qa",
    label_set: Sequence[str] | None = None,
    max_examples: int | None = None,
) -> datasets.Dataset:
    """Load a user's own JSONL or CSV file (by extension) into the schema.

    Args:
        path_or_dir (`str` or `os.PathLike`): a ``.jsonl``/``.csv`` file, or a directory holding
            ``{split}.jsonl`` or ``{split}.csv``.
        split (`str`, defaults to ``"test"``): the split file to read from a directory.
        column_mapping (`dict[str, str]`, *optional*): schema field → the file's column name, e.g.
            ``{"question": "prompt", "label": "answer", "rationale": "explanation", "choices": "options"}``.
            Unmapped fields use their schema name. Without an ``id`` column, ids are ``{file stem}-{line}``.
        task (`str`, defaults to ``"qa"``): ``"nli"`` (reads premise, hypothesis), ``"qa"`` or ``"yesno"`` (question).
        label_set (`list[str]`, *optional*): the choices for every example when the file has no choices
            column; required then for ``"qa"`` (defaults to the NLI / yes-no labels for those tasks).
            A CSV choices cell is a JSON list or a ``|``-separated string.
        max_examples (`int`, *optional*): keep the first N examples.

    Raises:
        DataError: a missing column (naming file, line, column and the columns the line has), or a
            record that fails schema validation (empty rationale, label outside the label set, ...).
    """
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
    mapping = dict(column_mapping or {})
    unknown = sorted(set(mapping) - (set(COLUMNS) - {"task"}))
    if unknown:
        raise ValueError(f"column_mapping has unknown schema fields {unknown}; expected fields among {COLUMNS}")
    if label_set is None and "choices" not in mapping:
        label_set = {"nli": NLI_LABELS, "yesno": YESNO_LABELS}.get(task)
    choices_column = mapping.get("choices", "choices") if label_set is None else mapping.get("choices")
    fixed_choices = _texts(label_set) if label_set is not None else None
    inputs = ("premise", "hypothesis") if task == "nli" else ("question",)

    path = local_file(path_or_dir, split, (".jsonl", ".csv"))
    if path is None:
        raise DataError(f"{path_or_dir}: no such file or directory; expected a JSONL/CSV file or a directory")

    def convert(raw: dict[str, Any], index: int, line: int | None) -> dict[str, Any]:
        id_column = mapping.get("id", "id")
        label = raw[mapping.get("label", "label")]
        if task == "nli" and isinstance(label, int) and not isinstance(label, bool) and 0 <= label < len(NLI_LABELS):
            label = NLI_LABELS[label]  # e-SNLI's and SNLI's integer labels (0 entailment, 1 neutral, 2 contradiction)
        return make_example(
            id=_text(raw[id_column]) if id_column in raw or "id" in mapping else f"{path.stem}-{line}",
            task=task,
            choices=_choice_list(raw[choices_column]) if choices_column else fixed_choices,
            label=_yes_no(label) if task == "yesno" else _text(label),
            rationale=_text(raw[mapping.get("rationale", "rationale")]),
            **{field: _text(raw[mapping.get(field, field)]) for field in inputs},
        )

    hints = {"choices": "map 'choices' to the file's choices column, or pass label_set"}
    return collect(read_local(path), convert, str(path), max_examples, hints if choices_column == "choices" else None,
                    columns=mapping)


# --------------------------------------------------------------------------- dispatch

LOADERS: dict[str, Callable[..., datasets.Dataset]] = {
    "esnli": load_esnli,
    "strategyqa": load_strategyqa,
    "cose": load_cose,
    "ecqa": load_ecqa,
    "jsonl": load_jsonl,
}
KINDS: tuple[str, ...] = (*LOADERS, "synthetic")


def load_examples(
    kind: str,
    source: str | os.PathLike | None,
    split: str,
    *,
    max_examples: int | None = None,
    seed: int = 0,
    **kwargs: Any,
) -> datasets.Dataset:
    """Load ``split`` of a data set of the given ``kind`` (one of :data:`KINDS`) into the schema.

    Args:
        kind (`str`): ``"esnli"``, ``"strategyqa"``, ``"cose"``, ``"ecqa"``, ``"jsonl"`` or ``"synthetic"``.
        source (`str` or `os.PathLike`): a local directory/file or Hub name; ignored for ``"synthetic"``.
        split (`str`): the split to load.
        max_examples (`int`, *optional*): keep the first N examples (deterministic: file order).
        seed (`int`, defaults to 0): the synthetic task's seed; the real data sets are read in order.
        kwargs: passed on to the loader (e.g. ``column_mapping``, ``task``, ``label_set`` for ``"jsonl"``;
            ``n`` for ``"synthetic"``).
    """
    if kind == "synthetic":
        dataset = load_synthetic(split, n=kwargs.pop("n", None), seed=seed, **kwargs)
        return dataset.select(range(min(max_examples, len(dataset)))) if max_examples is not None else dataset
    if kind not in LOADERS:
        raise ValueError(f"unknown data set kind {kind!r}; expected one of {KINDS}")
    if source is None:
        raise ValueError(f"data set kind {kind!r} needs a source (a local directory/file or a Hub name)")
    return LOADERS[kind](source, split, max_examples=max_examples, **kwargs)
