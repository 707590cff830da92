"""The ``larev-hf`` command line: ``demo``, ``run``, ``evaluate``, ``evaluators``, ``meta``, ``human``, ``varif``,
``nli-train``, ``frame`` and ``export``.

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
import time

from larev_hf.io import DataError
from larev_hf.network import accepts_connection, behind_proxy, switched_on
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
    """The ``larev-hf`` parser: every flag is a field of a settings dataclass (:mod:`larev_hf.cli_arguments`)."""
    from larev_hf.cli_arguments import COMMAND_HELP, GlobalArguments, command_arguments, record_given
    from larev_hf.methods.settings import add_dataclass_arguments

    parser = argparse.ArgumentParser(prog="larev-hf", description="Leakage-aware evaluation of free-text rationales.")
    add_dataclass_arguments(parser, GlobalArguments)
    commands = parser.add_subparsers(dest="command", required=True)
    for command, sections in command_arguments().items():
        # every subcommand's help shows its flags' defaults
        sub = commands.add_parser(command, help=COMMAND_HELP[command],
                                  formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        for cls, group in sections:
            add_dataclass_arguments(sub.add_argument_group(group) if group else sub, cls)
        if command == "run":
            record_given(sub, "dataset")
    return parser


def _export(args: argparse.Namespace) -> int:
    """``larev-hf export``: bundle a run's evaluators, optionally push them; prints where they went."""
    from larev_hf.hub.export import UntrustedEvaluatorError, export_run

    try:
        bundle, path, trust = export_run(args.run_dir, args.method, args.output_dir, calibration=args.calibration,
                                         force=args.force, repo_id=args.push_to_hub)
    except (UntrustedEvaluatorError, FileExistsError, NotADirectoryError) as error:
        print(f"larev-hf: error: {error}", file=sys.stderr)
        return 2
    print(f"bundle: {path}  ({bundle.hashcode}); {trust.sentence()}")
    if args.push_to_hub:
        try:
            commit = bundle.push_to_hub(args.push_to_hub, private=args.private or None)
        except Exception as error:  # noqa: BLE001 - network, authentication, permissions: report them all the same way
            print(f"larev-hf: error: pushing to {args.push_to_hub} failed ({type(error).__name__}: {error}); "
                  f"the bundle is saved in {path}", file=sys.stderr)
            return 1
        print(f"pushed: {getattr(commit, 'commit_url', commit)}")
    return 0


def _evaluate(args: argparse.Namespace, progress: bool) -> int:
    """``larev-hf evaluate``: a file of explanations scored by a named evaluator, a bundle or a run; prints the
    per-explanation table and where the outputs went."""
    from larev_hf import evaluators
    from larev_hf.hub.explanations import column_notes, format_explanation_table
    from larev_hf.hub.score_file import score_file, score_file_with_run

    if (args.evaluator is None) == (args.run_dir is None):
        raise ValueError("evaluate: give --evaluator (a named default such as esnli, a bundle directory or a Hub id) "
                         "or --run-dir (a trained run), not both and not neither")
    options = {"column_mapping": args.column_mapping, "force": args.force, "progress": progress}
    if args.run_dir is not None:
        report = score_file_with_run(args.run_dir, args.method, args.data_file, args.output_dir, **options)
    else:
        bundle = evaluators.load(args.evaluator, data_dir=args.data_dir, progress=progress)
        report = score_file(bundle, args.evaluator, args.data_file, args.output_dir, **options)
    rows = report["explanations"]
    if report.get("warning"):
        print(report["warning"], file=sys.stderr)
    print(format_explanation_table(rows))
    print("\n".join(["", *column_notes(rows)]))
    print(f"\n{report['n_explanations']} explanations, mean score {report['mean_score']:+.3f} nats "
          f"({report['hashcode']}); table: {args.output_dir}/scores.csv; report: {args.output_dir}/report.md")
    return 0


def _evaluators(args: argparse.Namespace, progress: bool) -> int:
    """``larev-hf evaluators list|build|path``: the named default evaluators; ``build NAME --push-to-hub REPO``
    also publishes the built one (its recipe in the card)."""
    from larev_hf import evaluators
    from larev_hf.hub import named

    if args.push_to_hub and args.action != "build":
        raise ValueError(f"--push-to-hub publishes a built evaluator: `larev-hf evaluators build NAME --push-to-hub "
                         f"{args.push_to_hub}`, not `evaluators {args.action}`")
    if args.action == "list":
        for row in named.describe():
            if row["downloaded_from"]:
                state = f"downloaded from {row['downloaded_from']}" + (" (calibrated)" if row["calibrated"] else "")
            elif row["built"]:
                state = f"built ({row['build_minutes']} min" + (", calibrated)" if row["calibrated"] else ")")
            else:
                state = (f"not built (about {row['estimate_minutes']:.0f} min on first use" +
                         (f", or downloaded from {row['hub_repo']} when online)" if row["hub_repo"] else ")"))
            size = f", {row['size_mb']:.1f} MB" if row["size_mb"] is not None else ""
            print(f"{row['name']:14s} {row['description']}\n{'':14s} {state}{size}: {row['path']}")
        for name in named.NOT_OFFERED:
            print(f"{name:14s} no named evaluator (`larev-hf evaluators path {name}` says why)")
        return 0
    if args.name is None:
        raise ValueError(f"evaluators {args.action}: name the evaluator, one of {sorted(named.RECIPES)}")
    chosen = named.recipe(args.name).name
    if args.action == "path":
        print(evaluators.resolve(chosen, args.data_dir, progress))
        return 0
    path = named.bundle_path(chosen) or evaluators.build(chosen, args.data_dir, progress)
    print(path)
    if args.push_to_hub:
        from larev_hf.hub.published import publish

        try:
            commit = publish(path, args.push_to_hub, private=args.private)
        except Exception as error:  # noqa: BLE001 - network, authentication, permissions: report them all the same way
            print(f"larev-hf: error: pushing the {chosen!r} evaluator to {args.push_to_hub} failed "
                  f"({type(error).__name__}: {error}); it is built in {path}", file=sys.stderr)
            return 1
        print(f"pushed: {getattr(commit, 'commit_url', commit)}")
    return 0


