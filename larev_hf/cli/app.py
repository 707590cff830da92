"""The ``larev-hf`` program: its parser (built from :data:`~larev_hf.cli.commands.COMMANDS`), what it sets up before
torch loads (the OpenMP wait policy, offline mode when the Hub cannot be reached), the dispatch to the subcommand and
the one-line errors.

    larev-hf demo --output-dir runs/demo
    larev-hf run --method rev --dataset esnli --data-dir ../shared/data/esnli --output-dir runs/esnli-rev
    larev-hf evaluate --evaluator esnli --data-file my_explanations.jsonl --output-dir runs/mine
    larev-hf evaluate --run-dir runs/esnli-rev --method rev --data-file my_rationales/test.jsonl --output-dir runs/eval
    larev-hf evaluators list
    larev-hf meta --run-dir runs/esnli-rev [--families gold,vacuous,leak] [--user-families mine=my_rationales.jsonl]
    larev-hf human --run-dir runs/esnli --judgments ../shared/data/human/snli_accept_train.jsonl --baseline-columns gpt3_nll:lower
    larev-hf varif --dataset esnli --data-dir ../shared/data/esnli --output-dir runs/varif-esnli
    larev-hf nli-train --data-dir ../shared/data/esnli --output-dir models/nli-minilm-esnli
    larev-hf frame --dataset esnli --data-dir ../shared/data/esnli --output-dir runs/frame-esnli
    larev-hf export --run-dir runs/esnli-rev --method rev --output-dir bundles/rev-esnli [--push-to-hub user/rev-esnli]
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys

from larev_hf.cli.arguments import GlobalArguments
from larev_hf.cli.commands import COMMANDS
from larev_hf.io import DataError
from larev_hf.methods.settings import add_dataclass_arguments
from larev_hf.network import accepts_connection, behind_proxy, switched_on
from larev_hf.runner import DirectoryLockedError
from larev_hf.threads import configure_openmp_wait

#: Set to show the traceback of a user error (like ``--debug``).
DEBUG_ENV = "LAREV_HF_DEBUG"
#: OS errors that mean "this machine will not take the write" (permissions, read-only, full disk, file size limit).
WRITE_ERRORS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def detect_offline(host: str = "huggingface.co", timeout: float = 2.0) -> bool:
    """Switch the HF libraries to offline mode when ``host`` cannot be reached within ``timeout`` seconds, so a typo
    in ``--data-dir`` or ``--backbone`` fails at once instead of waiting for the network. Runs before any HF import
    (they read ``HF_HUB_OFFLINE`` when imported); returns whether the process is offline."""
    if switched_on("HF_HUB_OFFLINE"):
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        return True
    if os.environ.get("HF_ENDPOINT") or behind_proxy():
        return False  # a mirror or a proxy: a direct probe of huggingface.co says nothing about reachability
    if not accepts_connection(host, 443, timeout):
        os.environ["HF_HUB_OFFLINE"] = os.environ["HF_DATASETS_OFFLINE"] = "1"
        return True
    return False


class OnceFilter(logging.Filter):
    """Lets each distinct message of a logger through once (accelerate repeats one warning per process and eval)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


def build_parser() -> argparse.ArgumentParser:
    """The ``larev-hf`` parser: every flag is a field of a settings dataclass, each subcommand's come from its
    :class:`~larev_hf.cli.commands.base.Command` (:func:`~larev_hf.cli.commands.command_arguments`)."""
    parser = argparse.ArgumentParser(prog="larev-hf", description="Leakage-aware evaluation of free-text rationales.")
    add_dataclass_arguments(parser, GlobalArguments)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        command.register(subparsers)
    return parser


def configure_logging(quiet: bool) -> None:
    """Log stage lines (``--quiet``: warnings only), each repeated library warning once, no per-model loading bars."""
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    once = OnceFilter()
    for name in ("accelerate", "accelerate.accelerator", "transformers.modeling_utils"):
        logging.getLogger(name).addFilter(once)
    # transformers is heavy: imported once a command runs (after the OpenMP and offline set-up), not by --help
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # sub-second "Loading weights" / "Writing model shards" bars, one per model


def main(argv: list[str] | None = None) -> int:
    """Run ``larev-hf`` on ``argv`` (default: the process's arguments); the exit status (0 ok, 2 bad input, 130
    interrupted)."""
    words = sys.argv[1:] if argv is None else argv
    asks_help = bool({"-h", "--help"} & set(words))
    try:
        if not asks_help and "torch" not in sys.modules:  # once torch is loaded it is too late
            configure_openmp_wait()  # before torch loads libgomp: jobs sharing the cores do not starve each other
    except ValueError as error:
        print(f"larev-hf: error: {error}", file=sys.stderr)
        return 2
    offline = False if asks_help else detect_offline()  # help never reaches the Hub
    args = build_parser().parse_args(argv)
    configure_logging(args.quiet)
    # progress bars on a terminal only: in a log file their carriage returns pile up (the stage lines remain)
    progress = not args.quiet and sys.stderr.isatty()
    try:
        return COMMANDS[args.command].run(args, progress)
    except KeyboardInterrupt:
        print("\nlarev-hf: interrupted; rerun the same command to resume (finished stages are kept)", file=sys.stderr)
        return 130
    except (DataError, FileNotFoundError, ValueError, DirectoryLockedError) as error:
        if args.debug or os.environ.get(DEBUG_ENV):
            raise
        print(f"larev-hf: error: {error}" + (" (no network: offline mode)" if offline and "offline" not in str(error)
                                              and "Hub" in str(error) else ""), file=sys.stderr)
        return 2
    except OSError as error:  # a write the machine refused: one line naming the path, not a traceback
        if args.debug or os.environ.get(DEBUG_ENV) or error.errno not in WRITE_ERRORS:
            raise
        print(f"larev-hf: error: cannot access {error.filename or 'a file'}: {error.strerror} (nothing half-written "
              "is kept; free space or fix permissions, then rerun to resume)", file=sys.stderr)
        return 2
