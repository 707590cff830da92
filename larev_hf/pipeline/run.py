"""The run: data → evaluators → scores → report, one resumable stage at a time, for any registered methods.

:class:`Run` is the run's own evaluator seed's :class:`~larev_hf.pipeline.view.RunView` (the
:class:`~larev_hf.methods.RunContext` every method's stages and scoring see) and the entry points that run it. Its
own stages are ``data`` and ``tokenizer`` (:mod:`larev_hf.pipeline.stages`); each method in the run adds its stages
from the registry (REV: ``phi_base``, ``phi``; LAREV: + ``ig``, ``environments``, ``probe``, ``phi_la`` and the
ablations of table 5.6; RoRA: ``rora_*``; LAS/RQ: ``simulators``), a stage shared by several methods running once;
then ``score-<methods>`` (:mod:`larev_hf.pipeline.scoring`) and ``report-<methods>``
(:mod:`larev_hf.pipeline.scoring`). :class:`~larev_hf.runner.StageRunner` does the bookkeeping (markers, resume,
``until``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from larev_hf.config import RunConfig, field_metadata, setting_defaults
from larev_hf.io import read_json, write_jsonl
from larev_hf.methods import get_method, method_names
from larev_hf.methods.larev import LarevSettings
from larev_hf.modeling import check_backbone
from larev_hf.pipeline.scoring import (
    combine_seeds,
    score_records,
    stage_report,
    stage_score,
    write_run_report,
)
from larev_hf.pipeline.stages import RUN_STAGES, data_inputs, drop_training_checkpoints, method_stages
from larev_hf.pipeline.view import RunView
from larev_hf.runner import StageRunner


class Run(RunView):
    """A run directory and its stages. ``Run(config, output_dir).execute()`` does the whole job."""

    # ----------------------------------------------------------------- the stages
    def stages(self) -> list[tuple[str, Callable[[], None]]]:
        """``data``, ``tokenizer``, every method's stages once per evaluator seed (a stage that is not ``seeded``
        once), one scoring per seed, the report. Scoring and reporting depend on which methods are asked for, the
        report on the seeds too: their markers are named after them."""
        ablations = self.config.method_settings(LarevSettings).ablations
        tag = "+".join(self.config.methods) + ("+ablations" if ablations else "")
        views = self.seed_views()
        stages: list[tuple[str, Callable[[], None]]] = [(stage.name, partial(stage.run, self)) for stage in RUN_STAGES]
        for k, view in enumerate(views):
            stages += [(view.stage_name(stage.name) if stage.seeded else stage.name,
                        partial(stage.run, view if stage.seeded else self))
                       for stage in method_stages(self.config) if stage.seeded or k == 0]
        stages += [(view.stage_name(f"score-{tag}"), partial(stage_score, view)) for view in views]
        seeds = "+seeds" + "-".join(str(view.config.training.seed) for view in views) if len(views) > 1 else ""
        return [*stages, (f"report-{tag}{seeds}", lambda: stage_report(self, self.stage_order()))]

    def stage_order(self) -> list[str]:
        """The names of :meth:`stages`, in order (the report lists each stage's wall time in this order)."""
        return [name for name, _ in self.stages()]

    def unfinished_stages(self, method: str) -> list[str]:
        """The marker names of ``method``'s stages that have not finished in any evaluator seed's view."""
        return [view.stage_name(stage) for view in self.seed_views() for stage in view.missing_stages(method)]

    def scoring_views(self, method: str) -> list[RunView]:
        """The views that score ``method`` for a meta-evaluation: every evaluator seed's, or the run alone for a
        method without trained models (a metric baseline gives one score whatever the seed)."""
        return self.seed_views() if get_method(method).stages(self.config) else [self]

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

    # ----------------------------------------------------------------- entry points
    def check_config(self) -> None:
        """Refuse to resume a run directory made with different settings (results would mix)."""
        self.runner.check_settings(self.config.to_dict(), setting_defaults(), field_metadata(),
                                   read_saved=lambda saved: RunConfig.from_dict(saved).to_dict())

    def validate(self) -> dict[str, str | None]:
        """Everything that can be checked in seconds before a stage starts: the backbone resolves, every split's
        data file exists. Returns the data inputs' fingerprints."""
        check_backbone(self.config.model.backbone)
        return data_inputs(self)

    def execute(self, until: str | None = None) -> dict:
        """Run (or resume) every stage — or the stages up to and including ``until`` — and return the report."""
        stages = self.stages()
        StageRunner.check_until([name for name, _ in stages], until)  # before anything is written
        inputs = self.validate()
        with self.runner.lock():
            self.check_config()
            if not self.runner.run(stages, until=until, inputs={"data": inputs},
                                   on_invalidate=partial(drop_training_checkpoints, self)):
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
        needed = ["tokenizer", *(stage.name for stage in method_stages(self.config))]
        missing = [view.stage_name(name) for view in views for name in needed if not view.is_done(name)]
        if missing:
            raise FileNotFoundError(f"{self.dir}: stages {missing} have not finished; run `larev-hf run` first")
        data_file = Path(data_file)
        split = data_file.stem if data_file.is_file() else "test"
        records = self.read_data_file(data_file, column_mapping)
        with self.runner.lock():  # outputs written under the lock too: they may sit inside the run directory
            output_dir = Path(output_dir)
            summaries, pointwise = [], []
            for k, view in enumerate(views):
                summary, rows = score_records(view, records, self.config.methods)
                pointwise.append(summary.pop("pointwise"))
                summaries.append(summary)
                seed_dir = f"seed-{view.config.training.seed}/"
                write_jsonl(output_dir / ("scores.jsonl" if k == 0 else f"{seed_dir}scores.jsonl"), rows)
            return write_run_report(self, combine_seeds(self.config, views, summaries, pointwise), split, len(records),
                                    output_dir, [record["label"] for record in records], self.stage_order())

    @classmethod
    def load(cls, run_dir: str | os.PathLike, progress: bool = True) -> Run:
        """Open an existing run directory."""
        config_path = Path(run_dir) / "run_config.json"
        if not config_path.is_file():
            raise FileNotFoundError(f"{run_dir}: no run_config.json; expected a directory made by `larev-hf run`")
        return cls(RunConfig.from_dict(read_json(config_path), source=str(config_path)), run_dir, progress)
