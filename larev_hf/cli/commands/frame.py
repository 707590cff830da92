"""``larev-hf frame``: FRAME's three axioms for the rationale-label-consistency metrics; prints the NRG row of each
table."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.cli.commands.base import Command
from larev_hf.frame.settings import FrameSettings
from larev_hf.methods.settings import help_field


@dataclass
class FrameArguments:
    """``larev-hf frame``'s own flags."""

    output_dir: str | None = help_field(None, "the FRAME run directory (created; a rerun resumes it)", required=True)


class FrameCommand(Command):
    """``larev-hf frame``: runs :func:`larev_hf.frame.run.frame_main`."""

    name = "frame"
    help_text = ("FRAME's three axioms for the rationale-label-consistency metrics (F-GOLD, GH-GOLD, GH-PRED, "
                 "NP-GH-PRED): tables 1-3 with NRG over seeds")
    sections = ((FrameArguments, None), (FrameSettings, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # FRAME's run trains models (torch): imported when it runs, not by `larev-hf --help`
        from larev_hf.frame.run import frame_main

        return frame_main(args, progress)
