"""Separations across rationale sources (the LAREV thesis's table 5.8): a trained run scores the
explanations of a judged file source by source (e.g. e-SNLI's crowd explanation vs GPT-3's greedy one of the same
instances), each as the Gold rationale with the thesis's variants built from it (Gold-Leaky, Vacuous, Leaky), through
``larev-hf evaluate``'s code path. Prints one line per (source, method) and writes a JSON table.

    python benchmarks/rationale_sources.py --run-dir runs/g/esnli-full \\
        --judgments ../shared/data/human/snli_fine_select.jsonl --json benchmarks/results/rationale_sources_snli.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from larev_hf.io import read_jsonl, write_json, write_jsonl
from larev_hf.pipeline import Run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--judgments", required=True, help="a judged file with a 'source' column")
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    rows = [row for _, row in read_jsonl(args.judgments)]
    sources = sorted({row["source"] for row in rows})
    run = Run.load(args.run_dir, progress=False)
    table: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for source in sources:
            # one explanation per instance and source: the instance id is the example id
            path = Path(tmp) / f"{source}.jsonl"
            write_jsonl(path, [row for row in rows if row["source"] == source])
            report = run.evaluate_file(path, Path(tmp) / f"out-{source}")
            table[source] = {"n": report["n_examples"], "methods": {
                name: {"absolute": entry["absolute"], "separations": entry["separations"], "ci95": entry["ci95"],
                       "win_rate": entry.get("win_rate")}
                for name, entry in report["methods"].items() if entry.get("unit", "nats") == "nats"}}
            for name, entry in table[source]["methods"].items():
                seps = entry["separations"]
                print(f"{source:12s} {name:16s} gold {entry['absolute']['gold']:+.3f}  "
                      + "  ".join(f"{k.removeprefix('gold_minus_')} {v:+.3f}" for k, v in seps.items()), flush=True)
    summary = {"run_dir": args.run_dir, "judgments": args.judgments, "sources": table,
               "command": "python benchmarks/rationale_sources.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    write_json(args.json, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
