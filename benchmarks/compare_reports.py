"""Compare the scores of two ``report.json`` files: every method entry, evaluator accuracy and ablation table.

Used to show that a refactor changes no user's numbers: the same run before and after must give bitwise-equal
scores at the same thread count. Prints one line per differing value and writes a JSON summary.

    python benchmarks/compare_reports.py OLD/report.json NEW/report.json [--json benchmarks/results/x.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SCORE_SECTIONS = ("methods", "accuracy", "ablations", "n_examples", "dataset", "split")


def flatten(value, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` → ``{"a/b": 1}`` (lists indexed)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flatten(item, f"{prefix}{key}/").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in flatten(item, f"{prefix}{i}/").items()}
    return {prefix.rstrip("/"): value}


def compare(old: dict, new: dict) -> dict[str, object]:
    """Equal / differing / missing score values of two reports."""
    a = flatten({key: old.get(key) for key in SCORE_SECTIONS})
    b = flatten({key: new.get(key) for key in SCORE_SECTIONS})
    differing = {key: [a[key], b[key]] for key in sorted(a.keys() & b.keys()) if a[key] != b[key]}
    return {"n_values": len(a.keys() | b.keys()), "n_equal": sum(a[k] == b[k] for k in a.keys() & b.keys()),
            "differing": differing, "only_old": sorted(a.keys() - b.keys()), "only_new": sorted(b.keys() - a.keys())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--json", type=Path, default=None, help="also write the comparison here")
    args = parser.parse_args(argv)
    result = {"old": str(args.old), "new": str(args.new),
              **compare(json.loads(args.old.read_text()), json.loads(args.new.read_text()))}
    identical = not (result["differing"] or result["only_old"] or result["only_new"])
    result["identical"] = identical
    print(f"{args.old} vs {args.new}: {result['n_equal']}/{result['n_values']} score values equal"
          + ("" if identical else f"; {len(result['differing'])} differ"))
    for key, (x, y) in result["differing"].items():
        print(f"  {key}: {x} → {y}")
    for key in result["only_old"] + result["only_new"]:
        print(f"  {key}: only in {'old' if key in result['only_old'] else 'new'}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
