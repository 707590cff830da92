"""Evaluator bundles: a trained metric as one directory that travels to and from the Hub.

A bundle holds everything needed to score new rationales with REV, LAREV or RoRA without the
training run. Like SetFit's ``config_setfit.json``, a
small JSON file at the root names everything else::

    bundle/
      config_larev.json   method, task, label set, input format, reduction, the baseline
                          builder's settings, the model directories, file checksums and the
                          training configuration
      phi_base/           Φ_base (b → y), as written by ``save_pretrained`` (or a LoRA adapter)
      phi_la/             Φ_LA (LAREV); ``phi/`` for REV; RoRA: Θ and Φ (``rora_theta/``, ``rora_phi/``)
      tokenizer/          the tokenizer the models share
      report.json         the training run's report (separations, absolute scores, accuracy)
      README.md           the model card; its ``model-index`` holds the separation table

``EvaluatorBundle.from_run(run_dir, "larev")`` makes one from a finished run (``larev-hf export``
does the same; ``from_models`` from model directories trained elsewhere, e.g. RoRA's), ``save_pretrained``/``from_pretrained`` write and read it (a local directory or a
Hub repo id, through ``huggingface_hub.snapshot_download``) and ``push_to_hub`` uploads it as one
repo. ``score(rationales, labels, inputs)`` returns per-example scores; the bundle's own baseline
builder makes the vacuous baselines b when none are given.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from larev_hf import __version__
from larev_hf.data.baselines import baseline_builder_from_config
from larev_hf.data.schema import NLI_LABELS, TASKS, YESNO_LABELS
from larev_hf.io import DataError, read_json, read_jsonl, write_json, write_text

if TYPE_CHECKING:
    from huggingface_hub import HfApi, ModelCard

logger = logging.getLogger(__name__)

#: File names inside a bundle (module-level constants, as SetFit and transformers keep them).
CONFIG_NAME = "config_larev.json"
REPORT_NAME = "report.json"
MODEL_CARD_NAME = "README.md"
TOKENIZER_DIR = "tokenizer"
#: Version of the bundle layout; bumped when a reader of the old layout could misread the new one.
FORMAT_VERSION = 1


@dataclass(frozen=True)
class MethodSpec:
    """What a metric needs from a run: its model directories by role, and how to describe it."""

    name: str
    title: str
    formula: str
    #: role ("baseline", "rationale") → model directory name in the run (``models/<name>``) and in the bundle.
    models: dict[str, str]
    #: role → how the model card names it.
    model_titles: dict[str, str]
    #: whether the evaluators read the task input x itself (RoRA) rather than the vacuous baseline b (REV, LAREV).
    reads_input: bool = False


METHOD_SPECS: dict[str, MethodSpec] = {
    "rev": MethodSpec(
        "rev", "REV", "REV(r) = log p_Φ(y | r ⊕ b) − log p_Φbase(y | b)",
        {"baseline": "phi_base", "rationale": "phi"}, {"baseline": "Φ_base (b → y)", "rationale": "Φ (r ⊕ b → y)"},
    ),
    "larev": MethodSpec(
        "larev", "LAREV", "LAREV(r) = log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b)",
        {"baseline": "phi_base", "rationale": "phi_la"},
        {"baseline": "Φ_base (b → y)", "rationale": "Φ_LA (r ⊕ b → y, leakage-aware)"},
    ),
    # RoRA's directory names are provisional: `larev-hf run` does not train RoRA yet (bundles come from from_models).
    "rora": MethodSpec(
        "rora", "RoRA", "RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅)",
        {"baseline": "rora_theta", "rationale": "rora_phi"},
        {"baseline": "Θ (x → y)", "rationale": "Φ (x, r → y, IRM across counterfactual rationales)"},
        reads_input=True,
    ),
}

RORA_UNAVAILABLE = (
    "RoRA evaluator bundles need larev_hf.rora.evaluator.RoRAScorer (RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅)), "
    "which this installation of larev-hf does not have; score with a REV or LAREV bundle (metrics/rev, metrics/larev)"
)


class BundleScorer(Protocol):
    """What a method's scorer offers the bundle (see :func:`register_scorer`)."""

    #: whether ``score`` reads the vacuous baselines b (REV, LAREV) or only the inputs x (RoRA).
    needs_baselines: bool

    def score(
        self,
        rationales: list[str],
        labels: list[str],
        records: list[dict[str, Any]],
        baselines: list[str] | None,
        progress: bool = False,
    ) -> Any:
        """Return an object with ``scores``, ``log_p_with_rationale`` and ``log_p_baseline`` arrays."""
        ...


#: method → ``factory(bundle, batch_size) -> BundleScorer``; "rora" is added on first use when larev_hf.rora is there.
SCORER_FACTORIES: dict[str, Callable[[EvaluatorBundle, int], BundleScorer]] = {}


