"""RoRA's tables 2 and 3 on StrategyQA (Jiang et al., ACL 2024, §4.1) for trained runs, beside the paper's numbers.

For each run (``larev-hf run --dataset strategyqa`` then ``larev-hf human --judgments
../shared/data/human/strategyqa_support_select.jsonl --human-columns support``), this collects

- the evaluators' accuracy on the test split with the gold facts and with the vacuous baseline alone, against the
  majority class (an evaluator that has not learned StrategyQA gives noise per rationale);
- the synthetic columns of table 2: each method's mean score of gold, gold-leaky, vacuous and leaky rationales on the
  test split, and the paired question-bootstrap intervals of {gold, gold-leaky} − {vacuous, leaky};
- the generated columns of table 2 and table 3 from the human report: the mean per generator, Kendall τ of the order
  against people's (its interval and P(τ = 1)), Spearman and Pearson per rationale, and the rank partial correlation
  with people given length.

    python benchmarks/strategyqa_study.py --runs minilm=runs/sqa/minilm-800-odds --json benchmarks/results/sqa.json

It prints markdown tables and writes every figure to ``--json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from larev_hf.io import read_json, read_jsonl, write_json
from larev_hf.meta import load_judgments
from larev_hf.scores import bootstrap_ci

#: RoRA's table 2 (T5-base evaluators; RoRA_DeBERTa with DeBERTa-v3-large) and table 3 (per-rationale correlation).
PAPER = {
    "RoRA": {"gold": 0.115, "gold_leaky": 0.119, "vacuous": 0.043, "leaky": 0.038,
             "gpt-4": 0.283, "gpt-3.5": 0.253, "llama2-7b": 0.100, "flan-t5-large": 0.061, "spearman": 0.37,
             "pearson": 0.36},
    "RoRA_DeBERTa": {"gold": 0.381, "gold_leaky": 0.348, "vacuous": 0.026, "leaky": 0.024,
                     "gpt-4": 0.474, "gpt-3.5": 0.459, "llama2-7b": 0.232, "flan-t5-large": 0.132},
    "REV": {"gold": -0.038, "gold_leaky": 0.145, "vacuous": -0.005, "leaky": 0.147,
            "gpt-4": -0.066, "gpt-3.5": -0.083, "llama2-7b": -0.035, "flan-t5-large": -0.013, "spearman": 0.03,
            "pearson": 0.05},
    "LAS": {"gold": 0.024, "gold_leaky": None, "vacuous": 0.131, "leaky": None,
            "gpt-4": 0.161, "gpt-3.5": 0.215, "llama2-7b": 0.084, "flan-t5-large": 0.027},
    "RQ": {"gold": 0.138, "gold_leaky": 0.406, "vacuous": 0.376, "leaky": 0.406,
           "gpt-4": 0.316, "gpt-3.5": 0.311, "llama2-7b": 0.121, "flan-t5-large": 0.071},
    "people": {"gpt-4": 2.69, "gpt-3.5": 2.32, "llama2-7b": 1.16, "flan-t5-large": 0.39},
}
GENERATORS = ("gpt-4", "gpt-3.5", "llama2-7b", "flan-t5-large")
VARIANTS = ("gold", "gold_leaky", "vacuous", "leaky")
CONTRASTS = [(high, low) for high in ("gold", "gold_leaky") for low in ("vacuous", "leaky")]


def synthetic_columns(run_dir: Path, n_boot: int, seed: int) -> dict:
    """Each method's mean per variant on the test split and the paired bootstrap intervals of the four contrasts."""
    rows = [row for _, row in read_jsonl(run_dir / "scores" / "test_scores.jsonl")]
    methods = sorted({key.split("/")[0] for key in rows[0] if key.endswith("/gold")})
    out = {}
    for method in methods:
        if not all(f"{method}/{v}" in rows[0] for v in VARIANTS):
            continue
        values = {v: np.array([row[f"{method}/{v}"] for row in rows], dtype=float) for v in VARIANTS}
        if not all(np.isfinite(column).all() for column in values.values()):
            continue  # accuracy-based methods (LAS, RQ) score groups, not single rationales
        entry = {"means": {v: float(values[v].mean()) for v in VARIANTS}, "contrasts": {}}
        for high, low in CONTRASTS:  # one seed: every contrast resamples the same questions (paired)
            difference = values[high] - values[low]
            low_ci, high_ci = bootstrap_ci(difference, n_boot=n_boot, seed=seed)
            entry["contrasts"][f"{high}-{low}"] = {"value": float(difference.mean()), "ci95": [low_ci, high_ci],
                                                   "excludes_0": bool(low_ci > 0 or high_ci < 0)}
        out[method] = entry
    return out


def collect(name: str, run_dir: Path, report_name: str, n_boot: int, seed: int) -> dict:
    report = read_json(run_dir / "report.json")
    human = read_json(run_dir / "human" / report_name / "human_report.json")
    support = human["human"]["support"]
    return {
        "name": name, "run_dir": str(run_dir), "backbone": human["backbone"],
        "accuracy": report["accuracy"], "majority_class": report["majority_class"],
        "synthetic": synthetic_columns(run_dir, n_boot, seed),
        "absolute": {method: entry["absolute"] for method, entry in report["methods"].items()},
        "titles": {method: entry["title"] for method, entry in human["metrics"].items()},
        "generators": support["generators"], "annotators": support.get("annotators"),
    }


