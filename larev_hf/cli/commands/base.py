"""What a ``larev-hf`` subcommand is: a name, a help line, the dataclasses its flags come from, and its run."""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from larev_hf.methods.settings import add_dataclass_arguments

#: A subcommand's flags: each dataclass with the title of its option group (``None``: the main list), in help order.
Sections = list[tuple[type, str | None]]


class Command(ABC):
    """One ``larev-hf`` subcommand. Its module is imported to build the parser (``larev-hf --help`` included), so
    it imports torch-free modules at its top and its heavy ones inside :meth:`run`, saying so there."""

    #: The word after ``larev-hf``.
    name: ClassVar[str]
    #: Its line in ``larev-hf --help``.
    help_text: ClassVar[str]
    #: The dataclasses its flags come from, each with its option group's title; :meth:`arguments` returns them.
    sections: ClassVar[tuple[tuple[type, str | None], ...]] = ()

    def arguments(self) -> Sections:
        """The dataclasses this subcommand's flags come from, each with its option group's title."""
        return list(self.sections)

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        """Add this subcommand's parser, one flag per field of :meth:`arguments`, to ``subparsers``."""
        # every subcommand's help shows its flags' defaults
        parser = subparsers.add_parser(self.name, help=self.help_text,
                                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        for cls, group in self.arguments():
            add_dataclass_arguments(parser.add_argument_group(group) if group else parser, cls)
        return parser

    @abstractmethod
    def run(self, args: argparse.Namespace, progress: bool) -> int:
        """Carry out the parsed command (``progress``: draw progress bars); the exit status."""
