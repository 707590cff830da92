"""FRAME's stages, each a function of the run (:class:`~larev_hf.frame.run.FrameRun`) that the stage runner calls
once (:class:`~larev_hf.runner.StageRunner`, as ``larev-hf run`` composes its stages): the task models F, the
simulators G and H, the axioms' predictions and the library metrics' scores. :func:`frame_stages` lists them in order
with what each writes, so a stage whose inputs changed is really rerun.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from larev_hf.data import baseline_builder_from_spec
from larev_hf.explain.run_dir import DatasetRunDirectory
from larev_hf.explain.task_model import SelfRationalizer
from larev_hf.frame.library import library_records, score_library_variant
from larev_hf.frame.meta_metrics import accuracy, noisy_labels
from larev_hf.frame.simulators import SimulatorPair, generate_labels
from larev_hf.frame.variants import BASE, Variant, train_subset
from larev_hf.io import write_json, write_jsonl
from larev_hf.meta.family_registry import example_rng
from larev_hf.modeling.input_formats import task_text


@dataclass(frozen=True)
class FrameStage:
    """One resumable step of a FRAME run: ``run(frame_run)`` writes ``outputs`` (deleted if the stage is invalidated)."""

    name: str
    run: Callable[[Any], None]
    outputs: tuple[Path, ...] = ()


def train_task_model(run: Any, variant: Variant, seed: int) -> None:
    """F of one variant: trained (on a share of the split, or on noisy labels, or at another size), then its
    labels on the train and test splits (and, for ``base``, its test rationales r̂)."""

    train, test = run.records("train"), run.records("test")
    subset = train_subset(train, variant.train_share, seed)
    labels = [r["label"] for r in subset]
    flipped: list[int] = []
    if variant.noise_share > 0:
        labels, flipped = noisy_labels(labels, [r["choices"] for r in subset], variant.noise_share,
                                       example_rng(seed, variant.name, "frame-noise"))
    model = SelfRationalizer.train(subset, run.paths.task_model_dir(variant.name, seed), backbone=variant.backbone,
                                   settings=run.train_settings(variant.backbone, seed), labels=labels, seed=seed)
    decoding = run.label_decoding()
    train_labels, train_repaired = generate_labels(model.model, model.tokenizer, [task_text(r) for r in train], train,
                                                   label_decoding=decoding)
    if variant.name == BASE:
        predictions = model.predict(test, label_decoding=decoding)
        test_repaired = model.repaired
    else:
        test_labels, repaired = generate_labels(model.model, model.tokenizer, [task_text(r) for r in test], test,
                                                label_decoding=decoding)
        predictions = [{"label": label, "rationale": ""} for label in test_labels]
        test_repaired = sum(repaired)
    out = run.paths.task_dir(variant.name, seed)
    write_jsonl(out / "train.jsonl", [{"id": r["id"], "label": y, "gold": r["label"]}
                                      for r, y in zip(train, train_labels, strict=True)])
    write_jsonl(out / "test.jsonl", [{"id": r["id"], "label": p["label"], "rationale": p["rationale"],
                                      "gold": r["label"]} for r, p in zip(test, predictions, strict=True)])
    write_json(out / "training.json", {
        **asdict(variant), "seed": seed, "n_trained": len(subset), "trained_ids": [r["id"] for r in subset],
        "trained_labels": labels, "flipped_ids": [subset[i]["id"] for i in flipped],
        "train_accuracy": accuracy(train_labels, [r["label"] for r in train]),
        "test_accuracy": accuracy([p["label"] for p in predictions], [r["label"] for r in test]),
        "repaired": {"train": int(sum(train_repaired)), "test": int(test_repaired)},
    })


def train_simulators(run: Any, metric: str, variant: str, seed: int) -> None:
    """G and H of a trained RLC metric: targets ẏ (GH-GOLD) or the variant's ŷ on the train split."""
    train = run.records("train")
    if metric == "gh_gold":
        targets = [r["label"] for r in train]
    else:
        rows = run.task_predictions(variant, seed, "train")
        if [row["id"] for row in rows] != [r["id"] for r in train]:
            raise RuntimeError(f"{run.paths.task_dir(variant, seed)}/train.jsonl does not match data/train.jsonl")
        targets = [row["label"] for row in rows]
    backbone = run.simulator_backbone(metric)
    SimulatorPair.train(metric, train, run.paths.simulator_dir(metric, variant, seed), targets, backbone,
                        run.train_settings(backbone, seed), seed, run.settings.h_rationales)


