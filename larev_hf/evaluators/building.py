"""A named evaluator built in this process: :func:`build_recipe` turns a recipe
(:class:`~larev_hf.evaluators.recipes.EvaluatorRecipe`) into a bundle directory.

The build runs the library's own objects one after the other — the :class:`~larev_hf.pipeline.Run` (``larev-hf run``),
the NLI judge of an NLI recipe (``larev-hf nli-train``), the robust calibration of
:class:`~larev_hf.meta.human.HumanEvaluation` (``larev-hf human --calibrate``) and
:func:`~larev_hf.hub.export.export_run` (``larev-hf export``) — so it is exactly the documented commands
(:meth:`~larev_hf.evaluators.recipes.EvaluatorRecipe.commands` prints them), each resumable: an interrupted build
resumes at the stage it stopped in. It prints one line per finished stage with an estimate of what is left, scaled
from the recipe's expected stage times by how fast this machine has been so far (:class:`BuildProgress`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from larev_hf.config import RunConfig
from larev_hf.evaluators.recipes import BUILT_NAME, TIMED_ON, EvaluatorRecipe, data_root, reporter
from larev_hf.hub.config import CONFIG_NAME, JUDGE_DIR
from larev_hf.hub.export import export_run
from larev_hf.io import write_json
from larev_hf.meta.human import HumanEvaluation
from larev_hf.meta.settings import HumanSettings
from larev_hf.pipeline import Run
from larev_hf.runner import stage_listener
from larev_hf.training.nli_judge import is_finished_judge, train_esnli_judge

#: The estimate keeps the recipe's own times until stages expected to take this long have run: a pace measured on a
#: few sub-second stages says little about the minutes-long ones.
MIN_PACE_SECONDS = 30.0


class BuildProgress:
    """One line per finished stage of a build: which step, the stage, its time and about how long is left.

    ``expected`` maps each stage, as ``<directory relative to the build's>/<stage>`` (``run/phi_la``,
    ``human/attacks/validation/score-larev``), to its expected seconds (the recipe's: docs/hub.md, "The recipes"); what is
    left is the expected time of the stages still to come times this machine's pace so far (actual over expected
    seconds of the stages done, once :data:`MIN_PACE_SECONDS` of them are), so a faster or slower machine is corrected
    for after the first long stage.
    """

    def __init__(self, expected: dict[str, float], root: Path, say: Callable[[str], None]) -> None:
        self.remaining, self.root, self.say = dict(expected), root, say
        self.actual = self.planned = 0.0
        self.step = ""

    def __call__(self, directory: Path, stage: str, seconds: float | None) -> None:
        try:
            key = f"{directory.resolve().relative_to(self.root.resolve()).as_posix()}/{stage}"
        except ValueError:  # a runner outside the build's directory: not one of its stages
            return
        planned = self.remaining.pop(key, None)
        if seconds is None:
            self.say(f"  {self.step}: {stage} done earlier, kept")
            return
        if planned is not None:
            self.actual, self.planned = self.actual + seconds, self.planned + planned
        pace = self.actual / self.planned if self.planned >= MIN_PACE_SECONDS else 1.0
        left = sum(self.remaining.values()) * pace
        self.say(f"  {self.step}: {key} done in {seconds:.0f} s; about {left / 60:.1f} min left")


def build_recipe(recipe: EvaluatorRecipe, directory: Path, data_dir: str | os.PathLike | None = None,
                 progress: bool = True) -> Path:
    """Build ``recipe`` into ``directory`` (resuming an interrupted build) and return its bundle directory: what
    :func:`~larev_hf.evaluators.build` does for a named recipe, open to a variant of one
    (``dataclasses.replace(recipe, ...)``) that a benchmark measures before it becomes a recipe."""
    root = data_root(data_dir)
    say = reporter(progress)
    calibration_file = recipe.calibration_file(root)
    human_settings = recipe.human_settings(calibration_file) if calibration_file is not None else None
    steps = recipe.commands(root, directory)
    say(f"building the {recipe.name!r} evaluator into {directory} (once; later uses load it): about "
        f"{recipe.minutes:.0f} minutes on {TIMED_ON}. The same as:")
    for title, arguments in steps:
        say(f"  {title}: larev-hf {' '.join(arguments)}")
    if recipe.judgments and calibration_file is None:
        say(f"  no {recipe.judgments} under the data directory's human/: the bundle will have no calibrated score")
    tracker = BuildProgress(recipe.stage_seconds, directory, say)
    start = time.perf_counter()
    run_dir, human_dir, bundle_dir = directory / "run", directory / "human", directory / "bundle"
    with stage_listener(tracker):
        tracker.step = "training the evaluators"
        Run(RunConfig(**recipe.run_settings(root)), run_dir, progress=progress).execute()
        judge = None
        if recipe.nli_judge is not None:
            tracker.step = "training the NLI judge"
            judge = directory / JUDGE_DIR
            started = time.perf_counter()
            done = is_finished_judge(judge)
            train_esnli_judge(recipe.data_location(root), judge, read_explanations=True, progress=progress,
                              **recipe.nli_judge)
            tracker(judge, "train", None if done else time.perf_counter() - started)
        calibration = None
        if calibration_file is not None:
            tracker.step = "fitting the robust calibration"
            HumanEvaluation(Run.load(run_dir, progress), HumanSettings(**human_settings),
                            human_dir).execute()
            calibration = human_dir / "calibration.json"
        tracker.step = "checking trust and writing the bundle"
        if not (bundle_dir / CONFIG_NAME).is_file():  # a build interrupted after its export resumes past it
            export_run(run_dir, recipe.method, bundle_dir, calibration=calibration, force=recipe.force_export,
                       nli_judge=judge)
    minutes = (time.perf_counter() - start) / 60
    write_json(directory / BUILT_NAME, {
        "recipe": asdict(recipe), "fingerprint": recipe.fingerprint,
        "data": str(root) if root else recipe.hub_dataset, "calibrated": calibration is not None,
        "build_minutes": round(minutes, 2), "steps": [arguments for _, arguments in steps]})
    say(f"built the {recipe.name!r} evaluator in {minutes:.1f} min: {bundle_dir}")
    return bundle_dir


__all__ = ["BuildProgress", "build_recipe"]
