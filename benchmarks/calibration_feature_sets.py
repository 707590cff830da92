"""Which text features should the calibrated score read? Feature sets compared under the recipe's rule.

For each ``--sets`` entry (comma-joined features, the method's score first) the robust calibration is refitted exactly
as ``larev-hf human --calibrate ... --robustness-statistic paired`` chooses it (fitted on the select half and the
training split's VARSuite rows, chosen on the validation split's paired win rates), and read on the held half
(Spearman, pairwise, select-1) and on the test split (the paired win rate of the gold over each family, overall and
within each gold label; :func:`calibration_per_label_rule.evaluate_rule`). A feature the build did not score is
computed here with the registered metric baseline of that name (a text feature: :mod:`larev_hf.methods.heuristics`)
on the judged explanations and every split's VARSuite rows, written beside copies of the build's score files in
``--work-dir``; the build's directory is only read.

Reads a human directory whose attacks were scored on the train, validation and test splits (a named build with
``robustness_report_split="test"``, e.g. one of ``benchmarks/esnli_recipe_rows.py``):

    python benchmarks/calibration_feature_sets.py --human-dir runs/rows/rows-500/human --work-dir runs/featsets/500 \\
        --sets larev,explanation_lm,copied_span,grounding,copy_excess \\
               larev,explanation_lm,copied_span,grounding,copy_excess,premise_link \\
        --json benchmarks/results/calibration_feature_sets.json
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_per_label_rule import evaluate_rule  # noqa: E402

from larev_hf.io import read_jsonl, write_json, write_jsonl  # noqa: E402
from larev_hf.methods import get_method  # noqa: E402

SPLITS = ("train", "validation", "test")


def add_feature(work: Path, name: str) -> None:
    """Score the text feature ``name`` on the judged rows and every split's VARSuite rows of ``work`` (in place)."""
    method = get_method(name)
    judged = [row for _, row in read_jsonl(work / "judged.jsonl")]
    scores = method.pointwise(None, judged, {"r": [row["rationale"] for row in judged]}, {})["r"]
    write_jsonl(work / "scores" / f"{name}.jsonl", [{"id": row["id"], "instance": row["instance"], "score": float(s)}
                                                    for row, s in zip(judged, scores, strict=True)])
    for split in SPLITS:
        directory = work / "attacks" / split
        suite = [row for _, row in read_jsonl(directory / "suite.jsonl")]
        scores = method.pointwise(None, suite, {"r": [row["rationale"] for row in suite]}, {})["r"]
        write_jsonl(directory / "scores" / f"{name}.jsonl", [{"id": row["id"], "family": row["family"],
                                                              "score": float(s)}
                                                             for row, s in zip(suite, scores, strict=True)])


def prepare(human_dir: Path, work: Path, features: set[str]) -> None:
    """Copy ``human_dir``'s rows and scores into ``work`` and score the features it lacks."""
    if not work.exists():
        shutil.copytree(human_dir, work, ignore=shutil.ignore_patterns("*.png", "stages", "*.md"))
    for name in sorted(features):
        if not (work / "scores" / f"{name}.jsonl").is_file():
            add_feature(work, name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--sets", nargs="+", required=True, help="feature sets, each comma-joined")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sets = [tuple(entry.split(",")) for entry in args.sets]
    prepare(args.human_dir, args.work_dir, {name for features in sets for name in features})
    results = []
    for features in sets:
        result = {"features": list(features), **evaluate_rule(args.work_dir, per_label=False, paired=True,
                                                             features=features)}
        results.append(result)
        held = result["held"]
        print(f"{','.join(features)}: chosen {result['chosen']}; held ρ {held['spearman']:.3f} pairwise "
              f"{held['pairwise']:.3f} select-1 {held['select_1']:.3f}; test cells < 0.85: "
              f"{ {k: round(v, 3) for k, v in result['test_win_rate_cells_below_0.85'].items()} }", flush=True)
    if args.json:
        write_json(args.json, {"command": "python benchmarks/calibration_feature_sets.py --human-dir "
                                          f"{args.human_dir} --sets " + " ".join(args.sets), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
