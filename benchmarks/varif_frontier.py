"""VARIF's frontier of explanation methods on one dataset: R × Ĩ, hypervolume, VARIF = S·H, H1/H2/H5.

Runs (or resumes) ``larev-hf varif`` with the given flags, after training the offline NLI judge once with
``larev-hf nli-train`` (a MiniLM cross-encoder on the e-SNLI train split, saved and reused by every later run),
then prints the method table and saves the report, the judge's test accuracy and every stage's wall time.

    python benchmarks/varif_frontier.py --dataset esnli --data-dir ../shared/data/esnli \\
        --nli-model runs/nli-minilm-esnli --output-dir runs/varif/esnli --results benchmarks/results/varif_esnli.json

Every flag but ``--results``, ``--threads`` and ``--nli-train-epochs`` goes to ``larev-hf varif``'s parser (so a
typo fails at once); ``--nli-model`` is trained first when the directory does not exist yet.

Internals: ``larev_hf.cli.commands.varif``'s ``VarifCommand`` and ``larev_hf.explain.nli``'s ``nli_train_main``: it
drives the ``larev-hf varif`` and ``nli-train`` commands in one process, with the flags a user passes.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from larev_hf.cli import build_parser
from larev_hf.cli.commands.varif import VarifCommand
from larev_hf.io import read_json, write_json

#: The `larev-hf` subcommand every flag but this script's own goes to (the documented-commands test reads it).
FORWARDS_TO = "varif"


def main() -> None:
    own = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    own.add_argument("--results", required=True, help="where the JSON summary goes")
    own.add_argument("--threads", type=int, default=2, help="torch CPU threads (recorded)")
    own.add_argument("--nli-train-epochs", type=float, default=2.0, help="epochs of the judge when it is trained here")
    args, rest = own.parse_known_args()
    load_before = os.getloadavg()[0]
    import torch

    torch.set_num_threads(args.threads)
    varif_args = build_parser().parse_args([FORWARDS_TO, *rest])
    timings: dict[str, float] = {}
    if varif_args.nli_model and not (Path(varif_args.nli_model) / "config.json").is_file():
        nli_data = varif_args.nli_data_dir or varif_args.data_dir
        start = time.perf_counter()
        nli_args = build_parser().parse_args(["nli-train", "--data-dir", nli_data, "--output-dir", varif_args.nli_model,
                                              "--epochs", str(args.nli_train_epochs), "--seed", str(varif_args.seed)])
        from larev_hf.explain.nli import nli_train_main

        nli_train_main(nli_args, progress=True)
        timings["nli-train"] = time.perf_counter() - start
    start = time.perf_counter()
    VarifCommand().run(varif_args, progress=True)
    timings["varif"] = time.perf_counter() - start
    report = read_json(Path(varif_args.output_dir) / "varif_report.json")
    judge_metrics = Path(varif_args.nli_model or Path(varif_args.output_dir) / "models" / "nli") / "nli_metrics.json"
    summary = {
        "command": " ".join(["python", "benchmarks/varif_frontier.py", *sys.argv[1:]]),
        "machine": {"platform": platform.platform(), "torch_threads": torch.get_num_threads(),
                    "cpu_count": os.cpu_count(), "load_average_before": load_before},
        "nli_judge": read_json(judge_metrics) if judge_metrics.is_file() else None,
        "seconds": {**timings, "stages": report["stage_seconds"]},
        "report": report,
    }
    write_json(args.results, summary)
    print((Path(varif_args.output_dir) / "varif_report.md").read_text())
    print(f"results: {args.results}")


if __name__ == "__main__":
    main()
