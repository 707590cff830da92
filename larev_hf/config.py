"""A run's configuration, one dataclass per concern (the TRL / HF way), composed into :class:`RunConfig`.

Sections: :class:`RunSection` (which methods), :class:`DataSection`, :class:`BackboneSection`,
:class:`TrainingSection`, :class:`EvaluationSection`, :class:`LoraSection`, then every registered method's own
settings dataclass (:attr:`larev_hf.methods.Method.settings_class`: LAREV's λs, RoRA's threshold, ...). Every default
lives in its field; the ``larev-hf`` flags are generated from the fields (:mod:`larev_hf.cli.commands.run`), and
``run_config.json`` is the flat dict of all of them (:meth:`RunConfig.to_dict`), which round-trips; an unknown key in
it is reported, not dropped.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from larev_hf.defaults import N_BOOT
from larev_hf.methods import get_method, method_names, resolve_methods
from larev_hf.methods.settings import comma_list, help_field, seed_values, setting_key
from larev_hf.modeling import PRESETS, get_input_format, is_pretrained
from larev_hf.modeling.lora_settings import LoraSettings
from larev_hf.modeling.presets import fill_backbone_defaults
from larev_hf.scores import VARIANTS
from larev_hf.training.settings import TrainSettings, trainer_field, trainer_values

DATASETS = ("esnli", "cose", "strategyqa", "ecqa", "synthetic", "jsonl")
#: Modules a preset trains in full under ``--lora``: its random input embeddings, without which adapters alone do not
#: learn to read the rationale (measured: docs/scale.md, "LoRA (PEFT)").
PRESET_LORA_MODULES_TO_SAVE = ["embed_tokens"]
#: A settings dataclass (:meth:`RunConfig.method_settings`).
SettingsT = TypeVar("SettingsT")


@dataclass
class RunSection:
    """Which metrics a run trains and reports."""

    method: str = help_field("rev", "metric(s) to train and report: 'all' or a comma-separated list of the registered "
                                    f"methods ({', '.join(method_names())}); 'all' leaves out the extensions asked "
                                    f"by name ({', '.join(n for n in method_names() if n not in resolve_methods('all'))})",
                             report_only=True)
    extra: dict[str, Any] = help_field({}, "free-form notes kept with the run", cli=False, report_only=True)

    def validate(self, config: RunConfig) -> None:
        resolve_methods(self.method)


@dataclass
class DataSection:
    """Where the data comes from and how baselines and training rationales are built (thesis A.1 steps 1-3)."""

    dataset: str = help_field("synthetic", "dataset kind; not given: the embedded 'synthetic' task without --data-dir, "
                              "else the kind whose columns --data-dir's files have (said in one line)", choices=DATASETS)
    data_dir: str | None = help_field(None, "local directory with {train,validation,test}.jsonl, or a Hub dataset name")
    baseline_builder: str = help_field(
        "template", "'template' (offline rules) or an HF model: 'paraphrase:<name>' / 'qa2d:<name>'")
    max_train_examples: int | None = help_field(None, "use the first N training examples")
    max_eval_examples: int | None = help_field(None, "use the first N validation/test examples")
    train_rationale: str = help_field(
        "gold", "the rationale variant every evaluator trains on (RoRA §4's protocol trains on the type it scores: one "
        "run per variant); default: the dataset's own rationales", choices=VARIANTS)
    loader_options: dict[str, Any] = help_field(
        {}, "--dataset jsonl: column mapping, task and label set (--column-mapping, --task, --label-set)", cli=False)

    def validate(self, config: RunConfig) -> None:
        if self.train_rationale not in VARIANTS:
            raise ValueError(f"train_rationale must be one of {VARIANTS}, got {self.train_rationale!r}")
        if self.loader_options and self.dataset != "jsonl":
            raise ValueError(f"--column-mapping / --task / --label-set apply to --dataset jsonl, not {self.dataset!r}")
        if self.data_dir is not None and Path(self.data_dir).is_file():
            raise ValueError(f"--data-dir {self.data_dir} is a file; expected a directory with train/validation/test "
                             "files (score a single file with `larev-hf evaluate --data-file`)")


@dataclass
class BackboneSection:
    """The evaluators' architecture and how they read and score text."""

    backbone: str = help_field(
        "t5-tiny", f"an offline preset ({', '.join(PRESETS)}) or any HF seq2seq checkpoint name or path (t5-large, "
        "facebook/bart-large)")
    input_format: str = help_field("larev", "encoder text template (see docs)", choices=("larev", "rev"))
    reduction: str = help_field("sum", "log p(y|·) as the summed (default) or REV's mean token log-prob",
                                choices=("sum", "mean"))
    backbone_defaults: dict[str, str] = help_field(
        {}, "the settings the run left unset and the backbone decided: name → where the value came from ('preset "
        "minilm2minilm', 'pretrained backbones', 'random-init presets'; larev_hf.modeling.presets)", cli=False,
        report_only=True)

    def validate(self, config: RunConfig) -> None:
        if self.reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {self.reduction!r}")
        get_input_format(self.input_format)


