"""The generic resumable stage runner: markers, input fingerprints, recorded environments, config checks on resume,
a lock, ``until``.

It knows nothing about methods. A stage is a name and a function; after the function returns, the runner writes
``stages/<name>.done`` (atomically) with the stage's wall time, the environment its floating-point results depend on
and its **fingerprint**: a SHA-256 of its name and the external inputs of the stages up to it (the data files, read
by ``data``, on which every later stage depends). A rerun skips every stage whose marker exists with the same fingerprint, so an interrupted run
resumes where it stopped, and a changed input reruns its stage and everything after it (one log line says why).
The settings file (``run_config.json``) is written only once a stage has really finished, so a run that fails at
once can be retried with corrected settings. :meth:`StageRunner.lock` keeps two processes out of one directory.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from larev_hf.io import read_json, write_json
from larev_hf.threads import spin_setting

logger = logging.getLogger(__name__)

#: Called after every stage of every :class:`StageRunner` in this process: ``(directory, stage, seconds)``, seconds
#: ``None`` for a stage done earlier and skipped. A long job that runs several runners (a named evaluator's build:
#: the run, its calibration's meta runs, the human report) follows its progress through :func:`stage_listener`.
StageListener = Callable[[Path, str, "float | None"], None]
_LISTENERS: list[StageListener] = []


@contextmanager
def stage_listener(listener: StageListener) -> Iterator[None]:
    """Call ``listener(directory, stage, seconds)`` after each stage any runner finishes or skips inside the block."""
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)


def compute_environment() -> dict[str, Any]:
    """What a stage's floating-point results depend on beyond seed and data: library versions, device and torch's
    CPU thread count (a different count changes summation order, hence trained weights); and, for the stage's wall
    time only, how its OpenMP threads waited (:mod:`larev_hf.threads`; no score depends on it)."""
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__, "torch_threads": torch.get_num_threads(),
            "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "omp_spin": spin_setting()}


class DirectoryLockedError(RuntimeError):
    """Another live process holds the run directory (its PID is in the message)."""


def fingerprint(*parts: Any) -> str:
    """SHA-256 of the parts' ``repr`` (strings, numbers and nested lists/dicts of them are stable across processes)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as error:
        return error.errno == errno.EPERM  # exists but belongs to someone else
    return True


