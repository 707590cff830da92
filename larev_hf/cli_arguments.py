"""Every ``larev-hf`` flag as one dataclass field, so its default and help are declared once: the commands' own
arguments, and the table of which dataclasses make each subcommand's flags (:func:`command_arguments`), read by
:func:`larev_hf.cli.build_parser` and by the test that checks every flag's default comes from exactly one field; and
how ``larev-hf run``'s parsed flags become a :class:`~larev_hf.config.RunConfig` (:func:`config_from_args`).
Importable without torch."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from larev_hf.config import DATASETS, RunConfig, config_sections
from larev_hf.explain.nli import NliTrainArguments
from larev_hf.frame.settings import FrameSettings
from larev_hf.meta.settings import HumanSettings, MetaSettings
from larev_hf.methods import exportable_methods
from larev_hf.methods.settings import comma_list, field_values, help_field
from larev_hf.varif.settings import VarifSettings


def json_object(text: str) -> dict:
    """An argparse type: a JSON object given on the command line (e.g. ``--column-mapping``)."""
    import json

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
class DemoArguments:
    """``larev-hf demo``: REV and LAREV on the embedded synthetic task."""

    output_dir: str | None = help_field(None, "the run directory (created; a rerun resumes it)", required=True)
    seed: int = help_field(0, "random seed of data sampling, initialisation and training")


@dataclass
class RunArguments:
    """``larev-hf run``'s own flags (the run's settings are :func:`~larev_hf.config.config_sections`)."""

    output_dir: str | None = help_field(None, "run directory (created; a rerun resumes it)", required=True)
    until: str | None = help_field(None, "stop after this stage (e.g. 'probe'); a later run resumes from there")


@dataclass
class EvaluateArguments:
    """``larev-hf evaluate``: score a file of explanations with a named default evaluator, a bundle or a trained run."""

    data_file: str | None = help_field(
        None, "JSONL/CSV of explanations: columns premise, hypothesis, label, rationale (NLI), question, choices, "
        "label, rationale (QA) or question, label, rationale (yes/no), each optionally with a unique 'id' and an "
        "'instance_id' shared by the explanations of one instance (ranked together); with --run-dir also a file in "
        "the run's data set format (e.g. e-SNLI's test.jsonl)", required=True)
    output_dir: str | None = help_field(None, "where report.md, scores.csv and scores.jsonl go", required=True)
    evaluator: str | None = help_field(
        None, "a named default evaluator (esnli: from the cache, its published Hub repo or built on first use, see "
        "`larev-hf evaluators list`), an evaluator bundle directory (`larev-hf export`) or a Hub repo id")
    run_dir: str | None = help_field(
        None, "instead of --evaluator: a finished run directory (`larev-hf run`); also reports every method on the "
        "explanations' degraded variants")
    method: str = help_field("larev", "with --run-dir: the method whose scores the per-explanation table shows")
    column_mapping: dict | None = help_field(
        None, 'schema field → your column, e.g. \'{"rationale": "explanation", "label": "gold"}\'',
        type=json_object)


@dataclass
class TrustArguments:
    """The trust check that ``export`` and ``evaluate`` share (:mod:`larev_hf.hub.trust`)."""

    force: bool = help_field(False, "go on when the evaluators fail the trust checks (gold-rationale accuracy below "
                             "80%% or near chance, or Gold − Vacuous not above 0): export writes the bundle and its "
                             "card says so; evaluate scores and warns")


@dataclass
class DataDirArguments:
    """Where a named default evaluator's data comes from when it is built (:mod:`larev_hf.hub.named`)."""

    data_dir: str | None = help_field(
        None, "building a named evaluator: a directory in the shared data layout (esnli/, cose/, strategyqa/, "
        "human/); default $LAREV_HF_DATA, else the Hub datasets (then without the calibrated score)")


@dataclass
class EvaluatorsArguments:
    """``larev-hf evaluators``: the named default evaluators."""

    action: str = help_field("list", "list: every named evaluator, whether it is built, its bundle's size; build "
                             "NAME: build it now (--push-to-hub: then publish it); path NAME: its bundle directory "
                             "(from the cache, its published Hub repo, else built on first use)", flag="action",
                             choices=("list", "build", "path"), nargs="?")
    name: str | None = help_field(None, "the evaluator's name (esnli)", flag="name", nargs="?")


@dataclass
class PushArguments:
    """Uploading a bundle to the Hub: ``export``'s and ``evaluators build``'s."""

    push_to_hub: str | None = help_field(
        None, "also upload the bundle to this Hub model repo with its model card (`evaluators build NAME`: the built "
        "named evaluator, its recipe in the card)", metavar="REPO_ID")
    private: bool = help_field(False, "create the Hub repo as private")


