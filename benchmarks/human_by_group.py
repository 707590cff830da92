"""Does a difference in agreement with people hold per gold label and per source, not only on the mean?

Reads what ``larev-hf human`` left in a run's ``human/<file stem>/`` (``judged.jsonl`` and ``scores/<method>.jsonl``)
and prints, for one half of the instance split, each method's Spearman ρ with a human column within each gold label and
within each source of the explanation. Writes them to ``--json``.

    python benchmarks/human_by_group.py --human-dir runs/g/esnli-full/human/snli_accept_train \\
        --methods larev,larev_grounded --half held --json benchmarks/results/grounded/esnli-full.human_by_group.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import instance_half, spearman
from larev_hf.scores import Calibration


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", required=True, help="RUN/human/<file stem> written by `larev-hf human`")
    parser.add_argument("--methods", required=True, help="comma list of scored methods")
    parser.add_argument("--human-column", default="acceptable")
    parser.add_argument("--half", default="held", choices=("select", "held", "all"))
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--calibration", help="also the calibrated score of this calibration.json, from its features' "
                        "scores in the directory")
    parser.add_argument("--baseline-columns", default="", help="columns of the judged file to report too, NAME:lower "
                        "where lower is better (e.g. gpt3_nll:lower)")
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    directory = Path(args.human_dir)
    records = [row for _, row in read_jsonl(directory / "judged.jsonl")]
    methods = args.methods.split(",")
    scores = {m: {row["id"]: row["score"] for _, row in read_jsonl(directory / "scores" / f"{m}.jsonl")} for m in methods}
    if args.calibration:
        from calibration_on_construct import feature_columns

        calibration = Calibration.load(args.calibration)
        values = calibration(feature_columns(directory, records, calibration.features))
        scores["calibrated"] = {r["id"]: float(v) for r, v in zip(records, values, strict=True)}
    for column in filter(None, args.baseline_columns.split(",")):
        name, _, direction = column.partition(":")
        sign = -1.0 if direction == "lower" else 1.0
        scores[name] = {r["id"]: sign * r["numbers"][name] for r in records}
    methods = list(scores)
    halves = instance_half([r["instance"] for r in records], args.split_seed)
    records = [r for r in records if args.half == "all" or halves[r["instance"]] == args.half]
    out: dict[str, dict] = {}
    for key in ("label", "source"):
        out[key] = {}
        for group in sorted({str(r.get(key)) for r in records}):
            rows = [r for r in records if str(r.get(key)) == group]
            human = [r["numbers"][args.human_column] for r in rows]
            out[key][group] = {"n": len(rows), **{m: spearman([scores[m][r["id"]] for r in rows], human)
                                                  for m in methods}}
            print(f"{key:6s} {group:14s} n {len(rows):5d}  " + "  ".join(f"{m} ρ {out[key][group][m]:+.3f}"
                                                                       for m in methods), flush=True)
    summary = {"human_dir": str(directory), "half": args.half, "human_column": args.human_column, "spearman": out,
               "command": "python benchmarks/human_by_group.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    write_json(args.json, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
