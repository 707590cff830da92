"""Do the metrics agree with people? Every method of a trained run scored on explanations judged by annotators.

``HumanEvaluation(run, settings).execute()`` (CLI: ``larev-hf human --run-dir DIR --judgments FILE.jsonl``) reads a
judged file (:mod:`larev_hf.meta.judgments`), builds each instance's vacuous baseline b with the run's builder (one b
per instance, shared by its explanations), scores every explanation with every method of the run and the metric
baselines through the registry (:meth:`larev_hf.methods.Method.pointwise`, the run's trained evaluators, nothing
retrained), adds the file's own baseline columns (e.g. GPT-3's NLL, lower = better) and reports, per metric and human
column, the statistics of :mod:`larev_hf.meta.human_stats` with instance-bootstrap intervals, and each learned
metric's paired difference from every other column. Outputs, under ``<run>/human/<file stem>`` by default:

- ``judged.jsonl``: the records scored (row id ``<instance>#<k>``, baseline b, the file's numeric columns);
- ``scores/<method>.jsonl``: ``{id, instance, score}`` per explanation;
- ``human_report.json``, ``human_report.md`` and ``human_agreement.png`` (each metric's score against the human
  share, one panel per metric).

Like ``larev-hf meta``: stages with markers (``judged``, ``score-<method>``) fingerprinted on what they read, so a
rerun resumes, adding a method scores only it, and a changed file rescores everything; the run directory's lock is
held throughout. The report is rebuilt on every call; ``--half select|held`` restricts it to one half of a split by
instance (:func:`~larev_hf.meta.judgments.instance_half`), for choosing a change on one half and reporting on the other.

:class:`HumanEvaluation` runs the command; the scoring of the judged file is :mod:`larev_hf.meta.human_scoring`, the
calibrated score of ``--calibrate`` :mod:`larev_hf.meta.human_calibration`, and the report's figures, markdown and plot
:mod:`larev_hf.meta.human_report`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.meta.human_calibration import HumanCalibration
from larev_hf.meta.human_generators import generator_figures
from larev_hf.meta.human_report import ceiling_figures, write_human_report
from larev_hf.meta.human_scoring import JudgedScores
from larev_hf.meta.human_stats import STATISTICS, agreement_table, difference
from larev_hf.meta.judgments import instance_half
from larev_hf.meta.robust_calibration import AttackScores
from larev_hf.meta.settings import HumanSettings
from larev_hf.methods import get_method
from larev_hf.pipeline import Run
from larev_hf.runner import StageRunner


class HumanEvaluation:
    """Agreement with human judgments of one trained run on one judged file (see the module docstring).

    ``judged`` (:class:`~larev_hf.meta.human_scoring.JudgedScores`) scores the file; ``calibration``
    (:class:`~larev_hf.meta.human_calibration.HumanCalibration`, with ``--calibrate`` only) fits the calibrated score.
    """

    def __init__(self, run: Run, settings: HumanSettings, output_dir: str | os.PathLike | None = None) -> None:
        if not settings.judgments:
            raise ValueError("--judgments is required: a JSONL file of judged explanations")
        self.run, self.settings = run, settings
        stem = Path(settings.judgments).stem
        self.dir = Path(output_dir) if output_dir is not None else run.path("human", stem)
        self.judged = JudgedScores(run, settings, self.dir)
        self.calibration = HumanCalibration(self.judged) if settings.calibrate else None
        self.runner = StageRunner(self.dir)

    def check(self) -> list[str]:
        """Refuse bad input before anything is written: a method whose stages have not finished, a malformed judged
        file (one :class:`~larev_hf.io.DataError` line), ``--calibrate`` features that are not scored methods or name
        no learned metric. Returns the methods to score."""
        methods = self.judged.methods()
        self.judged.read_file()
        if self.calibration is not None:
            self.calibration.anchor()
        return methods

    def execute(self) -> dict[str, Any]:
        """Score (or resume) and report; returns the ``human_report.json`` content. Holds the run directory's lock."""
        methods = self.check()
        # the robust fit's attack rows: each a meta run that takes the run directory's lock itself
        attacks = self.calibration.attacks() if self.calibration is not None else None
        with self.run.runner.lock():
            self.dir.mkdir(parents=True, exist_ok=True)
            current = {**asdict(self.settings), "judgments": str(Path(self.settings.judgments).resolve()),
                       "run_dir": str(self.run.dir.resolve())}
            metadata = {f.name: dict(f.metadata) for f in fields(HumanSettings)}
            self.runner.check_settings(current, asdict(HumanSettings()), metadata, name="human_config.json")
            self.runner.run(self.judged.stages(), inputs=self.judged.inputs(),
                            independent=[stage for m in methods for _, stage, _ in self.judged.scored(m)])
            return self.write_report(methods, attacks)

    def write_report(self, methods: Sequence[str], attacks: Mapping[str, AttackScores] | None = None
                     ) -> dict[str, Any]:
        """The report (``human_report.json``'s content): per human column the agreement table of every metric, each
        learned metric's paired differences from every other column and the figures beside them; with ``--calibrate``
        the calibrated scores as metrics and the fit's section. Written with the markdown and the plot."""
        records = self.judged.records()
        columns = self.judged.score_columns(methods)
        halves = instance_half([r["instance"] for r in records], self.settings.split_seed)
        baselines = self.judged.baseline_columns
        kinds = {name: get_method(name.split("@")[0]).kind for name in columns if name not in baselines} | {
            c: "column" for c in baselines}
        titles = {name: get_method(name.split("@")[0]).title + (f" ({name.split('@')[1]})" if "@" in name else "")
                  for name in columns if name not in baselines} | {
            c: f"{c} ({'lower' if s < 0 else 'higher'} = better)" for c, s in baselines.items()}
        calibration: dict[str, Any] | None = None
        if self.calibration is not None:
            calibrated, calibration = self.calibration.columns(records, columns, halves, attacks)
            for name, values in calibrated.items():
                columns[name], kinds[name] = values, "metric"
                fit = "by agreement alone" if name == "calibrated_agreement" or self.settings.calibration_fit == \
                    "agreement" else "robust"
                titles[name] = f"Calibrated ({' + '.join(self.settings.calibrate)}; {fit})"
        keep = np.ones(len(records), dtype=bool)
        if self.settings.half != "all":
            keep = np.array([halves[r["instance"]] == self.settings.half for r in records])
        kept = [r for r, k in zip(records, keep, strict=True) if k]
        report: dict[str, Any] = {
            "judgments": str(self.settings.judgments), "dataset": self.run.config.data.dataset, "task": self.judged.task(),
            "run_dir": str(self.run.dir), "backbone": self.run.config.model.backbone, "half": self.settings.half,
            "n_empty_rationales": sum(not r["rationale"] for r in kept),
            "metrics": {name: {"title": titles[name], "kind": kinds[name]} for name in columns},
            "human": {}, "settings": {**asdict(self.settings)},
            "timings": {stage: content["seconds"] for stage, content in self.runner.markers().items()},
            **({"calibration": calibration} if calibration else {})}
        for human in self.settings.human_columns:
            table = agreement_table({name: values[keep] for name, values in columns.items()},
                                    np.array([r["numbers"][human] for r in kept]), [r["instance"] for r in kept],
                                    n_boot=self.settings.n_boot, seed=self.run.config.training.seed)
            learned = [name for name in columns if kinds[name] == "metric"]
            report["human"][human] = {
                **{k: v for k, v in table.items() if k != "replicates"},
                "differences": {name: {other: {stat: difference(table, name, other, stat) for stat in STATISTICS}
                                       for other in columns if other != name} for name in learned},
                **ceiling_figures({name: values[keep] for name, values in columns.items()}, kept, human,
                                  table["metrics"], n_boot=self.settings.n_boot, seed=self.run.config.training.seed)}
            sources = [r.get("source") for r in kept]
            if None not in sources and len(set(sources)) > 1:  # several generators: RoRA's tables 2 and 3
                report["human"][human]["generators"] = generator_figures(
                    {name: values[keep] for name, values in columns.items()},
                    np.array([r["numbers"][human] for r in kept]), sources, [r["instance"] for r in kept],
                    n_boot=self.settings.n_boot, seed=self.run.config.training.seed)
        write_human_report(report, self.dir, columns={n: v[keep] for n, v in columns.items()},
                           human={h: np.array([r["numbers"][h] for r in kept]) for h in self.settings.human_columns})
        return report


def human_evaluate(run_dir: str | os.PathLike, judgments: str | os.PathLike,
                   output_dir: str | os.PathLike | None = None, progress: bool = True,
                   **settings: Any) -> dict[str, Any]:
    """Python API of ``larev-hf human``: agreement of a trained run's metrics with the judgments in ``judgments``.

    ``settings`` are :class:`~larev_hf.meta.settings.HumanSettings` fields (``human_columns``, ``baseline_columns``,
    ``column_mapping``, ``methods``, ``half``, ``max_instances``, ``n_boot``). Returns the ``human_report.json`` content.

    Example::

        from larev_hf.meta import human_evaluate
        report = human_evaluate("runs/esnli", "../shared/data/human/snli_accept_train.jsonl",
                                baseline_columns=["gpt3_nll:lower"])
        report["human"]["acceptable"]["metrics"]["larev"]["spearman"]
    """
    return HumanEvaluation(Run.load(run_dir, progress), HumanSettings(judgments=str(judgments), **settings),
                           output_dir).execute()