@dataclass
class TrainingSection:
    """Optimisation of every trained model: the fields of :class:`~larev_hf.training.TrainSettings`, taken with
    :func:`~larev_hf.training.settings.trainer_field` (``None``: the backbone's default), and the run's seeds and
    model selection."""

    seed: int = trainer_field(TrainSettings, "seed")
    seeds: list[str] = help_field(
        [], "evaluator seeds (comma list, e.g. 0,1,2): every trained stage runs once per seed (K seeds cost K "
        "trainings; data, tokenizer and baselines are shared, --seed's models stay at the run's root) and the report "
        "says which separations hold across seeds; adding a seed to a finished run trains only it",
        type=comma_list, report_only=True)
    learning_rate: float | None = trainer_field(TrainSettings, "learning_rate", default=None)
    num_train_epochs: float | None = trainer_field(TrainSettings, "num_train_epochs", default=None)
    batch_size: int | None = trainer_field(TrainSettings, "batch_size", default=None)
    select_on_validation: bool = help_field(
        False, "keep the epoch of Φ_base / Φ with the lowest validation loss (default: the last epoch)")
    group_by_length: bool = trainer_field(TrainSettings, "group_by_length")
    freeze_word_embeddings: bool = trainer_field(TrainSettings, "freeze_word_embeddings")
    bf16: bool = trainer_field(TrainSettings, "bf16")

    def validate(self, config: RunConfig) -> None:
        seed_values(self.seeds)


@dataclass
class EvaluationSection:
    """Scoring and reporting only: a resumed run may change these."""

    eval_batch_size: int = help_field(64, "scoring batch size", report_only=True)
    n_boot: int = help_field(N_BOOT, "bootstrap resamples for the 95%% intervals", report_only=True)


@dataclass
class LoraSection:
    """LoRA (PEFT) for every trained seq2seq model."""

    lora: bool = help_field(False, "train LoRA adapters instead of full fine-tuning")
    lora_r: int = help_field(16, "adapter rank")
    lora_alpha: int = help_field(32, "adapter scaling numerator (update × alpha / r)")
    lora_dropout: float = help_field(0.05, "adapter dropout")
    lora_target_modules: list[str] | None = help_field(
        None, "comma-separated module-name suffixes, e.g. 'q,v' (default: every linear layer but the output)",
        type=comma_list)
    lora_modules_to_save: list[str] | None = help_field(
        None, "modules trained in full alongside the adapters (default: 'embed_tokens' for presets, whose embeddings "
        "are random; none for checkpoints; '' for none)", type=comma_list)

    def lora_settings(self, backbone: str) -> LoraSettings | None:
        """These LoRA settings for ``backbone``, or ``None`` for full fine-tuning. ``lora_modules_to_save=None`` means
        the backbone's default (:data:`PRESET_LORA_MODULES_TO_SAVE` for presets, none for checkpoints); ``[]`` none."""
        if not self.lora:
            return None
        modules_to_save = self.lora_modules_to_save
        if modules_to_save is None:
            modules_to_save = None if is_pretrained(backbone) else PRESET_LORA_MODULES_TO_SAVE
        return LoraSettings(r=self.lora_r, alpha=self.lora_alpha, dropout=self.lora_dropout,
                            target_modules=self.lora_target_modules, modules_to_save=modules_to_save or None)


#: The core sections, in order: name, dataclass, and the title of their CLI option group (``None``: the main list).
CORE_SECTIONS: tuple[tuple[str, type, str | None], ...] = (
    ("run", RunSection, None), ("data", DataSection, None), ("model", BackboneSection, None),
    ("training", TrainingSection, None), ("evaluation", EvaluationSection, None),
    ("peft", LoraSection, "LoRA (PEFT) for every trained model"),
)


def config_sections() -> list[tuple[str, type, str | None]]:
    """The core sections, then each registered method's settings dataclass (named and titled after the method)."""
    sections = list(CORE_SECTIONS)
    for name in method_names():
        method = get_method(name)
        if method.settings_class is not None and method.settings_class not in [cls for _, cls, _ in sections]:
            sections.append((name, method.settings_class, f"{method.title} ({name})"))
    return sections


def setting_items() -> list[tuple[str, dataclasses.Field]]:
    """Every setting of the run by its key (``lambda_irm``; a nested section's ``rora.lambda_irm``:
    :func:`~larev_hf.methods.settings.setting_key`) with its field: the names of ``run_config.json`` and the flags."""
    return [(setting_key(cls, f.name), f) for _, cls, _ in config_sections() for f in dataclasses.fields(cls)]


