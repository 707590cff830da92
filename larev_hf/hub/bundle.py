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
``from_models`` from model directories trained elsewhere), ``save_pretrained``/``from_pretrained`` write and read it
(a local directory or a Hub repo id, through ``huggingface_hub.snapshot_download``) and ``push_to_hub`` uploads it as
one repo. ``score(rationales, labels, inputs)`` returns per-example scores through the method's own bundle scorer
(:meth:`larev_hf.methods.Method.bundle_scorer`); the bundle's baseline builder makes the vacuous baselines b when
none are given.

``save_pretrained`` stays our own rather than ``huggingface_hub.ModelHubMixin``'s: it writes the bundle atomically
(assembled beside the target, renamed into place) with file checksums, which the mixin's hooks do not offer.

The class holds the bundle's public API (construction, saving, loading, scoring); what a bundle is made of, gathered
from a run or from model directories, is :mod:`larev_hf.hub.construct`; its config, input validation, files, trust
checks and card are their own modules too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from larev_hf import __version__
from larev_hf.data.baseline_builders import baseline_builder_from_config
from larev_hf.hub.config import (
    CONFIG_NAME,
    MODEL_CARD_NAME,
    RECIPE_NAME,
    REPORT_NAME,
    BundleConfig,
    read_bundle_config,
)
from larev_hf.hub.construct import parts_from_models, parts_from_run
from larev_hf.hub.files import (
    replace_directory,
    resolve_bundle_dir,
    verify_checksums,
)
from larev_hf.hub.inputs import INSTANCE_ID, build_records
from larev_hf.hub.model_card import make_model_card
from larev_hf.hub.scoring import BundleScores, calibrated_scores, ensemble_mean
from larev_hf.io import DataError, read_json, shareable, write_json, write_text
from larev_hf.methods import Method, get_method
from larev_hf.modeling import load_evaluator

if TYPE_CHECKING:
    from huggingface_hub import HfApi, ModelCard


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
        expected = {*config.model_dirs(), config.tokenizer}
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
        #: a published named evaluator's recipe (``recipe.json``, :mod:`larev_hf.hub.published`): the card shows it
        self.recipe: dict[str, Any] | None = None

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
        """

        return cls(*parts_from_models(method, models, tokenizer, task=task, report=report, label_set=label_set,
                                      dataset=dataset, training=training, input_format=input_format,
                                      reduction=reduction, baseline_builder=baseline_builder), device=device)

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
        verify: bool = True,
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
            verify (`bool`, *optional*, defaults to `True`): check every model and tokenizer file against the SHA-256
                sums recorded at export (reads each file once).

        Raises:
            FileNotFoundError: neither a bundle directory nor a reachable Hub repo, or a file the config names is missing.
            ValueError: ``config_larev.json`` is malformed, or (``verify``) a file differs from its recorded checksum.
        """
        root = resolve_bundle_dir(path_or_repo_id, revision=revision, cache_dir=cache_dir, token=token,
                                  local_files_only=local_files_only)
        config = read_bundle_config(root)
        sources = {}
        for name in (*config.model_dirs(), config.tokenizer):
            if not (root / name).is_dir():
                raise FileNotFoundError(f"{root}: no {name}/ directory, which {CONFIG_NAME} lists; the bundle is incomplete "
                                        "(export it again with `larev-hf export`)")
            sources[name] = root / name
        if not (root / REPORT_NAME).is_file():
            raise FileNotFoundError(f"{root}: no {REPORT_NAME}; the bundle is incomplete (export it again with `larev-hf export`)")
        if verify:
            verify_checksums(root, sources, config.files_sha256)
        bundle = cls(config, read_json(root / REPORT_NAME), sources, device=device)
        if (root / RECIPE_NAME).is_file():
            bundle.recipe = read_json(root / RECIPE_NAME)
        return bundle

    # ------------------------------------------------------------------ saving
    def model_card(self, repo_id: str | None = None) -> ModelCard:
        """The README.md model card (see :mod:`larev_hf.model_card`)."""

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
        shareable(tmp, directory=True)  # mkdtemp's 0700 would keep the bundle from a colleague or a web server
        try:
            for name, source in sorted(self.sources.items()):
                shutil.copytree(source, tmp / name)
            write_json(tmp / CONFIG_NAME, self.config.to_dict())
            write_json(tmp / REPORT_NAME, self.report)
            if self.recipe is not None:
                write_json(tmp / RECIPE_NAME, self.recipe)
            write_text(tmp / MODEL_CARD_NAME, self.model_card(repo_id).content)
            replace_directory(tmp, target)
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

    def model(self, role: str, seed: int | None = None) -> Any:
        """The evaluator of ``role`` (``"baseline"`` or ``"rationale"``) — of evaluator ``seed`` in an ensemble bundle
        (default: the first) — loaded on first use with :func:`larev_hf.modeling.load_evaluator` (full checkpoints and
        LoRA adapters alike)."""

        if role not in self.config.models:
            raise KeyError(f"role {role!r}: a {self.config.method} bundle has the roles {sorted(self.config.models)}")
        directory = self.config.model_dirs_of(seed)[role]
        if directory not in self._models:
            self._models[directory], _ = load_evaluator(self.sources[directory], device=self.device)
        return self._models[directory]

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
        relative: bool = False,
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
            relative (`bool`, *optional*, defaults to `False`): also score each baseline b as the rationale and return
                ``relative`` = score − that score (a second scoring pass; bundles that read b only). Measured on the
                SNLI acceptability judgments it ranks explanations across instances worse than the raw score
                (docs/hub.md), so it is off by default.
        """
        records = self.records(rationales, labels, inputs, baselines)
        scorers = [self.spec.bundle_scorer({role: self.model(role, seed) for role in self.config.models},
                                           self.tokenizer, self.config, batch_size) for seed in self.config.seeds or [None]]
        if baselines is not None and not scorers[0].needs_baselines:
            raise ValueError(f"a {self.spec.title} bundle reads the input x, not vacuous baselines: pass no `baselines`")
        if scorers[0].needs_baselines:
            baselines = list(baselines) if baselines is not None else self.make_baselines(records)
        results = [scorer.score([r["rationale"] for r in records], [r["label"] for r in records], records, baselines,
                                progress) for scorer in scorers]
        scores, log_p_rationale, log_p_baseline, seed_scores = ensemble_mean(results)
        calibrated = None if self.config.calibration is None else \
            calibrated_scores(self.config.calibration, self.config.method, scores, records)
        vacuous = None
        if relative and scorers[0].needs_baselines:  # the instance's own reference point: b as the rationale
            vacuous = ensemble_mean([scorer.score(baselines, [r["label"] for r in records], records, baselines,
                                                  progress) for scorer in scorers])[0]
        offsets = self.config.label_offsets
        centred = None if not offsets else scores - np.array([offsets.get(r["label"], np.nan) for r in records])
        return BundleScores(scores=scores, log_p_rationale=log_p_rationale, log_p_baseline=log_p_baseline,
                            baselines=list(baselines) if baselines is not None else None, hashcode=self.hashcode,
                            calibrated=calibrated, seed_scores=seed_scores,
                            relative=None if vacuous is None else scores - vacuous, label_centred=centred,
                            instance_ids=[r.get(INSTANCE_ID) for r in records])
