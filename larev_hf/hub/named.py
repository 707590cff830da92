"""Named default evaluators: ``evaluator="esnli"`` resolves the library's recommended recipe for a task.

A recipe is the settings of the three steps that make a trustworthy bundle — the run (data, backbone, training rows,
seed: ``larev-hf run``), the robust calibration on people's acceptability judgments where the task has such a file
(``larev-hf human --calibrate``) and the trust check with the bundle (``larev-hf export``) — as the docs measure them
best. :mod:`larev_hf.evaluators` builds it in one process into the user's cache (one progress line per stage, with an
estimate of what is left) and :meth:`EvaluatorRecipe.commands` prints the same steps as commands; later uses load the
cached bundle; a changed recipe has another fingerprint, so it is built anew beside the old one.

Where a named evaluator comes from (:func:`larev_hf.evaluators.resolve`, which says which in one line): the cache (a
build or a download of the current recipe), else the recipe's published Hub repo (``hub_repo``) when the Hub is
reachable — never waited for offline (``HF_HUB_OFFLINE=1``, or the endpoint does not answer within seconds;
:mod:`larev_hf.hub.published`) — else a build. A maintainer publishes a built evaluator with ``larev-hf evaluators
build NAME --push-to-hub REPO`` and then sets the recipe's ``hub_repo`` to that repo; a published bundle is used only
while its ``recipe.json`` carries the current recipe's fingerprint, so a changed recipe is never served an old bundle.

Where the data comes from: ``data_dir=`` / ``--data-dir``, else the ``LAREV_HF_DATA`` environment variable — a
directory in the layout of the repository's ``../shared/data`` (``esnli/``, ``cose/``, ``strategyqa/`` and
``human/``) — else the Hub datasets by name (the calibration, which needs the judgments of Wiegreffe et al. 2022, is
then left out and the bundle says so).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from larev_hf.io import read_json

#: Where built evaluators go unless ``LAREV_HF_EVALUATORS`` says otherwise: beside the Hub's own cache.
EVALUATORS_ENV = "LAREV_HF_EVALUATORS"
#: A local directory in the shared data layout that the recipes read their data from.
DATA_ENV = "LAREV_HF_DATA"
#: Written last into a built evaluator's directory: the recipe it was built from and how long it took.
BUILT_NAME = "recipe.json"


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
    build time measured on this project's 2-core CPU (the estimate a first use prints, per stage for the progress
    line's estimate of what is left)."""

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
    #: export even if the trust check fails (test recipes only: an offered recipe must pass it)
    force_export: bool = False
    minutes: float = 0.0
    #: expected seconds of each stage on 2 CPU cores, ``<directory>/<stage>`` (``run/phi_la``), for the progress line
    stage_seconds: Mapping[str, float] = field(default_factory=dict)
    aliases: tuple[str, ...] = field(default=())
    #: the Hub model repo this recipe's bundle is published in (``larev-hf evaluators build NAME --push-to-hub REPO``);
    #: ``None``: not published, so a first use builds it
    hub_repo: str | None = None

    @property
    def fingerprint(self) -> str:
        """A hash of everything that changes the bundle (not the description, the time estimates, the aliases or where
        it is published: publishing a recipe keeps its cache directory's name)."""
        content = {key: value for key, value in asdict(self).items()
                   if key not in ("description", "minutes", "stage_seconds", "aliases", "hub_repo")}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]

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


def stage_seconds(method: str, rationale_model: str, rationale_model_seconds: float) -> dict[str, float]:
    """Each stage's seconds in a build of an e-SNLI recipe scored with ``method`` (whose evaluator is
    ``models/<rationale_model>``) alone on this project's 2-core CPU (AMX), from the builds' stage markers
    (docs/hub.md, "What a build costs"): the progress line's estimate of what is left."""
    return {
        "run/data": 0.2, "run/tokenizer": 0.1, "run/phi_base": 36, "run/phi": 45, "run/ig": 0, "run/environments": 0,
        f"run/{rationale_model}": rationale_model_seconds, f"run/score-{method}": 30, f"run/report-{method}": 1,
        **{f"human/attacks/{split}/{stage}": seconds for split in ("validation", "train")
           for stage, seconds in (("suite", 0.4), (f"score-{method}", 37), ("score-explanation_lm", 4),
                                  ("score-copied_span", 1.5), ("score-grounding", 1.4), ("score-copy_excess", 1.3),
                                  ("score-premise_link", 1.2))},
        "human/judged": 0.2, f"human/score-{method}": 41, "human/score-explanation_lm": 3, "human/score-copied_span": 2,
        "human/score-grounding": 2, "human/score-copy_excess": 2, "human/score-premise_link": 2.4,
    }


#: The e-SNLI recipe's settings besides the method it scores with: the pretrained MiniLM backbone on 500 training
#: rows, trained and scored in bf16 where the CPU has bf16 arithmetic, with LAREV's leakage term the label's words that
#: the template baseline states (every term IG picks lies inside them, docs/scale.md); the robust calibration on the
#: SNLI acceptability judgments, chosen by the paired win rate of the gold over each attack (docs/human.md,
#: "Candidate recipes for the calibrated score"; docs/hub.md, "What a build costs").
_ESNLI_RUN = {"backbone": "minilm2minilm", "max_train_examples": 500, "max_eval_examples": 500, "seed": 0,
              "bf16": True, "leakage_term": "verbalization", "explanation_lm_corpus": "dataset"}