def setting_defaults() -> dict[str, Any]:
    """Setting key → its default (what ``run_config.json`` holds for a setting left alone)."""
    return {key: f.default if f.default is not dataclasses.MISSING else f.default_factory()
            for key, f in setting_items()}


def field_metadata() -> dict[str, dict[str, Any]]:
    """Setting key → its field metadata (``report_only``, ``stages``, ``help``)."""
    return {key: dict(f.metadata) for key, f in setting_items()}


#: Settings that earlier versions spelt differently, old key → key now: the one table of old spellings. Old
#: ``run_config.json`` files are read through it (:func:`saved_settings`), the run's parser keeps each old flag as a
#: deprecated alias of the new one (``--rora-threshold`` → ``--rora.threshold``), and ``RunConfig(**values)`` accepts
#: the old keyword with a ``FutureWarning``. To be removed at the next minor version.
RENAMED_SETTINGS: dict[str, str] = {
    "rora_threshold": "rora.threshold", "rora_top_k": "rora.top_k", "rora_lambda_irm": "rora.lambda_irm",
    "rora_classifier": "rora.classifier",
}


def renamed_settings(values: dict[str, Any], warn: bool = False) -> dict[str, Any]:
    """``values`` with every old key of :data:`RENAMED_SETTINGS` (and of ``backbone_defaults``) under its key now;
    with ``warn``, a ``FutureWarning`` names each new key."""
    values = dict(values)
    for old, new in RENAMED_SETTINGS.items():
        if old in values:
            if warn:
                warnings.warn(f"the setting {old!r} is now {new!r} (RunConfig(**{{{new!r}: ...}}), the flag "
                              f"--{new.replace('_', '-')}); {old!r} will be removed in the next minor version",
                              FutureWarning, stacklevel=3)
            values[new] = values.pop(old)
    if values.get("backbone_defaults"):
        values["backbone_defaults"] = {RENAMED_SETTINGS.get(name, name): source
                                       for name, source in values["backbone_defaults"].items()}
    return values


def saved_settings(values: dict[str, Any]) -> dict[str, Any]:
    """What a ``run_config.json`` written by an earlier version means now: the one place old files are read (a resumed
    run, ``Run.load`` for ``larev-hf export`` / ``meta`` / ``human``; a bundle keeps its copy as written, as a record).

    - Keys spelt differently then (``rora_threshold`` → ``rora.threshold``: :data:`RENAMED_SETTINGS`), in the
      settings and in ``backbone_defaults``.
    - RoRA's λ (``rora.lambda_irm``) of a run with ``rora.classifier``: earlier versions recorded the run backbone's
      value while Φ trained with the classifier encoder's; it is decided again, by the encoder, as Φ was.
    """
    values = renamed_settings(values)
    decided = dict(values.get("backbone_defaults") or {})
    if values.get("rora.classifier") and "rora.lambda_irm" in decided:
        values["rora.lambda_irm"] = None
        del decided["rora.lambda_irm"]
        values["backbone_defaults"] = decided
    return values


class ConfigSections:
    """Reading a run's configuration through the sections that declare it, so a use leads to its field: the core
    sections as typed properties, a method's own settings by their class (:meth:`method_settings`)."""

    sections: dict[str, Any]

    @property
    def run(self) -> RunSection:
        """Which metrics the run trains and reports."""
        return self.sections["run"]

    @property
    def data(self) -> DataSection:
        """Where the data comes from, baselines and training rationales."""
        return self.sections["data"]

    @property
    def model(self) -> BackboneSection:
        """The evaluators' backbone, input format and reduction."""
        return self.sections["model"]

    @property
    def training(self) -> TrainingSection:
        """Seeds and optimisation of every trained model."""
        return self.sections["training"]

    @property
    def evaluation(self) -> EvaluationSection:
        """Scoring and reporting."""
        return self.sections["evaluation"]

    @property
    def peft(self) -> LoraSection:
        """LoRA adapters of every trained model."""
        return self.sections["peft"]

    def method_settings(self, cls: type[SettingsT]) -> SettingsT:
        """The run's instance of a method's settings dataclass ``cls`` (``LarevSettings``, ``RoRASettings``, ...:
        each registered method's :attr:`~larev_hf.methods.Method.settings_class`)."""
        for section in self.sections.values():
            if type(section) is cls:
                return section
        raise KeyError(f"{cls.__name__} is not the settings of a registered method (registered: "
                       f"{', '.join(method_names())})")

    def _value(self, name: str) -> Any:
        """Setting ``name`` by its flat (``run_config.json``) key (``rora.lambda_irm`` for a nested section's)."""
        for section in self.sections.values():
            for field_name in section.__dataclass_fields__:
                if setting_key(type(section), field_name) == name:
                    return getattr(section, field_name)
        raise KeyError(f"RunConfig has no setting {name!r}")


