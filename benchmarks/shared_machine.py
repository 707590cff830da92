"""Two jobs on one machine: wall time of ``larev-hf demo`` alone and of two demos started together, under several
OpenMP wait settings, and whether their scores are the same.

OpenMP's worker threads spin (busy-wait) for a while after each parallel region before they sleep. A job alone gains
from it; two jobs on the same cores lose most of their time to each other's spinning threads (measured:
8.4x). Each setting is an environment given to both demos; the scores of every demo are compared with the first
setting's solo demo (``benchmarks/compare_reports.py``), since a wait policy must not change a number.

    python benchmarks/shared_machine.py --json benchmarks/results/shared_machine.json
    python benchmarks/shared_machine.py --settings default=LAREV_HF_SPIN=off passive=OMP_WAIT_POLICY=PASSIVE \\
        --repeats 2 --json /tmp/x.json

Prints one line per setting (solo median, pair mean, ratio) and writes them to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_reports import compare

from larev_hf.io import write_json

#: name → extra environment; ``LAREV_HF_SPIN=off`` turns the library's own choice off (what a run did before it).
DEFAULT_SETTINGS = {
    "library default (LAREV_HF_SPIN=auto)": {},
    "before (LAREV_HF_SPIN=off, libgomp's default spin)": {"LAREV_HF_SPIN": "off"},
}


def demo(output: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start ``larev-hf --quiet demo`` with ``env`` added to this process's environment."""
    return subprocess.Popen([sys.executable, "-m", "larev_hf.cli", "--quiet", "demo", "--output-dir", str(output)],
                            env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait(process: subprocess.Popen, start: float) -> float:
    """Wait for ``process``; its wall time since ``start`` (an error is raised with its stderr)."""
    _, err = process.communicate()
    if process.returncode:
        raise RuntimeError(f"demo failed ({process.returncode}): {err[-2000:]}")
    return time.perf_counter() - start


def measure(name: str, env: dict[str, str], root: Path, repeats: int, pairs: int, stagger: float = 0.0) -> dict:
    """Solo demos (``repeats``), then ``pairs`` times two demos started together, then (``stagger`` > 0) one pair
    whose second demo starts ``stagger`` seconds after the first (a newcomer beside a running job); reports' paths."""
    solo, pair, reports, staggered = [], [], [], []
    for k in range(repeats):
        start = time.perf_counter()
        solo.append(wait(demo(root / f"{name}-solo{k}", env), start))
        reports.append(root / f"{name}-solo{k}" / "report.json")
    for k in range(pairs):
        start = time.perf_counter()
        processes = [demo(root / f"{name}-pair{k}-{j}", env) for j in range(2)]
        pair.extend(wait(process, start) for process in processes)
        reports.extend(root / f"{name}-pair{k}-{j}" / "report.json" for j in range(2))
    if stagger > 0:
        first = demo(root / f"{name}-stagger-0", env)
        start = time.perf_counter()
        time.sleep(stagger)
        second_start = time.perf_counter()
        second = demo(root / f"{name}-stagger-1", env)
        staggered = [wait(first, start), wait(second, second_start)]
        reports.extend(root / f"{name}-stagger-{j}" / "report.json" for j in range(2))
    solo_median = statistics.median(solo)
    pair_mean = statistics.fmean(pair) if pair else None
    entry = {"env": env, "solo_seconds": solo, "solo_median": solo_median, "pair_seconds": pair,
             "pair_mean": pair_mean, "pair_over_solo": None if pair_mean is None else pair_mean / solo_median,
             "staggered_seconds": staggered, "stagger": stagger,
             "reports": [str(path) for path in reports]}
    print(f"{name:34s} solo {solo_median:6.1f} s  pair {pair_mean or float('nan'):6.1f} s each  "
          f"ratio {entry['pair_over_solo'] or float('nan'):.2f}"
          + (f"  staggered by {stagger:.0f} s: {staggered[0]:.1f} / {staggered[1]:.1f} s" if staggered else ""),
          flush=True)
    return entry


def parse_setting(text: str) -> tuple[str, dict[str, str]]:
    """``name=VAR=value,VAR2=value2`` → (name, env); ``name=`` is the unchanged environment."""
    name, _, assignments = text.partition("=")
    env = dict(item.split("=", 1) for item in assignments.split(",") if item)
    return name, env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", nargs="*", default=None, metavar="NAME=VAR=VALUE[,VAR=VALUE]",
                        help="the settings to compare (default: the library's default and the pre-change spin)")
    parser.add_argument("--repeats", type=int, default=2, help="solo demos per setting (median reported)")
    parser.add_argument("--pairs", type=int, default=1, help="pairs of demos started together per setting")
    parser.add_argument("--stagger", type=float, default=0.0,
                        help="also one pair whose second demo starts this many seconds after the first")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)
    settings = dict(map(parse_setting, args.settings)) if args.settings else DEFAULT_SETTINGS
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="shared-machine-") as tmp:
        for name, env in settings.items():
            results[name] = measure("".join(c if c.isalnum() else "_" for c in name), env, Path(tmp), args.repeats,
                                    args.pairs, args.stagger)
        reference = json.loads(Path(next(iter(results.values()))["reports"][0]).read_text())
        for entry in results.values():
            comparisons = [compare(reference, json.loads(Path(path).read_text())) for path in entry.pop("reports")]
            entry["scores_identical_to_first_solo"] = all(not c["differing"] for c in comparisons)
    summary = {"cpu_count": os.cpu_count(), "load_before": os.getloadavg()[0], "settings": results,
               "command": "python benchmarks/shared_machine.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    if args.json:
        write_json(args.json, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