def register_scorer(method: str, factory: Callable[[EvaluatorBundle, int], BundleScorer]) -> None:
    """Make bundles of ``method`` scoreable: the extension point for RoRA (and any later metric).

    Args:
        method (`str`): a key of :data:`METHOD_SPECS`.
        factory (`Callable`): ``factory(bundle, batch_size)`` returning a :class:`BundleScorer`; it
            loads its models with ``bundle.model(role)`` and ``bundle.tokenizer``.
    """
    if method not in METHOD_SPECS:
        raise ValueError(f"unknown method {method!r}; expected one of {tuple(METHOD_SPECS)}")
    SCORER_FACTORIES[method] = factory


def scorer_factory(method: str) -> Callable[[EvaluatorBundle, int], BundleScorer]:
    """The registered scorer factory of ``method``; RoRA's is registered on first use if ``larev_hf.rora`` imports."""
    if method == "rora" and method not in SCORER_FACTORIES:
        try:
            importlib.import_module("larev_hf.rora.evaluator").RoRAScorer  # noqa: B018 - an availability check
        except (ImportError, AttributeError):
            pass
        else:
            register_scorer("rora", _RoRABundleScorer)
    if method not in SCORER_FACTORIES:
        raise NotImplementedError(RORA_UNAVAILABLE if method == "rora" else f"no scorer is registered for {method!r}")
    return SCORER_FACTORIES[method]


class _CVIBundleScorer:
    """REV and LAREV: :class:`~larev_hf.scores.ConditionalVScorer` over Φ_base and the rationale model."""

    needs_baselines = True

    def __init__(self, bundle: EvaluatorBundle, batch_size: int) -> None:
        from larev_hf.scores import ConditionalVScorer

        self.scorer = ConditionalVScorer(bundle.model("baseline"), bundle.model("rationale"), bundle.tokenizer,
                                         bundle.config.input_format, bundle.config.reduction, batch_size)

    def score(self, rationales, labels, records, baselines, progress=False):
        return self.scorer.score(rationales, baselines, labels, progress=progress)


class _RoRABundleScorer:
    """RoRA: :class:`larev_hf.rora.evaluator.RoRAScorer` over Θ (x → y) and Φ (x, r → y); no baseline b.
    Classifier evaluators (RoRA §4.1, ``--rora-classifier``) go through :class:`~larev_hf.rora.RoRAClassifierScorer`."""

    needs_baselines = False

    def __init__(self, bundle: EvaluatorBundle, batch_size: int) -> None:
        from larev_hf.rora import RoRAClassifierScorer, RoRAScorer

        theta, phi = bundle.model("baseline"), bundle.model("rationale")
        if phi.config.is_encoder_decoder:
            self.scorer = RoRAScorer(theta, phi, bundle.tokenizer, bundle.config.reduction, batch_size)
        else:
            self.scorer = RoRAClassifierScorer(theta, phi, bundle.tokenizer, batch_size=batch_size)

    def score(self, rationales, labels, records, baselines, progress=False):
        return self.scorer.score_records(records, rationales, progress=progress)


register_scorer("rev", _CVIBundleScorer)
register_scorer("larev", _CVIBundleScorer)


# --------------------------------------------------------------------------- config
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
    format_version: int = FORMAT_VERSION
    library_version: str = __version__

    def __post_init__(self) -> None:
        from larev_hf.modeling import get_input_format

        if self.method not in METHOD_SPECS:
            raise ValueError(f"method {self.method!r} is not a bundle method; expected one of {tuple(METHOD_SPECS)}")
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r}: expected one of {TASKS}")
        if self.reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {self.reduction!r}")
        spec = METHOD_SPECS[self.method]
        if spec.reads_input:
            if self.input_format != self.method:
                raise ValueError(f"input_format {self.input_format!r}: a {self.method} bundle uses {self.method!r}")
        else:
            get_input_format(self.input_format)
        roles = set(spec.models)
        if set(self.models) != roles:
            raise ValueError(f"models {self.models}: a {self.method} bundle needs exactly the roles {sorted(roles)}")
        if not (spec.reads_input and self.baseline_builder is None) and (
                not isinstance(self.baseline_builder, Mapping) or "name" not in self.baseline_builder):
            raise ValueError(f"baseline_builder {self.baseline_builder!r}: expected a builder's to_config() dict")
        if self.format_version > FORMAT_VERSION:
            raise ValueError(f"bundle format {self.format_version} is newer than this larev-hf ({__version__}) reads "
                             f"(format {FORMAT_VERSION}); upgrade larev-hf")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], source: str = CONFIG_NAME) -> BundleConfig:
        """Validate and build; a missing key or a bad value raises a ``ValueError`` naming ``source``."""
        names = [f.name for f in fields(cls)]
        required = [f.name for f in fields(cls) if f.name not in ("files_sha256", "tokenizer", "format_version",
                                                                   "library_version")]
        missing = [name for name in required if name not in values]
        if missing:
            raise ValueError(f"{source}: missing key(s) {missing}; expected the keys {names}")
        try:
            return cls(**{name: values[name] for name in names if name in values})
        except ValueError as error:
            raise ValueError(f"{source}: {error}") from None

    def scoring_settings(self) -> dict[str, Any]:
        """Everything that determines a score: what :attr:`EvaluatorBundle.settings_hash` hashes."""
        return {"method": self.method, "task": self.task, "label_set": self.label_set, "input_format": self.input_format,
                "reduction": self.reduction, "baseline_builder": self.baseline_builder,
                "models": dict(self.models), "files_sha256": dict(self.files_sha256)}


