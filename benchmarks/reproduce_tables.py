"""Reproduce the thesis's tables (5.3/5.4, 5.6, 5.7, 5.9/5.10) with LAREV and REV from one run per dataset.

Runs (or resumes) ``larev-hf run --method all --ablations`` on each dataset and collects the
report's separations, ablations, evaluator accuracies and per-stage wall times into one JSON file.

    python benchmarks/reproduce_tables.py --datasets esnli cose --shared-data ../shared/data \\
        --runs-dir runs --json benchmarks/results/reproduction.json

``--method`` / ``--no-ablations`` narrow the run, ``--run-suffix`` names its directory ``runs/<dataset><suffix>``
(a finished run is only read back). The CoS-E runs of docs/reproduction.md:

    python benchmarks/reproduce_tables.py --datasets cose --shared-data ../shared/data --method rev,larev --no-ablations --run-suffix=-10ep \\
        --json benchmarks/results/cose_10ep.json -- --num-train-epochs 10
    python benchmarks/reproduce_tables.py --datasets cose --shared-data ../shared/data --method rev,larev --no-ablations --run-suffix=-10ep-phi \\
        --json benchmarks/results/cose_10ep_phi_init.json -- --num-train-epochs 10 --phi-la-init phi

Extra arguments after ``--`` go to ``larev-hf run`` (e.g. ``-- --lambda-irm 0.1``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from larev_hf.cli import main as cli
from larev_hf.io import read_json, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["esnli", "cose"])
    parser.add_argument("--shared-data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--json", default="benchmarks/results/reproduction.json")
    parser.add_argument("--method", default="all", help="the runs' --method")
    parser.add_argument("--no-ablations", dest="ablations", action="store_false", help="skip the table 5.6 ablations")
    parser.add_argument("--run-suffix", default="", help="run directory runs/<dataset><suffix>")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    results = read_json(args.json) if Path(args.json).is_file() else {}
    for dataset in args.datasets:
        output = Path(args.runs_dir) / f"{dataset}{args.run_suffix}"
        run_args = ["--method", args.method, *(["--ablations"] if args.ablations else []), "--dataset", dataset,
                    "--data-dir", str(Path(args.shared_data) / dataset), "--output-dir", str(output), *extra]
        results[dataset] = run_and_collect(run_args, output)
        write_json(args.json, results)
        print(json.dumps({m: e["separations"] for m, e in results[dataset]["methods"].items()}, indent=2))


def run_and_collect(run_args: list[str], output: Path, until: str | None = None) -> dict:
    """Run (or resume, or only read back) ``larev-hf run RUN_ARGS`` in ``output`` and collect its report's
    separations, intervals, ablations, evaluator accuracies and per-stage wall times."""
    start = time.perf_counter()
    code = cli(["--quiet", "run", *run_args, *(["--until", until] if until else [])])
    if code != 0:
        raise SystemExit(f"larev-hf run {' '.join(run_args)} failed (exit {code})")
    if until:
        return {}
    report = read_json(output / "report.json")
    return {
        "command": "larev-hf run " + " ".join(run_args),
        "n_train": len((output / "data" / "train.jsonl").read_text().splitlines()),
        "n_test": report["n_examples"],
        "methods": {m: {k: e[k] for k in ("absolute", "separations", "ci95", "win_rate")} for m, e in report["methods"].items()},
        "ablations": report.get("ablations", {}),
        "accuracy": report.get("accuracy", {}),
        "stage_seconds": report.get("timings", {}),
        "total_stage_seconds": sum(report.get("timings", {}).values()),
        "this_invocation_seconds": time.perf_counter() - start,
        "settings": report.get("settings", {}),
    }

if __name__ == "__main__":
    main()
