"""Reporting: ``report.json`` / ``report.md`` / ``separations.png`` of a scoring (the test split's in the
``report-<methods>`` stage, or another file's), with the run's settings, each stage's wall time and the environment
its numbers depend on; :func:`larev_hf.report.write_report` renders it.
"""

from __future__ import annotations

from pathlib import Path

from larev_hf.io import read_json
from larev_hf.pipeline.scoring import combine_seeds
from larev_hf.pipeline.view import RunView
from larev_hf.report import majority_class, write_report


def write_run_report(run: RunView, summary: dict, split: str, n_examples: int, output_dir: Path,
                     labels: list[str] | None = None, stage_order: list[str] | None = None) -> dict:
    """The report of a scoring of ``run``: ``labels`` (the gold labels scored) give the majority-class accuracy the
    evaluators' accuracy is read against; ``stage_order`` (the run's stages) orders the wall times."""
    markers = run.runner.markers()
    report = {
        "dataset": run.config.data.dataset, "split": split, "n_examples": n_examples, **summary,
        "majority_class": majority_class(labels or []),
        "settings": run.config.to_dict(),
        # in pipeline order (then stages of earlier scorings), not the markers' alphabetical order
        "timings": {stage: markers[stage]["seconds"]
                    for stage in dict.fromkeys([*(stage_order or []), *markers]) if stage in markers},
        # trained weights are bitwise reproducible only with the same versions, device and thread count
        "stage_environments": {stage: {k: v for k, v in content.items() if k != "seconds"}
                               for stage, content in markers.items()},
    }
    write_report(report, output_dir)
    return report


def stage_report(run: RunView, stage_order: list[str]) -> None:
    """The ``report-<methods>`` stage: the test split's report over every evaluator seed's scores."""
    views = run.seed_views()
    summaries = [read_json(view.path("scores", "test_summary.json")) for view in views]
    pointwise = [read_json(view.path("scores", "test_pointwise.json")) for view in views] if len(views) > 1 else []
    labels = [record["label"] for record in run.split_records("test")]
    write_run_report(run, combine_seeds(run.config, views, summaries, pointwise), "test", len(labels), run.dir,
                     labels, stage_order)
