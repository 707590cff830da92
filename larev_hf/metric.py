"""What the ``evaluate`` modules ``larev``, ``rev``, ``rora`` and ``bundle`` share.

The modules ship inside the package (``larev_hf/metric_modules/<name>``; ``metrics/`` in the repository is a link to
it). ``evaluate.load("larev")`` loads one by name from any directory, offline too (:mod:`larev_hf.evaluate_names`);
:func:`larev_hf.metric_path` gives its directory for ``evaluate.load(<directory>)``. ``bundle`` scores with whatever
registered method the bundle holds, so a new method needs no module of its own. Each module file holds only its card
texts (``_DESCRIPTION``, ``_CITATION``, ``_KWARGS_DESCRIPTION``) and a subclass of :class:`BundleMetric` naming its
method; loading the evaluator bundle (:func:`larev_hf.evaluators.load`), validating inputs and scoring live in
:mod:`larev_hf.hub`: ``add_batch`` validates each example once, into a schema record, and ``compute`` scores the
records evaluate stored, as they are (:meth:`larev_hf.hub.BundleScoring.score`).

    >>> import evaluate  # doctest: +SKIP
    >>> larev = evaluate.load("larev", evaluator="bundles/larev-esnli")  # doctest: +SKIP
    >>> larev.compute(rationales=[...], labels=[...], inputs=[...])  # doctest: +SKIP
    {'scores': [...], 'mean_score': ..., 'log_p_rationale': [...], 'log_p_baseline': [...], 'baselines': [...], 'hashcode': ..., 'label_centred_scores': [...]}

Bundles are cached per process (keyed by their location, revision and device: :func:`larev_hf.hub.load_bundle`), so
loading the same metric twice, or the example script loading a bundle before ``evaluate.load``, loads the models once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import datasets
import evaluate

from larev_hf import __version__, evaluators, metric_path
from larev_hf.hub import EvaluatorBundle
from larev_hf.hub.inputs import INSTANCE_ID, check_instances, with_baselines
from larev_hf.methods import get_method

#: The features of every module: one rationale, one label and one input dict per example.
FEATURES = datasets.Features({
    "rationales": datasets.Value("string"),
    "labels": datasets.Value("string"),
    "inputs": {
        "id": datasets.Value("string"),
        INSTANCE_ID: datasets.Value("string"),
        "premise": datasets.Value("string"),
        "hypothesis": datasets.Value("string"),
        "question": datasets.Value("string"),
        "choices": datasets.Sequence(datasets.Value("string")),
    },
})

def _title(method: str | None) -> str:
    """How a module names its metric: the method's title, or "rationale" for the generic ``bundle`` module."""
    return get_method(method).title if method else "rationale"


def citation(method: str) -> str:
    """The ``_CITATION`` of a module: the method's BibTeX from the one ``citations.bib``."""
    return get_method(method).citation + "\n"


