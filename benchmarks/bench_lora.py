"""LoRA vs full fine-tuning of every LAREV model: are the separations within 20% of each other?

Trains (or resumes) two LAREV runs that differ only in ``--lora`` and compares their test
separations (Gold − Leaky, Gold − Gold-Leaky, Gold − Vacuous, SUM) and evaluator accuracies.
Prints a table and writes the figures to JSON.

Torch's thread count is fixed (``--threads``, recorded): a run is bitwise reproducible only at the same thread
count, and two full fine-tunes that differ in nothing else reached SUM 3.52 (2 threads) and 3.14 (1 thread) on
e-SNLI 2k/1k — so compare runs made with the same count (``--full-name`` keeps references apart).

    python benchmarks/bench_lora.py --dataset esnli --data-dir ../shared/data/esnli \\
        --max-train-examples 2000 --max-eval-examples 1000 --output-dir runs/lora-esnli \\
        --json benchmarks/results/lora_esnli.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from larev_hf.io import write_json
from larev_hf.pipeline import Run, RunConfig

SEPARATIONS = ("gold_minus_leaky", "gold_minus_gold_leaky", "gold_minus_vacuous", "sum")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="esnli")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--backbone", default="t5-tiny")
    parser.add_argument("--max-train-examples", type=int, default=2000)
    parser.add_argument("--max-eval-examples", type=int, default=1000)
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--lora-learning-rate", type=float, default=None, help="default: the backbone's")
    parser.add_argument("--lora-modules-to-save", default=None, help="comma-separated, e.g. 'embed_tokens'")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--lora-name", default="lora", help="sub-directory of the LoRA run (compare several settings)")
    parser.add_argument("--full-name", default="full", help="sub-directory of the full fine-tune (e.g. one per thread count)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (results depend on it at float precision)")
    parser.add_argument("--json", default="benchmarks/results/lora.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    common = dict(dataset=args.dataset, data_dir=args.data_dir, method="larev", backbone=args.backbone,
                  max_train_examples=args.max_train_examples or None, max_eval_examples=args.max_eval_examples or None,
                  n_boot=500)
    lora = dict(lora=True, lora_r=args.lora_r, lora_alpha=args.lora_alpha, learning_rate=args.lora_learning_rate,
                lora_modules_to_save=args.lora_modules_to_save.split(",") if args.lora_modules_to_save else None)
    results = {}
    for name, extra in (("full", {}), ("lora", lora)):
        start = time.perf_counter()
        run = Run(RunConfig(**common, **extra), Path(args.output_dir) / (args.lora_name if name == "lora" else args.full_name))
        report = run.execute()
        larev = report["methods"]["larev"]
        results[name] = {
            "separations": larev["separations"], "ci95": larev["ci95"], "accuracy": report["accuracy"],
            "timings": report["timings"], "wall_seconds_this_call": time.perf_counter() - start,
            "trainable_parameters": trainable_parameters(run),
        }
    ratio = {key: results["lora"]["separations"][key] / results["full"]["separations"][key] for key in SEPARATIONS}
    output = {"settings": {**common, **lora, "threads": args.threads, "full_name": args.full_name, "lora_name": args.lora_name},
              **results, "lora_over_full": ratio,
              "within_20_percent": {key: abs(value - 1) <= 0.2 for key, value in ratio.items()}}
    print(f"{'':6s} " + " ".join(f"{key:>22s}" for key in SEPARATIONS))
    for name in ("full", "lora"):
        print(f"{name:6s} " + " ".join(f"{results[name]['separations'][key]:22.4f}" for key in SEPARATIONS))
    print("ratio  " + " ".join(f"{ratio[key]:22.3f}" for key in SEPARATIONS))
    print(json.dumps({name: results[name]["trainable_parameters"] for name in results}))
    write_json(args.json, output)


def trainable_parameters(run: Run) -> dict[str, int]:
    """Parameters trained per model: the adapter's for LoRA runs (read from its files), else the whole model's."""
    from safetensors import safe_open

    counts = {}
    for directory in sorted(run.path("models").iterdir()):
        weights = directory / ("adapter_model.safetensors" if (directory / "adapter_config.json").is_file() else "model.safetensors")
        with safe_open(str(weights), "pt") as handle:
            counts[directory.name] = sum(_numel(handle.get_slice(key).get_shape()) for key in handle.keys())
    return counts


def _numel(shape: list[int]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


if __name__ == "__main__":
    main()
