"""Score an LLM's (or anyone's) free-text rationales with a trained evaluator bundle, through ``evaluate``.

The evaluator is a named default (``esnli``: from the cache, its published Hub repo or built on first use), a directory
written by ``larev-hf export`` (or ``EvaluatorBundle.save_pretrained``) or a Hub repo id; the script loads the ``evaluate`` module of the bundle's metric (``metrics/larev``,
``metrics/rev`` or ``metrics/rora`` of this repository) with ``evaluate.load(..., evaluator=...)``.

Usage:

    # the library's default e-SNLI evaluator (built into the cache on first use)
    python examples/score_llm_rationales.py --evaluator esnli --input my_llm_rationales.jsonl --output_dir runs/llm-scores

    # a bundle exported from a run (see docs/hub.md for the whole walk-through)
    python examples/score_llm_rationales.py --evaluator bundles/larev-esnli \\
        --input my_llm_rationales.jsonl --output_dir runs/llm-scores

    # a bundle on the Hub, on a GPU, with bigger batches
    python examples/score_llm_rationales.py --evaluator user/larev-esnli-t5-large --device cuda \\
        --batch_size 128 --input my_llm_rationales.jsonl --output_dir runs/llm-scores

Input: a JSON Lines (or CSV) file, one example per line, with the fields of the bundle's task:

    NLI:    {"id": "1", "premise": "...", "hypothesis": "...", "label": "entailment", "rationale": "..."}
    QA:     {"id": "1", "question": "...", "choices": ["...", "..."], "label": "...", "rationale": "..."}
    yes/no: {"id": "1", "question": "...", "label": "yes", "rationale": "..."}

``id`` (unique per line) and ``instance_id`` (shared by the explanations of one instance, which are then ranked
together) are optional and change no score; a ``baseline`` field on every line replaces the bundle's baseline
builder. Other fields are ignored. A bad line stops the script with its line number and field.

Output, in ``--output_dir``:

    scores.jsonl   one line per example: row, id, instance_id, label, score, label_centred, calibrated, rank,
                   rationale, the input fields, log_p_rationale, log_p_baseline, baseline (as ``larev-hf evaluate``)
    scores.csv     the same table's columns, for a spreadsheet
    summary.json   evaluator, method, hashcode, n_examples, mean_score, its 95% bootstrap interval

Steps:

1. load the bundle once (``larev_hf.evaluators.load`` caches it, so ``evaluate.load`` reuses it);
2. read and validate the JSONL against the bundle's task and label set;
3. ``evaluate.load("metrics/<method>", evaluator=...)`` and ``compute(rationales, labels, inputs, baselines)``;
4. write the per-example scores and the summary.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import evaluate
from transformers import HfArgumentParser

from larev_hf.evaluators import load
from larev_hf.hub.explanations import (
    explanation_table,
    read_explanation_rows,
    scoring_details,
    write_explanation_table,
)
from larev_hf.io import DataError, write_json
from larev_hf.scores.stats import bootstrap_ci

REPO_METRICS = Path(__file__).resolve().parents[1] / "metrics"
#: the JSONL field behind each argument of ``compute`` (for error messages)
FIELDS = {"rationales": "rationale", "labels": "label", "baselines": "baseline"}


@dataclass
class ScriptArguments:
    evaluator: str = field(metadata={"help": "a named default evaluator (esnli), an evaluator "
                                             "bundle directory (`larev-hf export`) or a Hub repo id"})
    input: str = field(metadata={"help": "JSON Lines file of examples with their rationales"})
    output_dir: str = field(metadata={"help": "where scores.jsonl and summary.json are written"})
    metric: str | None = field(default=None, metadata={
        "help": "the evaluate module to load (default: this repository's metrics/<the bundle's method>)"})
    revision: str | None = field(default=None, metadata={"help": "Hub revision of the bundle"})
    batch_size: int = field(default=64, metadata={"help": "scoring batch size"})
    device: str | None = field(default=None, metadata={"help": "cuda, cpu, ... (default: CUDA when available)"})
    n_boot: int = field(default=1000, metadata={"help": "bootstrap resamples for the mean's 95%% interval"})
    column_mapping: str | None = field(default=None, metadata={
        "help": "JSON: schema field → your column, e.g. '{\"rationale\": \"explanation\"}' (the same mapping "
                "`larev-hf evaluate` takes)"})


def main(argv: list[str] | None = None) -> int:
    (args,) = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses(args=argv)
    try:
        # 1. the bundle, cached for evaluate.load below
        bundle = load(args.evaluator, args.revision, args.device)
        method = bundle.config.method
        metric_path = args.metric or str(REPO_METRICS / method)
        if not Path(metric_path).exists() and args.metric is None:
            raise FileNotFoundError(f"{metric_path}: no evaluate module there; pass --metric <path to metrics/{method}>")

        # 2. read and validate, naming the file, line and field of any problem
        mapping = json.loads(args.column_mapping) if args.column_mapping else None
        lines, rows = read_explanation_rows(args.input, bundle.config.task, mapping)
        with_baseline = [row for row in rows if "baseline" in row]
        if with_baseline and len(with_baseline) != len(rows):
            raise DataError(f"{args.input}: {len(with_baseline)} of {len(rows)} lines have a 'baseline'; "
                            "give one on every line or on none")

        def locate(kind: str, index: int, key: str | None = None) -> str:
            return f"{args.input}, line {lines[index]}" + (f": field {key or FIELDS[kind]!r}" if key or kind in FIELDS else "")

        baselines = [row["baseline"] for row in rows] if with_baseline else None
        records = bundle.scoring.records([row.get("rationale") for row in rows], [row.get("label") for row in rows],
                                         rows, baselines, locate=locate)

        # 3. the evaluate module, with the cached bundle
        module = evaluate.load(metric_path, evaluator=args.evaluator, evaluator_revision=args.revision,
                               device=args.device, batch_size=args.batch_size)
        results = module.compute(rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
                                 inputs=records, baselines=baselines)
    except (DataError, FileNotFoundError, NotADirectoryError, ValueError, NotImplementedError, OSError) as error:
        print(f"score_llm_rationales: error: {error}", file=sys.stderr)
        return 2

    # 4. outputs: one row per explanation (raw, label-centred and calibrated scores, rank within its instance)
    output_dir = Path(args.output_dir)
    table = explanation_table(records, results["scores"], results.get("label_centred_scores"),
                              results.get("calibrated_scores"))
    write_explanation_table(table, output_dir, scoring_details(records, results["log_p_rationale"],
                                                               results["log_p_baseline"], results["baselines"]))
    low, high = bootstrap_ci(results["scores"], n_boot=args.n_boot, seed=0)
    summary = {"evaluator": args.evaluator, "method": method, "hashcode": results["hashcode"], "input": args.input,
               "n_examples": len(records), "mean_score": results["mean_score"], "mean_score_ci95": [low, high]}
    write_json(output_dir / "summary.json", summary)
    print(f"{method.upper()} mean score {summary['mean_score']:+.4f} [{low:+.4f}, {high:+.4f}] over {len(records)} "
          f"examples ({results['hashcode']}); scores: {output_dir / 'scores.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
