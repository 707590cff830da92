"""Two calibrated scores of one judged file compared on its held half, with paired instance-bootstrap intervals:
Spearman, within-instance pairwise agreement and select-1 (Wiegreffe et al.'s share of instances whose top-scored
explanation is acceptable), each calibration applied to the features its human directory scored.

    python benchmarks/compare_calibrations.py --old CACHE/esnli-83bb9f750fe7/human \\
        --new CACHE/esnli-7789531b7c96/human --json benchmarks/results/calibration_paired_vs_auc.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from larev_hf.io import read_json, read_jsonl, write_json
from larev_hf.meta import agreement_table, difference, instance_half, select_one, select_one_replicates
from larev_hf.scores import Calibration


def calibrated(human_dir: Path) -> np.ndarray:
    """The directory's calibration applied to the features it scored (one score per judged explanation)."""
    features = read_json(human_dir / "calibration.json")["features"]
    return Calibration.load(human_dir / "calibration.json")(
        {f: np.array([row["score"] for _, row in read_jsonl(human_dir / "scores" / f"{f}.jsonl")]) for f in features})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    records = [row for _, row in read_jsonl(args.new / "judged.jsonl")]
    instances = [r["instance"] for r in records]
    human = np.array([r["numbers"]["acceptable"] for r in records])
    halves = instance_half(instances, 0)
    held = np.array([halves[i] == "held" for i in instances])
    ids = [i for i, h in zip(instances, held, strict=True) if h]
    scores = {"new": calibrated(args.new)[held], "old": calibrated(args.old)[held]}
    table = agreement_table(scores, human[held], ids, n_boot=args.n_boot, seed=0)
    out = {name: {s: table["metrics"][name][s] for s in ("spearman", "pairwise")} for name in scores}
    for name in scores:
        out[name]["select_1"] = select_one(scores[name], human[held], ids)
    out["new_minus_old"] = {s: difference(table, "new", "old", s) for s in ("spearman", "pairwise")}
    delta = (np.asarray(select_one_replicates(scores["new"], human[held], ids, n_boot=args.n_boot, seed=0))
             - np.asarray(select_one_replicates(scores["old"], human[held], ids, n_boot=args.n_boot, seed=0)))
    out["new_minus_old"]["select_1"] = {"value": out["new"]["select_1"] - out["old"]["select_1"],
                                        "ci95": [float(np.quantile(delta, 0.025)), float(np.quantile(delta, 0.975))]}
    for statistic, entry in out["new_minus_old"].items():
        print(f"{statistic}: new − old {entry['value']:+.3f} [{entry['ci95'][0]:+.3f}, {entry['ci95'][1]:+.3f}]")
    if args.json:
        # the cache directories by their evaluator's name only (the machine's own paths stay out of results)
        named = {side: f"CACHE/{path.resolve().parent.name}/{path.name}" for side, path in (("old", args.old),
                                                                                       ("new", args.new))}
        write_json(args.json, {"command": f"python benchmarks/compare_calibrations.py --old {named['old']} "
                                          f"--new {named['new']}", **out})


if __name__ == "__main__":
    main()
