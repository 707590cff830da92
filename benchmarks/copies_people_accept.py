"""Do people accept explanations that copy the input? The acceptable share of judged explanations by how much of the
input they copy, within each gold label.

VARSuite's input copy ("Since <premise>, <hypothesis>.", "The premise says: ... The hypothesis says: ...") is an
attack the gold should beat on at least 0.85 of examples in every label. Within entailment rows no calibration of the
`esnli` recipe reaches that (docs/human.md, "Candidate recipes for the calibrated score"). This script measures why
on the judged file alone, with no model: for each copy feature (the longest copied span over the rationale's length,
``copied_span``; the share of the rationale's tokens inside a trigram copied from the input, ``copied_coverage``; the
share of the input's content words in the rationale, ``input_recall``) it splits the select half's explanations of
each gold label at a threshold and gives the acceptable share (the annotators' mean) and the share judged acceptable
by a majority, above and below, with a 95% bootstrap interval of the difference in majority share (explanations
resampled within the label).

    python benchmarks/copies_people_accept.py --judged-dir RUN/human \\
        --json benchmarks/results/copies_people_accept.json

``--judged-dir``: a directory holding ``judged.jsonl`` and ``scores/copied_span.jsonl`` (the human directory of any
`esnli` build: ``larev-hf human --calibrate ...copied_span...``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from calibration_feature_sets import copied_coverage, input_recall, select_half

from larev_hf.io import read_jsonl, write_json

#: feature → threshold: half the rationale a verbatim span (where ``copy_excess`` starts), most of the rationale
#: copied, most of the input restated
THRESHOLDS = {"copied_span": 0.5, "copied_coverage": 0.6, "input_recall": 0.8}
LABELS = ("entailment", "neutral", "contradiction")


def majority_gap_interval(majority: np.ndarray, above: np.ndarray, resamples: int = 2000,
                          seed: int = 0) -> list[float]:
    """95% bootstrap interval of majority share above − below the threshold (rows resampled with replacement)."""
    rng = np.random.default_rng(seed)
    gaps = []
    for _ in range(resamples):
        pick = rng.integers(0, len(majority), len(majority))
        high, low = majority[pick][above[pick]], majority[pick][~above[pick]]
        if len(high) and len(low):
            gaps.append(high.mean() - low.mean())
    return [round(float(q), 3) for q in np.quantile(gaps, [0.025, 0.975])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judged-dir", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    judged = [row for _, row in read_jsonl(args.judged_dir / "judged.jsonl")]
    texts = [row["rationale"] for row in judged]
    features = {"copied_span": np.array([row["score"] for _, row in
                                         read_jsonl(args.judged_dir / "scores" / "copied_span.jsonl")]),
                "copied_coverage": copied_coverage(judged, texts), "input_recall": input_recall(judged, texts)}
    acceptable = np.array([row["numbers"]["acceptable"] for row in judged])
    labels = np.array([row["label"] for row in judged])
    select = select_half(judged)
    results = []
    for label in LABELS:
        rows = select & (labels == label)
        for name, threshold in THRESHOLDS.items():
            above = features[name][rows] >= threshold
            share, majority = acceptable[rows], acceptable[rows] >= 0.5
            entry = {"label": label, "feature": name, "threshold": threshold, "n_above": int(above.sum()),
                     "n_below": int((~above).sum()),
                     "acceptable_share_above": round(float(share[above].mean()), 3),
                     "acceptable_share_below": round(float(share[~above].mean()), 3),
                     "majority_acceptable_above": round(float(majority[above].mean()), 3),
                     "majority_acceptable_below": round(float(majority[~above].mean()), 3),
                     "majority_gap_interval": majority_gap_interval(majority, above)}
            results.append(entry)
            print(f"{label:13s} {name} ≥ {threshold}: n {entry['n_above']:3d}, judged acceptable by a majority "
                  f"{entry['majority_acceptable_above']:.3f} (below: n {entry['n_below']}, "
                  f"{entry['majority_acceptable_below']:.3f}); gap 95% {entry['majority_gap_interval']}")
    if args.json:
        write_json(args.json, {"command": "python benchmarks/copies_people_accept.py --judged-dir RUN/human",
                               "what": "the select half of snli_accept_train.jsonl: 500 instances, 2,500 GPT-3 "
                                       "explanations; RUN: any esnli build (the figures need no model)",
                               "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
