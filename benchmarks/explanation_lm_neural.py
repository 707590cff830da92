"""A neural explanation likelihood, measured and not kept: log p_F(r | x, y) of a self-rationalizer.

The library's ``explanation_lm`` is an n-gram model of the run's training explanations that may copy the input's words.
Its neural counterpart is FRAME's self-rationalizing task model F (:class:`larev_hf.explain.task_model.SelfRationalizer`,
``x → "y explanation: r"``) trained on the same rows with the run's backbone: per word, ``cond_lm`` = log p_F(r | x, y)
(the output prefix ``"y explanation:"`` forced) and ``support`` = that minus the log-mean-exp over the labels (how much
more likely r is as an explanation of y than of the other labels). Scored on the VARSuite rows and the judged
explanations of a finished ``benchmarks/robust_calibration.py`` run (``RUN/human/robust-larev-explanation_lm-copied_span``):

    python benchmarks/explanation_lm_neural.py --run-dir runs/g/minilm-500 --output-dir runs/g/minilm-500/neural-lm \\
        --json benchmarks/results/grounded/explanation_lm_neural_minilm.json

F and its scores are kept in ``--output-dir``; a rerun reuses them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

from larev_hf.explain import SelfRationalizer, self_rationalization_target
from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import AttackScores, instance_half, pairwise_agreement, select_one, spearman
from larev_hf.modeling import score_labels, task_text
from larev_hf.pipeline import Run
from larev_hf.training import TrainSettings


def label_log_likelihoods(model: SelfRationalizer, records: list[dict], texts: list[str]) -> np.ndarray:
    """Per record and label of its choices, the mean log p_F(word of r | x, y, earlier words)."""
    rows = [(i, k, record, choice) for i, record in enumerate(records) for k, choice in enumerate(record["choices"])]
    inputs = [task_text(record) for _, _, record, _ in rows]
    full = score_labels(model.model, model.tokenizer, inputs, [self_rationalization_target(c, texts[i]) for i, _, _, c in rows],
                        max_label_length=96)
    prefix = score_labels(model.model, model.tokenizer, inputs, [self_rationalization_target(c, "").rstrip() for *_, c in rows],
                          end_of_sequence=False)
    per_word = (full.sum - prefix.sum) / np.maximum(full.n_tokens - prefix.n_tokens, 1)
    out = np.full((len(records), max(len(r["choices"]) for r in records)), np.nan)
    for (i, k, _, _), value in zip(rows, per_word, strict=True):
        out[i, k] = value
    return out


def scores_of(log_likelihoods: np.ndarray, records: list[dict]) -> dict[str, np.ndarray]:
    own = log_likelihoods[np.arange(len(records)), [r["choices"].index(r["label"]) for r in records]]
    labels = np.sum(~np.isnan(log_likelihoods), axis=1)
    mean_other = logsumexp(np.nan_to_num(log_likelihoods, nan=-np.inf), axis=1) - np.log(labels)
    return {"cond_lm": own, "support": own - mean_other}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    run, out = Run.load(args.run_dir, progress=False), Path(args.output_dir)
    human_dir = Path(args.run_dir) / "human" / "robust-larev-explanation_lm-copied_span"
    start = time.perf_counter()
    model = SelfRationalizer.train(run.split_records("train"), out / "F", backbone=run.config.model.backbone,
                                   tokenizer=run.tokenizer(), settings=TrainSettings.for_backbone(
                                       run.config.model.backbone, seed=run.config.training.seed, progress=False))
    suite = [row for _, row in read_jsonl(human_dir / "attacks" / "test" / "suite.jsonl")]
    judged = [row for _, row in read_jsonl(human_dir / "judged.jsonl")]
    cache = out / "log_likelihoods.npz"
    if not cache.is_file():
        np.savez(cache, suite=label_log_likelihoods(model, suite, [r["rationale"] for r in suite]),
                 judged=label_log_likelihoods(model, judged, [r["rationale"] for r in judged]))
    cached = np.load(cache)
    result: dict = {"run_dir": args.run_dir, "train_rows": len(run.split_records("train")), "families": {},
                    "held": {}, "seconds": round(time.perf_counter() - start, 1)}
    attack_ids = np.array([r["id"] for r in suite])
    families = np.array([r["family"] for r in suite])
    for name, values in scores_of(cached["suite"], suite).items():
        result["families"][name] = AttackScores({name: values}, families, attack_ids).family_aucs(values)
    accept = np.array([r["numbers"]["acceptable"] for r in judged])
    instances = [r["instance"] for r in judged]
    half = instance_half(sorted(set(instances)))
    held = np.array([half[i] == "held" for i in instances])
    ids = [i for i, keep in zip(instances, held, strict=True) if keep]
    for name, values in scores_of(cached["judged"], judged).items():
        result["held"][name] = {"spearman": spearman(values[held], accept[held]),
                                "pairwise": pairwise_agreement(values[held], accept[held], ids)[0],
                                "select_1": select_one(values[held], accept[held], ids)}
    write_json(args.json, result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