class RunConfig(ConfigSections):
    """Everything that defines a run; saved as ``run_config.json`` and checked on resume.

    Built from flat keyword arguments (``RunConfig(method="all", lambda_irm=0.5)``), each going to the section that
    declares it; a nested section's settings by their key (``RunConfig(method="rora", **{"rora.threshold": 0.05})``).
    Read back through typed sections (:class:`ConfigSections`), so a use leads to the field that declares it: the core
    ones as properties (``config.data.dataset``, ``config.training.seed``, ``config.model.backbone``), a method's own
    with :meth:`method_settings` (``config.method_settings(LarevSettings).lambda_irm``). What settings exist and their
    defaults: :func:`setting_items`, :func:`setting_defaults`, :func:`field_metadata`.
    """

    def __init__(self, **values: Any) -> None:
        remaining = renamed_settings(values, warn=True)
        sections = {}
        for section, cls, _ in config_sections():
            keys = {setting_key(cls, f.name): f.name for f in dataclasses.fields(cls)}
            sections[section] = cls(**{name: remaining.pop(key) for key, name in keys.items() if key in remaining})
        if remaining:
            raise ValueError(f"unknown setting(s) {sorted(remaining)}; known: {sorted(setting_defaults())} "
                             "(a setting of a method that is not registered in this process?)")
        object.__setattr__(self, "sections", sections)
        self._fill_backbone_defaults()
        for section in sections.values():
            if hasattr(section, "validate"):
                section.validate(self)

    def _fill_backbone_defaults(self) -> None:
        """Every setting the run left unset (``None``) that the backbone decides takes the backbone's value
        (:func:`~larev_hf.modeling.presets.fill_backbone_defaults`), and ``backbone_defaults`` records where it came
        from, so ``run_config.json`` and the report show the values a run trained with. A section whose models are
        not the run's backbone names the one that decides for it (``decided_by(config)``: RoRA's classifier
        encoder)."""
        model = self.model
        filled = dict(model.backbone_defaults)
        for section in self.sections.values():
            backbone = section.decided_by(self) if hasattr(section, "decided_by") else model.backbone
            filled.update(fill_backbone_defaults(section, backbone))
        model.backbone_defaults = filled

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RunConfig is immutable; build a new one with replace(**changes)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunConfig) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        defaults = setting_defaults()
        changed = {k: v for k, v in self.to_dict().items() if defaults.get(k) != v}
        return f"RunConfig({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def to_dict(self) -> dict[str, Any]:
        """Every setting by its key (what ``run_config.json`` holds; ``rora.lambda_irm`` for a nested section's)."""
        return {setting_key(type(section), name): value for section in self.sections.values()
                for name, value in dataclasses.asdict(section).items()}

    def replace(self, **changes: Any) -> RunConfig:
        """A new configuration with ``changes``; the settings the backbone decided are decided again (a changed
        backbone brings its own)."""
        values = self.to_dict()
        for name in values.pop("backbone_defaults"):
            values[name] = None
        return RunConfig(**{**values, **changes})

    def given(self, name: str) -> Any:
        """Setting ``name`` as the user gave it: ``None`` where the backbone decided it."""
        return None if name in self.model.backbone_defaults else self._value(name)

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "run_config.json") -> RunConfig:
        """Rebuild a saved configuration; a key missing from an older file takes its default, an unknown key raises
        a ``ValueError`` naming ``source``."""
        values = saved_settings(values)
        known = set(setting_defaults())
        unknown = sorted(k for k in values if k not in known)
        if unknown:
            raise ValueError(f"{source}: unknown setting(s) {unknown}; it was written by another version of larev-hf "
                             "or with a method that is not registered in this process")
        return cls(**values)

    # ------------------------------------------------------------------ derived settings
    @property
    def evaluator_seeds(self) -> list[int]:
        """The seeds every trained stage runs with: ``--seeds``, or ``--seed`` alone."""
        return seed_values(self.training.seeds) or [self.training.seed]

    @property
    def methods(self) -> tuple[str, ...]:
        """The methods of the run, in canonical (registry) order."""
        return resolve_methods(self.run.method)

    def train_settings(self, progress: bool = True) -> TrainSettings:
        """What every trained stage of the run trains with: the training section's
        :class:`~larev_hf.training.TrainSettings` fields as they are, and the LoRA section's adapters."""
        return TrainSettings(**trainer_values(self.training), progress=progress,
                             lora=self.peft.lora_settings(self.model.backbone))
