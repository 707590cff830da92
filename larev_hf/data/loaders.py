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
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets

from larev_hf.data.schema import (
    COLUMNS,
    NLI_LABELS,
    TASKS,
    YESNO_LABELS,
    make_example,
    to_dataset,
    validate_example,
)
from larev_hf.data.synthetic import load_synthetic
from larev_hf.io import DataError, read_csv, read_jsonl, where

Row = tuple[int | None, dict[str, Any]]
"""``(line number or None for Hub rows, raw record)``."""

Converter = Callable[[dict[str, Any], int, int | None], dict[str, Any] | None]
"""``(raw record, row index, line or None) -> schema record``, or ``None`` to skip the row (e.g. e-SNLI label -1)."""

_PATH_SUFFIXES = (".jsonl", ".json", ".csv")


# --------------------------------------------------------------------------- sources


def _looks_like_path(source: str) -> bool:
    return source.startswith(("/", ".", "~")) or Path(source).suffix in _PATH_SUFFIXES


def _local_file(source: str | os.PathLike, split: str, extensions: Sequence[str] = (".jsonl",)) -> Path | None:
    """Resolve ``source`` to a local file: ``{source}/{split}{ext}``, ``source`` itself, or ``None`` (a Hub name)."""
    path = Path(source).expanduser()
    if path.is_dir():
        for extension in extensions:
            candidate = path / f"{split}{extension}"
            if candidate.is_file():
                return candidate
        found = sorted(p.name for p in path.iterdir() if p.suffix in extensions)
        expected = " or ".join(f"{split}{extension}" for extension in extensions)
        raise DataError(f"{path}: no file {expected} for split {split!r}; the directory has {found}")
    if path.is_file():
        return path
    if isinstance(source, os.PathLike) or _looks_like_path(str(source)):
        raise DataError(f"{path}: no such file or directory; expected a data directory or a JSONL/CSV file")
    return None


def _read_local(path: Path) -> Iterator[Row]:
    reader = read_csv if path.suffix == ".csv" else read_jsonl
    yield from reader(path)


def _rows(source: str | os.PathLike, split: str, hub_config: str | None = None) -> tuple[str, Iterable[Row]]:
    """Return a location label and the raw rows of a local file or a Hub data set."""
    path = _local_file(source, split)
    if path is not None:
        return str(path), _read_local(path)
    try:
        hub = datasets.load_dataset(str(source), hub_config, split=split)
    except (ConnectionError, FileNotFoundError, OSError, ValueError) as error:
        offline = os.environ.get("HF_DATASETS_OFFLINE") == "1" or os.environ.get("HF_HUB_OFFLINE") == "1"
        raise DataError(f"{source}: not a local directory or file, and the Hub data set of that name cannot be loaded"
                        f"{' offline' if offline else ''} ({type(error).__name__}: {str(error).splitlines()[0][:200]}); "
                        "check --data-dir (a local path starts with '/', './' or '~')") from error
    return f"{source} (Hub, split {split!r})", ((None, dict(row)) for row in hub)


def source_files(kind: str, source: str | os.PathLike | None, splits: Sequence[str]) -> dict[str, Path | None]:
    """The local file each split is read from (``None``: the Hub or generated data), for fingerprinting a run's
    inputs. Raises :class:`DataError` for a local path that does not exist or lacks a split."""
    if kind == "synthetic" or source is None:
        return dict.fromkeys(splits)
    extensions = (".jsonl", ".csv") if kind == "jsonl" else (".jsonl",)
    return {split: _local_file(source, split, extensions) for split in splits}


