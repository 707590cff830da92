"""Does an evaluator rank a good explanation above a vacuous one, per instance? A check on explanations written for it.

`benchmarks/data/constructed_esnli.jsonl` holds 16 hand-written e-SNLI-style instances (none from any data split), each
with three explanations sharing an `instance_id`: a good one (`kind: good`, written for this file), a restatement of the
hypothesis (`restatement`) and the label sentence "The answer is <label>." (`label`). The evaluator scores them through
`evaluate.load` — as a user would — and, for the raw, label-centred and calibrated scores, this prints and saves:

- per-pair wins: the share of instances where the good explanation scores above the restatement, above the label
  sentence, and above both; and the mean margin (good − other) in the score's unit;
- the AUC of good against the two vacuous explanations over all rows (``sklearn.metrics.roc_auc_score``), and the same
  per gold label.

    python benchmarks/constructed_explanations.py --evaluator esnli --json benchmarks/results/constructed_esnli.json
    python benchmarks/constructed_explanations.py --evaluator bundles/larev-esnli --file my_file.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import evaluate
import numpy as np
from sklearn.metrics import roc_auc_score

import larev_hf
from larev_hf.io import write_json

HERE = Path(__file__).resolve().parent
BAD_KINDS = ("restatement", "label")
SCORES = {"raw": "scores", "label_centred": "label_centred_scores", "calibrated": "calibrated_scores"}


def wins(values: np.ndarray, rows: list[dict]) -> dict[str, object]:
    """Per-instance wins and margins of the good explanation over each vacuous one, and the AUCs."""
    by_instance: dict[str, dict[str, float]] = {}
    for value, row in zip(values, rows, strict=True):
        by_instance.setdefault(row["instance_id"], {})[row["kind"]] = float(value)
    out: dict[str, object] = {"n_instances": len(by_instance)}
    for kind in BAD_KINDS:
        margins = np.array([scores["good"] - scores[kind] for scores in by_instance.values()])
        out[f"wins_over_{kind}"] = float(np.mean(margins > 0))
        out[f"mean_margin_over_{kind}"] = float(np.mean(margins))
    out["wins_over_both"] = float(np.mean([all(s["good"] > s[k] for k in BAD_KINDS) for s in by_instance.values()]))
    good = np.array([row["kind"] == "good" for row in rows])
    out["auc_good_vs_vacuous"] = float(roc_auc_score(good, values))
    out["auc_by_label"] = {label: float(roc_auc_score(good[mask], values[mask]))
                           for label in sorted({row["label"] for row in rows})
                           for mask in [np.array([row["label"] == label for row in rows])]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evaluator", required=True, help="a named default evaluator, a bundle directory or Hub id")
    parser.add_argument("--file", default=str(HERE / "data" / "constructed_esnli.jsonl"),
                        help="explanations with instance_id and kind (good / restatement / label)")
    parser.add_argument("--json", default=None, help="where to save the figures")
    args = parser.parse_args(argv)

    rows = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line.strip()]
    start = time.perf_counter()
    metric = evaluate.load(larev_hf.metric_path("larev"), evaluator=args.evaluator)
    results = metric.compute(rationales=[r["rationale"] for r in rows], labels=[r["label"] for r in rows],
                             inputs=rows)
    seconds = time.perf_counter() - start
    report = {"evaluator": args.evaluator, "hashcode": results["hashcode"], "file": args.file, "n_rows": len(rows),
              "seconds_load_and_score": round(seconds, 2), "scores": {}}
    for name, key in SCORES.items():
        if key in results:
            report["scores"][name] = wins(np.asarray(results[key], dtype=float), rows)
    for name, entry in report["scores"].items():
        print(f"{name:14s} AUC {entry['auc_good_vs_vacuous']:.3f}  wins over restatement "
              f"{entry['wins_over_restatement']:.2f}, over label sentence {entry['wins_over_label']:.2f}, over both "
              f"{entry['wins_over_both']:.2f} ({entry['n_instances']} instances)  AUC by label "
              + ", ".join(f"{k} {v:.2f}" for k, v in entry["auc_by_label"].items()))
    print(f"loaded and scored {len(rows)} explanations in {seconds:.1f} s ({results['hashcode']})")
    if args.json:
        write_json(args.json, report)
        print(f"saved {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
