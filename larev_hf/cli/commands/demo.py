"""``larev-hf demo``: REV and LAREV on the embedded synthetic task (offline, CPU, minutes)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.cli.commands.base import Command
from larev_hf.cli.commands.run import execute_run
from larev_hf.config import RunConfig
from larev_hf.methods.settings import help_field


@dataclass
class DemoArguments:
    """``larev-hf demo``: REV and LAREV on the embedded synthetic task."""

    output_dir: str | None = help_field(None, "the run directory (created; a rerun resumes it)", required=True)
    seed: int = help_field(0, "random seed of data sampling, initialisation and training")


class DemoCommand(Command):
    """``larev-hf demo``: ``larev-hf run --method rev,larev --dataset synthetic --backbone t5-tiny --seed SEED``."""

    name = "demo"
    help_text = "the whole pipeline on the embedded synthetic task (offline, CPU, minutes)"
    sections = ((DemoArguments, None),)

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # The main job: LAREV against REV. RoRA/LAS/RQ (``--method all``) add their own models and are ≈ 0 here by
        # design (the synthetic rationale alone decides the answer, which RoRA treats as leakage).
        config = RunConfig(dataset="synthetic", method="rev,larev", backbone="t5-tiny", seed=args.seed)
        return execute_run(config, args.output_dir, progress)
