"""How many training pairs the NLI judge an evaluator bundle carries needs: judges trained on the first N e-SNLI
pairs (each premise followed by its gold explanation, 1 epoch: the ``esnli`` recipe's ``nli_judge`` settings but
the size), each scored on VARSuite's ``gold``, ``label_swap`` and ``drift`` rows of the first test examples.

Per judge: its accuracy on the gold (the label it reads likeliest), and the share of ``label_swap`` and ``drift`` rows
whose given label it gives no more log-probability than the gold's 1% and 2% quantiles (the threshold a gold budget
of 1% or 2% allows, as ``benchmarks/finding_thresholds.py`` chooses it, here on all rows). It also tries a judge-based
negation gain for ``drift``: the most the judge's log-probability of the label rises with one negation of the
explanation toggled, at the same gold budgets, alone and with the log-probability rule. The log-probability rule's shares are also given
per gold label of the rows. docs/hub.md ("The recipes")
and docs/findings.md cite it.

    python benchmarks/nli_judge_size.py --data-dir ../shared/data --judges runs/nli-judges --sizes 3000,all \\
        --json benchmarks/results/nli_judge_size.json

A judge already in ``--judges/pairs-<N>`` is reused, as ``larev-hf nli-train`` reuses a finished directory.

Internals: ``larev_hf.hub.findings.negation_toggles``, the negation edits the finding *contradicts the label* toggles,
so the judge-based gain tries the same edits as the shipped rule.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import load_examples
from larev_hf.hub.findings import negation_toggles
from larev_hf.io import write_json
from larev_hf.meta import build_suite
from larev_hf.training import NLIJudge, train_esnli_judge

BUDGETS = (0.01, 0.02)


def judge_figures(judge: NLIJudge, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The judge's gold accuracy and, per gold budget, the share of swapped labels and drifted negations named."""
    log_p, read = judge.label_log_probs(rows)
    owners, toggled = [], []
    for i, row in enumerate(rows):
        for text in negation_toggles(row["rationale"]):
            owners.append(i)
            toggled.append({**row, "rationale": text})
    gain = np.full(len(rows), -np.inf)
    if toggled:
        for i, toggled_log_p in zip(owners, judge.label_log_probs(toggled)[0], strict=True):
            gain[i] = max(gain[i], toggled_log_p - log_p[i])
    family = np.array([row["family"] for row in rows])
    gold = family == "gold"
    out: dict[str, Any] = {"gold_rows": int(gold.sum()),
                           "gold_accuracy": float(np.mean([read[i] == rows[i]["label"] for i in np.where(gold)[0]]))}
    for budget in BUDGETS:
        low, high = np.quantile(log_p[gold], budget), np.quantile(gain[gold], 1 - budget)
        named = {"log_prob_threshold": float(low), "negation_gain_threshold": float(high)}
        for name in ("label_swap", "drift"):
            rows_of = family == name
            by_log_p, by_gain = log_p[rows_of] <= low, gain[rows_of] > high
            gold_labels = np.array([row["gold_label"] for row in rows])[rows_of]
            named[name] = {"rows": int(rows_of.sum()), "log_prob": float(by_log_p.mean()),
                           "negation_gain": float(by_gain.mean()), "either": float((by_log_p | by_gain).mean()),
                           "log_prob_by_gold_label": {label: float(by_log_p[gold_labels == label].mean())
                                                      for label in sorted(set(gold_labels))}}
        out[f"gold_budget_{budget}"] = named
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the shared data layout (esnli/ under it)")
    parser.add_argument("--judges", type=Path, required=True, help="where the judges are trained (pairs-<N>/)")
    parser.add_argument("--sizes", default="3000,all", help="training pairs per judge, comma-separated ('all')")
    parser.add_argument("--examples", type=int, default=500, help="test examples whose VARSuite rows are scored")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    test = list(load_examples("esnli", args.data_dir / "esnli", "test", max_examples=args.examples))
    rows = build_suite(test, families=["gold", "label_swap", "drift"])  # each row's label is the one it is given
    result: dict[str, Any] = {"examples": len(test), "epochs": 1.0, "judges": {}}
    for size in args.sizes.split(","):
        started = time.perf_counter()
        directory = args.judges / f"pairs-{size}"
        metrics = train_esnli_judge(args.data_dir / "esnli", directory, max_eval_examples=0, epochs=1.0,
                                    max_train_examples=None if size == "all" else int(size), read_explanations=True)
        judge = NLIJudge.from_pretrained(directory, max_length=256)  # read_explanations=True: its metrics say so
        result["judges"][size] = {"train_examples": metrics["train_examples"], **judge_figures(judge, rows),
                                  "seconds": round(time.perf_counter() - started, 1)}
        figures = result["judges"][size]
        print(f"{size:>6} pairs: gold accuracy {figures['gold_accuracy']:.3f}; at the gold's 1% quantile "
              f"label_swap {figures['gold_budget_0.01']['label_swap']['log_prob']:.3f}, "
              f"drift {figures['gold_budget_0.01']['drift']['log_prob']:.3f} "
              f"(with the negation gain {figures['gold_budget_0.01']['drift']['either']:.3f})")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