@dataclass
class MetaArguments:
    """``larev-hf meta``'s own flags (what it scores: :class:`~larev_hf.meta.settings.MetaSettings`)."""

    run_dir: str | None = help_field(None, RUN_DIR_HELP, required=True)
    output_dir: str | None = help_field(None, "where the meta report goes (default: RUN_DIR/meta)")


@dataclass
class HumanArguments:
    """``larev-hf human``'s own flags (what it scores: :class:`~larev_hf.meta.settings.HumanSettings`)."""

    run_dir: str | None = help_field(None, f"{RUN_DIR_HELP} of the file's task", required=True)
    output_dir: str | None = help_field(None, "where the report goes (default: RUN_DIR/human/FILE_STEM)")


@dataclass
class VarifArguments:
    """``larev-hf varif``'s own flags."""

    output_dir: str | None = help_field(None, "the VARIF run directory (created; a rerun resumes it)", required=True)


@dataclass
class FrameArguments:
    """``larev-hf frame``'s own flags."""

    output_dir: str | None = help_field(None, "the FRAME run directory (created; a rerun resumes it)", required=True)


@dataclass
class ExportArguments:
    """``larev-hf export``: bundle a run's evaluators."""

    run_dir: str | None = help_field(None, "a finished run directory (`larev-hf run`)", required=True)
    method: str | None = help_field(None, "which metric's evaluators to bundle", required=True,
                                    choices=exportable_methods)
    output_dir: str | None = help_field(None, "the bundle directory (an existing bundle there is replaced)",
                                        required=True)
    calibration: str | None = help_field(
        None, "a calibration fitted by `larev-hf human --calibrate` (calibration.json): the bundle then also returns "
        "the calibrated score (it may read the method's score, length, rouge_l, grounding and copied_span)",
        metavar="CALIBRATION_JSON")


#: Each subcommand: its help line.
COMMAND_HELP = {
    "demo": "the whole pipeline on the embedded synthetic task (offline, CPU, minutes)",
    "run": "train the evaluators on a dataset and report on its test split",
    "evaluate": "score a file of explanations: a per-explanation table, scores.csv and a report (no retraining)",
    "evaluators": "the named default evaluators: list them, build one, or print where its bundle is",
    "meta": "score every method on the VARSuite adversarial families and say which metric to trust (AUC of gold vs "
            "each family; no retraining)",
    "human": "agreement of every method with human judgments of explanations (Spearman, Kendall, within-instance "
             "pairwise agreement, AUC; no retraining)",
    "varif": "compare explanation generators on VARIF's robustness x informativeness frontier (paraphrase robustness "
             "R, leakage-controlled LC-IG, specificity S)",
    "nli-train": "train the offline NLI judge (a MiniLM cross-encoder) on e-SNLI",
    "frame": "FRAME's three axioms for the rationale-label-consistency metrics (F-GOLD, GH-GOLD, GH-PRED, "
             "NP-GH-PRED): tables 1-3 with NRG over seeds",
    "export": "save a run's evaluators as an evaluator bundle (and push it to the Hub)",
}


def command_arguments() -> dict[str, list[tuple[type, str | None]]]:
    """Subcommand → the dataclasses its flags come from, each with its option group's title (``None``: the main list),
    in help order. ``run``'s are every section of the run's configuration (the registered methods' included)."""
    return {
        "demo": [(DemoArguments, None)],
        "run": [(RunArguments, None), *((cls, group) for _, cls, group in config_sections()),
                (JsonlArguments, "--dataset jsonl")],
        "evaluate": [(EvaluateArguments, None), (TrustArguments, None), (DataDirArguments, None)],
        "evaluators": [(EvaluatorsArguments, None), (DataDirArguments, None), (PushArguments, None)],
        "meta": [(MetaArguments, None), (MetaSettings, None)],
        "human": [(HumanArguments, None), (HumanSettings, None)],
        "varif": [(VarifArguments, None), (VarifSettings, None)],
        "nli-train": [(NliTrainArguments, None)],
        "frame": [(FrameArguments, None), (FrameSettings, None)],
        "export": [(ExportArguments, None), (PushArguments, None), (TrustArguments, None)],
    }


# --------------------------------------------------------------------------- `larev-hf run`'s flags → RunConfig


class _GivenStore(argparse._StoreAction):
    """A store action that also records that the user gave the flag (``<dest>_given``)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        super().__call__(parser, namespace, values, option_string)
        setattr(namespace, f"{self.dest}_given", True)


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


def record_given(parser: argparse.ArgumentParser, dest: str) -> None:
    """Make ``parser``'s ``dest`` flag record whether the user gave it (``<dest>_given``): without ``--dataset``,
    :func:`config_from_args` infers it."""
    for action in parser._actions:
        if action.dest == dest:
            action.__class__ = _GivenStore
    parser.set_defaults(**{f"{dest}_given": False})


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
