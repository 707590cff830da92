"""``larev-hf nli-train``: train the offline NLI judge of VARIF's robustness axis on e-SNLI."""

from __future__ import annotations

import argparse

from larev_hf.cli.commands.base import Command
from larev_hf.explain.nli import NliTrainArguments, nli_train_main


class NliTrainCommand(Command):
    """``larev-hf nli-train``: runs :func:`larev_hf.explain.nli.nli_train_main` (which loads torch when it trains)."""

    name = "nli-train"
    help_text = "train the offline NLI judge (a MiniLM cross-encoder) on e-SNLI"
    sections = ((NliTrainArguments, None),)

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        return nli_train_main(args, progress)