def kwargs_description(method: str | None) -> str:
    """The ``_KWARGS_DESCRIPTION`` of a module: the same arguments for every method (``None``: the generic module)."""
    title = _title(method)
    method = method or "bundle"
    return f"""
Computes {title} scores of free-text rationales with a trained evaluator bundle.

Load arguments (``evaluate.load("{method}", evaluator=..., ...)``):
    evaluator (`str` or `EvaluatorBundle`): a named default evaluator (``"esnli"``: from the cache, its published
        Hub repo or built on first use, ``larev-hf evaluators list``), an evaluator bundle directory
        (``larev-hf export``) or a Hub repo id.
    evaluator_revision (`str`, *optional*): Hub branch, tag or commit of the bundle.
    device (`str`, *optional*): ``"cuda"``, ``"cpu"``, ...; defaults to CUDA when available.
    batch_size (`int`, *optional*, defaults to 64): scoring batch size.

Args:
    rationales (`list[str]`): the rationales to score, one per example ("" scores the baseline alone).
    labels (`list[str]`): the label each rationale explains (in the bundle's label set, if it has one).
    inputs (`list[dict]`): each example's input: ``{{"premise", "hypothesis"}}`` for an NLI bundle,
        ``{{"question", "choices" (optional)}}`` for QA, ``{{"question"}}`` for yes/no; optionally a unique row
        ``"id"`` and an ``"instance_id"`` shared by the explanations of one instance (for ``instance_ranks``).
        No id changes a score: the baseline is built from the instance's content.
    baselines (`list[str]`, *optional*): vacuous baselines b; by default the bundle's builder makes them.

Returns:
    scores (`list[float]`): the pointwise {title} score of each rationale, in nats: how many nats more
        (positive) or less (negative) log-probability the evaluator gives the label with the rationale than the
        baseline model gives it from the vacuous baseline alone; raw scores carry a per-label offset, so rank
        explanations of one instance, or use ``label_centred_scores`` across labels.
    mean_score (`float`): the corpus score, the mean of ``scores``.
    log_p_rationale (`list[float]`): log p(y | rationale input) under the rationale-augmented evaluator.
    log_p_baseline (`list[float]`): log p(y | baseline input) under the baseline evaluator.
    baselines (`list[str]` or `None`): the baselines used.
    hashcode (`str`): ``larev-hf:{method}:<settings hash>``: scores are comparable only under one hashcode.
    label_centred_scores (`list[float]`, bundles with a fixed label set): each score minus its label's mean gold
        score on the evaluator's test split (the per-label offset of raw scores removed).
    calibrated_scores (`list[float]`, calibrated bundles): log-odds that people judge the explanation acceptable.
    contributions (`list[dict[str, float]]`, calibrated bundles): per explanation, what each calibration input added
        to its calibrated score (log-odds); with ``calibration_intercept`` they sum to it.
    findings (`list[list[dict]]`): per explanation, its findings, strongest first, each with ``name``, ``title`` and
        its evidence (copies the input, states the label, not about this input, does not read as an explanation,
        contradicts the label, empty, whitespace only, truncated, not in the evaluator's script; docs/findings.md).
    raw_score_informative (`list[bool]`, bundles that read a baseline): ``False`` where the evaluator is already
        certain of the label from the vacuous baseline, so the raw score cannot rise above about 0.
    instance_ranks (`list[int]`, when inputs give ``instance_id``): each explanation's rank within its instance
        (1 = best) by the calibrated score, or the raw score without a calibration.

Examples:

    >>> metric = evaluate.load("{method}", evaluator="path/to/bundle")  # doctest: +SKIP
    >>> results = metric.compute(
    ...     rationales=["A man riding a bike in the street is outdoors."],
    ...     labels=["entailment"],
    ...     inputs=[{{"premise": "A man rides a bike in the street.", "hypothesis": "A man is outside."}}],
    ... )  # doctest: +SKIP
    >>> sorted(results)  # doctest: +SKIP
    ['baselines', 'hashcode', 'label_centred_scores', 'log_p_baseline', 'log_p_rationale', 'mean_score', 'scores']
"""


