"""Is a contrastive score grounded where LAREV is not? (the design "s(r | x) − s(r | x′)")

For the first ``--n`` test examples of a trained run, every VARSuite row of the chosen families (``meta/suite.jsonl``
of ``larev-hf meta``) is scored three ways with the run's bundle of ``--method`` (nothing is retrained):

- raw: s(r | x) = the method's score with this instance's baseline b_x;
- contrast: s(r | x) − mean_k s(r | x′_k), where x′_1..x′_K are other test instances with the *same gold label* (drawn
  by seed), each with its own baseline: what a rationale earns on its own input beyond what it earns on inputs it is
  not about (a label-only sentence or another instance's rationale earns the same everywhere);
- raw + contrast.

Prints and writes, per score and family, the AUC of gold against the family (overall and per gold label).

    python benchmarks/contrastive_grounding.py --run-dir runs/g/esnli-full --method larev --n 600 \\
        --json benchmarks/results/contrastive_grounding.json
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

from larev_hf.hub import EvaluatorBundle
from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import auc

FAMILIES = ("gold", "vacuous", "leak", "input_copy", "hypothesis_copy", "off_topic", "shuffled", "label_only")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--method", default="larev")
    parser.add_argument("--n", type=int, default=600, help="the first N test examples")
    parser.add_argument("--k", type=int, default=3, help="other same-label inputs per row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    run = Path(args.run_dir)
    records = [row for _, row in read_jsonl(run / "data" / "test.jsonl")][: args.n]
    by_id = {r["id"]: r for r in records}
    rows = [row for _, row in read_jsonl(run / "meta" / "suite.jsonl") if row["id"] in by_id and row["family"] in FAMILIES]
    same_label: dict[str, list[str]] = {}
    for r in records:
        same_label.setdefault(r["label"], []).append(r["id"])
    rng = random.Random(args.seed)
    others = {r["id"]: rng.sample([i for i in same_label[r["label"]] if i != r["id"]], args.k) for r in records}
    bundle = EvaluatorBundle.from_run(run, args.method)

    def score(contexts: list[str]) -> np.ndarray:
        inputs = [by_id[c] for c in contexts]
        return bundle.score([row["rationale"] for row in rows], [row["label"] for row in rows], inputs,
                            baselines=[by_id[c]["baseline"] for c in contexts], progress=True).scores

    raw = score([row["id"] for row in rows])
    elsewhere = np.mean([score([others[row["id"]][k] for row in rows]) for k in range(args.k)], axis=0)
    columns = {"raw": raw, "contrast": raw - elsewhere, "raw+contrast": 2 * raw - elsewhere}
    out: dict[str, dict] = {}
    for name, values in columns.items():
        by_family = {f: {row["id"]: v for row, v in zip(rows, values, strict=True) if row["family"] == f}
                     for f in FAMILIES}
        gold = by_family["gold"]
        out[name] = {}
        for family in FAMILIES[1:]:
            ids = list(by_family[family])
            entry = {"auc": auc([gold[i] for i in ids], [by_family[family][i] for i in ids]), "by_label": {}}
            for label in sorted(same_label):
                lab = [i for i in ids if by_id[i]["label"] == label]
                entry["by_label"][label] = auc([gold[i] for i in lab], [by_family[family][i] for i in lab])
            out[name][family] = entry
        print(f"{name:13s} " + "  ".join(f"{f} {out[name][f]['auc']:.3f}" for f in FAMILIES[1:]), flush=True)
    summary = {"run_dir": args.run_dir, "method": args.method, "n_examples": len(records), "k": args.k,
               "scores": out, "command": "python benchmarks/contrastive_grounding.py "
               + " ".join(argv if argv is not None else sys.argv[1:])}
    write_json(args.json, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
