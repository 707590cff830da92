"""Where a named evaluator's build spends its time: each step's and each stage's seconds, read from a built evaluator's
directory (its ``recipe.json`` and the stage markers of its run, its calibration's meta runs and its human report).

Time a build alone on the machine (nothing else running), e.g. from a fresh clone and virtual environment:

    LAREV_HF_EVALUATORS=/tmp/cache /usr/bin/time -v larev-hf evaluators build esnli --data-dir ../shared/data

then compare two builds (each ``NAME=DIR``, ``DIR`` the evaluator's directory ``<cache>/esnli-<fingerprint>``; the
wall time of the whole command, which the markers do not hold, with ``--wall NAME=SECONDS``):

    python benchmarks/build_time.py --build today=/tmp/old/esnli-d9cc40ceda77 --build new=/tmp/cache/esnli-b1e59bc6159c \\
        --wall today=1038.6 --wall new=480 --json benchmarks/results/esnli_build_time.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from larev_hf.io import write_json

STEPS = {"run": "training the evaluators (larev-hf run)", "human": "the robust calibration (larev-hf human --calibrate)"}


def stage_seconds(directory: Path) -> dict[str, float]:
    """``<directory relative to the build>/<stage>`` → seconds, for every stage marker under the build."""
    out = {}
    for marker in sorted(directory.rglob("stages/*.done")):
        key = f"{marker.parent.parent.relative_to(directory).as_posix()}/{marker.stem}"
        if key.split("/")[0] in STEPS:  # the build's own directories, not what was run there afterwards
            out[key] = round(json.loads(marker.read_text())["seconds"], 1)
    return out


def summary(directory: Path, wall: float | None) -> dict:
    """A build's steps (the sum of their stages), its stages and, when given, the whole command's wall time."""
    stages = stage_seconds(directory)
    recipe = json.loads((directory / "recipe.json").read_text()) if (directory / "recipe.json").is_file() else {}
    steps = {step: round(sum(s for key, s in stages.items() if key.split("/")[0] == step), 1) for step in STEPS}
    return {"directory": str(directory), "fingerprint": recipe.get("fingerprint"),
            "recipe_run": recipe.get("recipe", {}).get("run") or recipe.get("recipe", {}).get("run_args"),
            "build_minutes_recorded": recipe.get("build_minutes"), "wall_seconds": wall,
            "steps_seconds": steps, "stages_seconds": stages,
            "other_seconds": round(wall - sum(steps.values()), 1) if wall is not None else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append", required=True, metavar="NAME=DIR")
    parser.add_argument("--wall", action="append", default=[], metavar="NAME=SECONDS")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    walls = {name: float(value) for name, value in (item.split("=", 1) for item in args.wall)}
    builds = {name: summary(Path(path), walls.get(name)) for name, path in (item.split("=", 1) for item in args.build)}
    names = list(builds)
    print(f"{'step':58s}" + "".join(f"{name:>12s}" for name in names))
    for step, title in STEPS.items():
        print(f"{title:58s}" + "".join(f"{builds[n]['steps_seconds'][step]:11.0f}s" for n in names))
    for label, key in (("everything else (start-up, report, export)", "other_seconds"), ("the whole command", "wall_seconds")):
        print(f"{label:58s}" + "".join(f"{builds[n][key]:11.0f}s" if builds[n][key] is not None else f"{'?':>12s}"
                                       for n in names))
    if len(names) == 2 and all(builds[n]["wall_seconds"] for n in names):
        ratio = builds[names[1]]["wall_seconds"] / builds[names[0]]["wall_seconds"]
        print(f"{names[1]} / {names[0]}: {ratio:.2f} of the time")
        builds["ratio"] = round(ratio, 3)
    if args.json:
        write_json(args.json, builds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
