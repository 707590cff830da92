"""``larev-hf export``: bundle a run's evaluators, optionally push them to the Hub; prints where they went."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from larev_hf.cli.arguments import PushArguments, TrustArguments, push
from larev_hf.cli.commands.base import Command
from larev_hf.methods import exportable_methods
from larev_hf.methods.settings import help_field


@dataclass
class ExportArguments:
    """``larev-hf export``: bundle a run's evaluators."""

    run_dir: str | None = help_field(None, "a finished run directory (`larev-hf run`)", required=True)
    method: str | None = help_field(None, "which metric's evaluators to bundle", required=True,
                                    choices=exportable_methods)
    output_dir: str | None = help_field(None, "the bundle directory (an existing bundle there is replaced)",
                                        required=True)
    calibration: str | None = help_field(
        None, "a calibration fitted by `larev-hf human --calibrate` (calibration.json): the bundle then also returns "
        "the calibrated score (it may read the method's score, length, rouge_l, grounding and copied_span)",
        metavar="CALIBRATION_JSON")
    nli_judge: str | None = help_field(
        None, "an NLI judge trained by `larev-hf nli-train --read-explanations` (NLI bundles): scores then also "
        "report explanations it reads as arguing for another label (the finding 'contradicts the label')",
        metavar="JUDGE_DIR")


class ExportCommand(Command):
    """``larev-hf export``."""

    name = "export"
    help_text = "save a run's evaluators as an evaluator bundle (and push it to the Hub)"
    sections = ((ExportArguments, None), (PushArguments, None), (TrustArguments, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # a bundle loads its models (torch): imported when a run is exported, not by `larev-hf --help`
        from larev_hf.hub.export import UntrustedEvaluatorError, export_run

        try:
            bundle, path, trust = export_run(args.run_dir, args.method, args.output_dir, calibration=args.calibration,
                                             force=args.force, repo_id=args.push_to_hub, nli_judge=args.nli_judge)
        except (UntrustedEvaluatorError, FileExistsError, NotADirectoryError) as error:
            print(f"larev-hf: error: {error}", file=sys.stderr)
            return 2
        print(f"bundle: {path}  ({bundle.hashcode}); {trust.sentence()}")
        if args.push_to_hub:
            return push(lambda: bundle.push_to_hub(args.push_to_hub, private=args.private or None),
                        f"to {args.push_to_hub}", f"the bundle is saved in {path}")
        return 0
