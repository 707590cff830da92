"""How far an n-gram model can tell shuffled words from an explanation: the word-order test of the finding *does not
read as an explanation* (the explanation as written against seeded orders of its content words,
:func:`larev_hf.hub.findings.word_order_margins`), with variants of its language model and of its statistic.

Variants: the model's corpus (the 9,842 training explanations, as the ``esnli`` bundle's calibration carries them,
or those and the training premises and hypotheses), the copy weight λ (0.2 as the calibration's ``explanation_lm``,
or 0), and what the written order is compared with (the likeliest of 32 other orders, as shipped, their 90% or 75%
quantile, median or mean). Rows: VARSuite's ``gold`` and ``shuffled`` of the first test examples, split into halves by
instance: the threshold is the select half's gold quantile at a budget of 1% or 2%, the shares are reported on both
halves. docs/findings.md ("What is still missing") cites it.

    python benchmarks/word_order_variants.py --data-dir ../shared/data --json benchmarks/results/word_order_variants.json

Internals: ``larev_hf.hub.findings.content_word_permutations``, the orders the shipped test compares with.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import load_examples
from larev_hf.hub.findings import content_word_permutations
from larev_hf.io import write_json
from larev_hf.meta import build_suite, instance_half
from larev_hf.methods import ExplanationLanguageModel, input_text

STATISTICS = {"max": np.max, "q90": lambda o: np.quantile(o, 0.9), "q75": lambda o: np.quantile(o, 0.75),
              "median": np.median, "mean": np.mean}
BUDGETS = (0.01, 0.02)


def margins(model: ExplanationLanguageModel, rows: list[dict[str, Any]], copy: float) -> dict[str, np.ndarray]:
    """Per statistic, EL(r, x) minus that statistic of EL over 32 seeded orders of r's content words (NaN: none)."""
    out = {name: np.full(len(rows), np.nan) for name in STATISTICS}
    for i, row in enumerate(rows):
        if orders := content_word_permutations(row["rationale"], 32, 0):
            source = input_text(row)
            own = model.mean_log_probability(row["rationale"], source, copy)
            others = np.array([model.mean_log_probability(text, source, copy) for text in orders])
            for name, statistic in STATISTICS.items():
                out[name][i] = own - statistic(others)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the shared data layout (esnli/ under it)")
    parser.add_argument("--examples", type=int, default=300, help="test examples whose VARSuite rows are scored")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    started = time.perf_counter()
    train = list(load_examples("esnli", args.data_dir / "esnli", "train"))
    test = list(load_examples("esnli", args.data_dir / "esnli", "test", max_examples=args.examples))
    rows = build_suite(test, families=["gold", "shuffled"], seed=0)
    family = np.array([row["family"] for row in rows])
    halves = instance_half([str(row["id"]) for row in rows])
    held = np.array([halves[str(row["id"])] == "held" for row in rows])
    explanations = [r["rationale"] for r in train]
    corpora = {"explanations": explanations,
               "explanations+inputs": explanations + [r["premise"] for r in train] + [r["hypothesis"] for r in train]}
    result: dict[str, Any] = {"examples": len(test), "variants": {}}
    for corpus, texts in corpora.items():
        model = ExplanationLanguageModel(texts, 3)
        for copy in (0.2, 0.0):
            for statistic, margin in margins(model, rows, copy).items():
                select_gold = margin[(family == "gold") & ~held]
                entry = {}
                for budget in BUDGETS:
                    at = np.quantile(np.where(np.isnan(select_gold), np.inf, select_gold), budget, method="lower")
                    named = margin <= at
                    entry[f"gold_budget_{budget}"] = {
                        "threshold": float(at),
                        "shuffled_select": round(float(named[(family == "shuffled") & ~held].mean()), 3),
                        "shuffled_held": round(float(named[(family == "shuffled") & held].mean()), 3),
                        "gold_held": round(float(named[(family == "gold") & held].mean()), 3)}
                key = f"{corpus}, copy {copy}, {statistic}"
                result["variants"][key] = entry
                print(f"{key:<40}" + "  ".join(f"{b}: shuffled held {e['shuffled_held']:.3f}, gold held {e['gold_held']:.3f}"
                                              for b, e in zip(BUDGETS, entry.values(), strict=True)), flush=True)
    result["seconds"] = round(time.perf_counter() - started, 1)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
