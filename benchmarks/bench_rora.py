"""RoRA, REV, LAREV, LAS and RQ in RoRA's table 2 layout (StrategyQA, e-SNLI), and RoRA's leakage detector on real rationales.

(a) Detector (``--detector-only`` runs just this part, ~1 min on one CPU thread): RoRA's fastText-style
    detector with its default settings on the StrategyQA training rationales, (1) as released (facts) and
    (2) with "The answer is <label>." appended: training accuracy from the rationale alone, how many n-grams a
    rationale gets masked (and how often the "more than 8 above the threshold" rule fires), the share of
    characters masked, the top n-grams, and how often the appended label word is masked.
(b) Pipeline: ``larev-hf run --method all`` on StrategyQA (same data, backbone and variants for every
    metric), then a summary of the report: absolute scores per variant, Gold − variant separations with 95%
    intervals, evaluator / simulator accuracies, RoRA's masking and infilling statistics, stage timings; the
    numbers RoRA reports with T5-base (table 2) are printed beside ours for reference.

    python benchmarks/bench_rora.py --data-dir ../shared/data/strategyqa --output-dir runs/strategyqa-all \\
        --results benchmarks/results/rora_strategyqa.json
    python benchmarks/bench_rora.py --detector-only --data-dir ../shared/data/strategyqa \\
        --results benchmarks/results/rora_detector_strategyqa.json
    python benchmarks/bench_rora.py --dataset esnli --data-dir ../shared/data/esnli --max-train-examples 2000 \\
        --max-eval-examples 1000 --output-dir runs/esnli-all --results benchmarks/results/rora_esnli.json
    python benchmarks/bench_rora.py --method rora --rora.classifier minilm --data-dir ../shared/data/strategyqa \\
        --output-dir runs/strategyqa-rora-minilm --results benchmarks/results/rora_minilm_strategyqa.json

A rerun resumes the run directory. Torch threads are fixed (``--threads``) and recorded with the load average.

Internals: ``larev_hf.rora.settings``'s ``rora_threshold_type``: the script's ``--rora.threshold`` flag parses its value as
RoRA's own setting does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from larev_hf.data import LEAKY_TEMPLATE, load_examples
from larev_hf.io import read_json, write_json
from larev_hf.pipeline import Run, RunConfig
from larev_hf.rora import DetectorSettings, LeakageDetector
from larev_hf.rora.settings import rora_threshold_type

#: RoRA table 2 (StrategyQA, T5-base evaluators; LAS undefined = None).
PAPER_TABLE_2 = {
    "rora": {"gold": 0.115, "gold_leaky": 0.119, "vacuous": 0.043, "leaky": 0.038},
    "rev": {"gold": -0.038, "gold_leaky": 0.145, "vacuous": -0.005, "leaky": 0.147},
    "las": {"gold": 0.024, "gold_leaky": None, "vacuous": 0.131, "leaky": None},
    "rq": {"gold": 0.138, "gold_leaky": 0.406, "vacuous": 0.376, "leaky": 0.406},
}
VARIANTS = ("gold", "gold_leaky", "vacuous", "leaky")


def detector_statistics(records: list[dict[str, Any]], settings: DetectorSettings, leaky: bool) -> dict[str, Any]:
    """Fit the detector on ``records`` (with the label sentence appended if ``leaky``) and describe its masking."""
    if leaky:
        records = [{**r, "rationale": f"{r['rationale']} {LEAKY_TEMPLATE.format(label=r['label'])}"} for r in records]
    start = time.perf_counter()
    detector = LeakageDetector.fit(records, settings)
    seconds = time.perf_counter() - start
    selected = [detector.select(r["rationale"]) for r in records]
    masked = [detector.mask(r["rationale"], r["id"]) for r in records]
    stats: dict[str, Any] = {
        "n_examples": len(records),
        "fit_seconds": seconds,
        "train_accuracy_rationale_only": detector.history["train_accuracy"],
        "mean_masked_ngrams": float(np.mean([len(s) for s in selected])),
        "share_all_above_threshold_rule": float(np.mean([len(s) > settings.top_k for s in selected])),
        "mean_spans": float(np.mean([len(m.spans) for m in masked])),
        "masked_char_share": float(np.mean([sum(e - s for s, e in m.spans) / max(len(m.text), 1) for m in masked])),
        "attribution_quantiles": dict(zip(("p50", "p90", "p99"),
                                          map(float, np.quantile(detector.attributions[1:], [0.5, 0.9, 0.99])), strict=True)),
        "top_ngrams": detector.top_ngrams(15),
    }
    if leaky:
        covered = []
        for record, rationale in zip(records, masked, strict=True):
            start_of_label = record["rationale"].rindex(f" {record['label']}.") + 1
            covered.append(any(s <= start_of_label < e for s, e in rationale.spans))
        stats["label_word_masked_share"] = float(np.mean(covered))
        labels = sorted({r["label"] for r in records})
        stats["label_ngram_scores"] = {key: detector.score(key) for label in labels
                                       for key in (label, f"is {label}", f"{label} .")}
    return stats


def run_summary(run_dir: Path) -> dict[str, Any]:
    """The comparable figures of a finished ``--method all`` run."""
    report = read_json(run_dir / "report.json")
    methods = {
        name: {key: entry[key] for key in ("absolute", "separations", "ci95", "win_rate") if key in entry}
        | ({"groups": entry["groups"]} if "groups" in entry else {}) | {"unit": entry.get("unit", "nats")}
        for name, entry in report["methods"].items()
    }
    rora = None
    if (run_dir / "rora").is_dir():
        rora = {name: read_json(run_dir / "rora" / f"{name}_summary.json") for name in ("masked", "counterfactuals")}
        detector = read_json(run_dir / "rora" / "detector_summary.json")
        rora["detector"] = {"train_accuracy": detector["train_accuracy"], "top_ngrams": detector["top_ngrams"][:15]}
    return {"n_examples": report["n_examples"], "methods": methods, "accuracy": report["accuracy"],
            "rora": rora, "timings": report["timings"], "settings": report["settings"]}


def format_table(methods: dict[str, Any], paper_table: dict[str, dict[str, float | None]] | None = None) -> str:
    """Absolute scores per variant (with the paper's beside them when given) and the SUM of separations."""
    def cell(value: float | None) -> str:
        return "   n/a" if value is None else f"{value:+.3f}"

    width = 22 if paper_table else 12
    lines = [f"{'':8s}" + "".join(f"{v:>{width}s}" for v in (*VARIANTS, "SUM"))]
    for name, entry in methods.items():
        paper = (paper_table or {}).get(name, {})
        cells = [cell(entry["absolute"][v]) + (f" (paper {cell(paper.get(v)) if paper else '   -  '})" if paper_table else "")
                 for v in VARIANTS]
        cells.append(cell(entry["separations"]["sum"]))
        lines.append(f"{name.upper():8s}" + "".join(f"{c:>{width}s}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="strategyqa", help="a dataset kind of `larev-hf run` (strategyqa, esnli, ...)")
    parser.add_argument("--data-dir", required=True, help="the dataset's folder of ../shared/data")
    parser.add_argument("--method", default="all", help="the run's --method (a comma-separated list or all)")
    parser.add_argument("--rora.classifier", dest="rora_classifier", default=None, help="RoRA's classifier variant on this encoder (e.g. minilm)")
    parser.add_argument("--rora.top-k", dest="rora_top_k", type=int, default=2)
    parser.add_argument("--train-rationale", default="gold", help="the variant every evaluator trains on (RoRA §4's protocol)")
    parser.add_argument("--output-dir", default="runs/strategyqa-all", help="run directory (resumed if it exists)")
    parser.add_argument("--results", default="benchmarks/results/rora_strategyqa.json")
    parser.add_argument("--detector-only", action="store_true", help="only part (a)")
    parser.add_argument("--backbone", default="t5-tiny")
    parser.add_argument("--num-train-epochs", type=float, default=None)
    parser.add_argument("--max-train-examples", type=int, default=None)
    parser.add_argument("--max-eval-examples", type=int, default=None)
    parser.add_argument("--rora.threshold", dest="rora_threshold", type=rora_threshold_type, default=0.001,
                        help="a number or 'auto' (RoRA appendix C.2's tuning rule)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    results: dict[str, Any] = {
        "environment": {"python": platform.python_version(), "torch": torch.__version__, "threads": args.threads,
                        "load_average": os.getloadavg(), "machine": platform.machine()},
    }
    train = load_examples(args.dataset, args.data_dir, "train", max_examples=args.max_train_examples).to_list()
    settings = DetectorSettings(threshold=args.rora_threshold, top_k=args.rora_top_k, seed=args.seed)
    results["detector"] = {"gold": detector_statistics(train, settings, leaky=False),
                           "gold_with_label_sentence": detector_statistics(train, settings, leaky=True)}
    for name, stats in results["detector"].items():
        print(f"detector on {name}: accuracy from r alone {stats['train_accuracy_rationale_only']:.3f}, "
              f"{stats['mean_masked_ngrams']:.1f} n-grams / {stats['mean_spans']:.1f} spans masked per rationale "
              f"({100 * stats['masked_char_share']:.0f}% of characters; all-above-threshold rule on "
              f"{100 * stats['share_all_above_threshold_rule']:.0f}%)"
              + (f", label word masked in {100 * stats['label_word_masked_share']:.1f}%" if "label_word_masked_share" in stats
                 else ""))
    if not args.detector_only:
        config = RunConfig(method=args.method, dataset=args.dataset, data_dir=args.data_dir, backbone=args.backbone,
                           num_train_epochs=args.num_train_epochs, max_train_examples=args.max_train_examples,
                           max_eval_examples=args.max_eval_examples, seed=args.seed, train_rationale=args.train_rationale,
                           **{"rora.threshold": args.rora_threshold, "rora.top_k": args.rora_top_k,
                              "rora.classifier": args.rora_classifier})
        paper_table = PAPER_TABLE_2 if args.dataset == "strategyqa" else None
        start = time.perf_counter()
        Run(config, args.output_dir).execute()
        results["pipeline"] = {**run_summary(Path(args.output_dir)), "wall_seconds": time.perf_counter() - start,
                               "paper_table_2": paper_table}
        print(format_table(results["pipeline"]["methods"], paper_table))
        print(json.dumps(results["pipeline"]["accuracy"], indent=1))
    write_json(args.results, results)
    print(f"results: {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
