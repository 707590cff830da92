"""What a rationale metric is to the library: a :class:`Method` with its spec, settings, stages, scorer and citation.

Everything above this layer — the run (:mod:`larev_hf.pipeline`), the CLI, bundles and their model card
(:mod:`larev_hf.hub`), the ``evaluate`` modules and the meta-evaluation — reads the registry
(:mod:`larev_hf.methods.registry`) instead of knowing methods by name. Adding a metric is one module that defines a
:class:`Method` subclass and calls :func:`~larev_hf.methods.registry.register_method`.

A method sees the run only through :class:`RunContext` (paths, the run's settings, its tokenizer and trained
models), so this layer imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from larev_hf.citations import bibtex
from larev_hf.scores.simulatability import correctness

SettingsT = TypeVar("SettingsT")


class RunSettings(Protocol):
    """What a method reads of a run's configuration. :class:`larev_hf.config.RunConfig`, one layer up, implements it
    (it composes the methods' settings dataclasses, so the methods cannot import it)."""

    data: Any  #: the data section (``dataset``, ``max_train_examples``, ...)
    model: Any  #: the model section (``backbone``, ``input_format``, ``reduction``, ``backbone_defaults``)
    training: Any  #: the training section (``seed``, ``learning_rate``, ...)
    evaluation: Any  #: the evaluation section (``n_boot``, ...)
    run: Any  #: the run section (``method``)
    peft: Any  #: the LoRA section (``lora``, ...)

    @property
    def methods(self) -> tuple[str, ...]: ...
    def method_settings(self, cls: type[SettingsT]) -> SettingsT: ...
    def given(self, name: str) -> Any: ...
    def train_settings(self, progress: bool = True) -> Any: ...


class RunContext(Protocol):
    """What a method's stages and scoring may use of a run (implemented by :class:`larev_hf.pipeline.Run`)."""

    #: the run's settings: the core sections (``config.data``, ``config.training``, ...) and each method's own
    #: (``config.method_settings(LarevSettings)``).
    config: RunSettings
    progress: bool

    def path(self, *parts: str) -> Path: ...
    def is_done(self, stage: str) -> bool: ...
    def split_records(self, split: str) -> list[dict[str, Any]]: ...
    def tokenizer(self) -> Any: ...
    def model(self, name: str) -> Any: ...
    def train_evaluator(self, name: str, make_source: Callable[[dict[str, Any]], str]) -> None: ...


@dataclass(frozen=True)
class Stage:
    """One resumable step of a run: ``run(context)`` writes its artifacts under the run directory.

    Stages shared by several methods (Φ_base, Φ) are one :class:`Stage` object that each method lists; the run keeps
    the first occurrence, so a shared stage runs once. ``seeded`` stages (every training, and what is derived from a
    trained model) run once per evaluator seed of a multi-seed run (``--seeds``), each in its seed's directory; a stage
    that does not depend on the seed sets ``seeded=False`` and runs once.
    """

    name: str
    run: Callable[[RunContext], None]
    seeded: bool = True


@dataclass
class MethodResult:
    """What :meth:`Method.score` returns for one set of records.

    Attributes:
        summary: the method's ``report.json`` entry (``absolute``, ``separations``, ``ci95``, ``win_rate``, ...).
        scores: per-variant pointwise scores (``None`` for accuracy-based methods without per-example scores).
        columns: per-example columns for ``test_scores.jsonl`` (column name → one value per record).
        accuracy: evaluator accuracy per model and variant (thesis table 5.7).
        extra: further top-level report sections (e.g. LAREV's ``ablations``).
    """

    summary: dict[str, Any]
    scores: dict[str, np.ndarray] | None = None
    columns: dict[str, list[Any]] = field(default_factory=dict)
    accuracy: dict[str, dict[str, float]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


class BundleScorer(Protocol):
    """What a method's scorer offers an evaluator bundle (:meth:`Method.bundle_scorer`). The bundle calls ``score``
    with keyword arguments only, so no argument order can flip between the layers."""

    #: whether ``score`` reads the vacuous baselines b (REV, LAREV) or only the inputs x (RoRA).
    needs_baselines: bool

    def score(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str], progress: bool = False) -> Any:
        """Score ``rationales[i]`` as the rationale of ``records[i]``: validated schema records with their ``label``,
        input and, where :attr:`needs_baselines`, their ``baseline`` b. Return an object with ``scores``,
        ``log_p_with_rationale`` and ``log_p_baseline`` arrays."""
        ...

    def rationale_log_probs(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                            progress: bool = False) -> Any:
        """``score``'s ``log_p_with_rationale`` alone, without the reference term (scorers that read baselines): what
        reading an explanation under every label needs (the finding *contradicts the label*)."""
        ...


class Method:
    """A rationale metric. Subclasses set the class attributes and implement :meth:`stages` and :meth:`score`.

    Class attributes:
        name: the registry key and ``--method`` value.
        title: how tables name it.
        formula: its definition, one line.
        citation_keys: keys of ``citations.bib``: the method's own paper first, then what it builds on.
        roles: model role → model directory (``models/<dir>``) that a bundle of this method holds; empty = no bundle.
        model_titles: model role → how the model card names it.
        reads_input: whether the evaluators read the task input x (RoRA) rather than the vacuous baseline b.
        unit: ``"nats"`` or ``"accuracy"`` (LAS, RQ): which report tables and chart it belongs to.
        settings_class: a dataclass of the method's own settings (fields with ``metadata={"help": ...}``) or ``None``;
            its fields become ``--flags`` and keys of ``run_config.json``.
        kind: ``"metric"`` (a rationale metric) or ``"baseline"`` (a heuristic reference, VARIF §5: a learned metric
            that does not beat it on a failure family has learned nothing there); reports list baselines apart.
        text_feature: whether a bundle's calibration may read this score beside the bundle's own; the method then
            computes it outside a run with ``text_scores(records, texts, state)``, as every
            :class:`~larev_hf.methods.heuristics.HeuristicBaseline` does. The registry's
            :func:`~larev_hf.methods.registry.text_features` is the one list of them.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    formula: ClassVar[str]
    citation_keys: ClassVar[tuple[str, ...]] = ()
    roles: ClassVar[Mapping[str, str]] = {}
    model_titles: ClassVar[Mapping[str, str]] = {}
    reads_input: ClassVar[bool] = False
    unit: ClassVar[str] = "nats"
    settings_class: ClassVar[type | None] = None
    kind: ClassVar[str] = "metric"
    #: What a pointwise score's sign and size mean, for a bundle's model card; ``None``: the card's generic sentence.
    score_meaning: ClassVar[str | None] = None
    #: Whether ``--method all`` trains it: the papers' metrics and the baselines do; an extension asked by name only
    #: (LAREV-G) does not.
    in_all: ClassVar[bool] = True
    #: Whether a bundle's calibration may read it (computed from the rationale and its record by ``text_scores``).
    text_feature: ClassVar[bool] = False

    def stages(self, config: RunSettings) -> list[Stage]:
        """The stages this method needs under ``config``, in order (shared ones included)."""
        raise NotImplementedError

    def score(self, context: RunContext, records: Sequence[dict[str, Any]], variants: Mapping[str, Sequence[str]],
              shared: dict[str, Any]) -> MethodResult:
        """Score every rationale variant (``variants[name][i]`` is record i's rationale) with the trained models.

        ``shared`` is one dict per scoring pass, for terms several methods reuse (log p_Φbase(y | b), the simulator's
        correctness) and for the summaries of the methods scored before this one (``shared["summaries"]``).
        """
        raise NotImplementedError

    def pointwise(self, context: RunContext, records: Sequence[dict[str, Any]], variants: Mapping[str, Sequence[str]],
                  shared: dict[str, Any]) -> dict[str, np.ndarray]:
        """One score per record and variant, higher meaning a better rationale: what :meth:`score` summarises and
        what the meta-evaluation (:mod:`larev_hf.meta`) ranks. ``records[i]["label"]`` is the label scored."""
        raise NotImplementedError(f"{self.title} has no pointwise score")

    def validate(self, config: RunSettings) -> None:
        """Refuse settings that cannot work together (raise ``ValueError`` naming the flag)."""

    def bundle_scorer(self, models: Mapping[str, Any], tokenizer: Any, config: Any, batch_size: int) -> BundleScorer:
        """A scorer over a bundle's loaded ``models`` (role → model) and ``tokenizer``; ``config`` is the bundle's
        :class:`~larev_hf.hub.BundleConfig` (``input_format``, ``reduction``, ``task``, ``label_set``)."""
        raise NotImplementedError(f"{self.title} has no bundle scorer")

    def bundle_tokenizer(self, config: RunSettings) -> tuple[str, ...]:
        """Where, inside a run directory with settings ``config``, the tokenizer a bundle ships lives."""
        return ("tokenizer",)

    def bundle_input_format(self, config: RunSettings) -> str:
        """The input format a bundle records (REV/LAREV: the run's; RoRA: ``"rora"``)."""
        return self.name if self.reads_input else config.model.input_format

    @property
    def exportable(self) -> bool:
        """Whether ``larev-hf export`` can bundle this method (it trains models and has a bundle scorer)."""
        return bool(self.roles) and type(self).bundle_scorer is not Method.bundle_scorer

    @property
    def citation(self) -> str:
        """The BibTeX of :attr:`citation_keys` (from the one ``citations.bib``)."""
        return bibtex(*self.citation_keys)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}: {self.formula}>"


def choice_accuracy(predictions: Sequence[int], choices: Sequence[Sequence[str]], labels: Sequence[str]) -> float:
    """Share of examples whose predicted choice is the label (the mean of :func:`~larev_hf.scores.simulatability.correctness`)."""
    return float(np.mean(correctness(predictions, choices, labels)))
