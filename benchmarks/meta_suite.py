"""Which rationale metric to trust: the VARSuite meta-evaluation of every metric and baseline on one dataset.

Trains (or resumes) ``larev-hf run`` with the given flags, then runs ``larev-hf meta`` on its test split: every
method — REV, LAREV, RoRA, LAS, RQ and the metric baselines ROUGE-L, length and rationale-only accuracy (VARIF §5) —
scores every VARSuite family (VARIF §4), and the script prints and saves the method × family AUC table with 95%
bootstrap intervals, each method's worst family and Kendall τ-b, and LAREV − REV's AUC difference (paired bootstrap)
on the families LAREV is built to catch (vacuous, leak, circular).

    python benchmarks/meta_suite.py --dataset esnli --data-dir ../shared/data/esnli --rora.threshold 0.05 \\
        --output-dir runs/meta/esnli --results benchmarks/results/meta_esnli.json
    python benchmarks/meta_suite.py --dataset cose --data-dir ../shared/data/cose --rora.threshold 0.05 \\
        --phi-la-init phi --output-dir runs/meta/cose --results benchmarks/results/meta_cose.json
    python benchmarks/meta_suite.py --dataset strategyqa --data-dir ../shared/data/strategyqa --rora.threshold 0.05 \\
        --output-dir runs/meta/strategyqa --results benchmarks/results/meta_strategyqa.json

Every other flag is passed to ``larev-hf run``'s parser (``--method`` defaults to the five metrics here); a rerun
resumes the run and the meta stages. Torch threads are fixed by ``--threads`` and recorded.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch

from larev_hf.cli import build_parser
from larev_hf.cli.commands.run import config_from_args
from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import DEFAULT_FAMILIES, MetaEvaluation, MetaSettings, auc_difference_ci
from larev_hf.pipeline import Run

#: The families LAREV's stated purpose predicts it separates from gold (thesis ch. 4: leakage and vacuity).
LAREV_TARGETS = ("vacuous", "leak", "circular")


def _family_scores(meta_dir: Path, method: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for _, row in read_jsonl(meta_dir / "scores" / f"{method}.jsonl"):
        out.setdefault(row["family"], {})[row["id"]] = row["score"]
    return out


def larev_vs_rev(meta_dir: Path, families: tuple[str, ...], n_boot: int, seed: int) -> dict[str, Any]:
    """AUC(LAREV) − AUC(REV) per family, paired over the same suite rows, with a bootstrap interval."""
    larev, rev = _family_scores(meta_dir, "larev"), _family_scores(meta_dir, "rev")
    out = {}
    for family in families:
        ids = [i for i in larev["gold"] if i in larev.get(family, {})]
        if not ids:
            continue
        diff, (low, high) = auc_difference_ci([larev["gold"][i] for i in ids], [larev[family][i] for i in ids],
                                              [rev["gold"][i] for i in ids], [rev[family][i] for i in ids],
                                              n_boot=n_boot, seed=seed)
        out[family] = {"auc_difference": diff, "ci95": [low, high], "n": len(ids)}
    return out


def format_auc_table(report: dict[str, Any]) -> str:
    families = [f for f in report["families"] if f != "gold"]
    lines = ["| Method | " + " | ".join(families) + " | worst | τ-b |", "|" + " --- |" * (len(families) + 3)]
    for entry in report["methods"].values():
        cells = []
        for family in families:
            stats = entry["families"][family]
            cells.append("n/a" if stats["auc"] is None else
                         f"{stats['auc']:.3f} [{stats['ci95'][0]:.3f}, {stats['ci95'][1]:.3f}]")
        tau = "n/a" if entry["tau_b"] is None else f"{entry['tau_b']:+.3f}"
        worst = "n/a" if entry["worst_auc"] is None else f"{entry['worst_auc']:.3f} ({entry['worst_family']})"
        lines.append(f"| {entry['title']} | " + " | ".join(cells) + f" | {worst} | {tau} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Any other flag is a `larev-hf run` flag (e.g. --dataset, --data-dir).")
    parser.add_argument("--output-dir", required=True, help="run directory (resumed if it exists)")
    parser.add_argument("--results", required=True, help="JSON file for the figures")
    parser.add_argument("--families", default=",".join(DEFAULT_FAMILIES), help="VARSuite families (comma list)")
    parser.add_argument("--meta-n-boot", type=int, default=1000, help="bootstrap replicates per AUC interval")
    parser.add_argument("--threads", type=int, default=1)
    args, run_flags = parser.parse_known_args(argv)
    if not any(flag == "--method" or flag.startswith("--method=") for flag in run_flags):
        run_flags = ["--method", "rev,larev,rora,las,rq", *run_flags]
    run_args = build_parser().parse_args(["run", "--output-dir", args.output_dir, *run_flags])  # larev-hf run's parser
    torch.set_num_threads(args.threads)

    start = time.perf_counter()
    run = Run(config_from_args(run_args), args.output_dir)
    run.execute()
    trained = time.perf_counter()
    meta = MetaEvaluation(run, MetaSettings(families=args.families.split(","), n_boot=args.meta_n_boot))
    report = meta.execute()
    finished = time.perf_counter()
    comparison = larev_vs_rev(meta.dir, LAREV_TARGETS, args.meta_n_boot, run.config.training.seed)

    print(format_auc_table(report))
    for family, entry in comparison.items():
        print(f"LAREV − REV AUC on {family}: {entry['auc_difference']:+.3f} "
              f"[{entry['ci95'][0]:+.3f}, {entry['ci95'][1]:+.3f}] (n = {entry['n']})")
    write_json(args.results, {
        "environment": {"python": platform.python_version(), "torch": torch.__version__, "threads": args.threads,
                        "load_average": os.getloadavg(), "machine": platform.machine()},
        "run_settings": run.config.to_dict(),
        "meta": {key: report[key] for key in ("dataset", "split", "n_examples", "families", "methods", "settings",
                                              "timings", "expected_order")},
        "larev_minus_rev_auc": comparison,
        "seconds": {"run_resume_or_train": trained - start, "meta": finished - trained},
        "meta_report": str(meta.dir / "meta_report.md"),
    })
    print(f"results: {args.results}; report: {meta.dir / 'meta_report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