def predict_axioms(run: Any, seed: int) -> None:
    """Every metric's G and H predictions for every variant of F and every rationale the axioms need."""
    test = run.records("test")
    variants, _ = run.plan()
    rationales = run.base_rationales(seed)
    write_jsonl(run.dir / "evaluations" / f"s{seed}" / "rationales.jsonl",
                [{"id": r["id"], **{kind: texts[i] for kind, texts in rationales.items()}} for i, r in enumerate(test)])
    for variant in variants:
        predictions = run.task_predictions(variant.name, seed)
        if [p["id"] for p in predictions] != [r["id"] for r in test]:
            raise RuntimeError(f"{run.paths.task_dir(variant.name, seed)}/test.jsonl does not match data/test.jsonl")
        targets = [p["label"] for p in predictions]
        texts = rationales if variant.name == BASE else {"y_hat": targets}
        for metric in run.settings.metrics:
            path = run.paths.evaluation_path(metric, variant.name, seed)
            if path.is_file():
                continue
            pair = run.simulator_pair(metric, variant.name, seed)
            control = pair.control_predictions(test, targets)
            repaired = {"control": pair.last_repaired}
            treatment = {}
            for kind, values in texts.items():
                treatment[kind] = pair.treatment_predictions(test, values, targets)
                repaired[kind] = pair.last_repaired
            rows = []
            for i, record in enumerate(test):
                row = {"id": record["id"], "gold": record["label"], "target": targets[i], "control": control[i],
                       "treatment": {kind: treatment[kind][i] for kind in texts}}
                if pair.generative:
                    row["repaired"] = {kind: bool(flags[i]) for kind, flags in repaired.items()}
                rows.append(row)
            write_jsonl(path, rows)


def score_library(run: Any, seed: int) -> None:
    """The library metrics' pointwise scores of every rationale the axioms need, with F's labels ŷ of each
    variant as the labels scored (:mod:`larev_hf.frame.library`)."""
    library, columns = run.library.run(), run.library.columns()
    builder = baseline_builder_from_spec(library.config.data.baseline_builder, library.config.training.seed)
    test, run_records = run.records("test"), library.split_records("test")
    ids = [r["id"] for r in test]
    variants, _ = run.plan()
    rationales = run.base_rationales(seed)
    # One view per evaluator seed, shared by every method it scores (each `scoring_views` call makes new views, and a
    # view loads its own models), so a seed's models load once and its methods share one pass's common terms.
    by_seed: dict[int, tuple[Any, list[tuple[str, str]]]] = {}
    for column, method, view in columns:
        by_seed.setdefault(view.config.training.seed, (view, []))[1].append((column, method))
    for variant in variants:
        targets = [p["label"] for p in run.task_predictions(variant.name, seed)]
        records = library_records(run_records, ids, targets, builder)
        for view, mine in by_seed.values():
            score_library_variant(view, [method for _, method in mine], records,
                                  rationales if variant.name == BASE else {"y_hat": targets},
                                  {method: run.paths.library_path(column, variant.name, seed) for column, method in mine})


def frame_stages(run: Any) -> list[FrameStage]:
    """Every stage of ``run`` in order: ``data``, then per seed F of each variant (``F-<v>-s<s>``), G and H of each
    trained metric and variant (``GH-<metric>-<v>-s<s>``; GH-GOLD's once, on ``base``), the axioms' predictions
    (``axioms-s<s>``) and, with ``--library-run``, the library metrics' scores (``library-s<s>``)."""
    variants, _ = run.plan()
    stages = [FrameStage("data", DatasetRunDirectory.stage_data, (run.dir / "data",))]
    for seed in run.settings.seed_values():
        for variant in variants:
            stages.append(FrameStage(f"F-{variant.name}-s{seed}", partial(train_task_model, variant=variant, seed=seed),
                                     (run.paths.task_model_dir(variant.name, seed), run.paths.task_dir(variant.name, seed))))
        for metric in run.settings.metrics:
            if metric == "f_gold":
                continue
            for variant in variants if metric != "gh_gold" else variants[:1]:
                stages.append(FrameStage(f"GH-{metric}-{variant.name}-s{seed}",
                                         partial(train_simulators, metric=metric, variant=variant.name, seed=seed),
                                         (run.paths.simulator_dir(metric, variant.name, seed),)))
        stages.append(FrameStage(f"axioms-s{seed}", partial(predict_axioms, seed=seed),
                                 (run.dir / "evaluations" / f"s{seed}", run.dir / "results" / f"seed{seed}.json")))
        if run.settings.library_run is not None:
            stages.append(FrameStage(f"library-s{seed}", partial(score_library, seed=seed),
                                     (run.dir / "library" / f"s{seed}",)))
    return stages
