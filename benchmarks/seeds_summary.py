"""What survives retraining: gather the across-seed figures of finished multi-seed runs into one JSON.

Train the runs first (K seeds cost K trainings; one seed of full e-SNLI with t5-tiny is ~12 min on 2 cores), then:

    larev-hf run --method rev,larev --dataset esnli --data-dir ../shared/data/esnli --seeds 0,1,2 \\
        --output-dir runs/seeds/esnli-t5tiny
    larev-hf meta --run-dir runs/seeds/esnli-t5tiny
    python benchmarks/seeds_summary.py --runs full=runs/seeds/esnli-t5tiny rows3000=runs/seeds/esnli-3000 \\
        --json benchmarks/results/seeds_esnli_t5tiny.json

Prints, per run, method and separation: each seed's value, mean ± SD, the single-seed interval width, the two-level
interval, established, and the ensemble's; and, where ``meta/meta_report.json`` exists, each family's AUC per seed and
the ensemble's. Writes the run reports' ``seeds`` sections, stage timings, thread counts and the meta AUCs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from larev_hf.io import read_json, write_json


def summarise(run_dir: Path) -> dict[str, Any]:
    """The ``seeds`` section, timings and settings of a run's report, and its meta report's per-seed AUCs."""
    report = read_json(run_dir / "report.json")
    if "seeds" not in report:
        raise SystemExit(f"{run_dir}: report.json has no 'seeds' section (train with --seeds 0,1,2)")
    out = {"run_dir": str(run_dir), "n_test": report.get("n_examples"), "seeds": report["seeds"],
           "timings": report.get("timings"), "settings": report.get("settings", report.get("config"))}
    meta = run_dir / "meta" / "meta_report.json"
    if meta.is_file():
        out["meta_seeds"] = read_json(meta).get("seeds")
    return out


def _print(name: str, summary: dict[str, Any]) -> None:
    print(f"== {name} ({summary['run_dir']})")
    for method, entry in summary["seeds"]["methods"].items():
        for separation, row in entry["separations"].items():
            per_seed = " / ".join(f"{v:+.3f}" for v in row["per_seed"].values())
            low, high = row["ci95"]
            print(f"  {method:6s} {separation:22s} {per_seed}  mean {row['mean']:+.3f} ± {row['sd']:.3f}  "
                  f"width {row['single_seed_ci_width']:.3f}  combined [{low:+.3f}, {high:+.3f}]  "
                  f"holds {row['holds']}/{row['of']}  established {row['established']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", required=True, help="NAME=RUN_DIR of finished multi-seed runs")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    result = {"what": "across-seed figures of multi-seed larev-hf runs", "command": " ".join(sys.argv),
              "runs": {}}
    for spec in args.runs:
        name, _, run_dir = spec.partition("=")
        result["runs"][name] = summarise(Path(run_dir))
        _print(name, result["runs"][name])
    write_json(args.json, result)


if __name__ == "__main__":
    main()
