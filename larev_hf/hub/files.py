"""File utilities of bundles: where a bundle is (a directory or a Hub snapshot), checksums, atomic replacement."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

from larev_hf import __version__
from larev_hf.io import file_sha256, read_jsonl


def _looks_like_path(text: str) -> bool:
    """A local path for sure: it starts like one, has more than one ``/``, or its first part is a local directory
    (``bundles/larev-esnl`` beside ``bundles/``: a typo of a local bundle, not a Hub ``user/repo``)."""
    return (text.startswith((".", "/", "~")) or "\\" in text or text.count("/") > 1 or os.path.isabs(text)
            or ("/" in text and Path(text).parent.is_dir()))


def resolve_bundle_dir(
    path_or_repo_id: str | os.PathLike,
    *,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    token: str | bool | None = None,
    local_files_only: bool = False,
) -> Path:
    """A local bundle directory for ``path_or_repo_id``: the directory itself, or a Hub snapshot."""
    text = os.fspath(path_or_repo_id)
    path = Path(text).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise NotADirectoryError(f"{text} is a file; expected an evaluator bundle directory (`larev-hf export`) or a Hub repo id")
    if _looks_like_path(text):
        raise FileNotFoundError(f"{text}: no such local directory (and not a Hub repo id either: it names a local "
                                f"path); expected an evaluator bundle directory (`larev-hf export`) or a Hub repo id "
                                "such as 'user/larev-esnli'")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(text, revision=revision, cache_dir=cache_dir, token=token,
                                      local_files_only=local_files_only, library_name="larev-hf",
                                      library_version=__version__))
    except Exception as error:  # noqa: BLE001 - offline, unknown repo, bad id: all mean "not found"
        reason = (str(error).strip().splitlines() or [""])[0][:200]
        raise FileNotFoundError(f"{text}: no such local directory, and not a Hub repo the Hugging Face Hub could "
                                f"provide either ({type(error).__name__}: {reason})") from None


def task_and_label_set(train_file: Path) -> tuple[str, list[str] | None]:
    """The run's task, and its label set when every training example shares one list of choices."""
    tasks: set[str] = set()
    choice_sets: set[tuple[str, ...]] = set()
    for _, record in read_jsonl(train_file):
        tasks.add(record["task"])
        choice_sets.add(tuple(record["choices"]))
    if len(tasks) != 1:
        raise ValueError(f"{train_file}: expected one task in the training data, found {sorted(tasks)}")
    return tasks.pop(), list(choice_sets.pop()) if len(choice_sets) == 1 else None


def checksums(sources: Mapping[str, Path]) -> dict[str, str]:
    """SHA-256 of every file under each source directory, keyed by its path inside the bundle."""
    sums = {}
    for name, source in sorted(sources.items()):
        for path in sorted(p for p in Path(source).rglob("*") if p.is_file()):
            sums[f"{name}/{path.relative_to(source).as_posix()}"] = file_sha256(path)
    return sums


def verify_checksums(root: Path, sources: Mapping[str, Path], recorded: Mapping[str, str]) -> None:
    """Compare the files under ``sources`` with the SHA-256 sums a bundle recorded at export; a missing, added or
    changed file raises a ``ValueError`` naming it (a corrupted download, an interrupted copy, a hand edit)."""
    if not recorded:
        return  # bundles written before checksums were recorded
    actual = checksums(sources)
    problems = [f"{name} is missing" for name in sorted(set(recorded) - set(actual))]
    problems += [f"{name} was added" for name in sorted(set(actual) - set(recorded))]
    problems += [f"{name} has SHA-256 {actual[name][:12]}…, not the recorded {recorded[name][:12]}…"
                 for name in sorted(set(actual) & set(recorded)) if actual[name] != recorded[name]]
    if problems:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise ValueError(f"{root}: the bundle's files differ from the checksums recorded at export ({shown}); "
                         "download or export it again (or load with verify=False to skip the check)")


def replace_directory(new: Path, target: Path) -> None:
    """Move the complete directory ``new`` to ``target``, replacing what is there."""
    if not target.exists():
        os.replace(new, target)
        return
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(target, old)
    try:
        os.replace(new, target)
    except OSError:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
