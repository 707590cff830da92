"""Where a data set's raw rows come from, and how they become validated schema records.

A loader (:mod:`larev_hf.data.loaders`) reads a local directory (``{split}.jsonl``; a file path is read as is) or a
Hub data set by name through :func:`datasets.load_dataset` (:func:`read_rows`), converts each raw row with its own
converter and validates the result (:func:`collect`), so bad input stops with a :class:`~larev_hf.io.DataError`
naming the file and line (or the example id), the field and what was expected; a source column that is missing is
reported with the columns the line does have. :func:`source_files` names the local file of each split, which a run
fingerprints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets

from larev_hf.data.schema import to_dataset, validate_example
from larev_hf.io import DataError, read_csv, read_jsonl, where

Row = tuple[int | None, dict[str, Any]]
"""``(line number or None for Hub rows, raw record)``."""

Converter = Callable[[dict[str, Any], int, int | None], dict[str, Any] | None]
"""``(raw record, row index, line or None) -> schema record``, or ``None`` to skip the row (e.g. e-SNLI label -1)."""

PATH_SUFFIXES = (".jsonl", ".json", ".csv")


def _looks_like_path(source: str) -> bool:
    return source.startswith(("/", ".", "~")) or Path(source).suffix in PATH_SUFFIXES


def local_file(source: str | os.PathLike, split: str, extensions: Sequence[str] = (".jsonl",)) -> Path | None:
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


def read_local(path: Path) -> Iterator[Row]:
    reader = read_csv if path.suffix == ".csv" else read_jsonl
    yield from reader(path)


def read_rows(source: str | os.PathLike, split: str, hub_config: str | None = None) -> tuple[str, Iterable[Row]]:
    """Return a location label and the raw rows of a local file or a Hub data set."""
    path = local_file(source, split)
    if path is not None:
        return str(path), read_local(path)
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
    return {split: local_file(source, split, extensions) for split in splits}


def collect(
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
