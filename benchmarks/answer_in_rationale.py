"""Split a run's test scores by whether the gold rationale states the answer verbatim.

Also reports how often the test split's gold rationales name the answer (or another answer choice), and how
often the Integrated Gradients leakage term t_leak of a training baseline lies inside its answer.

Tests the explanation of LAREV's CoS-E result (docs/reproduction.md): an evaluator taught to trust r over b
learns to read the answer off r, so it should rank a gold rationale near a leaky one when the gold rationale
contains the answer, and far below it when it does not.

    python benchmarks/answer_in_rationale.py --run-dir runs/cose-10ep-phi --json benchmarks/results/cose_answer_in_rationale.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from larev_hf.data import VARIANTS
from larev_hf.io import read_jsonl, write_json


def group_means(rows: list[dict], method: str) -> dict[str, float]:
    """Mean score per variant and the mean Gold − variant separations over ``rows``."""
    means = {variant: statistics.fmean(row[f"{method}/{variant}"] for row in rows) for variant in VARIANTS}
    return {**means, **{f"gold_minus_{v}": means["gold"] - means[v] for v in VARIANTS if v != "gold"}, "n": len(rows)}


def answer_shares(run: Path, test: list[dict]) -> dict[str, float]:
    """Share of test gold rationales naming the answer / another choice, and of training leakage terms inside the answer."""
    def names(text: str, answer: str) -> bool:
        return answer.lower() in text.lower()

    shares = {
        "test_gold_names_answer": statistics.fmean(names(r["rationale_gold"], r["label"]) for r in test),
        "test_gold_names_another_choice": statistics.fmean(
            any(names(r["rationale_gold"], c) for c in r["choices"] if c != r["label"]) for r in test),
    }
    terms_path = run / "leakage" / "train_terms.jsonl"
    if terms_path.is_file():
        train = {record["id"]: record for _, record in read_jsonl(run / "data" / "train.jsonl")}
        terms = [term for _, term in read_jsonl(terms_path)]
        shares["train_leakage_term_inside_answer"] = statistics.fmean(
            bool(set(t["text"].lower().split()) & set(train[t["id"]]["label"].lower().split())) for t in terms)
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--methods", default="rev,larev", help="comma-separated methods scored in the run")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    run = Path(args.run_dir)
    test = {record["id"]: record for _, record in read_jsonl(run / "data" / "test.jsonl")}
    scores = [row for _, row in read_jsonl(run / "scores" / "test_scores.jsonl")]
    groups: dict[str, list[dict]] = {"answer_in_gold_rationale": [], "answer_not_in_gold_rationale": []}
    for row in scores:
        example = test[row["id"]]
        stated = example["label"].lower() in example["rationale_gold"].lower()
        groups["answer_in_gold_rationale" if stated else "answer_not_in_gold_rationale"].append(row)
    result = {"run_dir": str(run), "shares": answer_shares(run, list(test.values())),
              **{method: {name: group_means(rows, method) for name, rows in groups.items() if rows}
                 for method in args.methods.split(",")}}
    print(json.dumps(result, indent=2))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