def worst_ranked(run_dir: Path, report_name: str, judgments: Path, metric: str, n: int) -> list[dict]:
    """The ``n`` judged rationales whose rank under ``metric`` is farthest from people's (percentile ranks over the
    file): the ones people rate highest that the metric ranks low, and the reverse."""
    from scipy.stats import rankdata

    by_key = {row["id"]: row for row in load_judgments(judgments, "yesno", ["support"])}  # ids "<instance>#<k>"
    scores = {row["id"]: row["score"] for _, row in read_jsonl(run_dir / "human" / report_name / "scores"
                                                                / f"{metric}.jsonl")}
    keys = list(scores)
    metric_rank = rankdata([scores[k] for k in keys]) / len(keys)
    human_rank = rankdata([by_key[k]["numbers"]["support"] for k in keys]) / len(keys)
    order = np.argsort(-np.abs(metric_rank - human_rank))[:n]
    return [{"id": keys[i], "source": by_key[keys[i]]["source"], "support": by_key[keys[i]]["numbers"]["support"],
             "score": scores[keys[i]], "metric_percentile": float(metric_rank[i]),
             "human_percentile": float(human_rank[i]), "question": by_key[keys[i]]["question"],
             "answer": by_key[keys[i]]["label"], "rationale": by_key[keys[i]]["rationale"]} for i in order]


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def interval(entry: dict | None) -> str:
    if not entry or entry.get("value") is None:
        return "—"
    low, high = entry["ci95"] if entry.get("ci95") else (None, None)
    return f"{entry['value']:+.3f}" + (f" [{low:+.3f}, {high:+.3f}]" if low is not None else "")


def render(results: list[dict]) -> str:
    lines = []
    for result in results:
        accuracy, majority = result["accuracy"], result["majority_class"]
        lines += [f"## {result['name']} ({result['backbone']}, `{result['run_dir']}`)", "",
                  f"Majority class '{majority['label']}': {majority['accuracy']:.1%}. Accuracy on the test split: "
                  + "; ".join(f"{model} {', '.join(f'{v} {a:.1%}' for v, a in by.items())}"
                              for model, by in accuracy.items()), "",
                  "| | gold | gold-leaky | vacuous | leaky | gold − vacuous | gold − leaky | gold-leaky − vacuous | "
                  "gold-leaky − leaky |", ("| --- " * 9 + "|")]
        for method, entry in result["synthetic"].items():
            contrasts = [interval(entry["contrasts"][f"{h}-{lo}"]) for h, lo in
                         (("gold", "vacuous"), ("gold", "leaky"), ("gold_leaky", "vacuous"), ("gold_leaky", "leaky"))]
            lines.append(f"| {method} | " + " | ".join(fmt(entry["means"][v]) for v in VARIANTS) + " | "
                         + " | ".join(contrasts) + " |")
        figures = result["generators"]
        lines += ["", "| | " + " | ".join(GENERATORS) + " | τ [95%] | P(τ = 1) | Spearman ρ [95%] | Pearson r | "
                  "partial ρ given length [95%] |", "| --- " * (len(GENERATORS) + 6) + "|",
                  "| people | " + " | ".join(f"{figures['people'][g]:.2f}" for g in GENERATORS) + " | | | | | |"]
        for method, entry in figures["metrics"].items():
            tau_ci = entry.get("kendall_tau_ci95")
            tau = fmt(entry["kendall_tau"], 2) + (f" [{tau_ci[0]:+.2f}, {tau_ci[1]:+.2f}]" if tau_ci else "")
            lines.append(f"| {result['titles'].get(method, method)} | "
                         + " | ".join(fmt(entry["means"][g]) for g in GENERATORS)
                         + f" | {tau} | {entry.get('share_tau_1', float('nan')):.2f} | {interval(entry['spearman'])} | "
                         f"{interval(entry['pearson'])} | {interval(entry.get('partial_spearman_given_length'))} |")
        lines.append("")
    lines += ["## RoRA's paper (T5-base; whole study)", "",
              "| | gold | gold-leaky | vacuous | leaky | " + " | ".join(GENERATORS) + " | Spearman | Pearson |",
              "| --- " * (7 + len(GENERATORS)) + "|"]
    for name, entry in PAPER.items():
        lines.append(f"| {name} | " + " | ".join(fmt(entry.get(k)) if k in entry else ""
                                                  for k in (*VARIANTS, *GENERATORS, "spearman", "pearson")) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="comma list of NAME=RUN_DIR")
    parser.add_argument("--human-report", default="strategyqa_support_select",
                        help="the human report's directory under RUN_DIR/human/")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument("--worst", help="METRIC:N: the first run's N judged rationales that METRIC ranks farthest from "
                        "people")
    parser.add_argument("--judgments", default="../shared/data/human/strategyqa_support_select.jsonl")
    args = parser.parse_args()
    results = []
    for item in args.runs.split(","):
        name, _, run_dir = item.partition("=")
        results.append(collect(name, Path(run_dir), args.human_report, args.n_boot, args.seed))
    print(render(results))
    if args.worst:
        metric, _, n = args.worst.partition(":")
        rows = worst_ranked(Path(results[0]["run_dir"]), args.human_report, Path(args.judgments), metric, int(n or 5))
        results[0]["worst_ranked"] = {"metric": metric, "rows": rows}
        print(f"### {results[0]['name']}: the rationales {metric} ranks farthest from people\n")
        for row in rows:
            print(f"- {row['source']}, people {row['support']:+.2f} (percentile {row['human_percentile']:.2f}), "
                  f"{metric} {row['score']:+.3f} (percentile {row['metric_percentile']:.2f}): Q: {row['question']} "
                  f"A: {row['answer']}. R: {row['rationale']}")
    if args.json:
        write_json(args.json, {"runs": results, "paper": PAPER, "command": "python benchmarks/strategyqa_study.py "
                               + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
                                          if v is not None and k != "json")})
        print(json.dumps({"written": args.json}))


if __name__ == "__main__":
    main()