def _collect(
    rows: Iterable[Row], convert: Converter, path: str, max_examples: int | None, hints: Mapping[str, str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> datasets.Dataset:
    """Convert and validate rows (stopping after ``max_examples`` kept records) into a schema Dataset.

    ``hints`` maps a source column to advice appended when that column is missing; ``columns`` maps a schema field
    to the source column it is read from, so a validation error names the user's column (``explanation_1``), not
    only the schema's field (``rationale``).
    """
    if max_examples is not None and max_examples < 0:
        raise ValueError(f"max_examples must be >= 0 or None, got {max_examples}")
    records: list[dict[str, Any]] = []
    for index, (line, raw) in enumerate(rows):
        if max_examples is not None and len(records) >= max_examples:
            break
        try:
            record = convert(raw, index, line)
        except KeyError as error:
            loc = where(path, line) if line is not None else f"{path}, row {index}"
            unit = "line" if line is not None else "row"
            hint = (hints or {}).get(error.args[0])
            raise DataError(
                f"{loc}: missing column {error.args[0]!r}; this {unit} has columns {sorted(raw)}"
                + (f"; {hint}" if hint else "")
            ) from None
        if record is None:
            continue
        try:
            validate_example(record, path=path, line=line)
        except DataError as error:
            message = str(error)
            for field, column in (columns or {}).items():
                if column != field:
                    message = message.replace(f"field {field!r}", f"column {column!r} (the schema's {field!r})")
            raise DataError(message) from None
        records.append(record)
    return to_dataset(records)


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

    path, rows = _rows(source, split)
    return _collect(rows, convert, path, max_examples, columns={"rationale": "explanation_1"})


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

    path, rows = _rows(source, split)
    return _collect(rows, convert, path, max_examples,
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
    path, rows = _rows(source, split, hub_config)
    return _collect(rows, convert, path, max_examples, columns={"rationale": "explanation (or abstractive_explanation)"})


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

    path, rows = _rows(source, split)
    return _collect(rows, convert, path, max_examples,
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

    path = _local_file(path_or_dir, split, (".jsonl", ".csv"))
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
    return _collect(_read_local(path), convert, str(path), max_examples, hints if choices_column == "choices" else None,
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


def load_schema_jsonl(path: str | os.PathLike) -> datasets.Dataset:
    """A JSONL file already in the schema (a run's ``data/test.jsonl``, a saved synthetic split, ...).

    Extra columns (``baseline``, ``rationale_<variant>``) are dropped; each record is validated.
    """
    records = []
    for line, raw in read_jsonl(path):
        record = {column: raw[column] for column in COLUMNS if column in raw}
        validate_example(record, path=str(path), line=line)
        records.append(record)
    return to_dataset(records)


#: The columns that tell each data set's own layout apart (:func:`infer_dataset_kind`), most specific first.
KIND_COLUMNS: dict[str, frozenset[str]] = {
    "esnli": frozenset({"premise", "hypothesis", "explanation_1"}),
    "ecqa": frozenset({"q_text", "q_ans", "taskB"}),
    "strategyqa": frozenset({"question", "answer", "facts"}),
    "cose": frozenset({"question", "choices", "answerKey"}),
}


def infer_dataset_kind(source: str | os.PathLike) -> str | None:
    """The data set kind whose columns the first line of a local directory's ``train``/``test`` file (or a local
    file) has; ``None`` when none matches or ``source`` is not local (a Hub name)."""
    path = Path(source).expanduser()
    candidates = [path] if path.is_file() else [path / f"{split}{ext}" for split in ("train", "test", "validation")
                                                  for ext in (".jsonl", ".csv")]
    for candidate in candidates:
        if candidate.is_file():
            first = next(iter(_read_local(candidate)), None)
            columns = set(first[1]) if first else set()
            return next((kind for kind, needed in KIND_COLUMNS.items() if needed <= columns), None)
    return None


#: The columns of the one "my explanations" format, per task (the bundle script's, ``evaluate.load``'s and
#: ``larev-hf evaluate``'s); ``id`` is optional everywhere.
EXPLANATION_COLUMNS: dict[str, tuple[str, ...]] = {
    "nli": ("premise", "hypothesis", "label", "rationale"),
    "qa": ("question", "choices", "label", "rationale"),
    "yesno": ("question", "label", "rationale"),
}


def load_explanations(
    path: str | os.PathLike, kind: str, task: str, column_mapping: Mapping[str, str] | None = None,
    loader_options: Mapping[str, Any] | None = None,
) -> datasets.Dataset:
    """A file of explanations to score with a run trained on data set ``kind`` (task ``task``).

    Read in the "my explanations" format (:data:`EXPLANATION_COLUMNS`: the schema's columns, as the bundle script and
    ``evaluate.load`` take them) when the file has a ``rationale`` column or ``column_mapping`` is given, in the data
    set's own format otherwise (e-SNLI's ``explanation_1``, CoS-E's ``explanation``, ...).

    Raises:
        DataError: the file is missing or holds no examples (naming it), or a line lacks a column (naming the line,
            the column and the columns it has, and the format that was expected).
    """
    path = Path(path)
    first = next(iter(_read_local(path)), None) if path.is_file() else None
    if path.is_file() and first is None:
        raise DataError(f"{path}: no examples (the file is empty); expected one example per line with the columns "
                        f"{', '.join(EXPLANATION_COLUMNS[task])} (or the {kind} data set's own columns)")
    mapping = dict(column_mapping or {})
    rationale_column = mapping.get("rationale", "rationale")
    if kind == "synthetic" and not mapping and (first is None or "task" in first[1]):
        dataset = load_schema_jsonl(path)  # a saved split of the synthetic task: the schema itself
    elif kind == "jsonl":
        dataset = load_jsonl(path, **{**dict(loader_options or {}), **({"column_mapping": mapping} if mapping else {})})
    elif mapping or (first is not None and rationale_column in first[1]):
        try:
            dataset = load_jsonl(path, task=task, column_mapping=mapping)
        except DataError as error:
            raise DataError(f"{error} (read as the 'my explanations' format: columns "
                            f"{', '.join(EXPLANATION_COLUMNS[task])}; rename yours with --column-mapping)") from None
    else:
        try:
            dataset = load_examples(kind, str(path.parent) if path.is_file() else str(path),
                                    path.stem if path.is_file() else "test")
        except DataError as error:
            if "missing column" not in str(error):
                raise
            raise DataError(f"{error}; or give the 'my explanations' format: columns "
                            f"{', '.join(EXPLANATION_COLUMNS[task])} (docs/hub.md)") from None
    if len(dataset) == 0:
        raise DataError(f"{path}: no examples left to score (every line was skipped, e.g. e-SNLI label -1)")
    return dataset


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
