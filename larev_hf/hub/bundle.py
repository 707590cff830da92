"""Evaluator bundles: a trained metric as one directory that travels to and from the Hub.

A bundle holds everything needed to score new rationales with a method's trained evaluators (REV, LAREV, RoRA or
any registered method with model roles) without the training run. Like SetFit's ``config_setfit.json``, a small
JSON file at the root names everything else::
    bundle/
      config_larev.json   method, task, label set, input format, reduction, the baseline
                          builder's settings, the model directories, file checksums and the
                          training configuration
      phi_base/           Φ_base (b → y), as written by ``save_pretrained`` (or a LoRA adapter)
      phi_la/             Φ_LA (LAREV); ``phi/`` for REV; RoRA: Θ and Φ (``rora_theta/``, ``rora_phi/``)
      tokenizer/          the tokenizer the models share
      report.json         the training run's report (separations, absolute scores, accuracy)
      README.md           the model card; its ``model-index`` holds the separation table
      recipe.json         a published named evaluator only: the recipe it was built from

``EvaluatorBundle.from_run(run_dir, "larev")`` makes one from a finished run (``larev-hf export`` does the same;
``from_models`` from model directories trained elsewhere); ``save_pretrained``/``from_pretrained`` write and read it
(a local directory or a Hub repo id, through ``huggingface_hub.snapshot_download``) and ``push_to_hub`` uploads it as
one repo. ``score(rationales, labels, inputs)`` returns per-example scores through the method's own bundle scorer
(:meth:`larev_hf.methods.Method.bundle_scorer`); the bundle's baseline builder makes the vacuous baselines b when
none are given.

One class per responsibility: :class:`EvaluatorBundle` is the bundle's identity (its config, report, files and
hashcode) and how one is made; :class:`~larev_hf.hub.saving.BundleHubMixin` saves, pushes and loads it;
:class:`~larev_hf.hub.models.BundleModels` (``bundle.models``) loads its evaluators, tokenizer and baseline builder;
:class:`~larev_hf.hub.scoring.BundleScoring` (``bundle.scoring``) validates inputs into records and scores them. What a
bundle is made of, gathered from a run, is :mod:`larev_hf.hub.construct`; its config, input validation, files, trust
checks and card are their own modules too. Here also :func:`load_bundle` (a bundle loaded once per process, by directory or Hub repo id: ``larev-hf evaluate`` and the ``evaluate`` modules load theirs
through it, by way of :func:`larev_hf.evaluators.load`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from larev_hf.data.vacuous import TemplateBaselineBuilder
from larev_hf.hub.config import CONFIG_NAME, JUDGE_DIR, TOKENIZER_DIR, BundleConfig
from larev_hf.hub.construct import exportable, parts_from_run
from larev_hf.hub.files import checksums
from larev_hf.hub.models import BundleModels
from larev_hf.hub.saving import BundleHubMixin
from larev_hf.hub.scoring import BundleScores, BundleScoring
from larev_hf.io import read_json
from larev_hf.methods import Method, get_method
from larev_hf.training.nli_judge import METRICS_FILE, is_finished_judge


# --------------------------------------------------------------------------- the bundle
class EvaluatorBundle(BundleHubMixin):
    """A trained rationale metric: its evaluators, tokenizer, baseline builder, label set, training
    configuration and report, saved and loaded as one directory or Hub repo.

    Models are loaded on first use (``score``, ``models``), so exporting and pushing a bundle never
    loads weights.

    Args:
        config (`BundleConfig`): what ``config_larev.json`` holds.
        report (`dict`): the training run's ``report.json``.
        sources (`dict[str, Path]`): bundle sub-directory name → where its files are now.
        device (`str`, *optional*): where to put the models (defaults to CUDA when available).

    Attributes:
        models (`BundleModels`): the evaluators, tokenizer and baseline builder, loaded on first use.
        scoring (`BundleScoring`): inputs validated into records (``scoring.records``), records scored
            (``scoring.score``) and the baselines the builder makes (``scoring.make_baselines``).

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
        expected = set(config.directories())
        if set(sources) != expected:
            raise ValueError(f"sources {sorted(sources)}: expected exactly {sorted(expected)}")
        entry = report.get("methods", {}).get(config.method) if isinstance(report, Mapping) else None
        if not isinstance(entry, Mapping) or not {"absolute", "separations", "ci95"} <= set(entry):
            raise ValueError(f"the report has no {config.method!r} entry with 'absolute', 'separations' and 'ci95' "
                             "(the layout of a run's report.json)")
        self.config = config
        self.report = report
        self.sources = {name: Path(path) for name, path in sources.items()}
        #: a published named evaluator's recipe (``recipe.json``, :mod:`larev_hf.evaluators.published`): the card shows it
        self.recipe: dict[str, Any] | None = None
        self.models = BundleModels(config, self.sources, device)
        self.scoring = BundleScoring(self)

    def __repr__(self) -> str:
        return (f"EvaluatorBundle(method={self.config.method!r}, task={self.config.task!r}, dataset={self.config.dataset!r}, "
                f"backbone={self.config.training.get('backbone')!r}, hashcode={self.hashcode!r})")

    # ------------------------------------------------------------------ identity
    @property
    def spec(self) -> Method:
        """The bundle's method from the registry (:mod:`larev_hf.methods`)."""
        return get_method(self.config.method)

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
        """
        return cls(*parts_from_run(run_dir, method), device=device)

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

        Raises:
            ValueError: ``method`` cannot be bundled, or ``models`` does not name exactly its roles.
            FileNotFoundError: a model or tokenizer directory does not exist.
        """
        spec = exportable(method)
        if set(models) != set(spec.roles):
            raise ValueError(f"models {sorted(models)}: a {method} bundle needs the roles {sorted(spec.roles)}")
        sources = {spec.roles[role]: Path(path) for role, path in models.items()} | {TOKENIZER_DIR: Path(tokenizer)}
        for name, path in sources.items():
            if not path.is_dir():
                raise FileNotFoundError(f"{path}: no such directory (the {name} of the bundle)")
        if baseline_builder is None and not spec.reads_input:
            baseline_builder = TemplateBaselineBuilder().to_config()
        config = BundleConfig(
            method=method, task=task, label_set=list(label_set) if label_set is not None else None,
            input_format=input_format or (method if spec.reads_input else "larev"), reduction=reduction,
            baseline_builder=dict(baseline_builder) if baseline_builder is not None else None,
            models=dict(spec.roles), dataset=dataset, training=dict(training or {}), files_sha256=checksums(sources),
        )
        return cls(config, report, sources, device=device)

    def with_nli_judge(self, judge_dir: str | os.PathLike) -> EvaluatorBundle:
        """This bundle carrying the NLI judge in ``judge_dir`` (``larev-hf nli-train --read-explanations``), so that
        ``score`` reports explanations the judge reads as arguing for another label (*contradicts the label*).

        Raises:
            ValueError: not an NLI bundle, or a judge that does not read explanations or lacks one of its labels.
            FileNotFoundError: ``judge_dir`` is not a finished judge (``config.json`` and ``nli_metrics.json``).
        """
        judge_dir = Path(judge_dir)
        if self.config.task != "nli":
            raise ValueError(f"a {self.config.task} bundle cannot carry an NLI judge; only an NLI bundle reads one")
        if not is_finished_judge(judge_dir):
            raise FileNotFoundError(f"{judge_dir}: no config.json and {METRICS_FILE}; expected a judge trained by "
                                    "`larev-hf nli-train --read-explanations`")
        metrics = read_json(judge_dir / METRICS_FILE)
        if not metrics.get("reads_explanations"):
            raise ValueError(f"{judge_dir}: the judge was trained without explanations; a bundle carries one trained "
                             "with `larev-hf nli-train --read-explanations`, which reads what an explanation argues")
        labels = {str(label).lower() for label in metrics.get("labels", [])}
        if missing := [label for label in self.config.label_set or [] if label.lower() not in labels]:
            raise ValueError(f"{judge_dir}: the judge has no label {missing}; the bundle's labels are "
                             f"{self.config.label_set}")
        entry = {"directory": JUDGE_DIR, "files_sha256": checksums({JUDGE_DIR: judge_dir}), "metrics": metrics}
        sources = {k: v for k, v in self.sources.items() if k != self.config.judge_dir} | {JUDGE_DIR: judge_dir}
        bundle = type(self)(dataclasses.replace(self.config, nli_judge=entry), self.report, sources,
                            device=self.models.device)
        bundle.recipe = self.recipe
        return bundle

    # ------------------------------------------------------------------ scoring
    def score(
        self,
        rationales: Sequence[str],
        labels: Sequence[str],
        inputs: Sequence[Mapping[str, Any]],
        baselines: Sequence[str] | None = None,
        *,
        batch_size: int = 64,
        progress: bool = False,
        relative: bool = False,
    ) -> BundleScores:
        """Score rationales: per-example scores in nats (higher = more new label information). The inputs are
        validated once, into schema records (:meth:`BundleScoring.records`), which are scored as they are
        (:meth:`BundleScoring.score`).

        Args:
            rationales (`Sequence[str]`): the rationales to score.
            labels (`Sequence[str]`): the label each rationale explains.
            inputs (`Sequence[Mapping]`): the examples' inputs (see :func:`~larev_hf.hub.inputs.build_records`);
                whole schema records are accepted too.
            baselines (`Sequence[str]`, *optional*): vacuous baselines b; made by the bundle's builder when `None`.
            batch_size (`int`, *optional*, defaults to 64): scoring batch size.
            progress (`bool`, *optional*, defaults to `False`): show progress bars.
            relative (`bool`, *optional*, defaults to `False`): also return ``relative`` = score − the score of b as
                the rationale (see :meth:`BundleScoring.score`).
        """
        records = self.scoring.records(rationales, labels, inputs, baselines)
        return self.scoring.score(records, batch_size=batch_size, progress=progress, relative=relative)