class StageRunner:
    """Runs named stages in a directory, once each.

    Args:
        directory: the run directory (markers go to ``<directory>/stages``).
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.dir = Path(directory)
        self.timings: dict[str, float] = {}
        self._pending_settings: tuple[Path, dict[str, Any]] | None = None

    def marker(self, stage: str) -> Path:
        return self.dir / "stages" / f"{stage}.done"

    def is_done(self, stage: str) -> bool:
        return self.marker(stage).is_file()

    def run_stage(self, stage: str, function: Callable[[], None], stage_fingerprint: str | None = None,
                  stage_inputs: Any = None) -> None:
        """Run ``function`` unless the stage's marker exists (with ``stage_fingerprint``, when given); record its wall
        time, environment, fingerprint and external inputs (so a later run can still resume without them)."""
        if self.is_done(stage):
            recorded = read_json(self.marker(stage)).get("fingerprint")
            if stage_fingerprint is None or recorded in (None, stage_fingerprint):  # markers before fingerprints: kept
                logger.info("stage %s: done earlier, skipped", stage)
                for listener in list(_LISTENERS):
                    listener(self.dir, stage, None)
                return
        logger.debug("stage %s: running", stage)
        start = time.perf_counter()
        function()
        self.timings[stage] = time.perf_counter() - start
        content = {"seconds": self.timings[stage], **compute_environment()}
        if stage_fingerprint is not None:
            content["fingerprint"] = stage_fingerprint
        if stage_inputs is not None:
            content["inputs"] = stage_inputs
        self.save_pending_settings()  # before the marker: a crash between the two must not strand the settings
        write_json(self.marker(stage), content)
        for listener in list(_LISTENERS):
            listener(self.dir, stage, self.timings[stage])

    @staticmethod
    def check_until(names: list[str], until: str | None) -> None:
        """Refuse an ``until`` that names no stage of ``names``."""
        if until is not None and until not in names:
            raise ValueError(f"--until {until!r} is not a stage of this run; its stages are {names}")

    def fingerprints(self, names: list[str], inputs: Mapping[str, Any] | None = None,
                     independent: Iterable[str] = ()) -> dict[str, str]:
        """Each stage's fingerprint: its name and the external inputs (``inputs[name]``) of itself and of every earlier
        stage that has some. Only stages with external inputs enter the chain, so adding a method's stages to a run
        leaves the fingerprints of the stages already trained unchanged; an ``independent`` stage's inputs affect its
        own fingerprint only (a meta score stage: one method's models)."""
        chain, out, independent = "", {}, set(independent)
        for name in names:
            if inputs and name in inputs and name in independent:
                out[name] = fingerprint(chain, name, inputs[name])
                continue
            if inputs and name in inputs:
                chain = fingerprint(chain, name, inputs[name])
            out[name] = fingerprint(chain, name)
        return out

    def recorded_inputs(self, stage: str) -> Any:
        """The external inputs a finished stage recorded (``None`` if it recorded none)."""
        return read_json(self.marker(stage)).get("inputs") if self.is_done(stage) else None

    def invalidate_changed(self, names: list[str], fingerprints: Mapping[str, str],
                           independent: Iterable[str] = ()) -> list[str]:
        """Delete the markers of stages whose inputs changed since they ran (one log line each): an ``independent``
        stage alone; any other, with every marker after it — and every marker of a stage this run does not list,
        which may depend on it too (e.g. a method dropped from ``--method``). Returns the stages invalidated."""
        independent, stale = set(independent), []
        for k, name in enumerate(names):
            if not self.is_done(name):
                continue
            recorded = read_json(self.marker(name)).get("fingerprint")
            if recorded is None or recorded == fingerprints[name]:
                continue
            if name in independent:
                logger.warning("stage %s: its inputs changed since it ran; rerunning it", name)
                self.marker(name).unlink()
                stale.append(name)
                continue
            later = [n for n in names[k:] if self.is_done(n)]
            unlisted = [p.stem for p in sorted((self.dir / "stages").glob("*.done")) if p.stem not in names]
            logger.warning("stage %s: its inputs changed since it ran; rerunning it and %d later stage(s)",
                           name, len(later) + len(unlisted) - 1)
            for gone in later + unlisted:
                self.marker(gone).unlink()
            return stale + later + unlisted
        return stale

    def run(self, stages: Iterable[tuple[str, Callable[[], None]]], until: str | None = None,
            inputs: Mapping[str, Any] | None = None, independent: Iterable[str] = (),
            on_invalidate: Callable[[list[str]], None] | None = None) -> bool:
        """Run (or resume) ``stages`` in order, stopping after ``until``; returns whether every stage ran.

        ``inputs`` maps a stage name to a description of its external inputs (e.g. data file hashes); a change
        reruns that stage and every later one (an ``independent`` stage: itself only). ``on_invalidate(stages)`` is
        called with the invalidated stages before anything reruns (the run drops their training checkpoints)."""
        stages = list(stages)
        names = [name for name, _ in stages]
        self.check_until(names, until)
        prints = self.fingerprints(names, inputs, independent)
        stale = self.invalidate_changed(names, prints, independent)
        if stale and on_invalidate is not None:
            on_invalidate(stale)
        for k, (name, function) in enumerate(stages, start=1):
            logger.info("[%d/%d] %s", k, len(stages), name)
            self.run_stage(name, function, prints[name], (inputs or {}).get(name))
            if name in self.timings:
                logger.info("[%d/%d] %s: done in %.1f s", k, len(stages), name, self.timings[name])
            if name == until:
                return False
        self.save_pending_settings()
        return True

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold ``<directory>/.lock`` (this PID) for the block; a live holder is refused, a dead one's lock taken over."""
        created = not self.dir.exists()
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / ".lock"
        for _ in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    holder = int(path.read_text().strip() or 0)
                    age = time.time() - path.stat().st_mtime
                except (OSError, ValueError):
                    holder, age = 0, 0.0
                # an empty lock younger than a minute is another process between creating it and writing its PID
                if (holder == 0 and age < 60) or (holder == os.getpid()) or (holder and _pid_alive(holder)):
                    raise DirectoryLockedError(f"{self.dir} is in use by process {holder or '(starting)'} (a run, "
                                               f"evaluate, meta or export on it); wait for it to finish, or remove "
                                               f"{path} if it is not running") from None
                logger.warning("%s: taking over the lock of process %s, which is no longer running", self.dir, holder)
                path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as handle:
                handle.write(str(os.getpid()))
            break
        else:  # another process took the stale lock between our two attempts
            raise DirectoryLockedError(f"{self.dir} is being taken by another process; try again when it has finished")
        self.remove_stale_temporaries()
        try:
            yield
        finally:
            path.unlink(missing_ok=True)
            if created and not any(self.dir.iterdir()):  # a run that failed before writing anything leaves no trace
                self.dir.rmdir()

    def remove_stale_temporaries(self) -> list[Path]:
        """Delete what a killed process left half-written: ``.<name>.*.tmp`` files (:func:`larev_hf.io.atomic_path`) and
        ``.<model>.tmp`` directories (a model save). Only called while holding the lock, so no one is writing them."""
        stale = [p for p in self.dir.rglob(".*.tmp") if p.name != ".lock"]
        for path in stale:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        if stale:
            logger.info("%s: removed %d half-written file(s) of an interrupted process", self.dir, len(stale))
        return stale

    def markers(self) -> dict[str, dict[str, Any]]:
        """Every finished stage's marker content, by stage name."""
        return {path.stem: read_json(path) for path in sorted((self.dir / "stages").glob("*.done"))}

    def check_settings(self, current: Mapping[str, Any], defaults: Mapping[str, Any],
                       metadata: Mapping[str, Mapping[str, Any]], name: str = "run_config.json",
                       read_saved: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None) -> None:
        """Refuse to resume with different settings (results would mix); ``current`` is saved once a stage finishes.

        A setting whose metadata says ``report_only`` may always change; one that names its ``stages`` may change
        until one of those stages has finished; any other difference is refused. ``read_saved`` turns the saved file
        into comparable values (a run fills unset settings from its backbone; an older file holds them unset).
        """
        saved_path = self.dir / name
        if saved_path.is_file():
            saved = read_json(saved_path)
            saved = dict(read_saved(saved)) if read_saved else saved
            differing = []
            for key, value in current.items():
                meta = metadata.get(key, {})
                if meta.get("report_only") or saved.get(key, defaults.get(key)) == value:
                    continue
                if "stages" in meta and not any(self.is_done(stage) for stage in meta["stages"]):
                    continue
                differing.append(key)
            if differing:
                raise ValueError(f"{self.dir} holds a run with different settings ({', '.join(sorted(differing))}); "
                                 "use a new --output-dir or delete the old run")
        self._pending_settings = (saved_path, dict(current))

    def save_pending_settings(self) -> None:
        """Write the settings :meth:`check_settings` accepted (after a stage finished: a failed start leaves none)."""
        if self._pending_settings is not None:
            write_json(*self._pending_settings)
            self._pending_settings = None
