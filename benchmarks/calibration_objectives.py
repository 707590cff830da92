"""Is it the fit or the features? The recipe's features fitted to people under three objectives, read on the held half.

The calibration (:func:`larev_hf.scores.calibration.fit_calibration`) is a logistic regression of "judged acceptable"
on the standardised features of every judged explanation, pooled. Two of the targets it misses are read within an
instance (pairwise: which of two explanations of one input people prefer; select-1: is the top-scored explanation of
an input acceptable), so a fit to within-instance preferences might reach them with the same features. For each
objective and L2 strength this fits weights on the select half (no robustness rule, no caps: the best each
objective can do on agreement) and reads Spearman, pairwise and select-1 on the held half:

- ``pooled``: the library's objective, acceptable (share ≥ ½) on the features;
- ``pairwise``: a Bradley-Terry model, logistic regression without intercept on the feature differences of every
  judged pair of one instance (the pairs the pairwise statistic counts);
- ``centred``: ridge regression of the acceptable share on the features, both centred within each instance.

    python benchmarks/calibration_objectives.py --human-dir HUMAN_DIR \\
        --features larev,explanation_lm,copied_span,grounding,copy_excess,premise_link \\
        --json benchmarks/results/calibration_objectives.json

``HUMAN_DIR``: a human directory that holds ``judged.jsonl`` and ``scores/<feature>.jsonl`` for each feature (the
`esnli` build's ``human/``, or the ``--work-dir`` of ``calibration_feature_sets.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from calibration_feature_sets import select_half
from sklearn.linear_model import LogisticRegression, Ridge

from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import judged_pairs, point_statistics, select_one
from larev_hf.scores import feature_matrix


def centred_within(values: np.ndarray, instances: np.ndarray) -> np.ndarray:
    """``values`` minus their mean within each instance (rows of a matrix, or a vector)."""
    out = values.astype(float).copy()
    for instance in np.unique(instances):
        rows = instances == instance
        out[rows] -= out[rows].mean(axis=0)
    return out


def fit_weights(objective: str, strength: float, x: np.ndarray, human: np.ndarray,
                instances: np.ndarray) -> np.ndarray:
    """Feature weights under ``objective`` (see the module docstring) at L2 ``strength`` (sklearn's C for the
    logistic fits, alpha for ridge)."""
    if objective == "pooled":
        return LogisticRegression(C=strength).fit(x, human >= 0.5).coef_[0]
    if objective == "pairwise":
        better, worse, _ = judged_pairs(list(instances), human)
        differences = np.vstack([x[better] - x[worse], x[worse] - x[better]])
        preferred = np.r_[np.ones(len(better)), np.zeros(len(better))]
        return LogisticRegression(C=strength, fit_intercept=False).fit(differences, preferred).coef_[0]
    if objective == "centred":
        return Ridge(alpha=strength, fit_intercept=False).fit(centred_within(x, instances),
                                                              centred_within(human, instances)).coef_
    raise ValueError(f"objective {objective!r}: expected pooled, pairwise or centred")


#: objective → the L2 strengths tried
STRENGTHS = {"pooled": (0.01, 0.1, 1.0), "pairwise": (0.001, 0.01, 0.1, 1.0), "centred": (1.0, 100.0, 1000.0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", type=Path, required=True)
    parser.add_argument("--features", required=True, help="comma-joined, each scored in the directory")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    features = args.features.split(",")
    judged = [row for _, row in read_jsonl(args.human_dir / "judged.jsonl")]
    human = np.array([row["numbers"]["acceptable"] for row in judged])
    instances = np.array([row["instance"] for row in judged])
    columns = {name: np.array([row["score"] for _, row in read_jsonl(args.human_dir / "scores" / f"{name}.jsonl")])
               for name in features}
    select = select_half(judged)
    held = ~select
    x = feature_matrix(columns, features)
    x = (x - x[select].mean(axis=0)) / x[select].std(axis=0)
    results = []
    for objective, strengths in STRENGTHS.items():
        for strength in strengths:
            weights = fit_weights(objective, strength, x[select], human[select], instances[select])
            scores = x[held] @ weights
            stats = point_statistics(scores, human[held], list(instances[held]))
            entry = {"objective": objective, "strength": strength,
                     "weights": {name: round(float(w), 4) for name, w in zip(features, weights, strict=True)},
                     "held": {"spearman": stats["spearman"], "pairwise": stats["pairwise"],
                              "select_1": select_one(scores, human[held], list(instances[held]))}}
            results.append(entry)
            print(f"{objective:>8} {strength:<7g} held ρ {stats['spearman']:.3f} pairwise {stats['pairwise']:.3f} "
                  f"select-1 {entry['held']['select_1']:.3f}")
    if args.json:
        write_json(args.json, {"command": f"python benchmarks/calibration_objectives.py --human-dir HUMAN_DIR "
                                          f"--features {args.features}",
                               "what": "the held half of snli_accept_train.jsonl (500 instances, 2,500 "
                                       "explanations); weights fitted on the select half with no robustness rule",
                               "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