# --------------------------------------------------------------------------- inputs
Locate = Callable[[str, int, "str | None"], str]


_TASK_NAMES = {"nli": "an NLI", "qa": "a QA", "yesno": "a yes/no"}


def _default_locate(kind: str, index: int, key: str | None = None) -> str:
    return f"{kind}[{index}]" + (f"[{key!r}]" if key else "")


def _derived_id(task: str, premise: str, hypothesis: str, question: str) -> str:
    digest = hashlib.sha1(json.dumps([task, premise, hypothesis, question]).encode("utf-8")).hexdigest()
    return f"x-{digest[:16]}"


def _as_list(value: Any, name: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise DataError(f"{name}: expected a list with one entry per example, got {type(value).__name__}")
    return list(value)


def build_records(
    rationales: Sequence[str],
    labels: Sequence[str],
    inputs: Sequence[Mapping[str, Any]],
    *,
    task: str,
    label_set: Sequence[str] | None = None,
    baselines: Sequence[str] | None = None,
    require_choices: bool = False,
    offset: int = 0,
    locate: Locate | None = None,
) -> list[dict[str, Any]]:
    """Validate what a user passes to ``score``/``compute`` and build one schema record per example.

    What ``inputs`` holds, per example (a dict; other keys, e.g. a whole schema record's, are ignored):

    - ``task="nli"``: ``premise`` and ``hypothesis`` (non-empty strings).
    - ``task="qa"``: ``question``; optionally ``choices`` (the answer options; the label must be one of them;
      required with ``require_choices``, as RoRA's evaluators read the options).
    - ``task="yesno"``: ``question``.
    - any task: optionally ``id`` (it seeds the template baseline's surface frame; without it the id is
      derived from the input text, so the same input always gets the same baseline) and ``task``
      (checked against the evaluator's).

    Args:
        rationales (`Sequence[str]`): one rationale per example (an empty string is allowed: b alone).
        labels (`Sequence[str]`): one label per example, in ``label_set`` when there is one.
        inputs (`Sequence[Mapping]`): one input dict per example, as above.
        task (`str`): the evaluator's task.
        label_set (`Sequence[str]`, *optional*): the evaluator's labels; ``None`` = open (QA answer texts).
        baselines (`Sequence[str]`, *optional*): user-given baselines, checked to be non-empty strings.
        require_choices (`bool`, *optional*, defaults to `False`): QA inputs must list their ``choices``.
        offset (`int`, *optional*, defaults to 0): added to positions in error messages (for batches).
        locate (`Callable`, *optional*): ``locate(kind, index, key)`` → where, for error messages;
            defaults to ``inputs[3]['hypothesis']`` style.

    Returns:
        `list[dict]`: schema records (``id, task, premise, hypothesis, question, choices, label, rationale``).

    Raises:
        DataError: naming the argument, the example's position and the field, and what was expected.
    """
    if task not in TASKS:
        raise ValueError(f"task {task!r}: expected one of {TASKS}")
    locate = locate or _default_locate
    columns = {"rationales": _as_list(rationales, "rationales"), "labels": _as_list(labels, "labels"),
               "inputs": _as_list(inputs, "inputs")}
    if baselines is not None:
        columns["baselines"] = _as_list(baselines, "baselines")
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise DataError(f"{', '.join(f'{n} {name}' for name, n in lengths.items())}: expected one of each per example")
    if label_set is None and task == "nli":
        label_set = NLI_LABELS
    if label_set is None and task == "yesno":
        label_set = YESNO_LABELS
    needed = ("premise", "hypothesis") if task == "nli" else ("question",)
    if task == "qa":
        needed_choices = ", 'choices': [str, ...]" + ("" if require_choices else " (optional)")
    shape = "{" + ", ".join(f"{key!r}: str" for key in needed) + (needed_choices if task == "qa" else "") + "}"
    records = []
    for i, (rationale, label, example) in enumerate(zip(columns["rationales"], columns["labels"], columns["inputs"], strict=True)):
        at = offset + i
        if not isinstance(example, Mapping):
            raise DataError(f"{locate('inputs', at, None)}: expected a dict {shape} for {_TASK_NAMES[task]} evaluator, "
                            f"got {type(example).__name__}")
        if example.get("task") not in (None, task):
            raise DataError(f"{locate('inputs', at, 'task')}: {example['task']!r}, but this evaluator was trained on "
                            f"{task!r} examples")
        values = {}
        for key in needed:
            value = example.get(key)
            if not isinstance(value, str) or not value.strip():
                problem = "missing" if value is None else f"{value!r} ({type(value).__name__})"
                raise DataError(f"{locate('inputs', at, key)}: {problem}; expected a non-empty string "
                                f"({_TASK_NAMES[task]} evaluator reads {shape})")
            values[key] = value
        choices = example.get("choices") if task == "qa" else None
        if choices is None and task == "qa" and require_choices:
            raise DataError(f"{locate('inputs', at, 'choices')}: missing; expected the answer options (this evaluator "
                            f"reads them: {shape})")
        if choices is not None:
            if isinstance(choices, str) or not isinstance(choices, Sequence) or not choices \
                    or not all(isinstance(c, str) and c.strip() for c in choices):
                raise DataError(f"{locate('inputs', at, 'choices')}: {choices!r}; expected a non-empty list of "
                                "non-empty strings (the answer options) or no 'choices' key")
            choices = list(choices)
        if not isinstance(label, str) or not label.strip():
            raise DataError(f"{locate('labels', at, None)}: {label!r} ({type(label).__name__}); expected a label string"
                            + (f", one of {list(label_set)}" if label_set else ""))
        if choices is not None and label not in choices:
            raise DataError(f"{locate('labels', at, None)}: {label!r} is not one of this example's choices {choices}")
        if label_set is not None and label not in label_set:
            raise DataError(f"{locate('labels', at, None)}: {label!r} is not in the evaluator's label set {list(label_set)}")
        if not isinstance(rationale, str):
            raise DataError(f"{locate('rationales', at, None)}: {rationale!r} ({type(rationale).__name__}); "
                            "expected a string (may be empty)")
        if baselines is not None:
            baseline = columns["baselines"][i]
            if not isinstance(baseline, str) or not baseline.strip():
                raise DataError(f"{locate('baselines', at, None)}: {baseline!r}; expected a non-empty baseline string")
        raw_id = example.get("id")
        if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip()):
            raise DataError(f"{locate('inputs', at, 'id')}: {raw_id!r}; expected a non-empty string or no 'id' key")
        premise, hypothesis, question = values.get("premise", ""), values.get("hypothesis", ""), values.get("question", "")
        records.append({
            "id": str(raw_id) if raw_id is not None else _derived_id(task, premise, hypothesis, question),
            "task": task, "premise": premise, "hypothesis": hypothesis, "question": question,
            "choices": choices if choices is not None else list(label_set or [label]),
            "label": label, "rationale": rationale,
        })
    return records


