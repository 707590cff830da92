"""How the command line's OpenMP threads wait for work, chosen before torch (and its libgomp) is loaded.

libgomp's threads busy-wait ("spin") up to ``GOMP_SPINCOUNT`` iterations (300,000 by default) after each parallel
region before they sleep. A job alone gains from it (t5-tiny's many small parallel regions); two jobs on the same
cores lose most of their time to each other's spinning threads (measured: docs/scale.md, "Several jobs on one
machine").

So ``larev-hf`` looks before it loads torch: when another ``larev-hf`` job is running (each leaves its PID in a
per-user temporary directory, so two jobs started at the same moment see each other) or other work keeps the CPUs
busy (a test suite, a training script), its threads sleep at once (``GOMP_SPINCOUNT=0``); alone, libgomp's default is
kept. The wait policy changes no arithmetic: scores are the same whatever it is (``benchmarks/shared_machine.py``
compares them); the thread count, which does change them, is never touched and is recorded in every stage's
environment, as is the spin count chosen (``omp_spin``).

``LAREV_HF_SPIN``: ``auto`` (default, as above), ``off`` (libgomp's default, always), or a spin count. An
``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` set by the user wins over all of them. The choice is the process's, so only
the ``larev-hf`` command makes it (:func:`configure_openmp_wait`, called before any import of torch); a library
user's own process keeps its own settings.
"""

from __future__ import annotations

import atexit
import os
import tempfile
import time
from pathlib import Path

#: ``auto``, ``off`` or a spin count (see the module docstring).
SPIN_ENV = "LAREV_HF_SPIN"
#: Any of these set by the user means the user chose: nothing is changed.
USER_OPENMP_ENV = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
#: How long the CPUs are watched before the choice (seconds): long enough to see a job that starts at the same moment.
SAMPLE_SECONDS = 0.3
#: Other work using at least this many cores' worth of CPU time means the CPUs are shared: sleep, do not spin.
BUSY_CORES = 0.5


def cpu_times() -> tuple[float, float] | None:
    """``(busy, total)`` jiffies of all CPUs from ``/proc/stat``; ``None`` where there is none (not Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            values = [float(x) for x in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = values[3] + (values[4] if len(values) > 4 else 0.0)  # idle + iowait
    return sum(values) - idle, sum(values)


def other_work_cores(seconds: float = SAMPLE_SECONDS) -> float | None:
    """Cores' worth of CPU time the machine spent on other work over ``seconds`` (this process sleeps meanwhile);
    ``None`` where it cannot be read."""
    first = cpu_times()
    time.sleep(seconds)
    second = cpu_times()
    if first is None or second is None or second[1] <= first[1]:
        return None
    return (os.cpu_count() or 1) * (second[0] - first[0]) / (second[1] - first[1])


def job_directory() -> Path:
    """Where running ``larev-hf`` jobs of this user leave a file named by their PID (:func:`register_job`)."""
    return Path(tempfile.gettempdir()) / f"larev-hf-jobs-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def other_jobs() -> int:
    """How many other live ``larev-hf`` jobs have left their PID in :func:`job_directory`; a dead job's file is
    removed on the way."""
    directory, count = job_directory(), 0
    for entry in directory.iterdir() if directory.is_dir() else ():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            if _alive(int(entry.name)):
                count += 1
            else:
                entry.unlink(missing_ok=True)
    return count


def register_job() -> int:
    """Leave this process's PID in :func:`job_directory` (removed at exit) and return :func:`other_jobs`."""
    directory = job_directory()
    directory.mkdir(exist_ok=True)
    mine = directory / str(os.getpid())
    mine.touch()
    atexit.register(lambda: mine.unlink(missing_ok=True))
    return other_jobs()


def configure_openmp_wait(environ: dict[str, str] | None = None, busy_cores: float | None = None) -> str | None:
    """Set ``GOMP_SPINCOUNT`` for this process as ``LAREV_HF_SPIN`` says (see the module docstring).

    Must run before torch is imported (libgomp reads the variable once, when it is loaded); returns the value set, or
    ``None`` when nothing was changed. ``busy_cores`` replaces the measurement of other work (tests).

    Raises:
        ValueError: ``LAREV_HF_SPIN`` is neither ``auto``, ``off`` nor a non-negative integer.
    """
    environ = os.environ if environ is None else environ
    choice = environ.get(SPIN_ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "off") and not choice.isdigit():
        raise ValueError(f"{SPIN_ENV}={environ[SPIN_ENV]!r}: expected 'auto', 'off' or a non-negative integer "
                         "spin count")
    if choice == "off" or any(name in environ for name in USER_OPENMP_ENV):
        return None
    if choice == "auto":
        if busy_cores is None:
            try:
                register_job()
            except OSError:
                pass  # no writable temp directory: judge by the CPUs alone
            busy = other_work_cores()  # a job starting at the same moment registers meanwhile
            others = other_jobs()
        else:
            busy, others = busy_cores, 0
        if not others and (busy is None or busy < BUSY_CORES):
            return None  # alone (or cannot tell): libgomp's default spin, the fastest for a job alone
        choice = "0"
    environ["GOMP_SPINCOUNT"] = choice
    return choice


def spin_setting() -> str:
    """The spin count this process runs with, for the stage environment: ``GOMP_SPINCOUNT`` or libgomp's default."""
    return os.environ.get("GOMP_SPINCOUNT") or ("policy " + os.environ["OMP_WAIT_POLICY"]
                                                if "OMP_WAIT_POLICY" in os.environ else "libgomp default")
