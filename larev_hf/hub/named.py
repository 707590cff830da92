"""Named default evaluators: ``evaluator="esnli"`` resolves the library's recommended recipe for a task.

A recipe is the three documented commands that make a trustworthy bundle — ``larev-hf run`` (data, backbone, training
rows, seed), ``larev-hf human --calibrate`` (the robust calibration on people's acceptability judgments, where the
task has such a file) and ``larev-hf export`` (the trust check, the bundle) — with the settings the docs measure as
best. The first use builds it into the user's cache (a progress line per step, the time it took here said up front);
later uses load the cached bundle; a changed recipe has another fingerprint, so it is built anew beside the old one.

Where the data comes from: ``data_dir=`` / ``--data-dir``, else the ``LAREV_HF_DATA`` environment variable — a
directory in the layout of the repository's ``../shared/data`` (``esnli/``, ``cose/``, ``strategyqa/`` and
``human/``) — else the Hub datasets by name (the calibration, which needs the judgments of Wiegreffe et al. 2022, is
then left out and the bundle says so).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from larev_hf.io import read_json, write_json

logger = logging.getLogger(__name__)

#: Where built evaluators go unless ``LAREV_HF_EVALUATORS`` says otherwise: beside the Hub's own cache.
EVALUATORS_ENV = "LAREV_HF_EVALUATORS"
#: A local directory in the shared data layout that the recipes read their data from.
DATA_ENV = "LAREV_HF_DATA"
#: Written last into a built evaluator's directory: the recipe it was built from and how long it took.
BUILT_NAME = "recipe.json"


class EvaluatorBuildError(RuntimeError):
    """A step of a named evaluator's build failed (its own messages came before); a rerun resumes it."""


@dataclass(frozen=True)
class EvaluatorRecipe:
    """How one named evaluator is built: the ``larev-hf run`` flags, the judged file of its calibration, and the
    build time measured on this project's 2-core CPU (the estimate a first use prints)."""

    name: str
    description: str
    dataset: str
    #: the data set's directory in the shared layout, and its Hub name when no local data is given
    data_subdir: str
    hub_dataset: str | None
    run_args: tuple[str, ...]
    #: the acceptability judgments under ``human/`` that the robust calibration is fitted on (``None``: no calibration)
    judgments: str | None = None
    calibrate: tuple[str, ...] = ()
    human_args: tuple[str, ...] = ()
    export_args: tuple[str, ...] = ()
    minutes: float = 0.0
    aliases: tuple[str, ...] = field(default=())

    @property
    def fingerprint(self) -> str:
        """A hash of everything that changes the bundle (not the description or the time estimate)."""
        content = {key: value for key, value in asdict(self).items() if key not in ("description", "minutes", "aliases")}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]

    def commands(self, data_root: Path | None, workdir: Path) -> list[tuple[str, list[str]]]:
        """The build's steps, ``(title, larev-hf arguments)``, in order; each resumes where an interrupted one
        stopped."""
        data = str(data_root / self.data_subdir) if data_root is not None else self.hub_dataset
        if data is None:
            raise ValueError(f"the {self.name!r} evaluator needs local data: pass --data-dir or set {DATA_ENV}")
        run = workdir / "run"
        steps = [("training the evaluators", ["run", "--dataset", self.dataset, "--data-dir", data, *self.run_args,
                                              "--output-dir", str(run)])]
        export = ["export", "--run-dir", str(run), "--method", "larev", "--output-dir", str(workdir / "bundle"),
                  *self.export_args]
        calibration = self.calibration_file(data_root)
        if calibration is not None:
            human = workdir / "human"
            steps.append(("fitting the robust calibration on people's judgments",
                          ["human", "--run-dir", str(run), "--judgments", str(calibration), "--calibrate",
                           ",".join(self.calibrate), *self.human_args, "--output-dir", str(human)]))
            export += ["--calibration", str(human / "calibration.json")]
        steps.append(("checking trust and writing the bundle", export))
        return steps

    def calibration_file(self, data_root: Path | None) -> Path | None:
        """The judged file the calibration is fitted on, or ``None`` (no calibration, or no local judgments)."""
        if self.judgments is None or data_root is None:
            return None
        path = data_root / "human" / self.judgments
        return path if path.is_file() else None


#: The recommended recipe per task. e-SNLI: the pretrained MiniLM backbone on 500 training rows with the robust
#: ``larev,explanation_lm,copied_span`` calibration — the best agreement with people measured here, with no VARSuite
#: family gaining from the calibration (docs/human.md); the others: the same backbone, no calibration (no judged file
#: of their own construct to fit it on).
RECIPES: dict[str, EvaluatorRecipe] = {recipe.name: recipe for recipe in (
    EvaluatorRecipe(
        name="esnli", description="NLI (premise, hypothesis, label); e-SNLI, MiniLM, robust calibration",
        dataset="esnli", data_subdir="esnli", hub_dataset="esnli",
        run_args=("--method", "larev", "--backbone", "minilm2minilm", "--max-train-examples", "500",
                  "--max-eval-examples", "500", "--seed", "0"),
        judgments="snli_accept_train.jsonl", calibrate=("larev", "explanation_lm", "copied_span"),
        human_args=("--half", "held"), minutes=30.0, aliases=("nli", "snli")),
    EvaluatorRecipe(
        name="commonsenseqa", description="multiple-choice QA (question, choices, label); CoS-E, MiniLM",
        dataset="cose", data_subdir="cose", hub_dataset=None,  # the Hub's cos_e has no test split
        run_args=("--method", "larev", "--backbone", "minilm2minilm", "--max-train-examples", "2000",
                  "--max-eval-examples", "475", "--seed", "0"),
        minutes=30.0, aliases=("cose", "csqa")),
)}

