"""A calibration fitted to one human judgment, read against another: does the acceptability calibration
credit *new information that supports the label*?

Applies a saved ``calibration.json`` (``larev-hf human --calibrate``) to the scores of a finished ``larev-hf human``
report on another judged file — every feature the calibration reads must be scored there — and prints the calibrated
score's agreement with each human column beside its features', pooled and per source, with instance-bootstrap
intervals (``larev_hf.meta.human_stats.agreement_table``):

    python benchmarks/calibration_on_construct.py --human-dir runs/g/esnli-full/human/snli_fine_select \\
        --calibration runs/g/esnli-full/human/robust-larev-explanation_lm-copied_span/calibration.json \\
        --columns new_supporting,new_info --json benchmarks/results/grounded/calibration_on_construct_t5tiny.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import agreement_table
from larev_hf.scores import Calibration


def feature_columns(human_dir: Path, judged: list[dict], names: list[str]) -> dict[str, np.ndarray]:
    """Each named method's score of every judged explanation, from ``scores/<name>.jsonl``, in ``judged``'s order."""
    columns = {}
    for name in names:
        rows = [row for _, row in read_jsonl(human_dir / "scores" / f"{name}.jsonl")]
        if [row["id"] for row in rows] != [row["id"] for row in judged]:
            raise ValueError(f"{human_dir}/scores/{name}.jsonl does not score judged.jsonl's explanations in order")
        columns[name] = np.array([row["score"] for row in rows])
    return columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", required=True, help="a `larev-hf human` output directory")
    parser.add_argument("--calibration", required=True)
    parser.add_argument("--columns", default="new_supporting,new_info")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    human_dir, calibration = Path(args.human_dir), Calibration.load(args.calibration)
    judged = [row for _, row in read_jsonl(human_dir / "judged.jsonl")]
    features = feature_columns(human_dir, judged, calibration.features)
    scores = {"calibrated": calibration(features), **features}
    instances, sources = [r["instance"] for r in judged], np.array([r.get("source", "") for r in judged])
    result: dict = {"human_dir": args.human_dir, "calibration": args.calibration, "columns": {}}
    for column in args.columns.split(","):
        human = np.array([r["numbers"][column] for r in judged], dtype=float)
        groups = {"all": np.ones(len(judged), bool), **{s: sources == s for s in sorted(set(sources)) if s}}
        result["columns"][column] = {}
        for group, keep in groups.items():
            table = agreement_table({k: v[keep] for k, v in scores.items()}, human[keep],
                                    [i for i, k in zip(instances, keep, strict=True) if k], n_boot=args.n_boot)
            result["columns"][column][group] = {name: {stat: table["metrics"][name][stat] for stat in
                                                       ("spearman", "pairwise")} for name in scores}
            stats = result["columns"][column][group]["calibrated"]["spearman"]
            interval = stats["ci95"] or [float("nan")] * 2
            print(f"{column:15s} {group:12s} calibrated ρ {stats['value']:+.3f} [{interval[0]:+.3f}, "
                  f"{interval[1]:+.3f}]  " + "  ".join(f"{n} {result['columns'][column][group][n]['spearman']['value']:+.3f}"
                                                       for n in features))
    write_json(args.json, result)
    print(json.dumps({"written": args.json}))


if __name__ == "__main__":
    main()
