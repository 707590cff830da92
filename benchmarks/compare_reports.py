"""Compare the scores of two reports: a run's ``report.json`` (every method entry, evaluator accuracy and ablation
table), or with ``--all-keys`` any JSON report (``meta_report.json``, ``varif_report.json``, ``frame_report.json``):
every value but wall times, throughputs and the keys matching ``--ignore``.

Used to show that a refactor changes no user's numbers: the same run before and after must give bitwise-equal
scores at the same thread count. Prints one line per differing value and writes a JSON summary. Several pairs may be
given (OLD NEW OLD NEW ...); the summary then lists one comparison per pair.

    python benchmarks/compare_reports.py OLD/report.json NEW/report.json [--json benchmarks/results/x.json]
    python benchmarks/compare_reports.py --all-keys OLD/frame_report.json NEW/frame_report.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from fnmatch import fnmatchcase as fnmatch
from pathlib import Path

SCORE_SECTIONS = ("methods", "accuracy", "ablations", "n_examples", "dataset", "split")
#: What ``--all-keys`` leaves out (patterns of the flattened keys, ``a/b/c``): wall times, throughputs and the
#: environment they were measured in.
TIMING_KEYS = ("stage_seconds*", "timings*", "stage_environments*", "*seconds", "*per_second")


def flatten(value, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` → ``{"a/b": 1}`` (lists indexed)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flatten(item, f"{prefix}{key}/").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in flatten(item, f"{prefix}{i}/").items()}
    return {prefix.rstrip("/"): value}


def same(a: object, b: object) -> bool:
    """Equal values, a NaN equal to a NaN (a statistic undefined in both reports is unchanged)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def compare(old: dict, new: dict, all_keys: bool = False, ignore: tuple[str, ...] = ()) -> dict[str, object]:
    """Equal / differing / missing score values of two reports (``all_keys``: every value but those whose flattened
    key matches :data:`TIMING_KEYS` or an ``ignore`` pattern, instead of :data:`SCORE_SECTIONS`)."""
    sections = list(dict.fromkeys([*old, *new])) if all_keys else list(SCORE_SECTIONS)
    skip = (*TIMING_KEYS, *ignore) if all_keys else ()
    a, b = ({key: value for key, value in flatten({section: report.get(section) for section in sections}).items()
             if not any(fnmatch(key, pattern) for pattern in skip)} for report in (old, new))
    differing = {key: [a[key], b[key]] for key in sorted(a.keys() & b.keys()) if not same(a[key], b[key])}
    return {"sections": sections, "n_values": len(a.keys() | b.keys()),
            "n_equal": sum(same(a[k], b[k]) for k in a.keys() & b.keys()),
            "differing": differing, "only_old": sorted(a.keys() - b.keys()), "only_new": sorted(b.keys() - a.keys())}


def compare_files(old: Path, new: Path, all_keys: bool = False, ignore: tuple[str, ...] = ()) -> dict[str, object]:
    """:func:`compare` of two JSON files, printed (one line per differing value); ``identical`` added."""
    result = {"old": str(old), "new": str(new),
              **compare(json.loads(old.read_text()), json.loads(new.read_text()), all_keys, ignore)}
    result["identical"] = not (result["differing"] or result["only_old"] or result["only_new"])
    print(f"{old} vs {new}: {result['n_equal']}/{result['n_values']} score values equal"
          + ("" if result["identical"] else f"; {len(result['differing'])} differ"))
    for key, (x, y) in result["differing"].items():
        print(f"  {key}: {x} → {y}")
    for key in result["only_old"] + result["only_new"]:
        print(f"  {key}: only in {'old' if key in result['only_old'] else 'new'}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+", help="OLD NEW, or several pairs OLD NEW OLD NEW ...")
    parser.add_argument("--all-keys", action="store_true", help="compare every key but wall times (any JSON report)")
    parser.add_argument("--ignore", action="append", default=[],
                        help="with --all-keys: a pattern of flattened keys left out (e.g. 'settings/*')")
    parser.add_argument("--json", type=Path, default=None, help="also write the comparison here")
    args = parser.parse_args(argv)
    if len(args.reports) % 2:
        parser.error("expected pairs of reports: OLD NEW [OLD NEW ...]")
    pairs = list(zip(args.reports[::2], args.reports[1::2], strict=True))
    results = [compare_files(old, new, args.all_keys, tuple(args.ignore)) for old, new in pairs]
    identical = all(r["identical"] for r in results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = results[0] if len(results) == 1 else {"comparisons": results, "identical": identical}
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