#: Tasks with no named evaluator, and why: a recipe is offered only where its bundle passes ``export``'s trust check.
NOT_OFFERED: dict[str, str] = {
    "strategyqa": "no offline backbone learns StrategyQA from its facts, so no bundle of one passes the trust check: "
                  "those that do not read the answer off the baseline are right on 53-61% of its test questions with "
                  "the gold facts (always 'no': 53.3%; the best offline model, MiniLM fine-tuned on all 1,832 training questions, 60.3%; "
                  "docs/human.md, 'Can an offline evaluator learn StrategyQA at all?'). Train one with a backbone that "
                  "knows the facts' world, e.g. `larev-hf run --dataset strategyqa --backbone t5-large`, and check "
                  "its report's accuracy before `larev-hf export`",
}


def recipe(name: str) -> EvaluatorRecipe:
    """The recipe called ``name`` (or one of its aliases); a ``ValueError`` that says why a task has none
    (:data:`NOT_OFFERED`) or lists the names otherwise."""
    for candidate in RECIPES.values():
        if name == candidate.name or name in candidate.aliases:
            return candidate
    if name in NOT_OFFERED:
        raise ValueError(f"no named evaluator {name!r}: {NOT_OFFERED[name]}")
    raise ValueError(f"no named evaluator {name!r}; expected one of {sorted(RECIPES)}")


def is_named(evaluator: object) -> bool:
    """Whether ``evaluator`` names a recipe (and no local directory of that name shadows it)."""
    if not isinstance(evaluator, str) or Path(evaluator).expanduser().exists():
        return False
    try:
        recipe(evaluator)
    except ValueError:
        return False
    return True


def evaluators_home() -> Path:
    """Where named evaluators are built: ``$LAREV_HF_EVALUATORS``, else ``<HF_HOME>/larev-hf/evaluators``."""
    if os.environ.get(EVALUATORS_ENV):
        return Path(os.environ[EVALUATORS_ENV]).expanduser()
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "larev-hf" / "evaluators"


def evaluator_dir(name: str) -> Path:
    """The directory of this recipe's current version (its fingerprint in the name)."""
    chosen = recipe(name)
    return evaluators_home() / f"{chosen.name}-{chosen.fingerprint}"


def bundle_path(name: str) -> Path | None:
    """The built bundle of ``name``'s current recipe, or ``None`` if it has not been built."""
    directory = evaluator_dir(name)
    return directory / "bundle" if (directory / BUILT_NAME).is_file() else None


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


def build(name: str, data_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
    """Build ``name``'s evaluator into the cache (resuming an interrupted build) and return its bundle directory.

    Each step runs the ``larev-hf`` command line in a child process with the same Python, so a build is exactly the
    documented commands (printed as it goes) and an interrupted build resumes its finished stages.
    """
    chosen = recipe(name)
    root = data_root(data_dir)
    directory = evaluator_dir(chosen.name)
    steps = chosen.commands(root, directory)
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if progress else logger.info
    say(f"building the {chosen.name!r} evaluator into {directory} (once; later uses load it): about "
        f"{chosen.minutes:.0f} minutes on 2 CPU cores")
    if chosen.judgments and chosen.calibration_file(root) is None:
        say(f"  no {chosen.judgments} under the data directory's human/: the bundle will have no calibrated score")
    start = time.perf_counter()
    for k, (title, arguments) in enumerate(steps, start=1):
        say(f"  [{k}/{len(steps)}] {title}: larev-hf {' '.join(arguments)}")
        command = [sys.executable, "-m", "larev_hf.cli", *([] if progress else ["--quiet"]), *arguments]
        completed = subprocess.run(command, check=False)
        if completed.returncode:
            raise EvaluatorBuildError(f"building the {chosen.name!r} evaluator stopped at step {k} ({title}, exit "
                               f"{completed.returncode}); rerun to resume, or see the messages above")
    minutes = (time.perf_counter() - start) / 60
    write_json(directory / BUILT_NAME, {"recipe": asdict(chosen), "fingerprint": chosen.fingerprint,
                                        "data": str(root) if root else chosen.hub_dataset,
                                        "calibrated": chosen.calibration_file(root) is not None,
                                        "build_minutes": round(minutes, 2), "steps": [a for _, a in steps]})
    say(f"built the {chosen.name!r} evaluator in {minutes:.1f} min: {directory / 'bundle'}")
    return directory / "bundle"


def resolve(evaluator: str, data_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
    """The bundle directory of a named evaluator, built on first use."""
    return bundle_path(evaluator) or build(evaluator, data_dir, progress)


def describe() -> list[dict[str, object]]:
    """One row per recipe: its name, what it scores, whether it is built, where, and its build time."""
    rows = []
    for chosen in RECIPES.values():
        built = bundle_path(chosen.name)
        record = read_json(evaluator_dir(chosen.name) / BUILT_NAME) if built else {}
        rows.append({"name": chosen.name, "aliases": list(chosen.aliases), "description": chosen.description,
                     "built": built is not None, "path": str(evaluator_dir(chosen.name) / "bundle"),
                     "calibrated": record.get("calibrated"), "build_minutes": record.get("build_minutes"),
                     "estimate_minutes": chosen.minutes})
    return rows
