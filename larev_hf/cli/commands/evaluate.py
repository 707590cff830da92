"""``larev-hf evaluate``: a file of explanations scored by a named default evaluator, a bundle or a trained run;
prints the per-explanation table and where the outputs went (no retraining)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from larev_hf.cli.arguments import DataDirArguments, TrustArguments, json_object
from larev_hf.cli.commands.base import Command
from larev_hf.methods.settings import help_field


@dataclass
class EvaluateArguments:
    """``larev-hf evaluate``: score a file of explanations with a named default evaluator, a bundle or a trained run."""

    data_file: str | None = help_field(
        None, "JSONL/CSV of explanations: columns premise, hypothesis, label, rationale (NLI), question, choices, "
        "label, rationale (QA) or question, label, rationale (yes/no), each optionally with a unique 'id' and an "
        "'instance_id' shared by the explanations of one instance (ranked together); with --run-dir also a file in "
        "the run's data set format (e.g. e-SNLI's test.jsonl)", required=True)
    output_dir: str | None = help_field(None, "where report.md, scores.csv and scores.jsonl go", required=True)
    evaluator: str | None = help_field(
        None, "a named default evaluator (esnli: from the cache, its published Hub repo or built on first use, see "
        "`larev-hf evaluators list`), an evaluator bundle directory (`larev-hf export`) or a Hub repo id")
    run_dir: str | None = help_field(
        None, "instead of --evaluator: a finished run directory (`larev-hf run`); also reports every method on the "
        "explanations' degraded variants")
    method: str = help_field("larev", "with --run-dir: the method whose scores the per-explanation table shows")
    column_mapping: dict | None = help_field(
        None, 'schema field → your column, e.g. \'{"rationale": "explanation", "label": "gold"}\'',
        type=json_object)
    score_empty: bool = help_field(
        False, "score empty or whitespace-only rationales (as the vacuous baseline alone, each with the finding "
        "'empty') instead of refusing the file with their lines named")


class EvaluateCommand(Command):
    """``larev-hf evaluate``."""

    name = "evaluate"
    help_text = "score a file of explanations: a per-explanation table, scores.csv and a report (no retraining)"
    sections = ((EvaluateArguments, None), (TrustArguments, None), (DataDirArguments, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        from larev_hf.evaluators import loading

        if (args.evaluator is None) == (args.run_dir is None):
            raise ValueError("evaluate: give --evaluator (a named default such as esnli, a bundle directory or a Hub "
                             "id) or --run-dir (a trained run), not both and not neither")
        expected = loading.expected_inputs(args.evaluator) if args.evaluator is not None else None
        from larev_hf.hub.explanations import read_explanation_records

        records = None
        if expected is not None:  # the file checked before any model loads (or a named evaluator is built)
            task, label_set = expected
            records = read_explanation_records(args.data_file, task=task, label_set=label_set,
                                               column_mapping=args.column_mapping, allow_empty=args.score_empty)
        # bundles and runs load torch: imported once the file has passed, not by --help
        from larev_hf.hub.console import column_notes, format_explanation_table
        from larev_hf.hub.score_file import score_file, score_file_with_run

        options = {"column_mapping": args.column_mapping, "force": args.force, "progress": progress,
                   "allow_empty": args.score_empty}
        if args.run_dir is not None:
            report = score_file_with_run(args.run_dir, args.method, args.data_file, args.output_dir, **options)
        else:
            bundle = loading.load(args.evaluator, data_dir=args.data_dir, progress=progress)
            checked = expected == (bundle.config.task, bundle.config.label_set)  # validated for this bundle already
            report = score_file(bundle, args.evaluator, args.data_file, args.output_dir,
                                records=records if checked else None, **options)
        rows = report["explanations"]
        if report.get("warning"):
            print(report["warning"], file=sys.stderr)
        print(format_explanation_table(rows))
        print("\n".join(["", *column_notes(rows)]))
        if report.get("summary"):
            print(f"\n{report['summary']}")
        print(f"\n{report['n_explanations']} explanations, mean score {report['mean_score']:+.3f} nats "
              f"({report['hashcode']}); table: {args.output_dir}/scores.csv; report: {args.output_dir}/report.md")
        return 0
