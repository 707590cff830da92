"""Each setting declared once: every flag of every ``larev-hf`` subcommand takes its default from exactly
one dataclass field, and the defaults a backbone decides have one definition each."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import re
from pathlib import Path

import pytest

from larev_hf.cli import build_parser
from larev_hf.cli.arguments import GlobalArguments
from larev_hf.cli.commands import command_arguments
from larev_hf.cli.commands.run import DeprecatedFlag
from larev_hf.config import RunConfig
from larev_hf.methods.larev import LarevSettings
from larev_hf.methods.settings import setting_key
from larev_hf.modeling.presets import KIND_DEFAULTS, PRESETS, backbone_defaults

ROOT = Path(__file__).resolve().parents[1]


def _default(field: dataclasses.Field):
    return field.default if field.default is not dataclasses.MISSING else field.default_factory()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _check(parser: argparse.ArgumentParser, classes: list[type]) -> int:
    checked = 0
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if isinstance(action, DeprecatedFlag):  # an old spelling, hidden: it stores into the new flag's setting
            assert action.dest in {a.dest for a in parser._actions if not isinstance(a, DeprecatedFlag)}
            continue
        fields = [f for cls in classes for f in dataclasses.fields(cls) if setting_key(cls, f.name) == action.dest]
        assert len(fields) == 1, f"{action.option_strings}: declared by {len(fields)} fields"
        assert action.default == _default(fields[0]), action.option_strings
        assert action.help == fields[0].metadata["help"], action.option_strings
        checked += 1
    return checked


def test_every_flag_of_every_subcommand_comes_from_exactly_one_dataclass_field() -> None:
    parser = build_parser()
    assert _check(parser, [GlobalArguments]) == 2
    subparsers, table = _subparsers(parser), command_arguments()
    assert set(subparsers) == set(table)
    for command, sub in subparsers.items():
        assert _check(sub, [cls for cls, _ in table[command]]) >= 1, command
        # and every field with a flag is a flag of the command
        flags = {a.dest for a in sub._actions}
        for cls, _ in table[command]:
            for field in dataclasses.fields(cls):
                assert field.metadata.get("cli", True) is False or setting_key(cls, field.name) in flags, \
                    (command, field.name)


def test_larevs_and_roras_default_weights_are_defined_once() -> None:
    # the literal values live in KIND_DEFAULTS and the presets' own table; no other module spells them out
    sources = [p for p in (ROOT / "larev_hf").rglob("*.py") if p.name != "presets.py"]
    number = r"(\d+(?:\.\d*)?(?:e-?\d+)?)\b"
    # a dict entry ("lambda_irm": 5.0) or a field's default (lambda_irm: float = 0.1 / help_field(0.1, ...))
    pattern = re.compile(r"(?:\"(?:rora[._])?(?:lambda_irm|lambda_probe|groups_per_batch)\"\s*:\s*|^\s*(?:rora_)?"
                         r"(?:lambda_irm|lambda_probe|groups_per_batch)\s*:[^=\n]*=\s*(?:help_field\()?)" + number,
                         re.M)
    offenders = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sources for m in pattern.finditer(p.read_text())
                 if float(m.group(1)) != 0.0]
    assert offenders == []


@pytest.mark.parametrize("backbone", ["t5-tiny", "minilm2minilm", "minilm2minilm-l2", "t5-large"])
def test_a_run_fills_what_it_left_unset_from_its_backbone_and_says_where_from(backbone: str) -> None:
    config = RunConfig(method="larev", backbone=backbone, lambda_probe=0.25)
    decided = backbone_defaults(backbone)
    larev = config.method_settings(LarevSettings)
    assert larev.lambda_probe == 0.25 and "lambda_probe" not in config.model.backbone_defaults  # given: kept
    values = {"lambda_irm": larev.lambda_irm, "groups_per_batch": larev.groups_per_batch,
              "phi_la_init": larev.phi_la_init, "learning_rate": config.training.learning_rate,
              "num_train_epochs": config.training.num_train_epochs}
    for name, value in values.items():
        assert value == decided[name][0] and config.model.backbone_defaults[name] == decided[name][1]
    if backbone in PRESETS and PRESETS[backbone].defaults.get("lambda_irm") is not None:
        assert config.model.backbone_defaults["lambda_irm"] == f"preset {backbone}"
    # run_config.json round-trips, and another backbone decides again
    assert RunConfig.from_dict(config.to_dict()) == config
    other = config.replace(backbone="t5-tiny")
    other_larev = other.method_settings(LarevSettings)
    assert other_larev.lambda_irm == KIND_DEFAULTS["random_init"]["lambda_irm"] and other_larev.lambda_probe == 0.25


def test_minilm2minilm_carries_its_measured_settings_and_the_thesiss_checkpoints_keep_theirs() -> None:
    minilm = RunConfig(method="larev", backbone="minilm2minilm")
    larev = minilm.method_settings(LarevSettings)
    assert (larev.lambda_irm, larev.lambda_probe, larev.groups_per_batch, larev.phi_la_init, minilm.training.learning_rate,
            minilm.training.num_train_epochs) == (0.1, 0.0, 4, "phi", 1e-4, 2.0)
    checkpoint = RunConfig(method="larev", backbone="t5-large")
    larev = checkpoint.method_settings(LarevSettings)
    assert (larev.lambda_irm, larev.lambda_probe, larev.groups_per_batch) == (5.0, 5e-4, 1)
    assert checkpoint.model.backbone_defaults["lambda_irm"] == "pretrained backbones"


def test_one_record_rule_for_loaders_bundle_inputs_and_judged_files(tmp_path: Path) -> None:
    from larev_hf.data.schema import make_example, validate_example
    from larev_hf.hub.inputs import build_records
    from larev_hf.io import DataError
    from larev_hf.meta.judgments import load_judgments

    nli = {"premise": "A dog runs.", "hypothesis": "An animal moves."}
    # a scored rationale may be empty (b alone) in bundle inputs and judged files; training data needs one
    [record] = build_records([""], ["entailment"], [nli], task="nli")
    validate_example(record, require_rationale=False)
    with pytest.raises(DataError, match="field 'rationale' is empty"):
        validate_example(record)
    judged = tmp_path / "judged.jsonl"
    judged.write_text('{"id": "a", "premise": "A dog runs.", "hypothesis": "An animal moves.", "label": '
                      '"entailment", "rationale": "", "acceptable": 1}\n')
    assert load_judgments(judged, "nli", ["acceptable"])[0]["rationale"] == ""
    # the same rule refuses a record whose label is outside its choices, wherever it is built
    bad = make_example(id="x", task="qa", question="Where?", choices=["kitchen"], label="attic", rationale="r")
    with pytest.raises(DataError, match=r"inputs\[0\]: field 'label' is 'attic', which is outside the label set"):
        validate_example(bad, location="inputs[0]")


def test_the_report_says_which_values_the_backbone_decided() -> None:
    from larev_hf.report import backbone_defaults_lines

    settings = RunConfig(method="larev", backbone="minilm2minilm", learning_rate=3e-4).to_dict()
    [line, _] = backbone_defaults_lines(settings)
    assert "preset minilm2minilm: " in line and "`--lambda-irm 0.1`" in line and "`--phi-la-init phi`" in line
    assert "--learning-rate" not in line  # given by the user
    assert backbone_defaults_lines({}) == []


# --------------------------------------------------------------------------- defaults shared by several dataclasses
#: A settings dataclass: the run's sections, a method's or command's settings, a library config.
SETTINGS_SUFFIXES = ("Settings", "Config", "Arguments", "Section")
#: Fields with different names that hold the same knob: (class, field) → the knob (the run's flag name).
SAME_KNOB = {("IGSettings", "n_steps"): "ig_steps", ("IGSettings", "top_k"): "ig_top_k", ("IGSettings", "target"): "ig_target",
             ("DetectorSettings", "threshold"): "rora.threshold", ("DetectorSettings", "top_k"): "rora.top_k",
             ("RoRASettings", "threshold"): "rora.threshold", ("RoRASettings", "top_k"): "rora.top_k"}
#: Knobs that each experiment sizes on its own and that agree today by choice, not by definition: FRAME's and
#: VARIF's data set, backbone and test-set size (their training sets differ: 2000 / 5000 examples).
INDEPENDENT = {"dataset", "backbone", "max_eval_examples"}


def _literal_defaults() -> list[tuple[str, str, object]]:
    """``(where, knob, value)`` of every settings dataclass field in ``larev_hf`` whose default is written as a
    literal (a number, a string, ``True``), read from the source: a default that names a constant is not one."""
    out = []
    for path in sorted((ROOT / "larev_hf").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ClassDef) and node.name.endswith(SETTINGS_SUFFIXES)):
                continue
            for statement in node.body:
                if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                        and statement.value is not None):
                    continue
                default = statement.value
                if isinstance(default, ast.Call):  # help_field(default, help) / field(default=...)
                    keywords = {k.arg: k.value for k in default.keywords}
                    default = keywords.get("default", default.args[0] if default.args else None)
                if isinstance(default, ast.Constant) and default.value not in (None, 0, False, ""):
                    name = statement.target.id
                    out.append((f"{path.relative_to(ROOT)}:{node.name}.{name}",
                                SAME_KNOB.get((node.name, name), name), default.value))
    return out


def test_a_default_that_several_dataclasses_carry_is_declared_once() -> None:
    # a knob's literal default is written in one dataclass at most; the others name its constant (larev_hf.defaults,
    # KIND_DEFAULTS, PENALTY_WARMUP_RATIO)
    literals = _literal_defaults()
    assert len(literals) > 50  # the scan sees the settings dataclasses
    by_knob: dict[tuple[str, object], list[str]] = {}
    for where, knob, value in literals:
        by_knob.setdefault((knob, value), []).append(where)
    repeated = {knob: places for (knob, _), places in by_knob.items() if len(places) > 1 and knob not in INDEPENDENT}
    assert repeated == {}


def test_a_flag_and_the_library_setting_it_feeds_share_one_default() -> None:
    from larev_hf import defaults
    from larev_hf.leakage import IGSettings
    from larev_hf.rora import DetectorSettings, RoRASettings
    from larev_hf.training import IRMProbeConfig, TrainSettings
    from larev_hf.varif.lcig import MaskSettings
    from larev_hf.varif.settings import VarifSettings

    def default(cls: type, name: str):
        return _default(next(f for f in dataclasses.fields(cls) if f.name == name))

    same = [((IGSettings, "n_steps"), (LarevSettings, "ig_steps"), (DetectorSettings, "ig_steps"),
             (MaskSettings, "ig_steps"), (VarifSettings, "ig_steps")),
            ((IGSettings, "top_k"), (LarevSettings, "ig_top_k")),
            ((IGSettings, "stop_word_guard"), (LarevSettings, "stop_word_guard")),
            ((IGSettings, "target"), (LarevSettings, "ig_target")),
            ((IRMProbeConfig, "probe_every_n_steps"), (LarevSettings, "probe_every_n_steps")),
            ((DetectorSettings, "threshold"), (RoRASettings, "threshold")),
            ((DetectorSettings, "top_k"), (RoRASettings, "top_k")),
            *(((MaskSettings, name), (VarifSettings, name)) for name in ("mask_share", "max_masked", "ig_labels"))]
    for group in same:
        assert len({default(cls, name) for cls, name in group}) == 1, group
    assert defaults.IG_STEPS == default(IGSettings, "n_steps")
    random_init = KIND_DEFAULTS["random_init"]
    for name in ("learning_rate", "num_train_epochs", "batch_size"):
        assert default(TrainSettings, name) == random_init[name]
    assert default(IRMProbeConfig, "lambda_irm") == random_init["lambda_irm"]


# --------------------------------------------------------------------------- the run's settings and the trainer configs
def _trainer_fields() -> dict[str, dataclasses.Field]:
    """Knob → its field in a trainer's config: what every trained model trains with (``TrainSettings``), what an IRM
    trainer adds to HF's arguments (``IRMArguments``, in ``IRMProbeConfig``) and what RoRA's adds (``RoRAConfig``);
    the fields with a help text (``TrainSettings.lora`` is built from the LoRA section, not a knob of its own)."""
    from transformers import Seq2SeqTrainingArguments

    from larev_hf.rora import RoRAConfig
    from larev_hf.training import IRMArguments, TrainSettings

    hf = {f.name for f in dataclasses.fields(Seq2SeqTrainingArguments)}
    fields = [*dataclasses.fields(TrainSettings), *dataclasses.fields(IRMArguments),
              *(f for f in dataclasses.fields(RoRAConfig) if f.name not in hf)]
    return {f.name: f for f in fields if "help" in f.metadata}


def test_a_trainer_setting_is_declared_once_between_the_method_settings_and_the_trainer_configs() -> None:
    # a run setting that is a trainer's knob (by name: LAREV's lambda_irm, RoRA's nested rora.lambda_irm) takes
    # the trainer config's field (trainer_field): its help comes from there, and trainer_values hands its value on
    from larev_hf.config import config_sections

    trainer = _trainer_fields()
    taken, redeclared = [], []
    for _, cls, _ in config_sections():
        for field in dataclasses.fields(cls):
            knob = field.metadata.get("trainer_field", field.name)
            if knob not in trainer:
                continue
            source = trainer[knob]
            if field.metadata.get("trainer_field") == knob and field.metadata["help"].startswith(source.metadata["help"]):
                taken.append(f"{cls.__name__}.{field.name}")
            else:
                redeclared.append(f"{cls.__name__}.{field.name} (the trainer's {knob})")
    assert redeclared == []
    # LAREV's five trainer weights, RoRA's λ and the core training flags all come from the trainers' configs
    assert {"LarevSettings.lambda_irm", "LarevSettings.lambda_probe", "LarevSettings.penalty_warmup_ratio",
            "LarevSettings.probe_max_loss", "LarevSettings.probe_every_n_steps", "RoRASettings.lambda_irm",
            "TrainingSection.seed", "TrainingSection.learning_rate", "TrainingSection.num_train_epochs",
            "TrainingSection.batch_size", "TrainingSection.group_by_length", "TrainingSection.freeze_word_embeddings",
            "TrainingSection.bf16"} <= set(taken)


def test_a_trainer_config_field_is_declared_in_one_class() -> None:
    # IRMProbeConfig and RoRAConfig add to IRMArguments, they do not spell its fields out again
    from larev_hf.rora import RoRAConfig
    from larev_hf.training import IRMArguments, IRMProbeConfig

    irm = {f.name for f in dataclasses.fields(IRMArguments)}
    for cls in (IRMProbeConfig, RoRAConfig):
        assert not irm & set(vars(cls).get("__annotations__", {})), cls.__name__


def test_a_training_flag_reaches_the_trainer_config_through_its_one_field(tmp_path: Path) -> None:
    from larev_hf.rora import RoRAConfig, RoRASettings
    from larev_hf.training import IRMProbeConfig, trainer_values

    config = RunConfig(method="larev,rora", learning_rate=2e-4, batch_size=4, seed=3, group_by_length=True,
                       lambda_irm=0.7, probe_every_n_steps=3, **{"rora.lambda_irm": 2.5})
    settings = config.train_settings(progress=False)
    larev = settings.training_arguments(tmp_path, args_class=IRMProbeConfig,
                                        **trainer_values(config.method_settings(LarevSettings)))
    assert (larev.learning_rate, larev.per_device_train_batch_size, larev.seed, larev.train_sampling_strategy,
            larev.lambda_irm, larev.probe_every_n_steps) == (2e-4, 4, 3, "group_by_length", 0.7, 3)
    rora = settings.training_arguments(tmp_path, args_class=RoRAConfig,
                                       **trainer_values(config.method_settings(RoRASettings)))
    assert (rora.lambda_irm, rora.normalization) == (2.5, "label_set")


def test_every_flag_in_the_examples_has_one_spelling() -> None:
    # `--lambda_irm` and `--lambda-irm` both parse (HfArgumentParser), so the examples must pick one
    spellings: dict[str, set[str]] = {}
    for path in (ROOT / "examples").rglob("*.py"):
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9_-]*", path.read_text()):
            spellings.setdefault(flag.replace("_", "-"), set()).add(flag)
    assert spellings and {flag: s for flag, s in spellings.items() if len(s) > 1} == {}
