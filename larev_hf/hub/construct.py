"""What a bundle is made of, gathered from a finished run.

:func:`parts_from_run` (``EvaluatorBundle.from_run``, ``larev-hf export``) checks that the method has trained models
and a bundle scorer (:func:`exportable`, which ``EvaluatorBundle.from_models`` checks too), finds its model
directories and tokenizer in the run, and builds the :class:`~larev_hf.hub.config.BundleConfig` (task and label set,
input format, the baseline builder's settings, checksums, the trust assessment and, for a multi-seed run, each further
seed's models); it returns ``(config, report, sources)``, the arguments of :class:`~larev_hf.hub.EvaluatorBundle`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from larev_hf.hub.config import REPORT_NAME, TOKENIZER_DIR, BundleConfig
from larev_hf.hub.files import checksums, task_and_label_set
from larev_hf.hub.findings import FindingThresholds
from larev_hf.hub.trust import assess, chance_level, label_offsets
from larev_hf.io import read_json, read_jsonl
from larev_hf.methods import Method, exportable_methods, get_method

#: ``(config, report, sources)``: what :class:`~larev_hf.hub.EvaluatorBundle` is built from.
BundleParts = tuple[BundleConfig, dict[str, Any], dict[str, Path]]


def exportable(method: str) -> Method:
    """The registered method ``method`` if bundles of it can be made and scored."""
    if method not in exportable_methods():
        raise ValueError(f"unknown method {method!r}; expected one of {exportable_methods()} (methods with trained "
                         "models and a bundle scorer)")
    return get_method(method)


def parts_from_run(run_dir: str | os.PathLike, method: str) -> BundleParts:
    """The parts of ``method``'s bundle from a finished run directory (see :meth:`EvaluatorBundle.from_run`)."""
    # here: the pipeline (slow to import: docs/architecture.md, "Imports") reads a run; loading or scoring a bundle needs none
    from larev_hf.data import baseline_builder_from_spec
    from larev_hf.pipeline import Run

    spec = exportable(method)
    run = Run.load(run_dir, progress=False)
    cfg = run.config
    if method not in cfg.methods:
        raise ValueError(f"{run_dir} was trained with --method {cfg.run.method}, which has no {spec.title} evaluator; "
                         f"train one with `larev-hf run --method {method}` (or --method all)")
    unfinished = [stage.name for stage in spec.stages(cfg) if not run.is_done(stage.name)]
    missing = [model for model in spec.roles.values() if model in unfinished or not run.path("models", model).is_dir()]
    if unfinished or missing:
        model = (missing or list(spec.roles.values()))[0]
        raise FileNotFoundError(f"{run_dir}: models/{model} has not finished training (unfinished stages: "
                                f"{unfinished}); finish the run with the same `larev-hf run` command")
    report_path = run.path(REPORT_NAME)
    report = read_json(report_path) if report_path.is_file() else None
    if report is None or method not in report.get("methods", {}):
        raise FileNotFoundError(f"{run_dir}: no {REPORT_NAME} with {spec.title} results; the run has not finished "
                                "(rerun the same `larev-hf run` command to resume it)")
    builder_path = run.path("data", "baseline_builder.json")
    builder = read_json(builder_path) if builder_path.is_file() else \
        baseline_builder_from_spec(cfg.data.baseline_builder, cfg.training.seed).to_config()
    task, label_set = task_and_label_set(run.path("data", "train.jsonl"))
    views = run.seed_views()  # a multi-seed run: an ensemble bundle, each further seed's models in seed-<k>/
    seed_models = {str(v.config.training.seed): {role: f"seed-{v.config.training.seed}/{name}"
                                                 for role, name in spec.roles.items()} for v in views[1:]}
    sources = {name: views[0].path("models", name) for name in spec.roles.values()} | {
        f"seed-{v.config.training.seed}/{name}": v.path("models", name)
        for v in views[1:] for name in spec.roles.values()} | {
        TOKENIZER_DIR: run.path(*spec.bundle_tokenizer(cfg))}
    if missing := [str(path) for path in sources.values() if not path.is_dir()]:
        raise FileNotFoundError(f"{run_dir}: {missing[0]} has not finished training; finish the run with the "
                                "same `larev-hf run` command")
    config = BundleConfig(
        method=method, task=task, label_set=label_set, reduction=cfg.model.reduction,
        input_format=spec.bundle_input_format(cfg),
        baseline_builder=builder, models=dict(spec.roles), dataset=cfg.data.dataset,
        training=read_json(run.path("run_config.json")), files_sha256=checksums(sources),
        seeds=[v.config.training.seed for v in views] if seed_models else None, seed_models=seed_models or None,
        trust=assess(report, method, spec.roles.get("rationale", ""), chance_level(
            [record["choices"] for _, record in read_jsonl(run.path("data", "test.jsonl"))])).to_dict(),
        label_offsets=label_offsets([view.path("scores", "test_scores.jsonl") for view in views], method)
        if label_set else None,
        findings=FindingThresholds().to_dict(),  # the library's thresholds now, kept with the bundle
    )
    return config, report, sources
