"""Input/output helpers shared by every stage: validated JSONL/CSV reading and atomic writes.

Bad input stops with a :class:`DataError` that names the file and line (or the example id)
and what was expected; outputs are written to a temporary file in the same directory and
moved into place, so an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class DataError(ValueError):
    """Raised on malformed or inconsistent input data; the message says where and what was expected."""


def where(path: str | os.PathLike | None = None, line: int | None = None, example_id: str | None = None) -> str:
    """Format a location for error messages: ``file.jsonl, line 12 (id 'abc')``."""
    parts = []
    if path is not None:
        parts.append(str(path) + (f", line {line}" if line is not None else ""))
    if example_id is not None:
        parts.append(f"example id {example_id!r}")
    return "; ".join(parts) or "input"


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` for each non-empty line of a JSON Lines file.

    Raises:
        DataError: on bytes that are not UTF-8, a line that is not JSON, or a JSON value that is not an object.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found (expected a JSON Lines file, one example per line)")
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataError(
                    f"{where(path, line_number)}: not valid UTF-8 ({error.reason} at byte {error.start}); "
                    "expected UTF-8 encoded JSON"
                ) from None
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise DataError(f"{where(path, line_number)}: malformed JSON ({error.msg} column {error.colno}); "
                                "expected one JSON object per line") from None
            if not isinstance(record, dict):
                raise DataError(f"{where(path, line_number)}: expected a JSON object, got {type(record).__name__}")
            yield line_number, record


def read_csv(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, row)`` for each row of a CSV file with a header line."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found (expected a CSV file with a header row)")
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            yield from enumerate(csv.DictReader(handle), start=2)
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not valid UTF-8 ({error.reason}); expected a UTF-8 encoded CSV file") from None


def current_umask() -> int:
    """The process's umask (read by setting and restoring it: POSIX has no read-only call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def shareable(path: str | os.PathLike, directory: bool = False) -> None:
    """Give a file made by :mod:`tempfile` (0600, directories 0700) the mode a plain ``open``/``mkdir`` would have
    given it under the process's umask, so reports and bundles meant to be shared are readable by others."""
    os.chmod(path, (0o777 if directory else 0o666) & ~current_umask())


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; it replaces ``path`` only if the block succeeds. The file gets the
    umask's mode (not mkstemp's private 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    shareable(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB blocks): run input fingerprints and bundle checksums."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_text(path: str | os.PathLike, text: str) -> None:
    """Atomically write a text file."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Atomically write pretty-printed JSON."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def write_jsonl(path: str | os.PathLike, records: Iterable[dict[str, Any]]) -> None:
    """Atomically write JSON Lines."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file written by :func:`write_json`."""
    with Path(path).open(encoding="utf-8") as handle:
        return json.load(handle)
