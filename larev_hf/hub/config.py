"""``config_larev.json``: what a bundle is (method, task, label set, formats, models, checksums, training config)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from larev_hf import __version__
from larev_hf.data.schema import TASKS
from larev_hf.hub.findings import FindingThresholds
from larev_hf.io import read_json
from larev_hf.methods import exportable_methods, get_method, text_features
from larev_hf.modeling.input_formats import get_input_format
from larev_hf.scores.calibration import Calibration

#: File names inside a bundle (module-level constants, as SetFit and transformers keep them).
CONFIG_NAME = "config_larev.json"
REPORT_NAME = "report.json"
MODEL_CARD_NAME = "README.md"
#: A published named evaluator's recipe (:mod:`larev_hf.evaluators.published`); other bundles have none.
RECIPE_NAME = "recipe.json"
TOKENIZER_DIR = "tokenizer"
#: Where an NLI bundle keeps its NLI judge (:meth:`~larev_hf.hub.EvaluatorBundle.with_nli_judge`).
JUDGE_DIR = "nli_judge"
#: Version of the bundle layout; bumped when a reader of the old layout could misread the new one.
FORMAT_VERSION = 1


@dataclass
class BundleConfig:
    """The contents of ``config_larev.json``.

    Args:
        method (`str`): ``"rev"``, ``"larev"`` or ``"rora"``.
        task (`str`): ``"nli"``, ``"qa"`` or ``"yesno"``: which input fields ``score`` expects.
        label_set (`list[str]`, *optional*): the labels the evaluators were trained on when they are a
            fixed set (NLI, yes/no, QA with shared choices); ``None`` for QA, whose label is the answer text.
        input_format (`str`): the encoder template name (:data:`larev_hf.modeling.INPUT_FORMATS`; ``"rora"`` for RoRA).
        reduction (`str`): ``"sum"`` (log p(y | ·)) or ``"mean"`` (REV's per-token mean).
        baseline_builder (`dict`, *optional*): the builder's ``to_config()``; ``None`` for RoRA, which reads x, not b.
        models (`dict[str, str]`): role → model directory inside the bundle.
        dataset (`str`): the training data set kind (``"esnli"``, ``"synthetic"``, ...).
        training (`dict`): the run's configuration (``run_config.json``).
        files_sha256 (`dict[str, str]`): SHA-256 of every model and tokenizer file (bundle-relative path).
        tokenizer (`str`, *optional*, defaults to `"tokenizer"`): the tokenizer directory.
        calibration (`dict`, *optional*): a :class:`~larev_hf.scores.calibration.Calibration` fitted on human
            judgments (``larev-hf human --calibrate``, then ``larev-hf export --calibration``): ``score`` then also
            returns the calibrated score; it reads the method's own score, ``length``, ``rouge_l`` and ``grounding`` only.
        seeds (`list[int]`, *optional*): an ensemble bundle's evaluator seeds (``larev-hf export`` of a run trained with
            ``--seeds``); the first seed's models are ``models``, every other seed's ``seed_models[str(seed)]``
            (role → directory); ``score`` returns the mean over seeds and each seed's scores.
        trust (`dict`, *optional*): :class:`~larev_hf.hub.trust.Trust` of the evaluators at export (gold-rationale
            accuracy against chance, Gold − Vacuous with its interval, the problems found); the card states it.
        label_offsets (`dict[str, float]`, *optional*): the mean gold score of each label on the run's test split
            (fixed label sets only); ``score`` returns ``label_centred`` = score − its label's offset.
        findings (`dict`, *optional*): the thresholds of the findings ``score`` reports
            (:class:`~larev_hf.hub.findings.FindingThresholds`), written at export so a published bundle reports
            what it reported when built; ``None``: the library's defaults. They change no score, so no hashcode.
        nli_judge (`dict`, *optional*): the NLI judge an NLI bundle carries for the finding *contradicts the label*
            (:class:`~larev_hf.training.nli_judge.NLIJudge` trained with ``read_explanations``): its ``directory``
            inside the bundle, the SHA-256 of its files (``files_sha256``) and its training metrics (``metrics``).
            It changes no score, so no hashcode.
        format_version (`int`, *optional*): the bundle layout version.
        library_version (`str`, *optional*): the larev-hf version that wrote the bundle.
    """

    method: str
    task: str
    label_set: list[str] | None
    input_format: str
    reduction: str
    baseline_builder: dict[str, Any] | None
    models: dict[str, str]
    dataset: str
    training: dict[str, Any]
    files_sha256: dict[str, str] = field(default_factory=dict)
    tokenizer: str = TOKENIZER_DIR
    calibration: dict[str, Any] | None = None
    seeds: list[int] | None = None
    seed_models: dict[str, dict[str, str]] | None = None
    trust: dict[str, Any] | None = None
    label_offsets: dict[str, float] | None = None
    findings: dict[str, Any] | None = None
    nli_judge: dict[str, Any] | None = None
    format_version: int = FORMAT_VERSION
    library_version: str = __version__

    def __post_init__(self) -> None:
        if self.method not in exportable_methods():
            raise ValueError(f"method {self.method!r} is not a bundle method; expected one of {exportable_methods()}")
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r}: expected one of {TASKS}")
        if self.reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {self.reduction!r}")
        spec = get_method(self.method)
        if spec.reads_input:
            if self.input_format != self.method:
                raise ValueError(f"input_format {self.input_format!r}: a {self.method} bundle uses {self.method!r}")
        else:
            get_input_format(self.input_format)
        roles = set(spec.roles)
        if set(self.models) != roles:
            raise ValueError(f"models {self.models}: a {self.method} bundle needs exactly the roles {sorted(roles)}")
        if not (spec.reads_input and self.baseline_builder is None) and (
                not isinstance(self.baseline_builder, Mapping) or "name" not in self.baseline_builder):
            raise ValueError(f"baseline_builder {self.baseline_builder!r}: expected a builder's to_config() dict")
        if (self.seeds is None) != (self.seed_models is None) or (self.seeds is not None and (
                len(self.seeds) < 2 or sorted(self.seed_models) != sorted(str(s) for s in self.seeds[1:])
                or any(set(m) != roles for m in self.seed_models.values()))):
            raise ValueError(f"seeds {self.seeds} / seed_models {self.seed_models}: an ensemble bundle lists two or "
                             "more seeds and, for each after the first, a directory per role")
        if self.calibration is not None:
            readable = {self.method, *text_features()}
            calibration = Calibration.from_dict(self.calibration)
            if unreadable := [f for f in calibration.features if f not in readable]:
                raise ValueError(f"calibration reads {unreadable}, which a {self.method} bundle cannot compute; it can "
                                 f"read {sorted(readable)}")
            if stateless := [f for f in calibration.features if f != self.method and getattr(
                    get_method(f), "needs_state", False) and f not in calibration.text_models]:
                raise ValueError(f"calibration reads {stateless} but carries no text_models for them; fit it again "
                                 "with `larev-hf human --calibrate ...` so that it does")
        if self.findings is not None:
            FindingThresholds.from_dict(self.findings)
        if self.nli_judge is not None:
            keys = {"directory", "files_sha256", "metrics"}
            if not isinstance(self.nli_judge, Mapping) or set(self.nli_judge) != keys:
                raise ValueError(f"nli_judge: expected a dict with the keys {sorted(keys)}, got {self.nli_judge!r}")
            if self.task != "nli":
                raise ValueError(f"nli_judge: a {self.task} bundle cannot carry an NLI judge; only an NLI bundle reads one")
        if self.format_version > FORMAT_VERSION:
            raise ValueError(f"bundle format {self.format_version} is newer than this larev-hf ({__version__}) reads "
                             f"(format {FORMAT_VERSION}); upgrade larev-hf")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], source: str = CONFIG_NAME) -> BundleConfig:
        """Validate and build; a missing key or a bad value raises a ``ValueError`` naming ``source``."""
        names = [f.name for f in fields(cls)]
        required = [f.name for f in fields(cls) if f.name not in ("files_sha256", "tokenizer", "calibration", "seeds",
                                                                   "seed_models", "trust", "label_offsets",
                                                                   "findings", "nli_judge",
                                                                   "format_version",
                                                                   "library_version")]
        missing = [name for name in required if name not in values]
        if missing:
            raise ValueError(f"{source}: missing key(s) {missing}; expected the keys {names}")
        try:
            return cls(**{name: values[name] for name in names if name in values})
        except ValueError as error:
            raise ValueError(f"{source}: {error}") from None

    def model_dirs_of(self, seed: int | None = None) -> dict[str, str]:
        """Role → model directory of evaluator ``seed`` (default, or the first seed: :attr:`models`)."""
        if seed is None or not self.seeds or seed == self.seeds[0]:
            return dict(self.models)
        if str(seed) not in (self.seed_models or {}):
            raise KeyError(f"seed {seed}: the bundle's evaluator seeds are {self.seeds}")
        return dict(self.seed_models[str(seed)])

    @property
    def judge_dir(self) -> str | None:
        """The NLI judge's directory inside the bundle, ``None`` when it carries none."""
        return None if self.nli_judge is None else str(self.nli_judge["directory"])

    def model_dirs(self) -> list[str]:
        """Every model directory of the bundle (each seed's, for an ensemble)."""
        return [d for seed in (self.seeds or [None]) for d in self.model_dirs_of(seed).values()]

    def directories(self) -> list[str]:
        """Every directory the bundle holds: its models', the tokenizer's and, where it carries one, the NLI
        judge's."""
        return [*self.model_dirs(), self.tokenizer, *([self.judge_dir] if self.judge_dir else [])]

    def scoring_settings(self) -> dict[str, Any]:
        """Everything that determines a score: what :attr:`EvaluatorBundle.settings_hash` hashes. A calibration's
        ``fitted_on`` is left out: it records where the fit was made (paths included), which changes no score, so the
        same recipe built in two places has one hashcode."""
        calibration = None if self.calibration is None else \
            {key: value for key, value in self.calibration.items() if key != "fitted_on"}
        return {"method": self.method, "task": self.task, "label_set": self.label_set, "input_format": self.input_format,
                "reduction": self.reduction, "baseline_builder": self.baseline_builder,
                "models": dict(self.models), "files_sha256": dict(self.files_sha256),
                **({"calibration": calibration} if calibration is not None else {}),
                **({"label_offsets": self.label_offsets} if self.label_offsets is not None else {}),
                **({"seed_models": self.seed_models} if self.seed_models is not None else {})}


def read_bundle_config(root: str | os.PathLike) -> BundleConfig:
    """Read and validate ``<root>/config_larev.json``."""
    root = Path(root)
    path = root / CONFIG_NAME
    if not path.is_file():
        hint = (f"; {root} is a run directory: export it with `larev-hf export --run-dir {root} --method larev "
                "--output-dir <bundle>`") if (root / "run_config.json").is_file() else ""
        raise FileNotFoundError(f"{root}: no {CONFIG_NAME}; expected an evaluator bundle written by "
                                f"EvaluatorBundle.save_pretrained or `larev-hf export`{hint}")
    try:
        values = read_json(path)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: malformed JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(values, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(values).__name__}")
    return BundleConfig.from_dict(values, source=str(path))


def __getattr__(name: str) -> Any:
    """``CALIBRATION_TEXT_FEATURES``: the scores of the text alone that a bundle's calibration may read beside its
    method's own, read from the method registry each time (:func:`larev_hf.methods.text_features`), so a feature
    registered later is among them."""
    if name == "CALIBRATION_TEXT_FEATURES":
        return text_features()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