#: LAREV-NI's reading of a rationale in the ``esnli`` recipe, stated in the recipe (so its fingerprint names it): copies
#: of the input masked and sentences that name nothing of it dropped (docs/method.md, "8c").
_ESNLI_NEW_INFORMATION = {"input_copies": "mask", "copy_run": 4, "ungrounded_sentences": "drop"}
_ESNLI_FEATURES = ("explanation_lm", "copied_span", "grounding", "copy_excess", "premise_link")
_ESNLI_HUMAN = {"half": "held", "baseline_columns": ["gpt3_nll:lower"], "robustness_report_split": "none",
                "robustness_statistic": "paired"}


def _esnli_recipe(name: str, method: str, description: str, rationale_model: str, rationale_model_seconds: float,
                  minutes: float, aliases: tuple[str, ...] = (), method_run: Mapping[str, Any] | None = None
                  ) -> EvaluatorRecipe:
    return EvaluatorRecipe(
        name=name, description=description, dataset="esnli", data_subdir="esnli", hub_dataset="esnli",
        run={"method": method, **_ESNLI_RUN, **(method_run or {})}, judgments="snli_accept_train.jsonl",
        calibrate=(method, *_ESNLI_FEATURES), human=dict(_ESNLI_HUMAN), minutes=minutes, aliases=aliases,
        stage_seconds=stage_seconds(method, rationale_model, rationale_model_seconds))


#: The recommended recipe per task. e-SNLI (``esnli``): the new information a rationale adds (LAREV-NI,
#: docs/method.md, "New information"), which can credit an explanation (positive) and pays nothing for a label it
#: states; ``esnli-larev`` is the same recipe scored with the thesis's LAREV, for reproduction. None is published on the
#: Hub yet (``hub_repo=None``): once a maintainer has pushed a build (``larev-hf evaluators build esnli --push-to-hub
#: ORG/REPO``), setting ``hub_repo="ORG/REPO"`` here lets a first use download it instead of building (the fingerprint
#: is unchanged).
RECIPES: dict[str, EvaluatorRecipe] = {recipe.name: recipe for recipe in (
    _esnli_recipe("esnli", "larev_ni", "NLI (premise, hypothesis, label); e-SNLI, MiniLM, new information "
                  "(LAREV-NI), robust calibration", "phi_ni", 290, minutes=10.5, aliases=("nli", "snli"),
                  method_run=_ESNLI_NEW_INFORMATION),
    _esnli_recipe("esnli-larev", "larev", "NLI; e-SNLI, MiniLM, the thesis's LAREV (its score is at most about 0: "
                  "for reproduction), robust calibration", "phi_la", 147, minutes=8.0, aliases=("esnli-thesis",)),
)}

#: Tasks with no named evaluator, and why: a recipe is offered only where its bundle passes ``export``'s trust check.
NOT_OFFERED: dict[str, str] = {
    "commonsenseqa": "the recipe (MiniLM on 2,000 CoS-E training rows) does not pass its own trust check, so its "
                     "build ends in `export` refusing the bundle after about 22 minutes: Φ_LA is right on 59.6% of the "
                     "475 test questions with the gold CoS-E explanation (chance 33.3%) and on 62.9% with the vacuous "
                     "baseline alone, Gold − Vacuous is −0.661 nats [−0.786, −0.534], and Φ_base reads the answer from "
                     "the baseline alone on 66.9% (measured with `larev-hf evaluators build commonsenseqa --data-dir "
                     "../shared/data`, 1,344 s on 2 CPU cores; docs/cli.md, '`larev-hf evaluators`'). Train an evaluator of your own (`larev-hf run --dataset "
                     "cose` with a larger backbone or more training rows) and check its report's accuracy against the "
                     "trust check before `larev-hf export`",
    "strategyqa": "no offline backbone learns StrategyQA from its facts, so no bundle of one passes the trust check: "
                  "those that do not read the answer off the baseline are right on 53-61% of its test questions with "
                  "the gold facts (always 'no': 53.3%; the best offline model, MiniLM fine-tuned on all 1,832 training questions, 60.3%; "
                  "docs/human.md, 'Can an offline evaluator learn StrategyQA at all?'). Train one with a backbone that "
                  "knows the facts' world, e.g. `larev-hf run --dataset strategyqa --backbone t5-large`, and check "
                  "its report's accuracy before `larev-hf export`",
}
#: Other names of the tasks in :data:`NOT_OFFERED` (the aliases their recipes had), answered with the same reason.
NOT_OFFERED_ALIASES: dict[str, str] = {"cose": "commonsenseqa", "csqa": "commonsenseqa"}


def withdrawn(name: str) -> str | None:
    """The task of :data:`NOT_OFFERED` that ``name`` (or an alias of it) names, else ``None``."""
    task = NOT_OFFERED_ALIASES.get(name, name)
    return task if task in NOT_OFFERED else None


