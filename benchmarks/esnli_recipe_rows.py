"""The ``esnli`` recipe at more training rows: what each row count gives and what it costs to build, on this machine.

For each ``--rows N`` the named recipe (:data:`larev_hf.evaluators.RECIPES`) is built with ``max_train_examples=N`` and
nothing else changed, through the library's own build (:func:`larev_hf.evaluators.build_recipe`), except that the
calibration step also scores VARSuite on the test split (``robustness_report_split="test"``) so the per-label figures
can be read; those stages are left out of the build's seconds, which are what a user's build of that recipe would
spend. For each build it prints and saves:

- the build's seconds (its stage markers, :mod:`build_time`), without the test split's attack stages;
- Φ_LA's accuracy with the gold and with the vacuous rationale (the trust check's figures, the run's report);
- the held half of the judged file: Spearman, pairwise and select-1 of the calibrated score
  (:func:`calibration_per_label_rule.evaluate_rule` under the recipe's rule, the paired win rate pooled), and the
  test split's paired win rate of the gold over each family, overall and within each gold label.

Run it alone on the machine for the seconds (an interrupted build resumes):

    python benchmarks/esnli_recipe_rows.py --rows 500 1500 --data-dir ../shared/data --out runs/rows \\
        --json benchmarks/results/esnli_recipe_rows.json

``--seed S`` builds the same recipe with another evaluator seed (``rows-<N>-seed-<S>``): how much a build's figures
move with the seed alone.

Internals: ``larev_hf.evaluators``' ``build_recipe`` and ``RECIPES``: it rebuilds the named ``esnli`` recipe with one
setting changed at a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from build_time import stage_seconds
from calibration_per_label_rule import evaluate_rule

from larev_hf.evaluators import RECIPES, build_recipe
from larev_hf.io import read_json, write_json

#: the stages a user's build does not run: the test split's VARSuite, scored here for the per-label figures only
REPORT_ONLY = "human/attacks/test/"


def measure(rows: int, out: Path, data_dir: str, seed: int | None = None) -> dict:
    """Build the recipe at ``rows`` training rows (and evaluator ``seed``, else the recipe's) into
    ``out/rows-<rows>[-seed-<seed>]`` (or reuse that build) and read it."""
    recipe = RECIPES["esnli"]
    run = {**recipe.run, "max_train_examples": rows, **({"seed": seed} if seed is not None else {})}
    variant = dataclasses.replace(recipe, run=run, human={**recipe.human, "robustness_report_split": "test"})
    directory = out / (f"rows-{rows}" + (f"-seed-{seed}" if seed is not None else ""))
    build_recipe(variant, directory, data_dir)
    stages = {key: seconds for key, seconds in stage_seconds(directory).items() if not key.startswith(REPORT_ONLY)}
    report = read_json(directory / "run" / "report.json")
    accuracy = report["accuracy"]["phi_la"]
    rule = evaluate_rule(directory / "human", per_label=False, paired=True, features=tuple(recipe.calibrate))
    return {"rows": rows, "seed": run["seed"], "features": list(recipe.calibrate), "directory": str(directory), "build_seconds_without_test_attacks": round(sum(stages.values()), 1),
            "run_seconds": round(sum(s for k, s in stages.items() if k.startswith("run/")), 1),
            "calibration_seconds": round(sum(s for k, s in stages.items() if k.startswith("human/")), 1),
            "run_stage_seconds": {k: s for k, s in stages.items() if k.startswith("run/") and s >= 1},
            "phi_la_accuracy": {k: accuracy[k] for k in ("gold", "vacuous")}, "chosen": rule["chosen"], "held": rule["held"],
            "test_paired_win_rates": rule["test_paired_win_rates"],
            "test_cells_below_0.85": rule["test_win_rate_cells_below_0.85"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", required=True)
    parser.add_argument("--data-dir", required=True, help="the shared data layout (esnli/, human/)")
    parser.add_argument("--out", type=Path, required=True, help="one build directory per row count goes here")
    parser.add_argument("--seed", type=int, default=None, help="the evaluators' seed (default: the recipe's)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for rows in args.rows:
        result = measure(rows, args.out, args.data_dir, args.seed)
        results.append(result)
        held = result["held"]
        print(f"{rows:5d} rows, seed {result['seed']}: build {result['build_seconds_without_test_attacks']:.0f} s (run "
              f"{result['run_seconds']:.0f} s, calibration {result['calibration_seconds']:.0f} s); held ρ "
              f"{held['spearman']:.3f} pairwise {held['pairwise']:.3f} select-1 {held['select_1']:.3f}; chosen "
              f"{result['chosen']}; test cells < 0.85: "
              f"{ {k: round(v, 3) for k, v in result['test_cells_below_0.85'].items()} }")
    if args.json:
        write_json(args.json, {"command": "python benchmarks/esnli_recipe_rows.py --rows "
                                          + " ".join(map(str, args.rows)) + " --data-dir ../shared/data --out OUT"
                                          + (f" --seed {args.seed}" if args.seed is not None else ""),
                               "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
