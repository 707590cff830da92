"""Does the calibrated score add a weakness? Agreement with people beside robustness to VARSuite.

Runs ``larev-hf human --calibrate`` on one trained run and judged file for each feature set asked, each fitted two
ways (robust: by agreement and robustness; agreement: by agreement alone, as the calibration was fitted before), and prints, per calibrated
score and for the method alone: Spearman ρ, pairwise agreement and AUC with the human column on the held half, and
the AUC of the gold against every VARSuite family on the run's test split, with the robustness verdict (each family ≥ 0.80,
or ≥ the method alone − 0.02 where the method is below 0.80). Writes everything to ``--json``.

    python benchmarks/robust_calibration.py --run-dir runs/g/esnli-full \\
        --judgments ../shared/data/human/snli_accept_train.jsonl --features larev,grounding larev,length,rouge_l \\
        --robustness-examples 2000 --json benchmarks/results/robust_calibration.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from larev_hf.io import write_json
from larev_hf.meta import human_evaluate, robustness_shortfalls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--judgments", required=True)
    parser.add_argument("--features", nargs="+", default=["larev,grounding", "larev,length,rouge_l"],
                        help="one comma list per calibration (the first feature set's method is reported alone too)")
    parser.add_argument("--robustness-examples", type=int, default=1000)
    parser.add_argument("--robustness-fit-split", default="train", choices=("train", "validation"),
                        help="where the fit's attack rows come from (train: the whole validation split checks the "
                        "choice; validation: alternate halves, the figures measured before this option)")
    parser.add_argument("--baseline-columns", default="gpt3_nll:lower")
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, Any]] = {}
    for features in args.features:
        suffix = "-fit-train" if args.robustness_fit_split == "train" else ""  # the earlier directories: validation
        output = Path(args.run_dir) / "human" / f"robust-{features.replace(',', '-')}{suffix}"
        report = human_evaluate(args.run_dir, args.judgments, output, progress=False, half="held",
                                calibrate=features.split(","), baseline_columns=args.baseline_columns.split(","),
                                robustness_examples=args.robustness_examples, n_boot=args.n_boot,
                                robustness_fit_split=args.robustness_fit_split)
        section, human = report["calibration"], next(iter(report["human"].values()))
        method_aucs = section["robustness"]["method"]
        names = {section["method"]: method_aucs, **{f"{features} ({'robust' if n == 'calibrated' else 'agreement'})":
                                                    section["robustness"][n]["aucs"]
                                                    for n in ("calibrated", "calibrated_agreement")}}
        columns = {section["method"]: section["method"], **dict(zip(list(names)[1:], ("calibrated",
                                                                                      "calibrated_agreement"),
                                                                    strict=True))}
        for title, aucs in names.items():
            stats = human["metrics"][columns[title]]
            rows[title] = {"spearman": stats["spearman"]["value"], "pairwise": stats["pairwise"]["value"],
                           "auc": stats["auc"]["value"], "select_1": human["select_1"][columns[title]],
                           "family_aucs": aucs, "shortfalls": robustness_shortfalls(aucs, method_aucs),
                           **({"chosen": next(r for r in section["candidates"] if r["chosen"])}
                              if title.endswith("(robust)") else {})}
        for column in human["metrics"]:
            if column not in report["metrics"] or report["metrics"][column]["kind"] == "column":
                stats = human["metrics"][column]
                rows.setdefault(column, {"spearman": stats["spearman"]["value"],
                                         "pairwise": stats["pairwise"]["value"], "auc": stats["auc"]["value"]})
    print(f"{'score':45s} {'ρ':>6s} {'pairw':>6s} {'AUC':>6s}  worst family (test)   fails")
    for title, row in rows.items():
        worst = min(row["family_aucs"], key=row["family_aucs"].get) if "family_aucs" in row else None
        print(f"{title:45s} {row['spearman']:6.3f} {row['pairwise']:6.3f} {row['auc']:6.3f}  "
              + (f"{row['family_aucs'][worst]:.3f} {worst:15s} {sorted(row['shortfalls'])}" if worst else ""))
    write_json(args.json, {"run_dir": args.run_dir, "judgments": args.judgments, "half": "held",
                           "robustness_examples": args.robustness_examples, "scores": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
