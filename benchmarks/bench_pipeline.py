"""Stage time of a whole ``larev-hf run`` and the separations it measures, with the machine's load.

    python benchmarks/bench_pipeline.py --output-dir runs/esnli-speed \
        --json benchmarks/results/pipeline_esnli_full.json            # full e-SNLI, rev + larev, defaults

Flags this script does not know go to ``larev-hf run`` (e.g. ``--group-by-length``, ``--max-train-examples 1000``).
The run directory is used as it is: a finished run is only re-read, so point ``--output-dir`` at a new directory to
time a run. Prints and writes JSON: every stage's seconds and their sum, the 1-minute load average before and
after, the torch thread count, and each method's separations with their 95% intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from larev_hf.cli import build_parser
from larev_hf.io import read_json, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "esnli"))
    parser.add_argument("--dataset", default="esnli")
    parser.add_argument("--method", default="rev,larev")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--json", default="benchmarks/results/pipeline_esnli_full.json")
    args, run_args = parser.parse_known_args()
    command = ["larev-hf", "--quiet", "run", "--method", args.method, "--dataset", args.dataset,
               "--data-dir", args.data_dir, "--output-dir", args.output_dir, *run_args]
    build_parser().parse_args(command[2:])  # a mistyped forwarded flag fails here, not after minutes of training
    load_before, start = os.getloadavg(), time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()
    report = read_json(Path(args.output_dir) / "report.json")
    timings = report.get("timings", {})
    result = {
        "benchmark": "larev-hf run: stage time and separations", "command": " ".join(command),
        "wall_s": wall, "stage_seconds": timings, "stage_seconds_total": sum(timings.values()),
        "load_avg_before": load_before, "load_avg_after": load_after, "cpu_count": os.cpu_count(),
        "torch_threads": sorted({env.get("torch_threads") for env in report.get("stage_environments", {}).values()}),
        "settings": report.get("settings"), "n_test_examples": report.get("n_examples"),
        "methods": {name: {"separations": entry.get("separations"), "ci95": entry.get("ci95")}
                    for name, entry in report.get("methods", {}).items()},
        "accuracy": report.get("accuracy"),
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
