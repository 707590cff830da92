"""The named evaluators' recipes: ``evaluator="esnli"`` resolves the library's recommended recipe for a task.

A recipe is the settings of the three steps that make a trustworthy bundle — the run (data, backbone, training rows,
seed: ``larev-hf run``), the robust calibration on people's acceptability judgments where the task has such a file
(``larev-hf human --calibrate``) and the trust check with the bundle (``larev-hf export``) — as the docs measure them
best. The recipes are data (:data:`RECIPES_FILE`, ``recipes.json`` beside this module);
:func:`~larev_hf.evaluators.building.build_recipe` builds one in one process into the user's cache (one progress line
per stage, with an estimate of what is left) and :meth:`EvaluatorRecipe.commands` prints the same steps as commands;
later uses load the cached bundle; a changed recipe has another fingerprint, so it is built anew beside the old one.

Where a named evaluator comes from (:func:`larev_hf.evaluators.resolve`, which says which in one line): the cache (a
build or a download of the current recipe), else the recipe's published Hub repo (``hub_repo``) when the Hub is
reachable — never waited for offline (``HF_HUB_OFFLINE=1``, or the endpoint does not answer within seconds;
:mod:`larev_hf.evaluators.published`) — else a build. A maintainer publishes a built evaluator with ``larev-hf
evaluators build NAME --push-to-hub REPO`` and then sets the recipe's ``hub_repo`` to that repo; a published bundle is
used only while its ``recipe.json`` carries the current recipe's fingerprint, so a changed recipe is never served an
old bundle.

Where the data comes from: ``data_dir=`` / ``--data-dir``, else the ``LAREV_HF_DATA`` environment variable — a
directory in the layout of the repository's ``../shared/data`` (``esnli/``, ``cose/``, ``strategyqa/`` and
``human/``) — else the Hub datasets by name (the calibration, which needs the judgments of Wiegreffe et al. 2022, is
then left out and the bundle says so): :func:`data_root`.

Torch-free, like :mod:`larev_hf.evaluators.loading`: ``larev-hf evaluate`` checks a file against a named evaluator's
task, and ``larev-hf evaluators list`` answers, without loading a model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

from larev_hf.hub.config import JUDGE_DIR
from larev_hf.io import read_json

#: Where built evaluators go unless ``LAREV_HF_EVALUATORS`` says otherwise: beside the Hub's own cache.
EVALUATORS_ENV = "LAREV_HF_EVALUATORS"
#: A local directory in the shared data layout that the recipes read their data from.
DATA_ENV = "LAREV_HF_DATA"
#: Written last into a built evaluator's directory: the recipe it was built from and how long it took.
BUILT_NAME = "recipe.json"

logger = logging.getLogger(__name__)


def reporter(progress: bool) -> Callable[[str], None]:
    """Where a build's and a look-up's lines go: stderr at once with ``progress``, else the log."""
    return (lambda text: print(text, file=sys.stderr, flush=True)) if progress else logger.info


def as_flags(settings: Mapping[str, Any]) -> list[str]:
    """Settings as the command line spells them: ``max_train_examples=500`` → ``--max-train-examples 500``, a true
    boolean a bare flag, a list comma-joined."""
    flags: list[str] = []
    for name, value in settings.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is not False and value is not None:  # 0 is a value, not a false flag
            flags += [flag, ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)]
    return flags


@dataclass(frozen=True)
class EvaluatorRecipe:
    """How one named evaluator is built: the run's settings, the judged file and features of its calibration, and the
    build's expected time (the estimate a first use prints, per stage for the progress line's estimate of what is
    left; ``docs`` names the section that measures it)."""

    name: str
    description: str
    dataset: str
    #: the data set's directory in the shared layout, and its Hub name when no local data is given
    data_subdir: str
    hub_dataset: str | None
    #: :class:`~larev_hf.config.RunConfig` settings besides the data (``method`` names the bundled method)
    run: Mapping[str, Any]
    #: the acceptability judgments under ``human/`` that the robust calibration is fitted on (``None``: no calibration)
    judgments: str | None = None
    calibrate: tuple[str, ...] = ()
    #: :class:`~larev_hf.meta.settings.HumanSettings` of the calibration besides the judgments and features
    human: Mapping[str, Any] = field(default_factory=dict)
    #: the ``larev-hf nli-train --read-explanations`` settings (besides the data and output directories) of the NLI
    #: judge the bundle carries for the finding *contradicts the label* (NLI recipes); ``None``: no judge
    nli_judge: Mapping[str, Any] | None = None
    #: export even if the trust check fails (test recipes only: an offered recipe must pass it)
    force_export: bool = False
    #: the whole build's expected minutes
    minutes: float = 0.0
    #: each stage's expected seconds, ``<directory>/<stage>`` (``run/phi_la``), for the progress line
    stage_seconds: Mapping[str, float] = field(default_factory=dict)
    aliases: tuple[str, ...] = field(default=())
    #: the Hub model repo this recipe's bundle is published in (``larev-hf evaluators build NAME --push-to-hub REPO``);
    #: ``None``: not published, so a first use builds it
    hub_repo: str | None = None
    #: the doc section that explains the recipe's settings and measures its build and its quality
    docs: str = ""

    @property
    def fingerprint(self) -> str:
        """A hash of everything that changes the bundle (not the description, the time estimates, the aliases, the
        doc or where it is published: publishing a recipe keeps its cache directory's name)."""
        content = {key: value for key, value in asdict(self).items()
                   if key not in ("description", "minutes", "stage_seconds", "aliases", "hub_repo", "docs")
                   and not (key == "nli_judge" and value is None)}  # a recipe without a judge keeps its fingerprint
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> EvaluatorRecipe:
        """A recipe from its entry of a recipes file (lists where the recipe keeps tuples); an unknown key raises a
        ``ValueError`` naming it."""
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(values) - known):
            raise ValueError(f"recipe {values.get('name')!r}: unknown keys {unknown}; expected some of {sorted(known)}")
        return cls(**{**values, **{key: tuple(values[key]) for key in ("calibrate", "aliases") if key in values}})

    @property
    def method(self) -> str:
        """The method whose evaluators the bundle holds."""
        return str(self.run.get("method", "larev"))

    @property
    def backbone(self) -> str:
        """The evaluators' backbone (a preset or a checkpoint)."""
        return str(self.run["backbone"])

    def data_location(self, data_root: Path | None) -> str:
        """The run's ``data_dir``: the local copy under ``data_root``, else the Hub dataset."""
        data = str(data_root / self.data_subdir) if data_root is not None else self.hub_dataset
        if data is None:
            raise ValueError(f"the {self.name!r} evaluator needs local data: pass --data-dir or set {DATA_ENV}")
        return data

    def run_settings(self, data_root: Path | None) -> dict[str, Any]:
        """The run's :class:`~larev_hf.config.RunConfig` keyword arguments."""
        return {"dataset": self.dataset, "data_dir": self.data_location(data_root), **self.run}

    def human_settings(self, calibration: Path) -> dict[str, Any]:
        """The calibration's :class:`~larev_hf.meta.settings.HumanSettings` keyword arguments: only the features are
        scored (a build needs nothing else of the judged file)."""
        return {"judgments": str(calibration), "calibrate": list(self.calibrate), "methods": list(self.calibrate),
                **self.human}

    def commands(self, data_root: Path | None, workdir: Path) -> list[tuple[str, list[str]]]:
        """The build's steps as ``larev-hf`` commands, ``(title, arguments)``, in order: what
        :func:`larev_hf.evaluators.build` does in one process, for a person to read or rerun."""
        run = workdir / "run"
        steps = [("training the evaluators", ["run", *as_flags(self.run_settings(data_root)),
                                              "--output-dir", str(run)])]
        export = ["export", "--run-dir", str(run), "--method", self.method, "--output-dir", str(workdir / "bundle"),
                  *(["--force"] if self.force_export else [])]
        if self.nli_judge is not None:
            judge = workdir / JUDGE_DIR
            steps.append(("training the NLI judge", ["nli-train", "--data-dir", self.data_location(data_root),
                                                     "--output-dir", str(judge), "--read-explanations",
                                                     *as_flags(self.nli_judge)]))
            export += ["--nli-judge", str(judge)]
        calibration = self.calibration_file(data_root)
        if calibration is not None:
            human = workdir / "human"
            steps.append(("fitting the robust calibration on people's judgments",
                          ["human", "--run-dir", str(run), *as_flags(self.human_settings(calibration)),
                           "--output-dir", str(human)]))
            export += ["--calibration", str(human / "calibration.json")]
        steps.append(("checking trust and writing the bundle", export))
        return steps

    def calibration_file(self, data_root: Path | None) -> Path | None:
        """The judged file the calibration is fitted on, or ``None`` (no calibration, or no local judgments)."""
        if self.judgments is None or data_root is None:
            return None
        path = data_root / "human" / self.judgments
        return path if path.is_file() else None


