"""Scoring and seed combination: every method's scores of a set of records under one evaluator seed's view, the
``score-<methods>`` stage that writes them for the test split, the report's summary across evaluator seeds, and the
report itself: ``report.json`` / ``report.md`` / ``separations.png`` of a scoring (the test split's in the
``report-<methods>`` stage, or another file's), with the run's settings, each stage's wall time and the environment
its numbers depend on; :func:`larev_hf.report.write_report` renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from larev_hf.config import RunConfig
from larev_hf.io import read_json, write_json, write_jsonl
from larev_hf.methods import get_method
from larev_hf.pipeline.view import RunView
from larev_hf.report import majority_class, write_report
from larev_hf.scores import VARIANTS, summarize_variants
from larev_hf.scores.stats import ensemble_scores, seed_summary, summarize_by_label


def score_records(view: RunView, records: list[dict[str, Any]], methods: tuple[str, ...],
                  variants: dict[str, list[str]] | None = None) -> tuple[dict, list[dict]]:
    """Every method's scores of every rationale variant (default: the records' ``rationale_<variant>`` columns) with
    ``view``'s models, evaluator accuracies and per-example rows."""
    if variants is None:
        variants = {variant: [r[f"rationale_{variant}"] for r in records] for variant in VARIANTS}
    rows = [{"id": r["id"], "label": r["label"]} for r in records]
    shared: dict[str, Any] = {"summaries": {}}
    result: dict[str, Any] = {"methods": {}, "accuracy": {}, "pointwise": {}}
    for name in methods:
        scored = get_method(name).score(view, records, variants, shared)
        result["methods"][name] = shared["summaries"][name] = scored.summary
        pointwise = scored.scores if scored.scores is not None else \
            get_method(name).pointwise(view, records, variants, shared)
        result["pointwise"][name] = {v: [float(x) for x in values] for v, values in pointwise.items()}
        if "gold" in pointwise:  # per gold label: a leak that works for one label only shows there
            scored.summary["by_label"] = summarize_by_label(pointwise, [r["label"] for r in records])
        result["accuracy"].update(scored.accuracy)
        result.update(scored.extra)
        for column, values in scored.columns.items():
            for row, value in zip(rows, values, strict=True):
                row[column] = value
    return result, rows


def stage_score(view: RunView) -> None:
    """The ``score-<methods>`` stage of one evaluator seed: the test split's scores, pointwise scores and summary."""
    summary, rows = score_records(view, view.split_records("test"), view.config.methods)
    write_jsonl(view.path("scores", "test_scores.jsonl"), rows)
    write_json(view.path("scores", "test_pointwise.json"), summary.pop("pointwise"))
    write_json(view.path("scores", "test_summary.json"), summary)


def combine_seeds(config: RunConfig, views: list[RunView], summaries: list[dict], pointwise: list[dict]) -> dict:
    """The report's summary: the first seed's, plus (several seeds) per method the across-seed figures of
    :func:`larev_hf.scores.stats.seed_summary` and, for nats metrics, the ensemble evaluator's summary (the mean
    of the seeds' pointwise scores); ``config`` (the run's) gives the bootstrap's size and seed."""
    summary = dict(summaries[0])
    if len(views) < 2:
        return summary
    seeds = [view.config.training.seed for view in views]
    summary["seeds"] = {"seeds": seeds, "determinism": "same seed, data, versions and thread count → same scores",
                        "methods": {}}
    for name in summary["methods"]:
        per_seed = {s: p[name] for s, p in zip(seeds, pointwise, strict=True)}
        entry = seed_summary(per_seed, {s: m["methods"][name]["ci95"] for s, m in zip(seeds, summaries, strict=True)},
                             n_boot=config.evaluation.n_boot, seed=config.training.seed)
        if get_method(name).unit == "nats" and get_method(name).kind == "metric":
            entry["ensemble"] = summarize_variants(ensemble_scores(list(per_seed.values())),
                                                   n_boot=config.evaluation.n_boot, seed=config.training.seed)
        summary["seeds"]["methods"][name] = entry
    return summary


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
