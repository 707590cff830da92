"""The run: data → evaluators → scores → report, one resumable stage at a time, for any registered methods.

:class:`Run` is the :class:`~larev_hf.methods.RunContext` every method's stages and scoring see. Its own stages are
``data`` and ``tokenizer`` (thesis algorithm A.1 steps 1-3); each method in the run adds its stages from the registry
(REV: ``phi_base``, ``phi``; LAREV: + ``ig``, ``environments``, ``probe``, ``phi_la`` and the ablations of table
5.6; RoRA: ``rora_*``; LAS/RQ: ``simulators``), a stage shared by several methods running once; then ``score-<methods>``
and ``report-<methods>``. :class:`~larev_hf.runner.StageRunner` does the bookkeeping (markers, resume, ``until``).
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from larev_hf.config import RunConfig, field_metadata, setting_defaults
from larev_hf.data import (
    add_baselines,
    add_variants,
    baseline_builder_from_spec,
    load_examples,
    load_explanations,
    source_files,
)
from larev_hf.data.variants import build_variants
from larev_hf.io import DataError, file_sha256, read_json, read_jsonl, write_json, write_jsonl
from larev_hf.methods import Stage, get_method, method_names
from larev_hf.methods.larev import LarevSettings
from larev_hf.modeling import build_tokenizer, check_backbone, is_preset, load_evaluator
from larev_hf.modeling.backbones import fresh_model
from larev_hf.report import majority_class, write_report
from larev_hf.runner import StageRunner
from larev_hf.scores import VARIANTS
from larev_hf.scores.stats import summarize_by_label
from larev_hf.training import train_on_records

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
#: What every evaluator seed of a multi-seed run shares: the data (with its baselines) and the tokenizer; everything
#: else a seeded stage writes (models/, leakage/, rora/, scores/) lives in the seed's own directory.
SHARED_PARTS = ("data", "tokenizer")


class Run:
    """A run directory and its stages. ``Run(config, output_dir).execute()`` does the whole job."""

    def __init__(self, config: RunConfig, output_dir: str | os.PathLike, progress: bool = True) -> None:
        self.config = config
        self.dir = Path(output_dir)
        self.progress = progress
        self.runner = StageRunner(self.dir)
        self._models: dict[str, Any] = {}
        #: where this view's seeded artifacts live: the run directory for ``--seed``, ``seeds/seed-<k>`` for another
        #: evaluator seed (:meth:`for_seed`)
        self.root = self.dir

    # ----------------------------------------------------------------- evaluator seeds
    def for_seed(self, seed: int) -> Run:
        """This run as evaluator seed ``seed`` sees it: the same data and tokenizer, its own models and scores under
        ``seeds/seed-<seed>/`` and its stages' markers named ``<stage>@seed<seed>``; ``--seed`` itself is the run."""
        if seed == self.config.training.seed and self.root == self.dir:
            return self
        view = copy.copy(self)
        view.config = self.config.replace(seed=seed)
        view.root = self.dir / "seeds" / f"seed-{seed}"
        view._models = {k: v for k, v in self._models.items() if k == "tokenizer"}
        return view

    def seed_views(self) -> list[Run]:
        """One view per evaluator seed (``--seeds``, or ``--seed`` alone), in order."""
        return [self.for_seed(seed) for seed in self.config.evaluator_seeds]

    def scoring_views(self, method: str) -> list[Run]:
        """The views that score ``method`` for a meta-evaluation: every evaluator seed's, or the run alone for a
        method without trained models (a metric baseline gives one score whatever the seed)."""
        return self.seed_views() if get_method(method).stages(self.config) else [self]

    def unfinished_stages(self, method: str) -> list[str]:
        """The marker names of ``method``'s stages that have not finished in any evaluator seed's view."""
        return [view.stage_name(stage) for view in self.seed_views() for stage in view.missing_stages(method)]

    def methods_to_score(self, asked: list[str], what: str = "this evaluation") -> list[str]:
        """``asked`` (each checked to be trained in every evaluator seed), or, when empty, the run's methods and every
        metric baseline whose models are trained: what ``larev-hf meta`` and ``larev-hf human`` score."""
        for name in asked or self.config.methods:
            get_method(name)  # an unknown name raises, listing the known ones
            if missing := self.unfinished_stages(name):
                raise ValueError(f"method {name!r}: its stages {missing} have not finished in {self.dir}; {what} "
                                 f"reuses trained evaluators (run `larev-hf run --method {name}` with the run's "
                                 "settings first)")
        if asked:
            return list(asked)
        return list(self.config.methods) + [name for name in method_names() if get_method(name).kind == "baseline"
                                            and name not in self.config.methods and not self.missing_stages(name)]

    def stage_name(self, name: str) -> str:
        """The marker name of stage ``name`` in this view (shared stages keep theirs)."""
        return name if self.root == self.dir or name in SHARED_PARTS else f"{name}@seed{self.config.training.seed}"

    # ----------------------------------------------------------------- RunContext
    def path(self, *parts: str) -> Path:
        return (self.dir if parts and parts[0] in SHARED_PARTS else self.root).joinpath(*parts)

    def missing_stages(self, method: str) -> list[str]:
        """The stages ``method``'s scores need (its models and the tokenizer) that have not finished in this run."""
        needed = [stage.name for stage in get_method(method).stages(self.config)]
        return [stage for stage in (["tokenizer", *needed] if needed else []) if not self.is_done(stage)]

    def is_done(self, stage: str) -> bool:
        return self.runner.is_done(self.stage_name(stage))

    def task(self) -> str:
        """The run's task kind (``nli``, ``qa`` or ``yesno``), read from the first record of its test split."""
        return next(read_jsonl(self.path("data", "test.jsonl")))[1]["task"]

    def split_records(self, split: str) -> list[dict[str, Any]]:
        """The records of ``split``; on the training split, ``rationale`` is the ``train_rationale`` variant
        (every evaluator trains on ``record["rationale"]``)."""
        records = [record for _, record in read_jsonl(self.path("data", f"{split}.jsonl"))]
        if split == "train" and self.config.data.train_rationale != "gold":
            for record in records:
                record["rationale"] = record[f"rationale_{self.config.data.train_rationale}"]
        return records

    def tokenizer(self):
        from transformers import AutoTokenizer

        if "tokenizer" not in self._models:
            self._models["tokenizer"] = AutoTokenizer.from_pretrained(self.path("tokenizer"))
        return self._models["tokenizer"]

    def model(self, name: str):
        """A trained model of this run, loaded from ``models/<name>`` (cached)."""
        if name not in self._models:
            self._models[name], _ = load_evaluator(self.path("models", name))
        return self._models[name]

    def train_evaluator(self, name: str, make_source: Callable[[dict[str, Any]], str]) -> None:
        """A fresh model trained on ``make_source(record) → label`` over the training split; with
        ``select_on_validation``, the epoch with the lowest validation loss is kept."""
        model = fresh_model(self)
        validation = self.split_records("validation") if self.config.training.select_on_validation else None
        train_on_records(model, self.tokenizer(), self.split_records("train"), make_source, self.path("models", name),
                         self.config.train_settings(self.progress), eval_records=validation)

    # ----------------------------------------------------------------- the run's own stages
    def stage_data(self) -> None:
        """Load the splits, build baselines b everywhere and the rationale variants (thesis A.1 steps 1-3)."""
        data, seed = self.config.data, self.config.training.seed
        builder = baseline_builder_from_spec(data.baseline_builder, seed)
        splits = {}  # every split is loaded and validated before anything is written
        for split in SPLITS:
            limit = data.max_train_examples if split == "train" else data.max_eval_examples
            dataset = load_examples(data.dataset, data.data_dir, split, max_examples=limit, seed=seed,
                                    **data.loader_options)
            if len(dataset) == 0:
                where = source_files(data.dataset, data.data_dir, [split])[split] or f"{data.data_dir} (split {split!r})"
                raise DataError(f"{where}: split {split!r} has no examples; expected at least one")
            splits[split] = add_variants(add_baselines(dataset, builder)).to_list()
        for split, records in splits.items():
            write_jsonl(self.path("data", f"{split}.jsonl"), records)
        write_json(self.path("data", "baseline_builder.json"), builder.to_config())

    def stage_tokenizer(self) -> None:
        """Train the preset's tokenizer on the training text (or save the checkpoint's own)."""
        texts = None
        if is_preset(self.config.model.backbone):
            texts = []
            for record in self.split_records("train"):
                texts += [record["baseline"], record["rationale"], *record["choices"], *build_variants(record).values()]
        build_tokenizer(self.config.model.backbone, texts).save_pretrained(self.path("tokenizer"))

    def method_stages(self) -> list[Stage]:
        """Every method's stages in canonical method order, each shared stage once."""
        stages: dict[str, Stage] = {}
        for method in self.config.methods:
            for stage in get_method(method).stages(self.config):
                stages.setdefault(stage.name, stage)
        return list(stages.values())

    def stages(self) -> list[tuple[str, Callable[[], None]]]:
        """``data``, ``tokenizer``, every method's stages once per evaluator seed (a stage that is not ``seeded``
        once), one scoring per seed, the report. Scoring and reporting depend on which methods are asked for, the
        report on the seeds too: their markers are named after them."""
        ablations = self.config.method_settings(LarevSettings).ablations
        tag = "+".join(self.config.methods) + ("+ablations" if ablations else "")
        views = self.seed_views()
        stages: list[tuple[str, Callable[[], None]]] = [("data", self.stage_data), ("tokenizer", self.stage_tokenizer)]
        for k, view in enumerate(views):
            stages += [(view.stage_name(stage.name) if stage.seeded else stage.name,
                        lambda stage=stage, view=view: stage.run(view if stage.seeded else self))
                       for stage in self.method_stages() if stage.seeded or k == 0]
        stages += [(view.stage_name(f"score-{tag}"), view.stage_score) for view in views]
        seeds = "+seeds" + "-".join(str(view.config.training.seed) for view in views) if len(views) > 1 else ""
        return [*stages, (f"report-{tag}{seeds}", self.stage_report)]

    # ----------------------------------------------------------------- scoring and reports
    def score_records(self, records: list[dict[str, Any]], methods: tuple[str, ...],
                      variants: dict[str, list[str]] | None = None) -> tuple[dict, list[dict]]:
        """Every method's scores of every rationale variant (default: the records' ``rationale_<variant>`` columns),
        evaluator accuracies and per-example rows."""
        if variants is None:
            variants = {variant: [r[f"rationale_{variant}"] for r in records] for variant in VARIANTS}
        rows = [{"id": r["id"], "label": r["label"]} for r in records]
        shared: dict[str, Any] = {"summaries": {}}
        result: dict[str, Any] = {"methods": {}, "accuracy": {}, "pointwise": {}}
        for name in methods:
            scored = get_method(name).score(self, records, variants, shared)
            result["methods"][name] = shared["summaries"][name] = scored.summary
            pointwise = scored.scores if scored.scores is not None else \
                get_method(name).pointwise(self, records, variants, shared)
            result["pointwise"][name] = {v: [float(x) for x in values] for v, values in pointwise.items()}
            if "gold" in pointwise:  # per gold label: a leak that works for one label only shows there
                scored.summary["by_label"] = summarize_by_label(pointwise, [r["label"] for r in records])
            result["accuracy"].update(scored.accuracy)
            result.update(scored.extra)
            for column, values in scored.columns.items():
                for row, value in zip(rows, values, strict=True):
                    row[column] = value
        return result, rows

    def stage_score(self) -> None:
        summary, rows = self.score_records(self.split_records("test"), self.config.methods)
        write_jsonl(self.path("scores", "test_scores.jsonl"), rows)
        write_json(self.path("scores", "test_pointwise.json"), summary.pop("pointwise"))
        write_json(self.path("scores", "test_summary.json"), summary)

    def stage_report(self) -> None:
        views = self.seed_views()
        summaries = [read_json(view.path("scores", "test_summary.json")) for view in views]
        pointwise = [read_json(view.path("scores", "test_pointwise.json")) for view in views] if len(views) > 1 else []
        labels = [record["label"] for record in self.split_records("test")]
        self.write_report(self.combine_seeds(views, summaries, pointwise), "test", len(labels), self.dir, labels)

    def combine_seeds(self, views: list[Run], summaries: list[dict], pointwise: list[dict]) -> dict:
        """The report's summary: the first seed's, plus (several seeds) per method the across-seed figures of
        :func:`larev_hf.scores.seeds.seed_summary` and, for nats metrics, the ensemble evaluator's summary (the mean
        of the seeds' pointwise scores)."""
        from larev_hf.scores import summarize_variants
        from larev_hf.scores.seeds import ensemble_scores, seed_summary

        summary = dict(summaries[0])
        if len(views) < 2:
            return summary
        seeds = [view.config.training.seed for view in views]
        summary["seeds"] = {"seeds": seeds, "determinism": "same seed, data, versions and thread count → same scores",
                            "methods": {}}
        for name in summary["methods"]:
            per_seed = {s: p[name] for s, p in zip(seeds, pointwise, strict=True)}
            entry = seed_summary(per_seed, {s: m["methods"][name]["ci95"] for s, m in zip(seeds, summaries,
                                                                                        strict=True)},
                                 n_boot=self.config.evaluation.n_boot, seed=self.config.training.seed)
            if get_method(name).unit == "nats" and get_method(name).kind == "metric":
                entry["ensemble"] = summarize_variants(ensemble_scores(list(per_seed.values())),
                                                       n_boot=self.config.evaluation.n_boot,
                                                       seed=self.config.training.seed)
            summary["seeds"]["methods"][name] = entry
        return summary

    def write_report(self, summary: dict, split: str, n_examples: int, output_dir: Path,
                     labels: list[str] | None = None) -> dict:
        """``report.json``/``report.md``/``separations.png`` of a scoring; ``labels`` (the gold labels scored) give
        the majority-class accuracy the evaluators' accuracy is read against."""
        markers = self.runner.markers()
        report = {
            "dataset": self.config.data.dataset, "split": split, "n_examples": n_examples, **summary,
            "majority_class": majority_class(labels or []),
            "settings": self.config.to_dict(),
            # in pipeline order (then stages of earlier scorings), not the markers' alphabetical order
            "timings": {stage: markers[stage]["seconds"]
                        for stage in dict.fromkeys([name for name, _ in self.stages()] + list(markers)) if stage in markers},
            # trained weights are bitwise reproducible only with the same versions, device and thread count
            "stage_environments": {stage: {k: v for k, v in content.items() if k != "seconds"}
                                   for stage, content in markers.items()},
        }
        write_report(report, output_dir)
        return report

    # ----------------------------------------------------------------- entry points
    def check_config(self) -> None:
        """Refuse to resume a run directory made with different settings (results would mix)."""
        self.runner.check_settings(self.config.to_dict(), setting_defaults(), field_metadata(),
                                   read_saved=lambda saved: RunConfig.from_dict(saved).to_dict())

    def data_inputs(self) -> dict[str, str | None]:
        """What the ``data`` stage reads: the SHA-256 of each split's local file (``None``: Hub or generated data,
        identified by the settings). A change reruns ``data`` and every later stage (:class:`StageRunner`). If the
        files are gone but the run has read them, the recorded inputs stand (``data/*.jsonl`` holds all it needs)."""
        try:
            files = source_files(self.config.data.dataset, self.config.data.data_dir, SPLITS)
        except DataError:
            recorded = self.runner.recorded_inputs("data")
            if recorded is None:
                raise
            logger.warning("%s: the data files are no longer there; resuming with the data this run already read",
                           self.config.data.data_dir)
            return recorded
        return {split: file_sha256(path) if path is not None else None for split, path in files.items()}

    def drop_training_checkpoints(self, stages: list[str]) -> None:
        """After an input changed: remove the epoch checkpoints of unfinished trainings (``models/*.checkpoints``),
        which were made from the old inputs and would otherwise be resumed."""
        import shutil

        for path in self.path("models").glob("*.checkpoints"):
            logger.warning("%s: removed, it was trained on the earlier inputs", path)
            shutil.rmtree(path, ignore_errors=True)

    def validate(self) -> dict[str, str | None]:
        """Everything that can be checked in seconds before a stage starts: the backbone resolves, every split's
        data file exists. Returns the data inputs' fingerprints."""
        check_backbone(self.config.model.backbone)
        return self.data_inputs()

    def execute(self, until: str | None = None) -> dict:
        """Run (or resume) every stage — or the stages up to and including ``until`` — and return the report."""
        stages = self.stages()
        StageRunner.check_until([name for name, _ in stages], until)  # before anything is written
        data_inputs = self.validate()
        with self.runner.lock():
            self.check_config()
            if not self.runner.run(stages, until=until, inputs={"data": data_inputs},
                                   on_invalidate=self.drop_training_checkpoints):
                return {"dataset": self.config.data.dataset, "split": "test", "n_examples": 0, "methods": {},
                        "until": until}
        return read_json(self.path("report.json"))

    def evaluate_file(self, data_file: str | os.PathLike, output_dir: str | os.PathLike,
                      column_mapping: dict[str, str] | None = None) -> dict:
        """Score another file with this run's trained models (no retraining): the run's data set format, or the
        "my explanations" format (:data:`larev_hf.data.EXPLANATION_COLUMNS`, the bundle script's and
        ``evaluate.load``'s), ``column_mapping`` renaming its columns. A multi-seed run scores it with every seed's
        models and reports the across-seed figures (each seed's rows in ``seed-<k>/scores.jsonl`` beside the first
        seed's ``scores.jsonl``)."""
        views = self.seed_views()
        needed = ["tokenizer", *(stage.name for stage in self.method_stages())]
        missing = [view.stage_name(name) for view in views for name in needed if not view.is_done(name)]
        if missing:
            raise FileNotFoundError(f"{self.dir}: stages {missing} have not finished; run `larev-hf run` first")
        data_file = Path(data_file)
        split = data_file.stem if data_file.is_file() else "test"
        records = self.read_data_file(data_file, column_mapping)
        cfg = self.config
        with self.runner.lock():  # outputs written under the lock too: they may sit inside the run directory
            output_dir = Path(output_dir)
            summaries, pointwise = [], []
            for k, view in enumerate(views):
                summary, rows = view.score_records(records, cfg.methods)
                pointwise.append(summary.pop("pointwise"))
                summaries.append(summary)
                seed_dir = f"seed-{view.config.training.seed}/"
                write_jsonl(output_dir / ("scores.jsonl" if k == 0 else f"{seed_dir}scores.jsonl"), rows)
            return self.write_report(self.combine_seeds(views, summaries, pointwise), split, len(records), output_dir,
                                     [record["label"] for record in records])

    def read_data_file(self, data_file: str | os.PathLike, column_mapping: dict[str, str] | None = None,
                       ) -> list[dict[str, Any]]:
        """A file to score as schema records with this run's baselines and rationale variants: the "my explanations"
        format or the run's data set format (:func:`~larev_hf.data.load_explanations`)."""
        cfg = self.config
        builder = baseline_builder_from_spec(cfg.data.baseline_builder, cfg.training.seed)
        dataset = load_explanations(Path(data_file), cfg.data.dataset, self.task(), column_mapping,
                                    cfg.data.loader_options)
        return add_variants(add_baselines(dataset, builder)).to_list()

    @classmethod
    def load(cls, run_dir: str | os.PathLike, progress: bool = True) -> Run:
        """Open an existing run directory."""
        config_path = Path(run_dir) / "run_config.json"
        if not config_path.is_file():
            raise FileNotFoundError(f"{run_dir}: no run_config.json; expected a directory made by `larev-hf run`")
        return cls(RunConfig.from_dict(read_json(config_path), source=str(config_path)), run_dir, progress)


__all__ = ["Run", "RunConfig", "SPLITS"]
