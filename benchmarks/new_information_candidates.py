"""Candidate pointwise new-information scores from one trained LAREV run, without retraining: which reference term
leaves room, and what masking the label in r does (docs/human.md, "New information (LAREV-NI)").

Scores the run's test VARSuite (the first ``--examples`` examples) with the run's Φ_base and Φ_LA under each candidate:

- ``larev``: the thesis's LAREV, log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b);
- ``phi_la_masked_b``: log p_ΦLA(y | r ⊕ b̃) − log p_ΦLA(y | ∅ ⊕ b̃), the label masked in b (E2) and Φ_LA itself
  with no rationale as the reference;
- ``+label_masked``: the same with the label's words masked in r (τ);
- ``+copies_masked``: and every run of at least 4 words copied from the premise or hypothesis (or a whole one of
  them) masked too;
- ``phi_base_masked_b``: log p_ΦLA(y | τ(r) ⊕ b̃) − log p_Φbase(y | b̃).

Prints and writes, per candidate and gold label, the gold's mean and share above +0.01 nats, the leak's gain and the
gold's paired win rate over each family. (LAREV-NI, which retrains, is measured by ``new_information.py``.)

    python benchmarks/new_information_candidates.py --run-dir RUN --examples 200 \\
        --json benchmarks/results/new_information_candidates.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from larev_hf.io import read_jsonl, write_json
from larev_hf.leakage import mask_input_copies, mask_label_words, mask_token_of, masked_baseline
from larev_hf.meta import build_suite, paired_win_rate
from larev_hf.modeling import load_evaluator, score_labels

NEAR_ZERO = 0.01


def summarise(scores: np.ndarray, rows: list[dict]) -> dict:
    """Per gold label: the gold's mean and share above +0.01, and its paired win rate over each family; the leak's
    gain."""
    families = np.array([r["family"] for r in rows])
    gold = {r["id"]: s for r, s, f in zip(rows, scores, families, strict=True) if f == "gold"}
    out: dict = {"labels": {}}
    for label in sorted({r["gold_label"] for r in rows}):
        values = np.array([s for r, s in zip(rows, scores, strict=True)
                           if r["family"] == "gold" and r["gold_label"] == label])
        entry = {"gold_mean": float(values.mean()), "gold_above_0.01": float(np.mean(values > NEAR_ZERO)),
                 "win_rates": {}}
        for family in sorted(set(families.tolist()) - {"gold"}):
            pairs = [(gold[r["id"]], s) for r, s in zip(rows, scores, strict=True)
                     if r["family"] == family and r["gold_label"] == label and r["id"] in gold]
            if pairs:
                g, a = np.array(pairs).T
                entry["win_rates"][family] = float(paired_win_rate(g, a))
        out["labels"][label] = entry
    out["leak_gain"] = float(np.mean([s - gold[r["id"]] for r, s in zip(rows, scores, strict=True)
                                      if r["family"] == "gold_leaky"]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True, help="a finished `larev-hf run --method larev` directory")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    run = Path(args.run_dir)
    records = [row for _, row in read_jsonl(run / "data" / "test.jsonl")][: args.examples]
    rows = build_suite(records, seed=0)
    phi_la, tokenizer = load_evaluator(run / "models" / "phi_la")
    phi_base, _ = load_evaluator(run / "models" / "phi_base")
    mask = mask_token_of(tokenizer)
    labels = [r["label"] for r in rows]

    def log_p(model, texts: list[str]) -> np.ndarray:
        return score_labels(model, tokenizer, texts, labels, batch_size=64, progress=True).sum

    b = [r["baseline"] for r in rows]
    b_masked = [masked_baseline(r, mask) for r in rows]
    r_masked = [mask_label_words(r["rationale"], r, mask) for r in rows]
    r_copies = [mask_input_copies(text, r, mask, min_words=4) for text, r in zip(r_masked, rows, strict=True)]

    def joined(rationales: list[str], baselines: list[str]) -> list[str]:
        return [f"{x} {y}".strip() for x, y in zip(rationales, baselines, strict=True)]

    reference = log_p(phi_la, b_masked)
    candidates = {
        "larev": log_p(phi_la, joined([r["rationale"] for r in rows], b)) - log_p(phi_base, b),
        "phi_la_masked_b": log_p(phi_la, joined([r["rationale"] for r in rows], b_masked)) - reference,
        "+label_masked": (label_masked := log_p(phi_la, joined(r_masked, b_masked))) - reference,
        "+copies_masked": log_p(phi_la, joined(r_copies, b_masked)) - reference,
        "phi_base_masked_b": label_masked - log_p(phi_base, b_masked),
    }
    result = {"run_dir": "RUN", "examples": len(records), "candidates": {}}  # no machine's own path in a result
    for name, scores in candidates.items():
        summary = summarise(scores, rows)
        result["candidates"][name] = summary
        print(f"== {name} (leak gain {summary['leak_gain']:+.3f})")
        for label, entry in summary["labels"].items():
            wins = " ".join(f"{f}={w:.2f}" for f, w in entry["win_rates"].items())
            print(f"  {label:13s} gold {entry['gold_mean']:+.3f} >+0.01 {entry['gold_above_0.01']:.2f} | {wins}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
