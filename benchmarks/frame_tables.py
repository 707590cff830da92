"""FRAME's tables 1-3 for the four RLC metrics on one dataset, mean ± std over seeds, with NRG.

Runs (or resumes) ``larev-hf frame`` with the given flags, prints the report and saves it with every stage's wall
time and the machine it ran on:

    python benchmarks/frame_tables.py --dataset esnli --data-dir ../shared/data/esnli --output-dir runs/frame/esnli-small \\
        --seeds 0,1,2 --max-train-examples 500 --max-eval-examples 300 --train-shares 1.0,0.3 --noise-shares 0.0,0.3 \\
        --capacity-backbones t5-tiny,t5-mini --results benchmarks/results/frame_esnli_small.json

Every flag but ``--results`` and ``--threads`` goes to ``larev-hf frame``'s parser (a typo fails at once). Adding
seeds to a finished run trains only theirs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from larev_hf.cli import build_parser
from larev_hf.io import read_json, write_json

#: The `larev-hf` subcommand every flag but this script's own goes to (the documented-commands test reads it).
FORWARDS_TO = "frame"


def main() -> None:
    own = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    own.add_argument("--results", required=True, help="where the JSON summary goes")
    own.add_argument("--threads", type=int, default=2, help="torch CPU threads (recorded)")
    args, rest = own.parse_known_args()
    load_before = os.getloadavg()[0]
    import torch

    torch.set_num_threads(args.threads)
    frame_args = build_parser().parse_args([FORWARDS_TO, *rest])
    from larev_hf.frame import frame_main

    start = time.perf_counter()
    frame_main(frame_args, progress=True)
    report = read_json(Path(frame_args.output_dir) / "frame_report.json")
    write_json(args.results, {
        "command": " ".join(["python", "benchmarks/frame_tables.py", *sys.argv[1:]]),
        "machine": {"platform": platform.platform(), "torch_threads": torch.get_num_threads(),
                    "cpu_count": os.cpu_count(), "load_average_before": load_before},
        "seconds": {"this_call": time.perf_counter() - start, "stages": report.get("stage_seconds")},
        "report": report,
    })
    print((Path(frame_args.output_dir) / "frame_report.md").read_text())
    print(f"results: {args.results}")


if __name__ == "__main__":
    main()