def recipe(name: str) -> EvaluatorRecipe:
    """The recipe called ``name`` (or one of its aliases); a ``ValueError`` that says why a task has none
    (:data:`NOT_OFFERED`) or lists the names otherwise."""
    for candidate in RECIPES.values():
        if name == candidate.name or name in candidate.aliases:
            return candidate
    task = withdrawn(name)
    if task is not None:
        raise ValueError(f"no named evaluator {name!r}" + (f" ({task})" if task != name else "")
                         + f": {NOT_OFFERED[task]}")
    raise ValueError(f"no named evaluator {name!r}; {did_you_mean(name)}expected one of {sorted(RECIPES)}")


def known_names() -> list[str]:
    """Every name a named evaluator answers to: the recipes, their aliases and the tasks without one."""
    return sorted({*RECIPES, *(a for r in RECIPES.values() for a in r.aliases), *NOT_OFFERED, *NOT_OFFERED_ALIASES})


def did_you_mean(name: str) -> str:
    """``"did you mean 'esnli'? "`` for the evaluators whose names (or aliases) are nearest ``name`` (``difflib``'s
    ratio ≥ 0.6), else ``""``."""
    canonical = {alias: r.name for r in RECIPES.values() for alias in (r.name, *r.aliases)} | {
        alias: NOT_OFFERED_ALIASES.get(alias, alias) for alias in (*NOT_OFFERED, *NOT_OFFERED_ALIASES)}
    close = list(dict.fromkeys(canonical[c] for c in difflib.get_close_matches(name, known_names(), n=3)))
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


def check_evaluator_name(evaluator: object) -> None:
    """Refuse at once an ``evaluator`` string that can be nothing: not a named evaluator, no local directory and no
    Hub repo id (``owner/name``), with the nearest names, instead of a Hub look-up error.

    Raises:
        ValueError: naming the evaluator, the nearest names and what was expected.
    """
    if not isinstance(evaluator, str) or is_named(evaluator) or Path(evaluator).expanduser().exists() \
            or "/" in evaluator:
        return
    raise ValueError(f"no evaluator {evaluator!r}: not a named evaluator, a bundle directory or a Hub repo id "
                     f"(owner/name); {did_you_mean(evaluator)}the named evaluators are {sorted(RECIPES)} "
                     "(`larev-hf evaluators list`)")


#: The task of each recipe's data set: which input fields its evaluator reads.
DATASET_TASKS = {"esnli": "nli", "cose": "qa", "ecqa": "qa", "strategyqa": "yesno", "synthetic": "qa"}


def expected_inputs(evaluator: object) -> tuple[str, list[str] | None] | None:
    """``(task, label set)`` of ``evaluator`` read without loading a model — a bundle directory's config, a named
    evaluator's built bundle or else its recipe's data set — so that a file can be checked before a build or a load;
    ``None`` for a Hub repo id (known once downloaded).

    Raises:
        ValueError: an evaluator string that can be nothing (:func:`check_evaluator_name`).
    """
    from larev_hf.hub.config import read_bundle_config

    check_evaluator_name(evaluator)
    if not isinstance(evaluator, str):
        return None
    path = Path(evaluator).expanduser()
    if path.is_dir():
        config = read_bundle_config(path)
        return config.task, config.label_set
    if not is_named(evaluator) or withdrawn(evaluator) is not None:
        return None
    chosen = recipe(evaluator)
    built = bundle_path(chosen.name)
    if built is not None:
        config = read_bundle_config(built)
        return config.task, config.label_set
    task = DATASET_TASKS.get(chosen.dataset)
    return None if task is None else (task, None)


def is_named(evaluator: object) -> bool:
    """Whether ``evaluator`` names a recipe or a task without one (and no local directory of that name shadows it):
    :func:`resolve` then returns its bundle, or says at once why there is none, instead of a Hub look-up of the name."""
    if not isinstance(evaluator, str) or Path(evaluator).expanduser().exists():
        return False
    if withdrawn(evaluator) is not None:
        return True
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


def bundle_megabytes(path: Path) -> float:
    """The size on disk of the files under ``path``, in MB (10^6 bytes)."""
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file()) / 1e6


def describe() -> list[dict[str, object]]:
    """One row per recipe: its name, what it scores, whether it is built (or downloaded), where, its bundle's size
    on disk, its build time and the Hub repo it is published in."""
    rows = []
    for chosen in RECIPES.values():
        built = bundle_path(chosen.name)
        record = read_json(evaluator_dir(chosen.name) / BUILT_NAME) if built else {}
        rows.append({"name": chosen.name, "aliases": list(chosen.aliases), "description": chosen.description,
                     "built": built is not None, "path": str(evaluator_dir(chosen.name) / "bundle"),
                     "calibrated": record.get("calibrated"), "build_minutes": record.get("build_minutes"),
                     "estimate_minutes": chosen.minutes, "hub_repo": chosen.hub_repo,
                     "downloaded_from": record.get("hub_repo"),
                     "size_mb": bundle_megabytes(built) if built else None})
    return rows