def _meta(args: argparse.Namespace, progress: bool) -> int:
    """``larev-hf meta``: the meta-evaluation of a trained run; prints the at-a-glance table."""
    from larev_hf.meta.evaluation import MetaEvaluation, MetaSettings
    from larev_hf.methods.settings import field_values
    from larev_hf.pipeline import Run

    meta = MetaEvaluation(Run.load(args.run_dir, progress), MetaSettings(**field_values(MetaSettings, args)),
                          args.output_dir)
    report = meta.execute()
    for entry in report["methods"].values():
        print(f"  {entry['title']:24s} worst AUC {entry['worst_auc'] if entry['worst_auc'] is None else round(entry['worst_auc'], 3)}"
              f" ({entry['worst_family']}), τ-b {entry['tau_b'] if entry['tau_b'] is None else round(entry['tau_b'], 3)}")
    print(f"meta report: {meta.dir}/meta_report.md")
    return 0


def _human(args: argparse.Namespace, progress: bool) -> int:
    """``larev-hf human``: agreement with human judgments; prints each metric's figures on the first human column."""
    from larev_hf.meta.human import HumanEvaluation
    from larev_hf.meta.human_report import STATISTIC_TITLES
    from larev_hf.meta.settings import HumanSettings
    from larev_hf.methods.settings import field_values
    from larev_hf.pipeline import Run

    evaluation = HumanEvaluation(Run.load(args.run_dir, progress), HumanSettings(**field_values(HumanSettings, args)),
                                 args.output_dir)
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


def _varif(args: argparse.Namespace, progress: bool) -> int:
    """``larev-hf varif``: VARIF's frontier of explanation methods; prints the method table."""
    from larev_hf.methods.settings import field_values
    from larev_hf.varif.run import VarifRun
    from larev_hf.varif.settings import VarifSettings

    run = VarifRun(VarifSettings(**field_values(VarifSettings, args)), args.output_dir, progress)
    report = run.execute()
    for name, entry in report["methods"].items():
        values = {key: entry[key]["mean"] for key in ("R", "I", "I_tilde", "S", "VARIF")}
        print(f"  {name:20s} " + "  ".join(f"{k} {'—' if v is None else f'{v:.3f}'}" for k, v in values.items()))
    print(f"frontier: {', '.join(report['frontier'])}; hypervolume {report['hypervolume']:.4f}")
    print(f"varif report: {run.dir}/varif_report.md")
    return 0


def main(argv: list[str] | None = None) -> int:
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
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    once = OnceFilter()
    for name in ("accelerate", "accelerate.accelerator", "transformers.modeling_utils"):
        logging.getLogger(name).addFilter(once)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # sub-second "Loading weights" / "Writing model shards" bars, one per model
    from larev_hf.cli_arguments import config_from_args
    from larev_hf.config import RunConfig
    from larev_hf.pipeline import Run
    from larev_hf.report import dumps_summary
    from larev_hf.runner import DirectoryLockedError

    # progress bars on a terminal only: in a log file their carriage returns pile up (the stage lines remain)
    progress = not args.quiet and sys.stderr.isatty()
    start = time.perf_counter()
    try:
        if args.command == "evaluate":
            return _evaluate(args, progress)
        if args.command == "evaluators":
            return _evaluators(args, progress)
        if args.command == "export":
            return _export(args)
        if args.command == "meta":
            return _meta(args, progress)
        if args.command == "human":
            return _human(args, progress)
        if args.command == "varif":
            return _varif(args, progress)
        if args.command == "frame":
            from larev_hf.frame.run import frame_main

            return frame_main(args, progress)
        if args.command == "nli-train":
            from larev_hf.explain.nli import nli_train_main

            return nli_train_main(args, progress)
        if args.command == "demo":
            # The main job: LAREV against REV. RoRA/LAS/RQ (``--method all``) add their own models and are ≈ 0 here by
            # design (the synthetic rationale alone decides the answer, which RoRA treats as leakage).
            config = RunConfig(dataset="synthetic", method="rev,larev", backbone="t5-tiny", seed=args.seed)
            report = Run(config, args.output_dir, progress).execute()
        elif args.command == "run":
            report = Run(config_from_args(args), args.output_dir, progress).execute(until=args.until)
            if args.until:
                print(f"stopped after stage {args.until!r}; rerun without --until to continue")
                return 0
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
    print(dumps_summary(report))
    print(f"report: {args.output_dir}/report.md  ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
