"""Scoring and seed combination: every method's scores of a set of records under one evaluator seed's view, the
``score-<methods>`` stage that writes them for the test split, and the report's summary across evaluator seeds.
"""

from __future__ import annotations

from typing import Any

from larev_hf.config import RunConfig
from larev_hf.io import write_json, write_jsonl
from larev_hf.methods import get_method
from larev_hf.pipeline.view import RunView
from larev_hf.scores import VARIANTS, summarize_variants
from larev_hf.scores.seeds import ensemble_scores, seed_summary
from larev_hf.scores.stats import summarize_by_label


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
    :func:`larev_hf.scores.seeds.seed_summary` and, for nats metrics, the ensemble evaluator's summary (the mean
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
