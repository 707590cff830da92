"""``larev-hf human``: agreement of every method with human judgments of explanations; prints each metric's
figures on the first human column."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.cli.arguments import RUN_DIR_HELP
from larev_hf.cli.commands.base import Command
from larev_hf.meta.settings import HumanSettings
from larev_hf.methods.settings import field_values, help_field


@dataclass
class HumanArguments:
    """``larev-hf human``'s own flags (what it scores: :class:`~larev_hf.meta.settings.HumanSettings`)."""

    run_dir: str | None = help_field(None, f"{RUN_DIR_HELP} of the file's task", required=True)
    output_dir: str | None = help_field(None, "where the report goes (default: RUN_DIR/human/FILE_STEM)")


class HumanCommand(Command):
    """``larev-hf human``."""

    name = "human"
    help_text = ("agreement of every method with human judgments of explanations (Spearman, Kendall, within-instance "
                 "pairwise agreement, AUC; no retraining)")
    sections = ((HumanArguments, None), (HumanSettings, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # the run and its evaluators load torch: imported when the command runs, not by `larev-hf --help`
        from larev_hf.meta.human import HumanEvaluation
        from larev_hf.meta.human_report import STATISTIC_TITLES
        from larev_hf.pipeline import Run

        evaluation = HumanEvaluation(Run.load(args.run_dir, progress),
                                     HumanSettings(**field_values(HumanSettings, args)), args.output_dir)
        report = evaluation.execute()
        human, entry = next(iter(report["human"].items()))
        print(f"{human}: {entry['n_explanations']} explanations, {entry['n_instances']} instances ({report['half']})")
        titles = {name: report["metrics"][name]["title"] for name in entry["metrics"]}
        width = max(map(len, titles.values()), default=0)  # full names: two calibrated scores must not look the same
        for name, stats in entry["metrics"].items():
            cells = [f"{STATISTIC_TITLES[key].split()[0]} " + ("n/a" if value["value"] is None else f"{value['value']:.3f}")
                     for key, value in stats.items()]
            print(f"  {titles[name]:{width}s} " + "  ".join(cells))
        print(f"human report: {evaluation.dir}/human_report.md")
        return 0