class BundleMetric(evaluate.Metric):
    """An ``evaluate`` metric backed by an :class:`EvaluatorBundle` of method :attr:`method`.

    Args:
        evaluator (`str`, `os.PathLike` or `EvaluatorBundle`): the bundle directory or Hub repo id.
        evaluator_revision (`str`, *optional*): Hub revision of the bundle.
        device (`str`, *optional*): where the evaluators run.
        batch_size (`int`, *optional*, defaults to 64): scoring batch size.
        **kwargs: ``evaluate.Metric``'s own arguments (``config_name``, ``cache_dir``, ``experiment_id``, ...).
    """

    #: the bundle method this module scores with ("larev", "rev", "rora"); ``None``: whatever method the bundle holds.
    method: ClassVar[str | None] = None

    def __init__(
        self,
        evaluator: str | os.PathLike | EvaluatorBundle | None = None,
        evaluator_revision: str | None = None,
        device: str | None = None,
        batch_size: int = 64,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.evaluator = evaluator
        self.evaluator_revision = evaluator_revision
        self.device = device
        self.batch_size = batch_size
        self.bundle: EvaluatorBundle | None = None

    def _info_from(self, description: str, citation: str, inputs_description: str) -> evaluate.MetricInfo:
        """The module's ``MetricInfo``: its texts and the shared :data:`FEATURES`."""
        return evaluate.MetricInfo(
            description=description,
            citation=citation,
            inputs_description=inputs_description,
            features=FEATURES,
            module_type="metric",
        )

    def _download_and_prepare(self, dl_manager: Any) -> None:
        """Load (or reuse) the evaluator bundle; a bundle of another method is refused."""
        title = _title(self.method)
        if self.evaluator is None:
            raise ValueError(f"the {title} metric needs an evaluator bundle: "
                             f'evaluate.load("{self.method or "bundle"}", evaluator="<bundle directory or Hub '
                             'repo id>")')
        bundle = evaluators.load(self.evaluator, self.evaluator_revision, self.device)
        if self.method is not None and bundle.config.method != self.method:
            raise ValueError(f"{self.evaluator} is a {bundle.config.method} bundle, not a {self.method} one; "
                             f'load it with evaluate.load("{bundle.config.method}", evaluator=...)')
        self.bundle = bundle

    def _records(self, rationales: Any, labels: Any, inputs: Any, offset: int) -> list[dict[str, Any]]:
        """Each example validated, once, into a schema record; the id rule across rows waits for ``_compute``, which
        sees every batch."""
        assert self.bundle is not None, "evaluate.load prepares the bundle before any input is added"
        return self.bundle.scoring.records(rationales, labels, inputs, offset=offset, check_ids=False)

    @staticmethod
    def _as_features(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # evaluate's format check refuses a column of None: an absent instance id travels as "" (read back as absent)
        return [{key: record.get(key, "" if key == INSTANCE_ID else None) for key in FEATURES["inputs"]}
                for record in records]

    def _stored_records(self, rationales: list[str], labels: list[str],
                        inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records ``add_batch`` validated, back from evaluate's table (:meth:`_as_features`), as they were."""
        assert self.bundle is not None
        task, records = self.bundle.config.task, []
        for rationale, label, stored in zip(rationales, labels, inputs, strict=True):
            record = {"id": stored["id"], "task": task, "premise": stored["premise"],
                      "hypothesis": stored["hypothesis"], "question": stored["question"],
                      "choices": list(stored["choices"]), "label": label, "rationale": rationale}
            if stored.get(INSTANCE_ID):
                record[INSTANCE_ID] = stored[INSTANCE_ID]
            records.append(record)
        return records

    def add_batch(self, *, rationales: Sequence[str] | None = None, labels: Sequence[str] | None = None,
                  inputs: Sequence[Mapping[str, Any]] | None = None, **kwargs: Any) -> None:
        """Add a batch of examples; each is validated first (errors name the argument, position and field)."""
        if rationales is None and labels is None and inputs is None:
            raise ValueError("add_batch needs rationales, labels and inputs")
        records = self._records(rationales, labels, inputs, offset=len(self))
        super().add_batch(rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
                          inputs=self._as_features(records), **kwargs)

    def add(self, *, rationale: str | None = None, label: str | None = None, input: Mapping[str, Any] | None = None,
            **kwargs: Any) -> None:
        """Add one example (``rationale``, ``label``, ``input``); it is validated first."""
        (record,) = self._records([rationale], [label], [input], offset=len(self))
        super().add(rationales=record["rationale"], labels=record["label"], inputs=self._as_features([record])[0],
                    **kwargs)

    def _compute(
        self,
        rationales: list[str],
        labels: list[str],
        inputs: list[dict[str, Any]],
        baselines: list[str] | None = None,
    ) -> dict[str, Any]:
        assert self.bundle is not None
        records = self._stored_records(rationales, labels, inputs)
        check_instances(records, lambda i: f"inputs[{i}]")  # the id rule, once over every batch added
        if baselines is not None:  # compute's own argument, which add_batch never saw: validated here
            records = with_baselines(records, baselines)
        return self.bundle.scoring.score(records, batch_size=self.batch_size, check_labels=True).to_dict()


def push_metric_module(name: str, repo_id: str, *, private: bool | None = None, token: str | None = None,
                       api: Any = None) -> Any:
    """Publish a shipped ``evaluate`` module (:func:`larev_hf.metric_path`) as a Hub Space, so that anyone can
    ``evaluate.load("<repo_id>", evaluator=...)`` it online (the Space also serves the module's Gradio widget).

    The module directory already holds what a Space needs: the card with its Space metadata (``README.md``: ``sdk:
    gradio``, ``app_file: app.py``), ``app.py`` and ``requirements.txt`` (which installs ``larev-hf``).

    Args:
        name (`str`): ``larev``, ``rev``, ``rora`` or ``bundle``.
        repo_id (`str`): the Space, ``"user/larev"``.
        private (`bool`, *optional*): visibility of a newly created Space.
        token (`str`, *optional*): Hub token (defaults to the logged-in one).
        api (`HfApi`, *optional*): the client to use; defaults to ``HfApi(token=token)``.

    Returns:
        The ``CommitInfo`` of the upload.
    """
    folder = metric_path(name)
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token, library_name="larev-hf", library_version=__version__)
    repo_id = api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True,
                              token=token).repo_id
    return api.upload_folder(repo_id=repo_id, repo_type="space", folder_path=folder,
                             commit_message=f"Upload the {name} evaluate module (larev-hf {__version__})",
                             ignore_patterns=["__pycache__/*", "*.pyc"], token=token)
