"""REV and LAREV with encoder-classifier evaluators, next to the warm-started seq2seq of the same run.

Reads a finished ``larev-hf run`` directory (its training/test records, LAREV's environments E1-E3, and E4/E5 when
the run had ``--rationale-environments``), trains Φ_base (b → y), Φ (r ⊕ b → y) and Φ_LA (ERM + λ_IRM · IRMv1 over the
same environment groups, started from Φ) as MiniLM-L6 multiple-choice classifiers
(:mod:`larev_hf.modeling.choice_classifier`), and scores the run's four test variants: REV(r) = log p_Φ(y | r ⊕ b) −
log p_Φbase(y | b), LAREV(r) with Φ_LA. The environments (IG's leakage terms t_leak) are the run's, so only the
evaluator family differs. Writes separations with 95% bootstrap intervals, evaluator accuracies, train/score
throughput and the run's own seq2seq figures to one JSON file.

    OMP_NUM_THREADS=1 python benchmarks/choice_classifier.py runs/pretrained/cose-minilm2minilm \\
        --json benchmarks/results/choice_classifier_cose.json

Internals: ``larev_hf.modeling.choice_classifier``, ``larev_hf.training.choice_classifier`` and
``larev_hf.training.leakage_aware``'s ``environment_rows``: it trains the encoder-classifier evaluators step by step,
outside a run, to compare them with the seq2seq ones on the same environments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from larev_hf.data import VARIANTS
from larev_hf.io import read_json, read_jsonl, write_json
from larev_hf.leakage import ENVIRONMENTS, RATIONALE_ENVIRONMENTS
from larev_hf.modeling import get_input_format
from larev_hf.modeling.choice_classifier import build_choice_classifier, choice_rows, gold_log_probs
from larev_hf.scores import summarize_variants
from larev_hf.training import IRMArguments, TrainSettings
from larev_hf.training.choice_classifier import train_choice_classifier
from larev_hf.training.leakage_aware import environment_rows


def records(run_dir: Path, split: str) -> list[dict]:
    return [row for _, row in read_jsonl(run_dir / "data" / f"{split}.jsonl")]


def train(name: str, out: Path, make_rows, settings: TrainSettings, timings: dict, init: Path | None = None,
          **kwargs) -> None:
    """Train ``models/<name>`` unless it exists; record rows/s (rows × epochs per second)."""
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    target = out / "models" / name
    if target.exists():
        return
    if init is None:
        model, tokenizer = build_choice_classifier(seed=settings.seed)
    else:
        model, tokenizer = AutoModelForMultipleChoice.from_pretrained(init), AutoTokenizer.from_pretrained(init)
    rows = make_rows(tokenizer)
    start = time.perf_counter()
    train_choice_classifier(model, tokenizer, rows, target, settings, **kwargs)
    seconds = time.perf_counter() - start
    timings[name] = {"seconds": seconds, "rows": len(rows), "rows_per_second": len(rows) * settings.num_train_epochs / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--output-dir", type=Path, default=None, help="default: <run_dir>/choice_classifier")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--num-train-epochs", type=float, default=3.0)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lambda-irm", type=float, default=0.1)
    parser.add_argument("--groups-per-batch", type=int, default=4)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--max-train-examples", type=int, default=None, help="the run's first N (a quick look)")
    parser.add_argument("--max-test-examples", type=int, default=None)
    args = parser.parse_args()
    run_dir, out = args.run_dir, args.output_dir or args.run_dir / "choice_classifier"
    config = read_json(run_dir / "run_config.json")
    fmt = get_input_format(config["input_format"])
    settings = TrainSettings(learning_rate=args.learning_rate, num_train_epochs=args.num_train_epochs,
                             batch_size=args.batch_size, seed=config["seed"], progress=False)
    train_records = records(run_dir, "train")[: args.max_train_examples]
    test = records(run_dir, "test")[: args.max_test_examples]
    names = ENVIRONMENTS + (RATIONALE_ENVIRONMENTS if config.get("rationale_environments") else ())
    timings_path = out / "timings.json"
    timings = read_json(timings_path) if timings_path.is_file() else {}

    def plain(make_input):
        return lambda tok: choice_rows(tok, [make_input(r) for r in train_records], [r["choices"] for r in train_records],
                                       [r["label"] for r in train_records], ids=[r["id"] for r in train_records])

    def phi_la_rows(tok):  # read when Φ_LA trains: the run may still be building its environments
        env_rows = [row for _, row in read_jsonl(run_dir / "leakage" / "train_environments.jsonl")][: len(train_records)]
        rows = environment_rows(train_records, env_rows, fmt, names)
        return choice_rows(tok, [row["source"] for row in rows], [row["record"]["choices"] for row in rows],
                           [row["label"] for row in rows], ids=[row["record"]["id"] for row in rows],
                           environment=[row["environment"] for row in rows], group_id=[row["group_id"] for row in rows])

    train("phi_base", out, plain(lambda r: fmt.baseline_input(r["baseline"])), settings, timings)
    train("phi", out, plain(lambda r: fmt.rationale_input(r["rationale"], r["baseline"])), settings, timings)
    train("phi_la", out, phi_la_rows, settings, timings, init=out / "models" / "phi",
          arguments=IRMArguments(lambda_irm=args.lambda_irm, lambda_probe=0.0, token_reduction="sum"),  # the library's NLL
          groups_per_batch=args.groups_per_batch)
    write_json(timings_path, timings)

    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out / "models" / "phi_base")
    choices, labels, ids = [r["choices"] for r in test], [r["label"] for r in test], [r["id"] for r in test]
    start, n_scored = time.perf_counter(), 0
    base_model = AutoModelForMultipleChoice.from_pretrained(out / "models" / "phi_base")
    base, predicted = gold_log_probs(base_model, tokenizer, [fmt.baseline_input(r["baseline"]) for r in test],
                                     choices, labels, ids)
    n_scored += len(test)
    gold_index = [list(c).index(y) for c, y in zip(choices, labels, strict=True)]
    accuracy = {"phi_base": {"baseline": float((predicted == gold_index).mean())}}
    methods = {}
    for method, model_name in (("rev", "phi"), ("larev", "phi_la")):
        model = AutoModelForMultipleChoice.from_pretrained(out / "models" / model_name)
        scores, accuracy[model_name] = {}, {}
        for variant in VARIANTS:
            inputs = [fmt.rationale_input(r[f"rationale_{variant}"], r["baseline"]) for r in test]
            with_r, predicted = gold_log_probs(model, tokenizer, inputs, choices, labels, ids)
            n_scored += len(test)
            scores[variant] = with_r - base
            accuracy[model_name][variant] = float((predicted == gold_index).mean())
        summary = summarize_variants(scores, n_boot=args.n_boot, seed=config["seed"])
        methods[method] = {k: summary[k] for k in ("absolute", "separations", "ci95", "win_rate")}
    score_seconds = time.perf_counter() - start
    # the run's own REV/LAREV figures, when it has finished (its RoRA/LAS stages may still be running)
    seq2seq = read_json(run_dir / "report.json") if (run_dir / "report.json").is_file() else {"methods": {}}
    results = {
        "command": "python benchmarks/choice_classifier.py " + " ".join(sys.argv[1:]),
        "run_dir": str(run_dir), "dataset": config["dataset"], "n_train": len(train_records), "n_test": len(test),
        "environments": list(names),
        "settings": {k: v for k, v in vars(args).items() if k not in ("run_dir", "output_dir", "json")},
        "choice_classifier": {"methods": methods, "accuracy": accuracy, "train": timings,
                              "score_examples_per_second": n_scored / score_seconds},
        "seq2seq": {"backbone": config["backbone"],
                    "methods": {m: seq2seq["methods"][m] for m in ("rev", "larev") if m in seq2seq["methods"]},
                    "accuracy": {k: v for k, v in seq2seq.get("accuracy", {}).items() if k in ("phi_base", "phi", "phi_la")},
                    "stage_seconds": {k: v for k, v in seq2seq.get("timings", {}).items()
                                      if k in ("phi_base", "phi", "ig", "phi_la")}},
    }
    write_json(args.json, results)
    print(json.dumps({m: e["separations"] for m, e in methods.items()}, indent=2))
    print(json.dumps(accuracy, indent=2))


if __name__ == "__main__":
    main()
