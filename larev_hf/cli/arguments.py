"""The ``larev-hf`` flags that more than one subcommand takes, each one dataclass field so its default and help are
declared once (a command's own flags live in its module under :mod:`larev_hf.cli.commands`), and the one way
``export`` and ``evaluators build`` report a push to the Hub (:func:`push`). Importable without torch."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from larev_hf.methods.settings import help_field


def json_object(text: str) -> dict:
    """An argparse type: a JSON object given on the command line (e.g. ``--column-mapping``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r} ({error.msg})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


#: The help of ``--run-dir`` wherever a command reads a trained run.
RUN_DIR_HELP = "a trained run directory (`larev-hf run`)"


@dataclass
class GlobalArguments:
    """Flags before the subcommand."""

    quiet: bool = help_field(False, "no progress bars or stage logs")
    debug: bool = help_field(False, "show the traceback of an error (or set LAREV_HF_DEBUG=1)")


@dataclass
class TrustArguments:
    """The trust check that ``export`` and ``evaluate`` share (:mod:`larev_hf.hub.trust`)."""

    force: bool = help_field(False, "go on when the evaluators fail the trust checks (gold-rationale accuracy below "
                             "80%% or near chance, or Gold − Vacuous not above 0): export writes the bundle and its "
                             "card says so; evaluate scores and warns")


@dataclass
class DataDirArguments:
    """Where a named default evaluator's data comes from when it is built (:mod:`larev_hf.evaluators.recipes`)."""

    data_dir: str | None = help_field(
        None, "building a named evaluator: a directory in the shared data layout (esnli/, cose/, strategyqa/, "
        "human/); default $LAREV_HF_DATA, else the Hub datasets (then without the calibrated score)")


@dataclass
class PushArguments:
    """Uploading a bundle to the Hub: ``export``'s and ``evaluators build``'s."""

    push_to_hub: str | None = help_field(
        None, "also upload the bundle to this Hub model repo with its model card (`evaluators build NAME`: the built "
        "named evaluator, its recipe in the card)", metavar="REPO_ID")
    private: bool = help_field(False, "create the Hub repo as private")


def push(upload: Callable[[], Any], what: str, kept: str) -> int:
    """Run ``upload`` (a push to the Hub) and print its commit's URL; the exit status. A failure is one line, ``larev-hf:
    error: pushing WHAT failed (...); KEPT`` (where the bundle stays), and exit status 1."""
    try:
        commit = upload()
    except Exception as error:  # noqa: BLE001 - network, authentication, permissions: report them all the same way
        print(f"larev-hf: error: pushing {what} failed ({type(error).__name__}: {error}); {kept}", file=sys.stderr)
        return 1
    print(f"pushed: {getattr(commit, 'commit_url', commit)}")
    return 0
