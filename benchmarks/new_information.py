"""Does a score say "new information"? The acceptance figures of a pointwise score on a run's VARSuite, per gold label.

Reads what ``larev-hf meta`` left in a run's ``meta/`` (``suite.jsonl`` and ``scores/<method>.jsonl``) and prints, per
method and gold label: the gold's mean score with its 95% bootstrap interval and its share above +0.01 nats; the
gold's paired win rate over each attack family (ties count one half); the gain of the label appended to the gold
(``gold_leaky`` − ``gold``, mean and interval). With ``--human-report`` (``larev-hf human`` on the fine-grained
judgments), also each method's Spearman ρ with the human columns, with intervals, and with "new information that
supports the label" within each gold label and each source of the explanations. Writes everything to ``--json``.

    larev-hf meta --run-dir runs/ni --methods larev_ni,larev
    larev-hf human --run-dir runs/ni --judgments ../shared/data/human/snli_fine_select.jsonl \\
        --human-columns new_supporting,new_info --methods larev_ni,larev --output-dir runs/ni/human-fine
    python benchmarks/new_information.py --meta-dir runs/ni/meta --methods larev_ni,larev \\
        --human-report runs/ni/human-fine/human_report.json --json benchmarks/results/new_information.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from larev_hf.io import read_json, read_jsonl, write_json
from larev_hf.meta import instance_bootstrap_indices, paired_win_rate, percentile_interval, spearman
from larev_hf.scores import bootstrap_ci

#: The families the gold must beat by a margin in every label: an explanation that adds nothing.
NO_NEW_INFORMATION = ("vacuous", "label_only", "circular", "hypothesis_copy", "input_copy", "leak")
NEAR_ZERO = 0.01


def suite_table(meta_dir: Path, method: str) -> dict:
    """The per-label figures of ``method`` on the suite of ``meta_dir``."""
    suite = {(row["id"], row["family"]): row for _, row in read_jsonl(meta_dir / "suite.jsonl")}
    scores = {(row["id"], row["family"]): float(row["score"])
              for _, row in read_jsonl(meta_dir / "scores" / f"{method}.jsonl")}
    gold = {example: score for (example, family), score in scores.items() if family == "gold"}
    gold_label = {example: suite[(example, "gold")]["gold_label"] for example in gold}
    families = sorted({family for _, family in scores} - {"gold"})
    out: dict = {"labels": {}}
    for label in sorted(set(gold_label.values())):
        examples = [e for e in gold if gold_label[e] == label]
        values = np.array([gold[e] for e in examples])
        entry = {"n": len(values), "gold_mean": float(values.mean()), "gold_mean_ci95": bootstrap_ci(values, n_boot=2000),
                 "gold_above_0.01": float(np.mean(values > NEAR_ZERO)), "win_rates": {}, "family_means": {}}
        for family in families:
            pairs = [(gold[e], scores[(e, family)]) for e in examples if (e, family) in scores]
            if pairs:
                g, a = np.array(pairs).T
                entry["win_rates"][family] = float(paired_win_rate(g, a))
                entry["family_means"][family] = float(a.mean())
        out["labels"][label] = entry
    leak = np.array([scores[(e, "gold_leaky")] - gold[e] for e in gold if (e, "gold_leaky") in scores])
    if len(leak):
        out["leak_gain"] = {"mean": float(leak.mean()), "ci95": bootstrap_ci(leak, n_boot=2000)}
    out["lowest_no_new_information_win_rate"] = min(
        (entry["win_rates"][f], f"{label}/{f}") for label, entry in out["labels"].items()
        for f in NO_NEW_INFORMATION if f in entry["win_rates"])
    return out


def human_table(human_report: Path, method: str) -> dict:
    """Spearman ρ (with its instance-bootstrap interval) of ``method`` with each human column of a ``larev-hf human``
    report (``human_report.json``)."""
    report = read_json(human_report)
    return {column: entry["metrics"][method]["spearman"] for column, entry in report["human"].items()
            if method in entry["metrics"]}


def human_breakdown(human_report: Path, method: str, column: str = "new_supporting") -> dict:
    """Spearman ρ of ``method`` with ``column`` within each gold label and each source of the explanations, with its
    instance-bootstrap interval: read from the judged rows and scores ``larev-hf human`` wrote beside its report."""
    directory = human_report.parent
    judged = [row for _, row in read_jsonl(directory / "judged.jsonl")]
    score = {row["id"]: float(row["score"]) for _, row in read_jsonl(directory / "scores" / f"{method}.jsonl")}
    out: dict = {}
    for key in ("label", "source"):
        for value in sorted({str(row.get(key)) for row in judged}):
            rows = [row for row in judged if str(row.get(key)) == value]
            x = np.array([score[row["id"]] for row in rows])
            y = np.array([row["numbers"][column] for row in rows])
            draws = [spearman(x[i], y[i]) for i in instance_bootstrap_indices([row["instance"] for row in rows])]
            out[f"{key}={value}"] = {"n": len(rows), "value": spearman(x, y),
                                     "ci95": percentile_interval(np.array(draws))}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--meta-dir", required=True, help="RUN/meta written by `larev-hf meta`")
    parser.add_argument("--methods", required=True, help="comma list of scored methods")
    parser.add_argument("--human-report", help="human_report.json of `larev-hf human` on the fine-grained judgments")
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    result = {}
    for method in args.methods.split(","):
        table = suite_table(Path(args.meta_dir), method)
        if args.human_report:
            table["human"] = human_table(Path(args.human_report), method)
            table["human_new_supporting_by"] = human_breakdown(Path(args.human_report), method)
        result[method] = table
        print(f"== {method}")
        for label, entry in table["labels"].items():
            low, high = entry["gold_mean_ci95"]
            wins = " ".join(f"{f}={entry['win_rates'][f]:.2f}" for f in NO_NEW_INFORMATION if f in entry["win_rates"])
            print(f"  {label:13s} gold {entry['gold_mean']:+.3f} [{low:+.3f}, {high:+.3f}] "
                  f">+0.01 {entry['gold_above_0.01']:.2f} | {wins}")
        if "leak_gain" in table:
            print(f"  leak gain {table['leak_gain']['mean']:+.4f} {table['leak_gain']['ci95']}")
        print(f"  lowest win rate over a no-information family: {table['lowest_no_new_information_win_rate']}")
        for column, value in table.get("human", {}).items():
            print(f"  Spearman with {column}: {value}")
        for part, value in table.get("human_new_supporting_by", {}).items():
            print(f"  Spearman with new_supporting, {part} (n={value['n']}): {value['value']:+.3f} {value['ci95']}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