@dataclass
class BundleScores:
    """Per-example scores of one ``score`` call (nats) and the settings hash of the bundle that made them."""

    scores: np.ndarray
    log_p_rationale: np.ndarray
    log_p_baseline: np.ndarray
    baselines: list[str] | None
    hashcode: str

    @property
    def mean(self) -> float:
        """The corpus score: the mean pointwise score (REV eq. 6); NaN for no examples."""
        return float(np.mean(self.scores)) if len(self.scores) else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values: what the ``evaluate`` modules return."""
        return {"scores": [float(x) for x in self.scores], "mean_score": self.mean,
                "log_p_rationale": [float(x) for x in self.log_p_rationale],
                "log_p_baseline": [float(x) for x in self.log_p_baseline],
                "baselines": self.baselines, "hashcode": self.hashcode}


# --------------------------------------------------------------------------- the bundle
class EvaluatorBundle:
    """A trained rationale metric: its evaluators, tokenizer, baseline builder, label set, training
    configuration and report, saved and loaded as one directory or Hub repo.

    Models are loaded on first use (``score``, ``model``), so exporting and pushing a bundle never
    loads weights.

    Args:
        config (`BundleConfig`): what ``config_larev.json`` holds.
        report (`dict`): the training run's ``report.json``.
        sources (`dict[str, Path]`): bundle sub-directory name → where its files are now.
        device (`str`, *optional*): where to put the models (defaults to CUDA when available).

    Example:

    ```python
    >>> bundle = EvaluatorBundle.from_run("runs/esnli", "larev")  # doctest: +SKIP
    >>> bundle.save_pretrained("bundles/larev-esnli")  # doctest: +SKIP
    >>> bundle = EvaluatorBundle.from_pretrained("bundles/larev-esnli")  # doctest: +SKIP
    >>> bundle.score(rationales=["Riding a bike in the street happens outside."], labels=["entailment"],
    ...              inputs=[{"premise": "A man rides a bike in the street.", "hypothesis": "A man is outside."}]).mean  # doctest: +SKIP
    ```
    """

    def __init__(self, config: BundleConfig, report: dict[str, Any], sources: Mapping[str, str | os.PathLike],
                 device: str | None = None) -> None:
        expected = {*config.models.values(), config.tokenizer}
        if set(sources) != expected:
            raise ValueError(f"sources {sorted(sources)}: expected exactly {sorted(expected)}")
        entry = report.get("methods", {}).get(config.method) if isinstance(report, Mapping) else None
        if not isinstance(entry, Mapping) or not {"absolute", "separations", "ci95"} <= set(entry):
            raise ValueError(f"the report has no {config.method!r} entry with 'absolute', 'separations' and 'ci95' "
                             "(the layout of a run's report.json)")
        self.config = config
        self.report = report
        self.sources = {name: Path(path) for name, path in sources.items()}
        self.device = device
        self._models: dict[str, Any] = {}
        self._tokenizer: Any = None
        self._builder: Any = None

    def __repr__(self) -> str:
        return (f"EvaluatorBundle(method={self.config.method!r}, task={self.config.task!r}, dataset={self.config.dataset!r}, "
                f"backbone={self.config.training.get('backbone')!r}, hashcode={self.hashcode!r})")

    # ------------------------------------------------------------------ identity
    @property
    def spec(self) -> MethodSpec:
        return METHOD_SPECS[self.config.method]

    @property
    def settings_hash(self) -> str:
        """16 hex digits of SHA-256 over :meth:`BundleConfig.scoring_settings` (model checksums included)."""
        text = json.dumps(self.config.scoring_settings(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    @property
    def hashcode(self) -> str:
        """``larev-hf:<method>:<settings_hash>``: equal hashcodes mean comparable scores."""
        return f"larev-hf:{self.config.method}:{self.settings_hash}"

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_run(cls, run_dir: str | os.PathLike, method: str, device: str | None = None) -> EvaluatorBundle:
        """The bundle of ``method``'s evaluators from a finished run directory (``larev-hf run``).

        Args:
            run_dir (`str` or `os.PathLike`): the run directory.
            method (`str`): ``"rev"``, ``"larev"`` or ``"rora"`` (a run with ``--method rora`` or ``all``).
            device (`str`, *optional*): where ``score`` puts the models.

        Raises:
            FileNotFoundError: not a run directory, or a needed model or the report is not there yet.
            ValueError: the run did not train ``method``.
            NotImplementedError: ``method="rora"`` without ``larev_hf.rora``.
        """
        from larev_hf.pipeline import CLASSIFIER_TOKENIZER, Run, baseline_builder_from_spec

        if method not in METHOD_SPECS:
            raise ValueError(f"unknown method {method!r}; expected one of {tuple(METHOD_SPECS)}")
        scorer_factory(method)
        run = Run.load(run_dir, progress=False)
        cfg, spec = run.config, METHOD_SPECS[method]
        if method not in cfg.methods:
            raise ValueError(f"{run_dir} was trained with --method {cfg.method}, which has no {spec.title} evaluator; "
                             f"train one with `larev-hf run --method {method}` (or --method all)")
        for model in spec.models.values():
            if not run.is_done(model) or not run.path("models", model).is_dir():
                raise FileNotFoundError(f"{run_dir}: models/{model} has not finished training; "
                                        "finish the run with the same `larev-hf run` command")
        report_path = run.path(REPORT_NAME)
        report = read_json(report_path) if report_path.is_file() else None
        if report is None or method not in report.get("methods", {}):
            raise FileNotFoundError(f"{run_dir}: no {REPORT_NAME} with {spec.title} results; the run has not finished "
                                    "(rerun the same `larev-hf run` command to resume it)")
        builder_path = run.path("data", "baseline_builder.json")
        builder = read_json(builder_path) if builder_path.is_file() else \
            baseline_builder_from_spec(cfg.baseline_builder, cfg.seed).to_config()
        task, label_set = _task_and_label_set(run.path("data", "train.jsonl"))
        sources = {name: run.path("models", name) for name in spec.models.values()}
        sources[TOKENIZER_DIR] = run.path("rora", CLASSIFIER_TOKENIZER) if method == "rora" and cfg.rora_classifier \
            else run.path("tokenizer")
        config = BundleConfig(
            method=method, task=task, label_set=label_set, reduction=cfg.reduction,
            input_format="rora" if method == "rora" else cfg.input_format,
            baseline_builder=builder, models=dict(spec.models), dataset=cfg.dataset,
            training=read_json(run.path("run_config.json")), files_sha256=_checksums(sources),
        )
        return cls(config, report, sources, device=device)

    @classmethod
    def from_models(
        cls,
        method: str,
        models: Mapping[str, str | os.PathLike],
        tokenizer: str | os.PathLike,
        *,
        task: str,
        report: dict[str, Any],
        label_set: Sequence[str] | None = None,
        dataset: str = "custom",
        training: Mapping[str, Any] | None = None,
        input_format: str | None = None,
        reduction: str = "sum",
        baseline_builder: Mapping[str, Any] | None = None,
        device: str | None = None,
    ) -> EvaluatorBundle:
        """A bundle from evaluator directories trained outside ``larev-hf run`` (RoRA's, your own REV).

        Args:
            method (`str`): ``"rev"``, ``"larev"`` or ``"rora"``.
            models (`Mapping[str, path]`): role → a ``save_pretrained`` directory: ``"baseline"`` (Φ_base,
                or RoRA's Θ) and ``"rationale"`` (Φ, Φ_LA, or RoRA's Φ).
            tokenizer (`str` or `os.PathLike`): the tokenizer directory.
            task (`str`): ``"nli"``, ``"qa"`` or ``"yesno"``.
            report (`dict`): a report with ``methods[method]`` in the run report's layout
                (:func:`larev_hf.scores.summarize_variants`); it becomes the card's evaluation results.
            label_set (`Sequence[str]`, *optional*): the fixed label set, if any.
            dataset (`str`, *optional*, defaults to `"custom"`): the training data's name.
            training (`Mapping`, *optional*): how the models were trained (shown in the card).
            input_format (`str`, *optional*): defaults to ``"rora"`` for RoRA, else ``"larev"``.
            reduction (`str`, *optional*, defaults to `"sum"`): ``"sum"`` or ``"mean"``.
            baseline_builder (`Mapping`, *optional*): a builder's ``to_config()``; defaults to the template
                builder for REV and LAREV, none for RoRA.
            device (`str`, *optional*): where ``score`` puts the models.
        """
        from larev_hf.data.baselines import TemplateBaselineBuilder

        if method not in METHOD_SPECS:
            raise ValueError(f"unknown method {method!r}; expected one of {tuple(METHOD_SPECS)}")
        spec = METHOD_SPECS[method]
        if set(models) != set(spec.models):
            raise ValueError(f"models {sorted(models)}: a {method} bundle needs the roles {sorted(spec.models)}")
        sources = {spec.models[role]: Path(path) for role, path in models.items()}
        sources[TOKENIZER_DIR] = Path(tokenizer)
        for name, path in sources.items():
            if not path.is_dir():
                raise FileNotFoundError(f"{path}: no such directory (the {name} of the bundle)")
        if baseline_builder is None and not spec.reads_input:
            baseline_builder = TemplateBaselineBuilder().to_config()
        config = BundleConfig(
            method=method, task=task, label_set=list(label_set) if label_set is not None else None,
            input_format=input_format or (method if spec.reads_input else "larev"), reduction=reduction,
            baseline_builder=dict(baseline_builder) if baseline_builder is not None else None,
            models=dict(spec.models), dataset=dataset, training=dict(training or {}), files_sha256=_checksums(sources),
        )
        return cls(config, report, sources, device=device)

    @classmethod
    def from_pretrained(
        cls,
        path_or_repo_id: str | os.PathLike,
        *,
        revision: str | None = None,
        cache_dir: str | os.PathLike | None = None,
        token: str | bool | None = None,
        local_files_only: bool = False,
        device: str | None = None,
    ) -> EvaluatorBundle:
        """Load a bundle from a local directory or a Hub repo id (downloaded with ``snapshot_download``).

        Args:
            path_or_repo_id (`str` or `os.PathLike`): a directory written by :meth:`save_pretrained` /
                ``larev-hf export``, or a Hub model repo id such as ``"user/larev-esnli-t5-large"``.
            revision (`str`, *optional*): Hub branch, tag or commit.
            cache_dir (`str`, *optional*): Hub cache directory.
            token (`str` or `bool`, *optional*): Hub token.
            local_files_only (`bool`, *optional*, defaults to `False`): use the Hub cache only.
            device (`str`, *optional*): where ``score`` puts the models.

        Raises:
            FileNotFoundError: neither a bundle directory nor a reachable Hub repo, or a file the config names is missing.
            ValueError: ``config_larev.json`` is malformed.
            NotImplementedError: a RoRA bundle without ``larev_hf.rora``.
        """
        root = resolve_bundle_dir(path_or_repo_id, revision=revision, cache_dir=cache_dir, token=token,
                                  local_files_only=local_files_only)
        config = read_bundle_config(root)
        scorer_factory(config.method)
        sources = {}
        for name in (*config.models.values(), config.tokenizer):
            if not (root / name).is_dir():
                raise FileNotFoundError(f"{root}: no {name}/ directory, which {CONFIG_NAME} lists; the bundle is incomplete "
                                        "(export it again with `larev-hf export`)")
            sources[name] = root / name
        if not (root / REPORT_NAME).is_file():
            raise FileNotFoundError(f"{root}: no {REPORT_NAME}; the bundle is incomplete (export it again with `larev-hf export`)")
        return cls(config, read_json(root / REPORT_NAME), sources, device=device)

    # ------------------------------------------------------------------ saving
    def model_card(self, repo_id: str | None = None) -> ModelCard:
        """The README.md model card (see :mod:`larev_hf.model_card`)."""
        from larev_hf.model_card import make_model_card

        return make_model_card(self, repo_id)

    def save_pretrained(self, save_directory: str | os.PathLike, *, repo_id: str | None = None) -> Path:
        """Write the bundle to ``save_directory``, atomically: it is assembled in a temporary directory
        beside the target and renamed into place, so an interrupted save leaves no half-written bundle.

        Args:
            save_directory (`str` or `os.PathLike`): the bundle directory; an existing bundle there is
                replaced, any other non-empty directory is refused.
            repo_id (`str`, *optional*): the Hub repo the model card is written for.

        Returns:
            `Path`: ``save_directory``.
        """
        target = Path(save_directory)
        if target.is_file():
            raise FileExistsError(f"{target} is a file; expected a directory for the bundle")
        if target.is_dir() and any(target.iterdir()) and not (target / CONFIG_NAME).is_file():
            raise FileExistsError(f"{target} is a non-empty directory without {CONFIG_NAME}; refusing to overwrite it "
                                  "(choose a new directory)")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        try:
            for name, source in sorted(self.sources.items()):
                shutil.copytree(source, tmp / name)
            write_json(tmp / CONFIG_NAME, self.config.to_dict())
            write_json(tmp / REPORT_NAME, self.report)
            write_text(tmp / MODEL_CARD_NAME, self.model_card(repo_id).content)
            _replace_directory(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return target

    def push_to_hub(
        self,
        repo_id: str,
        *,
        commit_message: str = "Upload evaluator bundle (larev-hf)",
        private: bool | None = None,
        token: str | None = None,
        revision: str | None = None,
        create_pr: bool = False,
        api: HfApi | None = None,
    ) -> Any:
        """Upload the bundle as one Hub model repo (created if needed), model card included.

        Args:
            repo_id (`str`): ``"user/name"`` or ``"name"`` (your namespace).
            commit_message (`str`, *optional*): the commit message.
            private (`bool`, *optional*): visibility of a newly created repo (the Hub's default when `None`).
            token (`str`, *optional*): Hub token (defaults to the logged-in one).
            revision (`str`, *optional*): an existing branch to commit to.
            create_pr (`bool`, *optional*, defaults to `False`): open a pull request instead of committing.
            api (`HfApi`, *optional*): the client to use (e.g. one with another ``endpoint``); defaults to ``HfApi(token=token)``.

        Returns:
            The ``CommitInfo`` of the upload.
        """
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token, library_name="larev-hf", library_version=__version__)
        repo_id = api.create_repo(repo_id, private=private, exist_ok=True, token=token).repo_id
        with tempfile.TemporaryDirectory() as tmp:
            folder = self.save_pretrained(Path(tmp) / "bundle", repo_id=repo_id)
            return api.upload_folder(repo_id=repo_id, folder_path=folder, commit_message=commit_message, token=token,
                                     revision=revision, create_pr=create_pr)

    # ------------------------------------------------------------------ models
    @property
    def tokenizer(self) -> Any:
        """The tokenizer the evaluators share (loaded on first use)."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(self.sources[self.config.tokenizer])
        return self._tokenizer

    def model(self, role: str) -> Any:
        """The evaluator of ``role`` (``"baseline"`` or ``"rationale"``), loaded on first use with
        :func:`larev_hf.modeling.load_evaluator` (full checkpoints and LoRA adapters alike)."""
        from larev_hf.modeling import load_evaluator

        if role not in self.config.models:
            raise KeyError(f"role {role!r}: a {self.config.method} bundle has the roles {sorted(self.config.models)}")
        if role not in self._models:
            self._models[role], _ = load_evaluator(self.sources[self.config.models[role]], device=self.device)
        return self._models[role]

    @property
    def baseline_builder(self) -> Any:
        """The builder of the vacuous baselines, rebuilt from the bundle's settings."""
        if self._builder is None:
            self._builder = baseline_builder_from_config(self.config.baseline_builder)
        return self._builder

    # ------------------------------------------------------------------ scoring
    def records(self, rationales: Sequence[str], labels: Sequence[str], inputs: Sequence[Mapping[str, Any]],
                baselines: Sequence[str] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
        """Validated schema records for this bundle's task and label set (see :func:`build_records`)."""
        return build_records(rationales, labels, inputs, task=self.config.task, label_set=self.config.label_set,
                             baselines=baselines, require_choices=self.spec.reads_input and self.config.task == "qa",
                             **kwargs)

    def make_baselines(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        """The vacuous baseline b of each schema record, from its input and label only (never the rationale)."""
        if self.config.baseline_builder is None:
            raise ValueError(f"a {self.config.method} bundle has no baseline builder: its evaluators read the input x")
        hidden = {"rationale", "baseline"}
        baselines = self.baseline_builder([{k: v for k, v in r.items() if k not in hidden} for r in records])
        if len(baselines) != len(records) or not all(isinstance(b, str) and b.strip() for b in baselines):
            raise DataError(f"the baseline builder {self.config.baseline_builder} returned {len(baselines)} baselines "
                            f"for {len(records)} examples, or an empty one")
        return list(baselines)

    def score(
        self,
        rationales: Sequence[str],
        labels: Sequence[str],
        inputs: Sequence[Mapping[str, Any]],
        baselines: Sequence[str] | None = None,
        *,
        batch_size: int = 64,
        progress: bool = False,
    ) -> BundleScores:
        """Score rationales: per-example scores in nats (higher = more new label information).

        Args:
            rationales (`Sequence[str]`): the rationales to score.
            labels (`Sequence[str]`): the label each rationale explains.
            inputs (`Sequence[Mapping]`): the examples' inputs (see :func:`build_records`); whole schema
                records are accepted too.
            baselines (`Sequence[str]`, *optional*): vacuous baselines b; made by the bundle's builder when `None`.
            batch_size (`int`, *optional*, defaults to 64): scoring batch size.
            progress (`bool`, *optional*, defaults to `False`): show progress bars.
        """
        records = self.records(rationales, labels, inputs, baselines)
        scorer = scorer_factory(self.config.method)(self, batch_size)
        if baselines is not None and not scorer.needs_baselines:
            raise ValueError(f"a {self.spec.title} bundle reads the input x, not vacuous baselines: pass no `baselines`")
        if scorer.needs_baselines:
            baselines = list(baselines) if baselines is not None else self.make_baselines(records)
        result = scorer.score([r["rationale"] for r in records], [r["label"] for r in records], records,
                              baselines, progress)
        return BundleScores(scores=np.asarray(result.scores), log_p_rationale=np.asarray(result.log_p_with_rationale),
                            log_p_baseline=np.asarray(result.log_p_baseline),
                            baselines=list(baselines) if baselines is not None else None, hashcode=self.hashcode)


# --------------------------------------------------------------------------- helpers
def _looks_like_path(text: str) -> bool:
    return text.startswith((".", "/", "~")) or "\\" in text or text.count("/") > 1 or os.path.isabs(text)


def resolve_bundle_dir(
    path_or_repo_id: str | os.PathLike,
    *,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    token: str | bool | None = None,
    local_files_only: bool = False,
) -> Path:
    """A local bundle directory for ``path_or_repo_id``: the directory itself, or a Hub snapshot."""
    text = os.fspath(path_or_repo_id)
    path = Path(text).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise NotADirectoryError(f"{text} is a file; expected an evaluator bundle directory (`larev-hf export`) or a Hub repo id")
    if _looks_like_path(text):
        raise FileNotFoundError(f"{text}: no such directory; expected an evaluator bundle directory (`larev-hf export`) "
                                "or a Hub repo id such as 'user/larev-esnli'")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(text, revision=revision, cache_dir=cache_dir, token=token,
                                      local_files_only=local_files_only, library_name="larev-hf",
                                      library_version=__version__))
    except Exception as error:  # noqa: BLE001 - offline, unknown repo, bad id: all mean "not found"
        raise FileNotFoundError(f"{text}: not a local directory, and the Hugging Face Hub could not provide it "
                                f"({type(error).__name__}: {error})") from error


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


def _task_and_label_set(train_file: Path) -> tuple[str, list[str] | None]:
    """The run's task, and its label set when every training example shares one list of choices."""
    tasks: set[str] = set()
    choice_sets: set[tuple[str, ...]] = set()
    for _, record in read_jsonl(train_file):
        tasks.add(record["task"])
        choice_sets.add(tuple(record["choices"]))
    if len(tasks) != 1:
        raise ValueError(f"{train_file}: expected one task in the training data, found {sorted(tasks)}")
    return tasks.pop(), list(choice_sets.pop()) if len(choice_sets) == 1 else None


def _checksums(sources: Mapping[str, Path]) -> dict[str, str]:
    """SHA-256 of every file under each source directory, keyed by its path inside the bundle."""
    sums = {}
    for name, source in sorted(sources.items()):
        for path in sorted(p for p in Path(source).rglob("*") if p.is_file()):
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            sums[f"{name}/{path.relative_to(source).as_posix()}"] = digest.hexdigest()
    return sums


def _replace_directory(new: Path, target: Path) -> None:
    """Move the complete directory ``new`` to ``target``, replacing what is there."""
    if not target.exists():
        os.replace(new, target)
        return
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(target, old)
    try:
        os.replace(new, target)
    except OSError:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
