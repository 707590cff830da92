"""The ``larev-hf`` subcommands, one module each (its flags' dataclasses, its parser and its run), and the table
:func:`larev_hf.cli.main` builds the parser from and dispatches on. Every module here is imported by ``larev-hf
--help``: each keeps torch out of its top-level imports."""

from __future__ import annotations

from larev_hf.cli.commands.base import Command, Sections
from larev_hf.cli.commands.demo import DemoCommand
from larev_hf.cli.commands.evaluate import EvaluateCommand
from larev_hf.cli.commands.evaluators import EvaluatorsCommand
from larev_hf.cli.commands.export import ExportCommand
from larev_hf.cli.commands.frame import FrameCommand
from larev_hf.cli.commands.human import HumanCommand
from larev_hf.cli.commands.meta import MetaCommand
from larev_hf.cli.commands.nli_train import NliTrainCommand
from larev_hf.cli.commands.run import RunCommand
from larev_hf.cli.commands.varif import VarifCommand

#: Each subcommand by name, in the order ``larev-hf --help`` lists them.
COMMANDS: dict[str, Command] = {command.name: command for command in (
    DemoCommand(), RunCommand(), EvaluateCommand(), EvaluatorsCommand(), MetaCommand(), HumanCommand(), VarifCommand(),
    NliTrainCommand(), FrameCommand(), ExportCommand(),
)}


def command_arguments() -> dict[str, Sections]:
    """Subcommand → the dataclasses its flags come from, each with its option group's title (``None``: the main list),
    in help order. ``run``'s are every section of the run's configuration (the registered methods' included)."""
    return {name: command.arguments() for name, command in COMMANDS.items()}


__all__ = ["COMMANDS", "Command", "Sections", "command_arguments"]
