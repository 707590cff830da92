"""``larev-hf varif``: VARIF's robustness x informativeness frontier of explanation generators; prints the method
table."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.cli.commands.base import Command
from larev_hf.methods.settings import field_values, help_field
from larev_hf.varif.settings import VarifSettings


@dataclass
class VarifArguments:
    """``larev-hf varif``'s own flags."""

    output_dir: str | None = help_field(None, "the VARIF run directory (created; a rerun resumes it)", required=True)


class VarifCommand(Command):
    """``larev-hf varif``."""

    name = "varif"
    help_text = ("compare explanation generators on VARIF's robustness x informativeness frontier (paraphrase "
                 "robustness R, leakage-controlled LC-IG, specificity S)")
    sections = ((VarifArguments, None), (VarifSettings, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # the generators and the judge load torch: imported when VARIF runs, not by `larev-hf --help`
        from larev_hf.varif.run import VarifRun

        run = VarifRun(VarifSettings(**field_values(VarifSettings, args)), args.output_dir, progress)
        report = run.execute()
        for name, entry in report["methods"].items():
            values = {key: entry[key]["mean"] for key in ("R", "I", "I_tilde", "S", "VARIF")}
            print(f"  {name:20s} " + "  ".join(f"{k} {'—' if v is None else f'{v:.3f}'}" for k, v in values.items()))
        print(f"frontier: {', '.join(report['frontier'])}; hypervolume {report['hypervolume']:.4f}")
        print(f"varif report: {run.dir}/varif_report.md")
        return 0
