"""How much training a bundle needs before per-explanation scores mean anything.

For each finished run (trained on a given number of rows), the run's evaluators are bundled (``EvaluatorBundle.from_run``,
no trust refusal) and score every explanation of a judged file (default: the shared SNLI acceptability judgments,
select half only) through ``EvaluatorBundle.score``, as a researcher's own explanations would be. Reported per run:
the trust check (gold-rationale accuracy vs chance, Gold − Vacuous), and for the raw score and the relative score
(score − the same evaluator's score of b as the rationale) and the label-centred score (score − the mean gold score of
its label on the run's own test split) the AUC of acceptable (share ≥ ½) vs unacceptable (share 0)
explanations across instances, Spearman ρ with the share, and within-instance pairwise agreement. Writes JSON and a PNG.

    python benchmarks/explanation_curve.py --runs 250=runs/curve/esnli-250 1000=runs/curve/esnli-1000 \\
        --method larev --judgments ../shared/data/human/snli_accept_train.jsonl \\
        --json benchmarks/results/explanation_curve.json --plot docs/img/explanation_curve.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from larev_hf.hub import EvaluatorBundle
from larev_hf.io import write_json
from larev_hf.meta import acceptability_auc, instance_half, load_judgments, pairwise_agreement, spearman


def agreement(scores: np.ndarray, human: np.ndarray, instances: list[str]) -> dict[str, float]:
    """AUC (acceptable vs unacceptable), Spearman ρ and within-instance pairwise agreement of one score column."""
    pairwise, n_pairs = pairwise_agreement(scores, human, instances)
    return {"auc": acceptability_auc(scores, human), "spearman": spearman(scores, human), "pairwise": pairwise,
            "n_pairs": n_pairs}


def measure(run_dir: str, method: str, records: list[dict], human: np.ndarray, instances: list[str]) -> dict:
    """The trust check and the raw / relative / label-centred scores' agreement of one run's bundle. Each
    explanation is scored with its instance's id, so an instance's explanations share one baseline b."""
    bundle = EvaluatorBundle.from_run(run_dir, method)
    inputs = [{**r, "id": r["instance"]} for r in records]
    scored = bundle.score([r["rationale"] for r in records], [r["label"] for r in records], inputs, progress=True,
                          relative=True)
    return {"run_dir": run_dir, "trust": bundle.config.trust, "test_label_means": bundle.config.label_offsets,
            "raw": agreement(scored.scores, human, instances),
            "relative": agreement(scored.relative, human, instances),
            "label_centred": agreement(scored.label_centred, human, instances),
            "by_label_mean_raw": {label: float(np.mean(scored.scores[[r["label"] == label for r in records]]))
                                  for label in sorted({r["label"] for r in records})}}


def plot(results: dict[str, dict], path: str, half: str) -> None:
    """AUC of the raw and the relative score against training rows (log axis), chance at 0.5."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(results, key=int)
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for kind, style in (("raw", "o-"), ("relative", "s--"), ("label_centred", "^:")):
        ax.plot([int(r) for r in rows], [results[r][kind]["auc"] for r in rows], style, label=f"{kind} score")
    ax.axhline(0.5, color="grey", lw=0.8, ls=":", label="chance")
    ax.set_xscale("log")
    ax.set_xlabel("training rows (e-SNLI)")
    ax.set_ylabel("AUC acceptable vs unacceptable")
    ax.set_title(f"Per-explanation scores vs training (SNLI judgments, {half} half)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, metavar="ROWS=RUN_DIR")
    parser.add_argument("--method", default="larev")
    parser.add_argument("--judgments", default="../shared/data/human/snli_accept_train.jsonl")
    parser.add_argument("--human-column", default="acceptable")
    parser.add_argument("--half", default="select", choices=("select", "held", "all"))
    parser.add_argument("--json", required=True)
    parser.add_argument("--plot", default=None)
    args = parser.parse_args(argv)
    records = load_judgments(args.judgments, "nli", [args.human_column])
    halves = instance_half([r["instance"] for r in records])
    records = [r for r in records if args.half == "all" or halves[r["instance"]] == args.half]
    human = np.array([r["numbers"][args.human_column] for r in records])
    instances = [r["instance"] for r in records]
    results = {}
    for entry in args.runs:
        rows, _, run_dir = entry.partition("=")
        results[rows] = measure(run_dir, args.method, records, human, instances)
        entry = results[rows]
        print(f"{rows:>6s} rows: " + "; ".join(
            f"{kind} AUC {entry[kind]['auc']:.3f} ρ {entry[kind]['spearman']:.3f} pairwise {entry[kind]['pairwise']:.3f}"
            for kind in ("raw", "relative", "label_centred")) + f"  | {entry['trust']}", flush=True)
    summary = {"judgments": args.judgments, "half": args.half, "n_explanations": len(records),
               "n_instances": len(set(instances)), "method": args.method, "runs": results,
               "command": "python benchmarks/explanation_curve.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    write_json(args.json, summary)
    if args.plot:
        plot(results, args.plot, args.half)
    return 0


if __name__ == "__main__":
    sys.exit(main())
