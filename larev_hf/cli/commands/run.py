"""``larev-hf run``: train the evaluators on a data set and report on its test split; how its parsed flags become a
:class:`~larev_hf.config.RunConfig` (:func:`config_from_args`)."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any

from larev_hf.cli.arguments import json_object
from larev_hf.cli.commands.base import Command, Sections
from larev_hf.config import DATASETS, RENAMED_SETTINGS, RunConfig, config_sections
from larev_hf.methods.settings import comma_list, field_values, help_field


@dataclass
class RunArguments:
    """``larev-hf run``'s own flags (the run's settings are :func:`~larev_hf.config.config_sections`)."""

    output_dir: str | None = help_field(None, "run directory (created; a rerun resumes it)", required=True)
    until: str | None = help_field(None, "stop after this stage (e.g. 'probe'); a later run resumes from there")


@dataclass
class JsonlArguments:
    """``larev-hf run --dataset jsonl``: how your files map onto the schema (the run keeps them as
    ``loader_options``)."""

    column_mapping: dict | None = help_field(
        None, 'schema field → your column, e.g. \'{"label": "answer", "rationale": "explanation"}\'',
        type=json_object)
    task: str | None = help_field(None, "the task kind (default qa)", choices=("nli", "qa", "yesno"))
    label_set: list[str] | None = help_field(None, "without a choices column: comma-separated labels",
                                             type=comma_list)


class _GivenStore(argparse._StoreAction):
    """A store action that also records that the user gave the flag (``<dest>_given``)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        super().__call__(parser, namespace, values, option_string)
        setattr(namespace, f"{self.dest}_given", True)


def record_given(parser: argparse.ArgumentParser, dest: str) -> None:
    """Make ``parser``'s ``dest`` flag record whether the user gave it (``<dest>_given``): without ``--dataset``,
    :func:`config_from_args` infers it."""
    for action in parser._actions:
        if action.dest == dest:
            action.__class__ = _GivenStore
    parser.set_defaults(**{f"{dest}_given": False})


class DeprecatedFlag(argparse._StoreAction):
    """An old spelling of a flag (:data:`~larev_hf.config.RENAMED_SETTINGS`): it stores into the new flag's
    destination and warns with a ``FutureWarning`` that names the new flag. Hidden from ``--help``."""

    def __init__(self, option_strings, dest, new_flag: str, **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new_flag = new_flag

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        warnings.warn(f"{option_string} is now {self.new_flag}; {option_string} will be removed in the next minor "
                      "version", FutureWarning, stacklevel=2)
        super().__call__(parser, namespace, values, option_string)


def add_renamed_flags(parser: argparse.ArgumentParser) -> None:
    """Keep each old flag of :data:`~larev_hf.config.RENAMED_SETTINGS` (``--rora-threshold``) working as a deprecated
    alias of the new one (``--rora.threshold``): same type and choices, the value stored under the new key."""
    actions = {action.dest: action for action in parser._actions}
    for old, new in RENAMED_SETTINGS.items():
        target = actions[new]
        parser.add_argument("--" + old.replace("_", "-"), dest=new, action=DeprecatedFlag,
                            new_flag=target.option_strings[0], type=target.type, choices=target.choices,
                            default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def dataset_from_data_dir(data_dir: str | None) -> str:
    """The data set kind of a ``--data-dir`` given without ``--dataset`` (see :func:`infer_dataset_kind`)."""
    if data_dir is None:
        return "synthetic"
    # imported here, not at the top: `larev-hf --help` must not load the datasets library
    from larev_hf.data import infer_dataset_kind

    kind = infer_dataset_kind(data_dir)
    if kind is None:
        raise ValueError(f"--data-dir {data_dir} without --dataset: its columns match no known data set; pass "
                         f"--dataset (one of {', '.join(DATASETS)}; 'jsonl' with --column-mapping for your own files)")
    print(f"larev-hf: --dataset {kind} (inferred from the columns of {data_dir}; pass --dataset to choose)",
          file=sys.stderr)
    return kind


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The :class:`RunConfig` of parsed ``larev-hf run`` arguments. Without ``--dataset``: the embedded synthetic
    task when ``--data-dir`` is not given either, the kind inferred from a local directory's columns (said in one
    line), or an error that asks for ``--dataset``."""
    values = {}
    for _, cls, _ in config_sections():
        values.update(field_values(cls, args))
    if not getattr(args, "dataset_given", True):
        values["dataset"] = dataset_from_data_dir(values.get("data_dir"))
    options = {"column_mapping": args.column_mapping, "task": args.task, "label_set": args.label_set}
    values["loader_options"] = {key: value for key, value in options.items() if value is not None}
    return RunConfig(**values)


def execute_run(config: RunConfig, output_dir: str, progress: bool, until: str | None = None) -> int:
    """Run (or resume) ``config`` in ``output_dir`` and print its summary and where its report is; with ``until``,
    stop after that stage and say so (``demo`` and ``run`` end here)."""
    # the pipeline loads torch (and the report renderer): imported when a run starts, not by `larev-hf --help`
    from larev_hf.pipeline import Run
    from larev_hf.report import dumps_summary

    start = time.perf_counter()
    report = Run(config, output_dir, progress).execute(until=until)
    if until:
        print(f"stopped after stage {until!r}; rerun without --until to continue")
        return 0
    print(dumps_summary(report))
    print(f"report: {output_dir}/report.md  ({time.perf_counter() - start:.0f} s)")
    return 0


class RunCommand(Command):
    """``larev-hf run``: its flags are every section of the run's configuration (the registered methods' included,
    read when the parser is built)."""

    name = "run"
    help_text = "train the evaluators on a dataset and report on its test split"

    def arguments(self) -> Sections:
        return [(RunArguments, None), *((cls, group) for _, cls, group in config_sections()),
                (JsonlArguments, "--dataset jsonl")]

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser = super().register(subparsers)
        record_given(parser, "dataset")
        add_renamed_flags(parser)
        return parser

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        return execute_run(config_from_args(args), args.output_dir, progress, until=args.until)
