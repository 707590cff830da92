"""Do the metrics agree with people? ``larev-hf human`` on trained runs, split by instance into halves.

For each run given as ``NAME=RUN_DIR`` it scores the judged file with every method of the run and the metric baselines
(the run's evaluators, nothing retrained), then reports on the whole file and on the two halves of a split by instance
(``select``: where changes are chosen; ``held``: where they are reported), per metric: within-instance pairwise
agreement, Spearman ρ, Kendall τ-b and the AUC of acceptable against unacceptable explanations, with 95% intervals
that resample instances, and LAREV's paired differences from REV and from every baseline. Optional variants, each
measured the same way:

- ``--calibrate FEATURES``: the calibrated score (a logistic combination fitted on the select half);
- ``--reductions mean``: the same evaluators scored with REV's per-token mean instead of the sum;
- ``--ensemble NAME,NAME``: the mean of the named runs' LAREV scores, each standardised on the select half.

    python benchmarks/human_agreement.py --judgments ../shared/data/human/snli_accept_train.jsonl \\
        --runs t5-tiny=runs/human/esnli-t5tiny minilm2minilm=runs/human/esnli-minilm \\
        --baseline-columns gpt3_nll:lower --calibrate larev,length,rouge_l --reductions mean \\
        --ensemble t5-tiny,minilm2minilm --json benchmarks/results/human_snli.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import STATISTICS, agreement_table, difference, human_evaluate, instance_half

HALVES = ("all", "select", "held")


def _tables(report: dict[str, Any]) -> dict[str, Any]:
    """The report's per-metric figures and LAREV's differences (the parts the docs quote)."""
    out = {}
    for human, entry in report["human"].items():
        out[human] = {"n": {k: entry[k] for k in ("n_explanations", "n_instances", "n_pairs", "n_acceptable",
                                                 "n_unacceptable")},
                      "metrics": entry["metrics"],
                      "larev_minus": entry["differences"].get("larev", {}),
                      "calibrated_minus": entry["differences"].get("calibrated", {})}
    return out


def evaluate_run(run_dir: str, args: argparse.Namespace, reduction: str | None) -> dict[str, Any]:
    """The three halves' reports of one run (and reduction); the scoring is done once, the halves are reports."""
    stem = Path(args.judgments).stem + (f"-{reduction}" if reduction else "")
    output = Path(run_dir) / "human" / stem
    results, seconds = {}, {}
    for half in HALVES:
        start = time.perf_counter()
        report = human_evaluate(run_dir, args.judgments, output, progress=not args.quiet, half=half,
                                baseline_columns=args.baseline_columns, human_columns=args.human_columns,
                                column_mapping=args.column_mapping, calibrate=args.calibrate if not reduction else [],
                                reduction=reduction, n_boot=args.n_boot, split_seed=args.split_seed)
        seconds[half] = time.perf_counter() - start
        results[half] = _tables(report)
    results["timings"] = {"stages": report["timings"], "report_seconds": seconds}
    results["output_dir"] = str(output)
    return results


def ensemble(run_dirs: dict[str, str], names: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """The mean of the named runs' LAREV scores, each standardised with the select half's mean and SD, against the
    best single run and the baselines on the held half (paired intervals)."""
    stem = Path(args.judgments).stem
    columns: dict[str, np.ndarray] = {}
    records = None
    for name in names:
        directory = Path(run_dirs[name]) / "human" / stem
        records = records or [row for _, row in read_jsonl(directory / "judged.jsonl")]
        by_id = {row["id"]: row["score"] for _, row in read_jsonl(directory / "scores" / "larev.jsonl")}
        columns[f"larev:{name}"] = np.array([by_id[r["id"]] for r in records])
    assert records is not None
    halves = instance_half([r["instance"] for r in records], args.split_seed)
    select = np.array([halves[r["instance"]] == "select" for r in records])
    z = [(v - v[select].mean()) / v[select].std() for v in columns.values()]
    columns["ensemble"] = np.mean(z, axis=0)
    for column in args.baseline_columns:
        name, _, direction = column.partition(":")
        columns[name] = (-1 if direction == "lower" else 1) * np.array([r["numbers"][name] for r in records])
    held = ~select
    human = np.array([r["numbers"][args.human_columns[0]] for r in records])[held]
    table = agreement_table({k: v[held] for k, v in columns.items()}, human,
                            [r["instance"] for r, h in zip(records, held, strict=True) if h], n_boot=args.n_boot)
    return {"members": names, "half": "held",
            "metrics": table["metrics"],
            "ensemble_minus": {other: {s: difference(table, "ensemble", other, s) for s in STATISTICS}
                               for other in columns if other != "ensemble"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgments", required=True)
    parser.add_argument("--runs", nargs="+", required=True, help="NAME=RUN_DIR of trained `larev-hf run` directories")
    parser.add_argument("--human-columns", default="acceptable", type=lambda s: s.split(","))
    parser.add_argument("--baseline-columns", default="", type=lambda s: [x for x in s.split(",") if x])
    parser.add_argument("--column-mapping", default=None)
    parser.add_argument("--calibrate", default="", type=lambda s: [x for x in s.split(",") if x])
    parser.add_argument("--reductions", default="", type=lambda s: [x for x in s.split(",") if x],
                        help="extra label-token reductions to score with (sum is each run's default)")
    parser.add_argument("--ensemble", default="", type=lambda s: [x for x in s.split(",") if x])
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run_dirs = dict(entry.split("=", 1) for entry in args.runs)
    results: dict[str, Any] = {
        "command": " ".join(sys.argv), "judgments": args.judgments, "split_seed": args.split_seed,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": args.threads,
                    "load_average": os.getloadavg()}, "runs": {}}
    for name, run_dir in run_dirs.items():
        for reduction in [None, *args.reductions]:
            key = name + (f"+{reduction}" if reduction else "")
            results["runs"][key] = evaluate_run(run_dir, args, reduction)
            write_json(args.json, results)  # each result saved as it arrives
            held = results["runs"][key]["held"][args.human_columns[0]]["metrics"]
            print(f"{key} (held): " + "; ".join(
                f"{m} pairwise {v['pairwise']['value']:.3f} ρ {v['spearman']['value'] or float('nan'):.3f}"
                for m, v in held.items() if m in ("rev", "larev", "calibrated", "rouge_l", "length", "gpt3_nll")))
    if len(args.ensemble) > 1:
        results["ensemble"] = ensemble(run_dirs, args.ensemble, args)
        write_json(args.json, results)
        print("ensemble (held):", {k: round(v["pairwise"]["value"], 3) for k, v in results["ensemble"]["metrics"].items()})


if __name__ == "__main__":
    main()
