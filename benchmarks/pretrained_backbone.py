"""All five metrics on e-SNLI, CoS-E and StrategyQA with the pretrained offline backbone next to t5-tiny.

One ``larev-hf run --method all`` per dataset and backbone on the same training and test examples, plus, on the
datasets listed in ``--rationale-environments-on`` (default CoS-E), LAREV's ablation with the rationale-side
environments E4/E5 (``--rationale-environments``, our extension): that run shares Φ_base, Φ and IG with the base run
(its directory is copied after the ``ig`` stage) and trains only its own Φ_LA. Results, per-stage wall times and the
exact commands go to one JSON file, keyed ``<dataset>/<variant>``; a finished run is only read back.

    python benchmarks/pretrained_backbone.py --json benchmarks/results/pretrained_backbone.json

Several invocations with disjoint ``--datasets`` / ``--variants`` may run side by side (``OMP_NUM_THREADS=1`` each
gives more total throughput on a 2-core machine than one 2-thread run); each merges its entries into the JSON file.
Sizes (chosen so that each run stays under about an hour on one CPU thread; docs/reproduction.md):
e-SNLI 2,000 training / the first 1,000 test examples, 2 epochs for minilm2minilm; CoS-E and StrategyQA 1,000
training examples / the whole test split, 3 epochs. t5-tiny keeps its preset's training defaults.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from reproduce_tables import run_and_collect

from larev_hf.io import read_json, write_json

#: Training / test examples per dataset (``None`` = the whole test split) and minilm2minilm's epochs there.
SIZES = {"esnli": (2000, 1000, 2), "cose": (1000, None, 3), "strategyqa": (1000, None, 3)}
#: The LAREV settings both backbones share: λ_IRM 0.1 and no probe (the preset defaults, measured in
#: docs/method.md; the thesis's λ_IRM = 5 collapsed Φ_LA on CoS-E), Φ_LA trained on from the run's Φ.
LAREV_ARGS = ["--lambda-irm", "0.1", "--lambda-probe", "0", "--phi-la-init", "phi"]
#: Backbone-specific arguments. minilm2minilm: lr 1e-4 (5e-5 left every evaluator at chance on 500 CoS-E examples),
#: 4 environment groups per batch.
BACKBONES = {
    "minilm2minilm": ["--backbone", "minilm2minilm", "--learning-rate", "1e-4", "--groups-per-batch", "4"],
    "t5-tiny": ["--backbone", "t5-tiny"],
}
#: A variant: (backbone, extra arguments, methods). ``+renv``: LAREV with the rationale-side environments.
VARIANTS = {
    "minilm2minilm": ("minilm2minilm", [], "all"),
    "t5-tiny": ("t5-tiny", [], "all"),
    "minilm2minilm+renv": ("minilm2minilm", ["--rationale-environments"], "rev,larev"),
}


def run_arguments(dataset: str, variant: str, data_dir: Path, output: Path) -> list[str]:
    """The ``larev-hf run`` arguments of one dataset and variant."""
    backbone, extra, methods = VARIANTS[variant]
    n_train, n_test, epochs = SIZES[dataset]
    sizes = ["--max-train-examples", str(n_train), *(["--max-eval-examples", str(n_test)] if n_test else [])]
    epochs_args = ["--num-train-epochs", str(epochs)] if backbone == "minilm2minilm" else []
    return ["--method", methods, "--dataset", dataset, "--data-dir", str(data_dir), "--output-dir", str(output),
            *sizes, *BACKBONES[backbone], *epochs_args, *LAREV_ARGS, *extra]


def merge_into(path: Path, key: str, entry: dict) -> None:
    """Re-read the JSON file and write it back with ``key`` set (side-by-side invocations share the file)."""
    results = read_json(path) if path.is_file() else {}
    results[key] = entry
    write_json(path, dict(sorted(results.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--variants", nargs="+", default=["minilm2minilm", "minilm2minilm+renv", "t5-tiny"],
                        choices=list(VARIANTS))
    parser.add_argument("--rationale-environments-on", nargs="*", default=["cose"],
                        help="datasets on which the +renv variant runs (their rationales state the answer)")
    parser.add_argument("--shared-data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--runs-dir", default="runs/pretrained")
    parser.add_argument("--json", default="benchmarks/results/pretrained_backbone.json")
    parser.add_argument("--table", action="store_true", help="only print the JSON file's results as markdown tables")
    args = parser.parse_args()
    if args.table:
        print(markdown_tables(read_json(args.json)))
        return
    for dataset in args.datasets:
        data_dir = Path(args.shared_data).resolve() / dataset
        variants = [v for v in args.variants if not v.endswith("+renv") or dataset in args.rationale_environments_on]
        for variant in variants:
            output = Path(args.runs_dir) / f"{dataset}-{variant}"
            sharing = [v for v in variants if v != variant and v.removesuffix("+renv") == variant]
            if sharing and not (output / "stages" / "environments.done").exists():
                # Φ_base, Φ and IG do not read --rationale-environments: train them once and copy them.
                run_and_collect(run_arguments(dataset, variant, data_dir, output), output, until="ig")
                for other in sharing:
                    if not (Path(args.runs_dir) / f"{dataset}-{other}").exists():
                        shutil.copytree(output, Path(args.runs_dir) / f"{dataset}-{other}")
            entry = run_and_collect(run_arguments(dataset, variant, data_dir, output), output)
            merge_into(Path(args.json), f"{dataset}/{variant}", entry)
            print(json.dumps({m: e["separations"] for m, e in entry["methods"].items()}, indent=2))

def _interval(entry: dict, key: str) -> str:
    low, high = entry["ci95"][key]
    return f"{entry['separations'][key]:+.3f} [{low:+.3f}, {high:+.3f}]"


def _percent(accuracy: dict, model: str, *variants: str) -> str:
    return " / ".join(f"{100 * accuracy[model][v]:.1f}" for v in variants) if model in accuracy else "–"


def markdown_tables(results: dict) -> str:
    """Separations (with 95% intervals) per dataset, variant and method, then evaluator accuracies and wall time."""
    lines = ["| dataset | backbone | method | Gold − Leaky | Gold − Vacuous | Gold − Gold-Leaky | SUM |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for key, entry in results.items():
        dataset, variant = key.split("/")
        for method, summary in entry["methods"].items():
            if method not in ("rev", "larev", "rora", "las", "rq"):
                continue
            lines.append(f"| {dataset} | {variant} | {method.upper()} | {_interval(summary, 'gold_minus_leaky')} | "
                         f"{_interval(summary, 'gold_minus_vacuous')} | {summary['separations']['gold_minus_gold_leaky']:+.3f} | "
                         f"{summary['separations']['sum']:+.3f} |")
    lines += ["", "| dataset | backbone | n train / test | Φ_base | Φ (gold / leaky) | Φ_LA (gold / leaky / vacuous) | "
              "stage time (1 thread) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for key, entry in results.items():
        dataset, variant = key.split("/")
        accuracy = entry["accuracy"]
        lines.append(f"| {dataset} | {variant} | {entry['n_train']} / {entry['n_test']} | "
                     f"{_percent(accuracy, 'phi_base', 'baseline')} | {_percent(accuracy, 'phi', 'gold', 'leaky')} | "
                     f"{_percent(accuracy, 'phi_la', 'gold', 'leaky', 'vacuous')} | "
                     f"{entry['total_stage_seconds'] / 60:.0f} min |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
