"""What each step of LAREV-NI's τ(r) does on one trained Φ_NI, scoring only (no retraining): the label's words masked,
then bare label statements dropped, then sentences that name nothing of the input dropped, then runs copied from the
input masked (docs/human.md, "New information (LAREV-NI)").

For each reading of r, on the run's test VARSuite (the first ``--examples`` examples) and on the fine-grained
judgments ``larev-hf human`` wrote for the run (``--judged``): the acceptance figures of ``new_information.py`` (the
gold's mean per gold label, its paired win rate over each family, the leak's gain) and Spearman ρ with the
judgments' "new information that supports the label". Run it on a Φ_NI trained without the copy and grounding steps
(``--input-copies keep --ungrounded-sentences keep``) to see what scoring alone gives, and on the ``esnli`` build's
run to see what its training adds.

    python benchmarks/new_information_tau.py --run-dir RUN --judged RUN/human-fine/judged.jsonl \\
        --examples 500 --json benchmarks/results/new_information_tau.json
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from new_information import suite_table
from scipy.stats import spearmanr
from transformers import AutoTokenizer

from larev_hf.io import read_jsonl, write_json, write_jsonl
from larev_hf.leakage import mask_token_of
from larev_hf.meta import build_suite
from larev_hf.methods import NewInformationInputs, new_information_scores
from larev_hf.modeling import load_evaluator

#: The readings of r, each adding one step of τ: (name, label statements dropped, copy run or None, ungrounded dropped).
READINGS = (("label_words", False, None, False), ("+label_statements", True, None, False),
            ("+ungrounded", True, None, True), ("+copies", True, 4, False), ("+ungrounded+copies", True, 4, True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True, help="a LAREV-NI run (models/phi_ni, tokenizer, data/test.jsonl)")
    parser.add_argument("--judged", required=True, help="judged.jsonl that `larev-hf human` wrote for the run "
                        "on the fine-grained judgments (with --human-columns new_supporting)")
    parser.add_argument("--examples", type=int, default=500, help="test examples of the VARSuite")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    run = Path(args.run_dir)
    records = [row for _, row in read_jsonl(run / "data" / "test.jsonl")][: args.examples]
    suite = build_suite(records, seed=0)
    judged = [row for _, row in read_jsonl(args.judged)]
    people = np.array([row["numbers"]["new_supporting"] for row in judged])
    tokenizer = AutoTokenizer.from_pretrained(run / "tokenizer")
    model, _ = load_evaluator(str(run / "models" / "phi_ni"))
    model.eval()
    mask = mask_token_of(tokenizer)
    out: dict = {"run": "RUN", "examples": len(records), "readings": {}}
    reference: dict[str, np.ndarray | None] = {"suite": None, "judged": None}
    with tempfile.TemporaryDirectory() as tmp:
        meta = Path(tmp)
        write_jsonl(meta / "suite.jsonl", suite)
        for name, drop_statements, copy_run, drop_ungrounded in READINGS:
            inputs = NewInformationInputs(mask, True, drop_statements, copy_run, drop_ungrounded)
            scored = {}
            for part, rows in (("suite", suite), ("judged", judged)):
                result = new_information_scores(model, tokenizer, inputs, "larev", "sum", args.batch_size, rows,
                                                [row["rationale"] for row in rows], reference[part])
                reference[part], scored[part] = result.log_p_baseline, result.scores
            write_jsonl(meta / "scores" / f"{name}.jsonl", [{"id": row["id"], "family": row["family"], "score": float(s)}
                                                           for row, s in zip(suite, scored["suite"], strict=True)])
            table = suite_table(meta, name)
            table["spearman_new_supporting"] = float(spearmanr(scored["judged"], people).statistic)
            out["readings"][name] = table
            lowest = {label: min(entry["win_rates"][f] for f in ("vacuous", "label_only", "circular",
                                                                   "hypothesis_copy", "input_copy", "leak"))
                      for label, entry in table["labels"].items()}
            print(f"{name:20s} lowest win rate per label {lowest}  leak gain {table['leak_gain']['mean']:+.4f}  "
                  f"Spearman {table['spearman_new_supporting']:+.3f}", flush=True)
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
