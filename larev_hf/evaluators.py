"""Named default evaluators, built in this process: ``evaluator="esnli"`` becomes a bundle directory, and :func:`load`,
the one place such a name is resolved, for ``larev-hf evaluate`` and the ``evaluate`` modules alike.

A named evaluator (:mod:`larev_hf.hub.named`: the recipes, their cache directories and published copies) resolves to
the first of: its bundle in the user's cache, the bundle its recipe names on the Hub (online only), or a build. The
build runs the library's own objects one after the other in this process — the :class:`~larev_hf.pipeline.Run`
(``larev-hf run``), the robust calibration of :class:`~larev_hf.meta.human.HumanEvaluation` (``larev-hf human
--calibrate``) and :func:`~larev_hf.hub.export.export_run` (``larev-hf export``) — so it is exactly the documented
commands (:meth:`~larev_hf.hub.named.EvaluatorRecipe.commands` prints them), each resumable: an interrupted build
resumes at the stage it stopped in. It prints one line per finished stage with an estimate of what is left, scaled
from the recipe's expected stage times by how fast this machine has been so far.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from larev_hf.config import RunConfig
from larev_hf.hub import EvaluatorBundle, load_bundle, named, published
from larev_hf.hub.config import CONFIG_NAME, JUDGE_DIR
from larev_hf.hub.export import export_run
from larev_hf.io import read_json, write_json
from larev_hf.meta.human import HumanEvaluation
from larev_hf.meta.settings import HumanSettings
from larev_hf.pipeline import Run
from larev_hf.runner import stage_listener
from larev_hf.training.nli_judge import train_esnli_judge

logger = logging.getLogger(__name__)

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


def reporter(progress: bool) -> Callable[[str], None]:
    """Where a build's and a look-up's lines go: stderr at once with ``progress``, else the log."""
    return (lambda text: print(text, file=sys.stderr, flush=True)) if progress else logger.info


def build(name: str, data_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
    """Build ``name``'s evaluator into the cache (resuming an interrupted build) and return its bundle directory."""
    recipe = named.recipe(name)
    return build_recipe(recipe, named.evaluator_dir(recipe.name), data_dir, progress)


def build_recipe(recipe: named.EvaluatorRecipe, directory: Path, data_dir: str | os.PathLike | None = None,
                 progress: bool = True) -> Path:
    """Build ``recipe`` into ``directory`` (resuming an interrupted build) and return its bundle directory: what
    :func:`build` does for a named recipe, open to a variant of one (``dataclasses.replace(recipe, ...)``) that a
    benchmark measures before it becomes a recipe."""
    root = named.data_root(data_dir)
    say = reporter(progress)
    calibration_file = recipe.calibration_file(root)
    steps = recipe.commands(root, directory)
    say(f"building the {recipe.name!r} evaluator into {directory} (once; later uses load it): about "
        f"{recipe.minutes:.0f} minutes on {named.TIMED_ON}. The same as:")
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
            done = (judge / "config.json").is_file()
            train_esnli_judge(recipe.data_location(root), judge, read_explanations=True, progress=progress,
                              **recipe.nli_judge)
            tracker(judge, "train", None if done else time.perf_counter() - started)
        calibration = None
        if calibration_file is not None:
            tracker.step = "fitting the robust calibration"
            HumanEvaluation(Run.load(run_dir, progress), HumanSettings(**recipe.human_settings(calibration_file)),
                            human_dir).execute()
            calibration = human_dir / "calibration.json"
        tracker.step = "checking trust and writing the bundle"
        if not (bundle_dir / CONFIG_NAME).is_file():  # a build interrupted after its export resumes past it
            export_run(run_dir, recipe.method, bundle_dir, calibration=calibration, force=recipe.force_export,
                       nli_judge=judge)
    minutes = (time.perf_counter() - start) / 60
    write_json(directory / named.BUILT_NAME, {
        "recipe": asdict(recipe), "fingerprint": recipe.fingerprint,
        "data": str(root) if root else recipe.hub_dataset, "calibrated": calibration is not None,
        "build_minutes": round(minutes, 2), "steps": [arguments for _, arguments in steps]})
    say(f"built the {recipe.name!r} evaluator in {minutes:.1f} min: {bundle_dir}")
    return bundle_dir


def find(evaluator: str, progress: bool = True) -> Path | None:
    """The bundle directory of a named evaluator from the first source that has it — the cache, else the recipe's
    published Hub repo (skipped at once offline) — or ``None`` when it must be built
    (:func:`resolve` builds it); one line says which.

    Raises:
        ValueError: no recipe of that name, or a task without one (the reason is in the message).
    """
    chosen = named.recipe(evaluator)
    say = reporter(progress)
    cached = named.bundle_path(chosen.name)
    if cached is not None:
        record = read_json(cached.parent / named.BUILT_NAME)
        origin = f"downloaded from {record['hub_repo']}" if record.get("hub_repo") else "built here"
        say(f"the {chosen.name!r} evaluator: from the cache ({origin}): {cached}")
        return cached
    downloaded = published.download(chosen, say, progress)
    if downloaded is not None:
        say(f"the {chosen.name!r} evaluator: downloaded from the Hub ({chosen.hub_repo}): {downloaded}")
        return downloaded
    say(f"the {chosen.name!r} evaluator: not in the cache" + (" nor from the Hub" if chosen.hub_repo else
                                                               " and not published on the Hub") + ": building it")
    return None


def resolve(evaluator: str, data_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
    """The bundle directory of a named evaluator: the cache, else the Hub (:func:`find`, which says which), else
    built here."""
    return find(evaluator, progress=progress) or build(evaluator, data_dir, progress)


def load(evaluator: str | os.PathLike | EvaluatorBundle, revision: str | None = None, device: str | None = None, *,
         data_dir: str | os.PathLike | None = None, progress: bool = True) -> EvaluatorBundle:
    """The bundle of ``evaluator`` — a named evaluator (``"esnli"``: from the cache, the Hub or built here,
    :func:`resolve`), a bundle directory or a Hub repo id — loaded once per process
    (:func:`larev_hf.hub.load_bundle`). What ``larev-hf evaluate --evaluator`` and ``evaluate.load(...,
    evaluator=...)`` load.

    Args:
        evaluator (`str`, `os.PathLike` or `EvaluatorBundle`): the evaluator (a bundle object is returned as is).
        revision (`str`, *optional*): Hub branch, tag or commit of a bundle repo.
        device (`str`, *optional*): where the evaluators run (defaults to CUDA when available).
        data_dir (`str` or `os.PathLike`, *optional*): the local data a named evaluator's build reads.
        progress (`bool`, *optional*, defaults to `True`): where a named evaluator came from, on stderr.

    Raises:
        ValueError: a name of a task without a named evaluator (the reason is in the message).
    """
    named.check_evaluator_name(evaluator)  # a misspelt name: the nearest names, not a Hub look-up error
    if named.is_named(evaluator):
        evaluator = resolve(str(evaluator), data_dir, progress)
    return load_bundle(evaluator, revision, device)


__all__ = ["BuildProgress", "build", "find", "load", "resolve"]
