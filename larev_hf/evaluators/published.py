"""Published named evaluators: a built named evaluator pushed to a Hub model repo, and downloaded from it.

A published repo is the bundle (``larev-hf export``'s files) plus ``recipe.json``: the recipe it was built from, its
fingerprint, where its data came from, whether it is calibrated, how long the build took and the commands it ran (the
build machine's paths replaced by ``DATA`` and ``BUILD``). The model card renders that recipe beside the trust check
and the measured figures the bundle carries.

:func:`download` is the Hub step of :func:`larev_hf.evaluators.resolve`, between the cache and a build: it never waits
on the network offline (``HF_HUB_OFFLINE``, or the endpoint does not accept a connection within
:data:`PROBE_SECONDS`), and it uses a repo only while its ``recipe.json`` carries the current recipe's fingerprint.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from huggingface_hub import HfApi

from larev_hf import __version__
from larev_hf.evaluators.recipes import BUILT_NAME, EvaluatorRecipe
from larev_hf.hub.config import RECIPE_NAME
from larev_hf.hub.files import replace_directory
from larev_hf.io import read_json, shareable, write_json
from larev_hf.network import accepts_connection, behind_proxy, switched_on

#: How long the Hub's host may take to accept a connection before a named evaluator is built instead.
PROBE_SECONDS = 2.0
#: Stand-ins for the build machine's paths in a published recipe's commands.
DATA_PLACEHOLDER = "DATA"
BUILD_PLACEHOLDER = "BUILD"


def hub_offline() -> bool:
    """Whether the Hub is switched off: ``huggingface_hub``'s offline mode, or ``HF_HUB_OFFLINE`` set since it was
    imported (``larev-hf`` sets it when huggingface.co does not answer)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or switched_on("HF_HUB_OFFLINE")


def hub_endpoint() -> str:
    """The Hub endpoint now: ``HF_ENDPOINT`` (read at each call, so a mirror set after import counts), else the
    library's."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def reachable(endpoint: str, timeout: float | None = None) -> bool:
    """Whether ``endpoint``'s host accepts a TCP connection within ``timeout`` seconds (default
    :data:`PROBE_SECONDS`); behind a proxy, assumed."""
    timeout = PROBE_SECONDS if timeout is None else timeout
    if behind_proxy():  # the download's own timeouts apply
        return True
    parts = urlsplit(endpoint)
    if not parts.hostname:
        return False
    return accepts_connection(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), timeout)


def _reason(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]


def download(chosen: EvaluatorRecipe, directory: Path, say: Callable[[str], None],
             progress: bool = True) -> Path | None:
    """Download ``chosen``'s published bundle into ``directory`` (the recipe's cache directory,
    :func:`~larev_hf.evaluators.loading.evaluator_dir`) and return it; ``None`` (saying why, unless it is not
    published) when the recipe names no repo, the Hub is offline or unreachable, the repo holds another version of the
    recipe, or the download fails — the caller then builds it. ``progress``: the download's bars."""
    repo = chosen.hub_repo
    if repo is None:
        return None
    if hub_offline():
        say(f"  offline (HF_HUB_OFFLINE): not asking the Hub for {repo}")
        return None
    endpoint = hub_endpoint()
    if not reachable(endpoint):
        say(f"  {endpoint} does not answer within {PROBE_SECONDS:g} s: not downloading {repo}")
        return None
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".hub-", dir=directory))
    shareable(staging, directory=True)  # the bundle it becomes: the umask's mode, not mkdtemp's 0700
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    hide_bars = not progress and not are_progress_bars_disabled()
    if hide_bars:
        disable_progress_bars()
    try:
        from huggingface_hub import snapshot_download

        from larev_hf.hub.bundle import EvaluatorBundle

        say(f"  downloading the {chosen.name!r} evaluator from {repo} ({endpoint})")
        client = {"endpoint": endpoint, "library_name": "larev-hf", "library_version": __version__}
        commit = HfApi(**client).model_info(repo).sha  # one revision for both downloads below
        options = {"revision": commit, "local_dir": staging, **client}
        snapshot_download(repo, allow_patterns=[RECIPE_NAME], **options)
        if not (staging / RECIPE_NAME).is_file():
            say(f"  {repo} has no {RECIPE_NAME}, so it is no published named evaluator: not used")
            return None
        record = read_json(staging / RECIPE_NAME)
        if record.get("fingerprint") != chosen.fingerprint:
            say(f"  {repo} holds another version of the {chosen.name!r} recipe (fingerprint "
                f"{record.get('fingerprint')}; this version's is {chosen.fingerprint}): not used")
            return None
        snapshot_download(repo, **options)
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's download metadata
        EvaluatorBundle.from_pretrained(staging)  # every file against the checksums recorded at export
        replace_directory(staging, directory / "bundle")
    except Exception as error:  # noqa: BLE001 - network, permissions, a broken repo: all mean "build it instead"
        say(f"  downloading {repo} failed ({type(error).__name__}: {_reason(error)})")
        return None
    finally:
        if hide_bars:
            enable_progress_bars()
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    write_json(directory / BUILT_NAME, {**record, "hub_repo": repo, "revision": commit})
    return directory / "bundle"


def _placeholders(argument: str, paths: dict[str, str]) -> str:
    """``argument`` with a leading build-machine path replaced by its placeholder."""
    for path, placeholder in paths.items():
        if argument == path or argument.startswith(path + os.sep):
            return placeholder + argument[len(path):]
    return argument


def published_record(directory: Path) -> dict[str, Any]:
    """What a published repo's ``recipe.json`` holds, from a named evaluator's directory: its ``recipe.json``
    without the build machine's paths (a downloaded evaluator's record is kept as it was published)."""
    built = read_json(directory / BUILT_NAME)
    if "hub_repo" in built:
        return {key: value for key, value in built.items() if key not in ("hub_repo", "revision")}
    data = built.get("data")
    local = isinstance(data, str) and os.path.isabs(data)
    paths = {str(directory): BUILD_PLACEHOLDER, **({data: DATA_PLACEHOLDER} if local else {})}
    return {"name": built["recipe"]["name"], "fingerprint": built["fingerprint"], "recipe": built["recipe"],
            "data": "local" if local else data, "calibrated": built.get("calibrated"),
            "build_minutes": built.get("build_minutes"),
            "steps": [[_placeholders(argument, paths) for argument in step] for step in built.get("steps", [])]}


def publish(path: Path, repo_id: str, *, private: bool = False, api: HfApi | None = None) -> Any:
    """Upload the named evaluator built at ``path`` (its bundle directory) to the Hub model repo ``repo_id`` with
    its recipe and a card that states it; returns the upload's ``CommitInfo``.

    Args:
        path (`Path`): the bundle directory of a built (or downloaded) named evaluator (:func:`~larev_hf.evaluators.loading.bundle_path`).
        repo_id (`str`): the Hub model repo, created if needed.
        private (`bool`, *optional*, defaults to `False`): create the repo as private.
        api (`HfApi`, *optional*): the client (another endpoint, a token); defaults to the logged-in one.
    """
    from larev_hf.hub.bundle import EvaluatorBundle

    bundle = EvaluatorBundle.from_pretrained(path)
    bundle.recipe = published_record(Path(path).parent)
    if api is None:
        api = HfApi(library_name="larev-hf", library_version=__version__)
    return bundle.push_to_hub(repo_id, private=private or None, api=api,
                              commit_message=f"Upload the {bundle.recipe['name']!r} named evaluator (larev-hf, recipe "
                                             f"{bundle.recipe['fingerprint']})")
