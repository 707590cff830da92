"""VARIF's stages, each a function of the run (:class:`~larev_hf.varif.run.VarifRun`) that the stage runner calls once
(:class:`~larev_hf.runner.StageRunner`, as FRAME's and ``larev-hf run``'s): the NLI judge, the self-rationalizer, the
perturbations of the test inputs, LC-IG's predictors and one stage per explanation generator.
:func:`varif_stages` lists them in order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from larev_hf.data import load_examples
from larev_hf.explain.generators import build_generator, raw_input_text
from larev_hf.explain.nli import train_nli_judge
from larev_hf.explain.run_dir import DatasetRunDirectory
from larev_hf.explain.task_model import SelfRationalizer
from larev_hf.io import read_jsonl, write_json, write_jsonl
from larev_hf.varif.lcig import LCIG
from larev_hf.varif.measures import identity_aware, robustness
from larev_hf.varif.perturb import hf_paraphraser, perturb_records
from larev_hf.varif.settings import generator_name
from larev_hf.varif.specificity import specificity_scores


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def train_judge(run: Any) -> None:
    """The ``nli`` stage: the MiniLM cross-encoder judge trained on e-SNLI (``models/nli``)."""
    source = run.nli_data_dir()
    train = list(load_examples("esnli", source, "train", max_examples=run.settings.nli_train_examples))
    test = list(load_examples("esnli", source, "test", max_examples=run.settings.nli_eval_examples))
    train_nli_judge(train, run.dir / "models" / "nli", eval_records=test, seed=run.settings.seed,
                    progress=run.progress)


def train_self_rationalizer(run: Any) -> None:
    """The ``self_rationalizer`` stage: F trained on the gold rationales (``models/self_rationalizer``)."""
    SelfRationalizer.train(run.records("train"), run.dir / "models" / "self_rationalizer",
                           backbone=run.settings.backbone, settings=run.train_settings(), seed=run.settings.seed)


def perturb_inputs(run: Any) -> None:
    """The ``perturb`` stage: K perturbations per test input, the paraphrases the judge finds equivalent both ways."""
    s = run.settings
    paraphrase = None if s.paraphraser == "rules" else hf_paraphraser(s.paraphraser, seed=s.seed,
                                                                      num_return_sequences=s.k_paraphrases)
    rows, stats = perturb_records(run.records("test"), paraphrase, run.judge().entail,
                                  k_paraphrases=s.k_paraphrases, threshold=s.nli_threshold, seed=s.seed)
    write_jsonl(run.dir / "perturbed.jsonl", rows)
    write_json(run.dir / "perturb_stats.json", {"paraphraser": s.paraphraser, **stats})


def train_lcig(run: Any) -> None:
    """The ``lcig`` stage: LC-IG's predictors (``models/lcig``) and log p₀(y | x) on the test split (``base.jsonl``)."""
    lcig = LCIG.train(run.records("train"), run.dir / "models" / "lcig", backbone=run.settings.backbone,
                      settings=run.train_settings(), mask_settings=run.mask_settings(), progress=run.progress,
                      null_rationales=run.settings.h1_null_rationales)
    test = run.records("test")
    base, correct = lcig.base_log_probs(test, run.progress)
    write_jsonl(run.dir / "base.jsonl", [{"id": r["id"], "log_p0": float(v), "h0_correct": bool(c)}
                                         for r, v, c in zip(test, base, correct, strict=True)])


def run_generator(run: Any, spec: str) -> Any:
    """The explanation generator of ``spec``, fitted on the run's training inputs (the self-rationalizer: the run's)."""
    model = None
    if spec.startswith("self_rationalizer"):
        model = SelfRationalizer.load(run.dir / "models" / "self_rationalizer")
    return build_generator(spec, seed=run.settings.seed, fit_texts=[raw_input_text(r) for r in run.records("train")],
                           self_rationalizer=model)


def measure_generator(run: Any, spec: str) -> None:
    """The ``generator-<name>`` stage of one method: explanations, R, LC-IG and S per test example."""

    name, test = generator_name(spec), run.records("test")
    generator = run_generator(run, spec)
    explanations = generator.explain(test)
    rows = [{"id": r["id"], "perturbation": None, "rationale": e} for r, e in zip(test, explanations, strict=True)]
    robust = np.full(len(test), np.nan)
    n_kept = np.zeros(len(test), dtype=int)
    if generator.regenerable:
        perturbed = [row for _, row in read_jsonl(run.dir / "perturbed.jsonl")]
        perturbed_explanations = generator.explain(perturbed) if perturbed else []
        index = {r["id"]: i for i, r in enumerate(test)}
        grouped: list[list[str]] = [[] for _ in test]
        for row, text in zip(perturbed, perturbed_explanations, strict=True):
            grouped[index[row["original_id"]]].append(text)
            rows.append({"id": row["original_id"], "perturbation": row["perturbation"], "rationale": text})
        n_kept = np.array([len(g) for g in grouped])
        robust = robustness(identity_aware(run.judge().entail), explanations, grouped)
    write_jsonl(run.dir / "explanations" / f"{name}.jsonl", rows)
    base = np.array([row["log_p0"] for _, row in read_jsonl(run.dir / "base.jsonl")])
    lc = run.lcig().score(test, explanations, base=base, progress=run.progress)
    embedder, inputs, others = run.embeddings()
    spec_scores = specificity_scores(embedder.encode(explanations), inputs, others)
    out = []
    for i, record in enumerate(test):
        out.append({
            "id": record["id"], "rationale": explanations[i], "R": _finite(robust[i]), "n_perturbations": int(n_kept[i]),
            "I": float(lc["I"][i]), "I_unmasked": float(lc["I_unmasked"][i]), "S": float(spec_scores[i]),
            "log_pd": float(lc["log_pd"][i]), "log_pd_masked": float(lc["log_pd_masked"][i]),
            "d_correct": bool(lc["d_correct"][i]), "d_masked_correct": bool(lc["d_masked_correct"][i]),
            "h1_correct": bool(lc["h1_correct"][i]), "masked": lc["masked"][i],
        })
    write_jsonl(run.dir / "scores" / f"{name}.jsonl", out)


def varif_stages(run: Any) -> list[tuple[str, Callable[[Any], None]]]:
    """Every stage of ``run`` in order, each a function of the run: ``data``, ``nli`` (without ``--nli-model``),
    ``self_rationalizer`` (when compared), ``perturb``, ``lcig``, then ``generator-<name>`` per generator."""
    settings = run.settings
    stages: list[tuple[str, Callable[[Any], None]]] = [("data", DatasetRunDirectory.stage_data)]
    if settings.nli_model is None:
        stages.append(("nli", train_judge))
    if any(spec.startswith("self_rationalizer") for spec in settings.generators):
        stages.append(("self_rationalizer", train_self_rationalizer))
    stages += [("perturb", perturb_inputs), ("lcig", train_lcig)]
    stages += [(f"generator-{generator_name(spec)}", partial(measure_generator, spec=spec))
               for spec in settings.generators]
    return stages