_BUNDLES: dict[tuple, EvaluatorBundle] = {}


def _cache_key(location: str | os.PathLike, revision: str | None, device: str | None) -> tuple:
    path = Path(os.fspath(location)).expanduser()
    if path.is_dir():  # a local bundle: keyed by where it is and when its config was written
        config = path / CONFIG_NAME
        return ("local", str(path.resolve()), config.stat().st_mtime_ns if config.is_file() else None, device)
    return ("hub", os.fspath(location), revision, device)


def load_bundle(location: str | os.PathLike | EvaluatorBundle, revision: str | None = None,
                device: str | None = None) -> EvaluatorBundle:
    """The :class:`EvaluatorBundle` at ``location`` (a bundle directory or a Hub repo id), loaded once per process
    and device (a bundle object is returned as is).

    Args:
        location (`str`, `os.PathLike` or `EvaluatorBundle`): the bundle directory or Hub repo id.
        revision (`str`, *optional*): Hub branch, tag or commit.
        device (`str`, *optional*): where the evaluators run (defaults to CUDA when available).
    """
    if isinstance(location, EvaluatorBundle):
        return location
    key = _cache_key(location, revision, device)
    if key not in _BUNDLES:
        _BUNDLES[key] = EvaluatorBundle.from_pretrained(location, revision=revision, device=device)
    return _BUNDLES[key]