#: The recipes as data: each recipe's settings, its expected build time and the doc section that measures it.
RECIPES_FILE = Path(__file__).with_name("recipes.json")


class RecipeFile(NamedTuple):
    """What a recipes file (:data:`RECIPES_FILE`'s layout) holds."""

    #: the recipes by name
    recipes: dict[str, EvaluatorRecipe]
    #: each task without a recipe, with the reason a user is told
    not_offered: dict[str, str]
    #: the other names of those tasks
    not_offered_aliases: dict[str, str]
    #: the machine the recipes' ``minutes`` and ``stage_seconds`` were timed on, as a first use names it
    timed_on: str


def load_recipes(path: str | os.PathLike = RECIPES_FILE) -> RecipeFile:
    """A recipes file read and checked (an unknown key of a recipe raises a ``ValueError``)."""
    values = read_json(path)
    withheld = values.get("not_offered", [])
    return RecipeFile(recipes={recipe.name: recipe for recipe in map(EvaluatorRecipe.from_dict, values["recipes"])},
                      not_offered={entry["task"]: entry["reason"] for entry in withheld},
                      not_offered_aliases={alias: entry["task"] for entry in withheld
                                           for alias in entry.get("aliases", [])},
                      timed_on=str(values.get("timed_on", "the machine its docs name")))


#: The recommended recipe per task (:data:`RECIPES_FILE`; docs/hub.md, "The recipes", says why each setting). A
#: published build is used once a recipe names its ``hub_repo``, which leaves the fingerprint unchanged.
RECIPES: dict[str, EvaluatorRecipe]
#: Tasks with no named evaluator, and why: a recipe is offered only where its bundle passes ``export``'s trust check.
NOT_OFFERED: dict[str, str]
#: Other names of the tasks in :data:`NOT_OFFERED` (the aliases their recipes had), answered with the same reason.
NOT_OFFERED_ALIASES: dict[str, str]
#: The machine the recipes' time estimates were measured on.
TIMED_ON: str
RECIPES, NOT_OFFERED, NOT_OFFERED_ALIASES, TIMED_ON = load_recipes()


def data_root(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The local data directory a build reads: ``data_dir``, else ``$LAREV_HF_DATA``, else ``None`` (the Hub)."""
    chosen = data_dir or os.environ.get(DATA_ENV)
    if not chosen:
        return None
    root = Path(chosen).expanduser().resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such data directory; expected the shared data layout "
                                "(esnli/, cose/, strategyqa/, human/)")
    return root
