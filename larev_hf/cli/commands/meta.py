"""``larev-hf meta``: the meta-evaluation of a trained run on VARSuite's adversarial families; prints the
at-a-glance table."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.cli.arguments import RUN_DIR_HELP
from larev_hf.cli.commands.base import Command
from larev_hf.meta.settings import MetaSettings
from larev_hf.methods.settings import field_values, help_field


@dataclass
class MetaArguments:
    """``larev-hf meta``'s own flags (what it scores: :class:`~larev_hf.meta.settings.MetaSettings`)."""

    run_dir: str | None = help_field(None, RUN_DIR_HELP, required=True)
    output_dir: str | None = help_field(None, "where the meta report goes (default: RUN_DIR/meta)")


class MetaCommand(Command):
    """``larev-hf meta``."""

    name = "meta"
    help_text = ("score every method on the VARSuite adversarial families and say which metric to trust (AUC of gold "
                 "vs each family; no retraining)")
    sections = ((MetaArguments, None), (MetaSettings, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # the run and its evaluators load torch: imported when the command runs, not by `larev-hf --help`
        from larev_hf.meta.evaluation import MetaEvaluation
        from larev_hf.pipeline import Run

        meta = MetaEvaluation(Run.load(args.run_dir, progress), MetaSettings(**field_values(MetaSettings, args)),
                              args.output_dir)
        report = meta.execute()
        for entry in report["methods"].values():
            print(f"  {entry['title']:24s} worst AUC {entry['worst_auc'] if entry['worst_auc'] is None else round(entry['worst_auc'], 3)}"
                  f" ({entry['worst_family']}), τ-b {entry['tau_b'] if entry['tau_b'] is None else round(entry['tau_b'], 3)}")
        print(f"meta report: {meta.dir}/meta_report.md")
        return 0
