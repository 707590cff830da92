"""Sweep LAREV's penalty weights on one dataset: which (λ_IRM, λ_probe) beats the environment-only ablation?

Builds (or resumes) one run directory with the shared stages (data, Φ_base, Φ, IG, environments,
probe), then trains one Φ_LA per grid point and scores the test variants with it. Prints a table
and writes every point's separations and 95% intervals to JSON as soon as it is done.

    python benchmarks/larev_sweep.py --dataset esnli --data-dir ../shared/data/esnli \\
        --max-train-examples 2000 --max-eval-examples 1000 --output-dir runs/sweep-esnli \\
        --grid 0:0 0:5e-3 0.1:0 0.1:5e-3 0.3:5e-3 1:5e-3 --json benchmarks/results/larev_sweep_esnli.json

A grid point is ``λ_IRM:λ_probe``, optionally followed by ``:mean`` (per-token mean NLL instead of
the sum) or ``:field=value`` for another ``IRMProbeConfig`` field (e.g. ``:probe_max_loss=1.1``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from larev_hf.io import read_json, write_json
from larev_hf.pipeline import Run, RunConfig
from larev_hf.scores import summarize_variants


def point_name(spec: str) -> tuple[str, dict]:
    """``λ_IRM:λ_probe`` plus optional ``mean`` (per-token mean NLL) or ``key=value`` IRMProbeConfig fields."""
    parts = spec.split(":")
    overrides: dict = {"lambda_irm": float(parts[0]), "lambda_probe": float(parts[1])}
    for extra in parts[2:]:
        if extra == "mean":
            overrides["token_reduction"] = "mean"
        else:
            key, _, value = extra.partition("=")
            overrides[key] = float(value)
    name = "sweep_irm{}_probe{}{}".format(parts[0], parts[1], "".join(f"_{extra}" for extra in parts[2:]))
    return name, overrides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="esnli")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--backbone", default="t5-tiny")
    parser.add_argument("--max-train-examples", type=int, default=2000, help="0 = the whole split")
    parser.add_argument("--max-eval-examples", type=int, default=1000, help="0 = the whole split")
    parser.add_argument("--num-train-epochs", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--grid", nargs="+", default=["0:0", "0:5e-3", "0.1:0", "0.1:5e-3", "1:5e-3"])
    parser.add_argument("--json", default="benchmarks/results/larev_sweep.json")
    args = parser.parse_args()

    config = RunConfig(dataset=args.dataset, data_dir=args.data_dir, method="all", backbone=args.backbone,
                       max_train_examples=args.max_train_examples or None, max_eval_examples=args.max_eval_examples or None,
                       num_train_epochs=args.num_train_epochs, seed=args.seed, n_boot=500)
    run = Run(config, args.output_dir, progress=False)
    run.execute(until="environments")
    grid = [point_name(spec) for spec in args.grid]
    if any(overrides["lambda_probe"] > 0 for _, overrides in grid):
        run.run_stage("probe", run.stage_probe)
    test = run.split_records("test")
    results = read_json(args.json) if Path(args.json).is_file() else {}
    results.setdefault("settings", {**config.__dict__, "grid": args.grid})
    results.setdefault("points", {})
    base_log_probs = None

    # REV from the same run, for reference.
    for name, overrides in [("rev", None), *grid]:
        if name in results["points"]:
            continue
        start = time.perf_counter()
        if overrides is not None:
            run.run_stage(name, lambda n=name, o=overrides: run.stage_leakage_aware(n, **o))
        model_name = "phi" if name == "rev" else name
        if base_log_probs is None:
            base_log_probs = run.scorer(model_name).baseline_log_probs([r["baseline"] for r in test], [r["label"] for r in test])
        scores = run.variant_scores(model_name, test, base_log_probs)
        summary = summarize_variants(scores, n_boot=500, seed=args.seed)
        results["points"][name] = {**(overrides or {}), **summary, "seconds": time.perf_counter() - start}
        write_json(args.json, results)
        seps = summary["separations"]
        print(f"{name:32s} G-L {seps['gold_minus_leaky']:+.3f}  G-GL {seps['gold_minus_gold_leaky']:+.3f}  "
              f"G-V {seps['gold_minus_vacuous']:+.3f}  SUM {seps['sum']:+.3f}  gold {summary['absolute']['gold']:+.3f}",
              flush=True)
    print(json.dumps({k: v["separations"]["sum"] for k, v in results["points"].items()}, indent=2))


if __name__ == "__main__":
    main()
