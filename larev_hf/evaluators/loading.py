"""A named evaluator's name resolved to a bundle: :func:`load`, the one place ``evaluator="esnli"`` becomes a
loaded bundle, for ``larev-hf evaluate`` and the ``evaluate`` modules alike.

A name is checked here (:func:`check_evaluator_name`: a misspelt one gets the nearest names; :func:`expected_inputs`:
the task a file is checked against before any model loads) and resolves to the first of: its bundle in the user's
cache (:func:`evaluator_dir`, one directory per recipe fingerprint), the bundle its recipe names on the Hub (online
only, :func:`larev_hf.evaluators.published.download`), or a build in this process
(:func:`larev_hf.evaluators.building.build_recipe`). The recipes themselves are :mod:`larev_hf.evaluators.recipes`.

Torch-free at import: the bundle (:func:`larev_hf.hub.load_bundle`, through the hub's lazy table) and the build load
their models when they are first used.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from larev_hf import hub
from larev_hf.evaluators.published import download
from larev_hf.evaluators.recipes import (
    BUILT_NAME,
    EVALUATORS_ENV,
    NOT_OFFERED,
    NOT_OFFERED_ALIASES,
    RECIPES,
    EvaluatorRecipe,
    reporter,
)
from larev_hf.hub.config import read_bundle_config
from larev_hf.io import read_json

if TYPE_CHECKING:
    from larev_hf.hub import EvaluatorBundle


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
    if (not isinstance(evaluator, str) or is_named(evaluator) or Path(evaluator).expanduser().exists()
            or "/" in evaluator):
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


def build(name: str, data_dir: str | os.PathLike | None = None, progress: bool = True) -> Path:
    """Build ``name``'s evaluator into the cache (resuming an interrupted build) and return its bundle directory."""
    # the build trains a run (torch, the pipeline: seconds to import), so it is imported when a build starts, not
    # when a file is checked against a named evaluator or `larev-hf evaluators list` answers
    from larev_hf.evaluators.building import build_recipe

    chosen = recipe(name)
    return build_recipe(chosen, evaluator_dir(chosen.name), data_dir, progress)


def find(evaluator: str, progress: bool = True) -> Path | None:
    """The bundle directory of a named evaluator from the first source that has it — the cache, else the recipe's
    published Hub repo (skipped at once offline) — or ``None`` when it must be built
    (:func:`resolve` builds it); one line says which.

    Raises:
        ValueError: no recipe of that name, or a task without one (the reason is in the message).
    """
    chosen = recipe(evaluator)
    say = reporter(progress)
    cached = bundle_path(chosen.name)
    if cached is not None:
        record = read_json(cached.parent / BUILT_NAME)
        origin = f"downloaded from {record['hub_repo']}" if record.get("hub_repo") else "built here"
        say(f"the {chosen.name!r} evaluator: from the cache ({origin}): {cached}")
        return cached
    downloaded = download(chosen, evaluator_dir(chosen.name), say, progress)
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
    check_evaluator_name(evaluator)  # a misspelt name: the nearest names, not a Hub look-up error
    if is_named(evaluator):
        evaluator = resolve(str(evaluator), data_dir, progress)
    return hub.load_bundle(evaluator, revision, device)
