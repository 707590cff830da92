"""How often LAREV's leakage term t_leak is the answer a yes/no baseline states, per answer and per IG target.

On a finished StrategyQA run (its Φ_base, tokenizer and training baselines "…? yes." / "…? no."), this runs
Integrated Gradients with both targets (``log_prob``, the thesis's, and ``log_odds``) on the first N/2 training
baselines of each answer and counts those whose t_leak is the stated answer; it also counts the run's own
``leakage/train_terms.jsonl``. docs/method.md ("IG's target on yes/no data") quotes it.

    python benchmarks/ig_leakage_terms.py --run-dir runs/sqa-t5tiny --n 200 --json benchmarks/results/ig_leakage_terms_t5tiny.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import torch
from transformers import AutoTokenizer

from larev_hf.defaults import IG_TARGETS
from larev_hf.io import read_jsonl, write_json
from larev_hf.leakage import IGSettings, integrated_gradients_terms
from larev_hf.modeling import load_evaluator


def stated_answer_found(run_dir: Path, n: int) -> dict:
    model, _ = load_evaluator(run_dir / "models" / "phi_base")
    tokenizer = AutoTokenizer.from_pretrained(run_dir / "tokenizer")
    train = [row for _, row in read_jsonl(run_dir / "data" / "train.jsonl")]
    rows = [r for r in train if r["label"] == "yes"][: n // 2] + [r for r in train if r["label"] == "no"][: n // 2]
    out = {}
    for target in IG_TARGETS:
        terms = integrated_gradients_terms(model, tokenizer, [r["baseline"] for r in rows], [r["label"] for r in rows],
                                           IGSettings(target=target), candidates=[r["choices"] for r in rows])
        found = Counter(r["label"] for r, t in zip(rows, terms, strict=True) if t.text.lower() == r["label"])
        out[target] = {label: {"found": found[label], "of": sum(r["label"] == label for r in rows)}
                       for label in ("yes", "no")}
    return out


def run_terms(run_dir: Path) -> dict:
    """The run's own leakage terms: per stated answer, how many were that answer."""
    labels = {r["id"]: r["label"] for _, r in read_jsonl(run_dir / "data" / "train.jsonl")}
    terms = [row for _, row in read_jsonl(run_dir / "leakage" / "train_terms.jsonl")]
    return {label: {"found": sum(labels[t["id"]] == label and t["text"].lower() == label for t in terms),
                    "of": sum(labels[t["id"]] == label for t in terms)} for label in ("yes", "no")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--n", type=int, default=200, help="training baselines probed, half of each answer")
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.manual_seed(0)
    run_dir = Path(args.run_dir)
    result = {"run_dir": str(run_dir), "run_terms": run_terms(run_dir), "probe": stated_answer_found(run_dir, args.n)}
    print(json.dumps(result, indent=1))
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
