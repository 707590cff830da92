"""Published named evaluators: where ``evaluators.resolve`` finds one (the cache, the Hub through a local stand-in of its
API, skipping it offline without waiting, else a build), ``evaluators build NAME --push-to-hub`` up to the upload,
the bundle's size in ``evaluators list``, and the withdrawn ``commonsenseqa`` recipe."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
import time
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from huggingface_hub import ModelCard, constants

from larev_hf import evaluators, network
from larev_hf.cli import main
from larev_hf.evaluators import loading, published, recipes
from larev_hf.hub import CONFIG_NAME
from larev_hf.io import read_json, read_jsonl, write_json
from tests.hub.test_hub import LocalTargetApi, tree

TINY = recipes.EvaluatorRecipe(
    name="tiny-published", description="the synthetic task, 48 rows (a test recipe)", dataset="synthetic",
    data_subdir="synthetic", hub_dataset="synthetic",
    run={"method": "larev", "max_train_examples": 48, "max_eval_examples": 12, "num_train_epochs": 1, "n_boot": 50},
    force_export=True, minutes=0.5)
REPO = "someone/tiny-published"
#: The commit every repo of the local Hub is at.
COMMIT = hashlib.sha1(b"larev-hf local hub").hexdigest()


# --------------------------------------------------------------------------- a local stand-in of the Hub's API
class LocalHub(ThreadingHTTPServer):
    """The few Hub endpoints ``HfApi.model_info`` and ``snapshot_download`` read, serving local folders as model
    repos (``repos``: repo id → folder) and recording every request."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HubHandler)
        self.repos: dict[str, Path] = {}
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def files(self, repo: str) -> dict[str, Path]:
        root = self.repos[repo]
        return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


class _HubHandler(BaseHTTPRequestHandler):
    server: LocalHub

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _send(self, status: int, data: bytes, headers: dict[str, str], body: bool) -> None:
        self.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(data))}.items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _answer(self, body: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        self.server.requests.append(f"{self.command} {path}")
        repos = self.server.repos
        if (match := re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/[^/]+)?", path)) and match[1] in repos:
            files = self.server.files(match[1])
            info = {"id": match[1], "sha": COMMIT, "siblings": [{"rfilename": name} for name in files]}
            return self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)
        if (match := re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/[^/]+", path)) and match[1] in repos:
            entries = [{"type": "file", "path": name, "size": file.stat().st_size,
                        "oid": hashlib.sha1(file.read_bytes()).hexdigest()}
                       for name, file in self.server.files(match[1]).items()]
            return self._send(200, json.dumps(entries).encode(), {"Content-Type": "application/json"}, body)
        if (match := re.fullmatch(r"/([^/]+/[^/]+)/resolve/[^/]+/(.+)", path)) and match[1] in repos:
            file = self.server.files(match[1]).get(match[2])
            if file is not None:
                data = file.read_bytes()
                return self._send(200, data, {"X-Repo-Commit": COMMIT,
                                              "ETag": f'"{hashlib.sha1(data).hexdigest()}"'}, body)
        self._send(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound",
                                                                "Content-Type": "application/json"}, body)


@pytest.fixture
def local_hub(monkeypatch):
    """A running :class:`LocalHub`, with huggingface_hub online and pointed at it."""
    hub = LocalHub()
    thread = threading.Thread(target=hub.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    for name in network.PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield hub
    hub.shutdown()
    hub.server_close()


# --------------------------------------------------------------------------- a cache with a "built" evaluator
@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty evaluators cache with the test recipe registered."""
    monkeypatch.setenv(recipes.EVALUATORS_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(recipes.DATA_ENV, raising=False)
    monkeypatch.setitem(recipes.RECIPES, TINY.name, TINY)
    return tmp_path / "cache"


def fake_build(recipe: recipes.EvaluatorRecipe, bundle: Path, data_root: Path) -> Path:
    """What ``evaluators.build`` leaves, without training: the tiny bundle as the recipe's, and its ``recipe.json`` as
    ``build`` writes it (local data under ``data_root``)."""
    import shutil

    directory = loading.evaluator_dir(recipe.name)
    shutil.copytree(bundle, directory / "bundle")
    data_root.mkdir(parents=True, exist_ok=True)
    write_json(directory / recipes.BUILT_NAME, {
        "recipe": asdict(recipe), "fingerprint": recipe.fingerprint, "data": str(data_root), "calibrated": False,
        "build_minutes": 0.5, "steps": [a for _, a in recipe.commands(data_root, directory)]})
    return directory / "bundle"


def record_builds(monkeypatch) -> list[tuple]:
    """Replace ``evaluators.build`` by a recorder (no training): the calls, in order."""
    calls: list[tuple] = []

    def build(name, data_dir=None, progress=True):
        calls.append((name, data_dir, progress))
        return Path("built") / name

    monkeypatch.setattr(loading, "build", build)  # what resolve calls
    return calls


def publish_tiny(tiny_bundles, tmp_path: Path, recipe: recipes.EvaluatorRecipe = TINY) -> Path:
    """Build (fake) and publish the test recipe to a local folder; empties the cache again; the repo's folder."""
    import shutil

    path = fake_build(recipe, tiny_bundles["larev"], tmp_path / "data")
    published.publish(path, REPO, api=LocalTargetApi(tmp_path / "hub"))
    shutil.rmtree(path.parent)
    return tmp_path / "hub" / REPO


# --------------------------------------------------------------------------- the resolution order
def test_the_recipes_hub_repo_is_not_part_of_its_fingerprint() -> None:
    # publishing a recipe keeps the name of its cache directory
    assert dataclasses.replace(TINY, hub_repo=REPO).fingerprint == TINY.fingerprint
    assert all(recipe.hub_repo is None for recipe in recipes.RECIPES.values())  # none is published yet


def test_a_recipe_with_an_nli_judge_trains_it_before_the_export_that_bundles_it(tmp_path) -> None:
    chosen = recipes.RECIPES["esnli"]
    steps = chosen.commands(tmp_path, tmp_path / "build")
    titles = [title for title, _ in steps]
    judge, export = dict(steps)["training the NLI judge"], dict(steps)["checking trust and writing the bundle"]
    assert titles.index("training the NLI judge") < titles.index("checking trust and writing the bundle")
    assert judge[:3] == ["nli-train", "--data-dir", str(tmp_path / chosen.data_subdir)]
    assert "--read-explanations" in judge and judge[judge.index("--output-dir") + 1] == str(tmp_path / "build" /
                                                                                           "nli_judge")
    assert export[export.index("--nli-judge") + 1] == str(tmp_path / "build" / "nli_judge")
    without = dataclasses.replace(chosen, nli_judge=None)  # no judge: no step, no flag, and another fingerprint
    assert "training the NLI judge" not in dict(without.commands(tmp_path, tmp_path / "build"))
    assert "--nli-judge" not in dict(without.commands(tmp_path, tmp_path / "build"))[
        "checking trust and writing the bundle"] and without.fingerprint != chosen.fingerprint


def test_the_recipes_are_the_shipped_data_file_with_their_fingerprints(tmp_path) -> None:
    loaded, not_offered, aliases, timed_on = recipes.load_recipes(recipes.RECIPES_FILE)
    assert (loaded, not_offered, aliases) == (recipes.RECIPES, recipes.NOT_OFFERED, recipes.NOT_OFFERED_ALIASES)
    assert timed_on == recipes.TIMED_ON == "2 CPU cores"  # what a first use's estimate names
    # a recipe's settings as data keep the cache directories of the recipes they were written from
    assert {name: r.fingerprint for name, r in loaded.items()} == {"esnli": "d4d042bde638",
                                                                    "esnli-larev": "8f6712c449a0"}
    chosen = loaded["esnli"]
    assert chosen.calibrate[0] == chosen.method == "larev_ni" and chosen.docs == "docs/hub.md#the-recipes"
    retimed = dataclasses.replace(chosen, minutes=1.0, stage_seconds={}, docs="elsewhere", description="d")
    assert retimed.fingerprint == chosen.fingerprint  # a new estimate or doc is not a new recipe
    assert dataclasses.replace(chosen, run={**chosen.run, "seed": 1}).fingerprint != chosen.fingerprint
    assert aliases == {"cose": "commonsenseqa", "csqa": "commonsenseqa"} and "strategyqa" in not_offered
    values = read_json(recipes.RECIPES_FILE)
    values["recipes"][0]["minuets"] = 3
    write_json(tmp_path / "recipes.json", values)
    with pytest.raises(ValueError, match=r"recipe 'esnli': unknown keys \['minuets'\]"):
        recipes.load_recipes(tmp_path / "recipes.json")


def test_every_data_file_of_the_package_is_package_data() -> None:
    """``pip install .`` ships what setup.cfg's package_data names: the recipes file and every other file the package
    reads at run time must match one of its patterns."""
    import configparser
    from fnmatch import fnmatch

    root = Path(__file__).resolve().parents[2]
    parser = configparser.ConfigParser()
    parser.read(root / "setup.cfg")
    patterns = [p.strip() for p in parser["options.package_data"]["larev_hf"].split(",")]
    package = root / "larev_hf"
    data = [path.relative_to(package).as_posix() for path in package.rglob("*") if path.is_file()
            and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts]
    assert recipes.RECIPES_FILE.relative_to(package).as_posix() in data
    assert [path for path in data if not any(fnmatch(path, pattern) for pattern in patterns)] == []


def test_a_cached_evaluator_is_used_without_asking_the_hub(cache, tiny_bundles, tmp_path, local_hub, monkeypatch,
                                                           capsys) -> None:
    monkeypatch.setitem(recipes.RECIPES, TINY.name, dataclasses.replace(TINY, hub_repo=REPO))
    local_hub.repos[REPO] = tiny_bundles["larev"]
    builds = record_builds(monkeypatch)
    path = fake_build(TINY, tiny_bundles["larev"], tmp_path / "data")
    assert evaluators.resolve(TINY.name) == path
    assert local_hub.requests == [] and builds == []
    assert f"the {TINY.name!r} evaluator: from the cache (built here): {path}" in capsys.readouterr().err


def test_a_published_evaluator_is_downloaded_from_the_hub_then_cached(cache, tiny_bundles, tmp_path, local_hub,
                                                                      monkeypatch, capsys) -> None:
    remote = publish_tiny(tiny_bundles, tmp_path)
    local_hub.repos[REPO] = remote
    monkeypatch.setitem(recipes.RECIPES, TINY.name, dataclasses.replace(TINY, hub_repo=REPO))
    builds = record_builds(monkeypatch)
    path = evaluators.resolve(TINY.name)
    assert builds == [] and path == loading.evaluator_dir(TINY.name) / "bundle" == loading.bundle_path(TINY.name)
    assert f"GET /api/models/{REPO}" in local_hub.requests
    assert f"the {TINY.name!r} evaluator: downloaded from the Hub ({REPO}): {path}" in capsys.readouterr().err
    assert tree(path) == tree(remote)  # the repo as published: bundle, recipe and card, nothing of the download's
    record = read_json(path.parent / recipes.BUILT_NAME)
    assert (record["hub_repo"], record["revision"], record["fingerprint"]) == (REPO, COMMIT, TINY.fingerprint)
    # the next use is a cache hit: no request
    asked = len(local_hub.requests)
    assert evaluators.resolve(TINY.name) == path and len(local_hub.requests) == asked
    assert f"from the cache (downloaded from {REPO})" in capsys.readouterr().err
    row = next(r for r in loading.describe() if r["name"] == TINY.name)
    assert row["downloaded_from"] == REPO and row["size_mb"] > 0


def test_a_hub_repo_of_another_recipe_version_is_not_used(cache, tiny_bundles, tmp_path, local_hub, monkeypatch,
                                                          capsys) -> None:
    local_hub.repos[REPO] = publish_tiny(tiny_bundles, tmp_path)
    changed = dataclasses.replace(TINY, run={**TINY.run, "seed": 1}, hub_repo=REPO)
    monkeypatch.setitem(recipes.RECIPES, TINY.name, changed)
    builds = record_builds(monkeypatch)
    evaluators.resolve(TINY.name, progress=False)
    assert builds == [(TINY.name, None, False)] and loading.bundle_path(TINY.name) is None
    assert not any(path.name.startswith(".hub-") for path in loading.evaluator_dir(TINY.name).iterdir())


@pytest.mark.parametrize("how", ["HF_HUB_OFFLINE", "unreachable"])
def test_offline_the_hub_is_skipped_at_once_and_the_evaluator_built(cache, local_hub, monkeypatch, capsys,
                                                                     how) -> None:
    monkeypatch.setitem(recipes.RECIPES, TINY.name, dataclasses.replace(TINY, hub_repo=REPO))
    builds = record_builds(monkeypatch)
    if how == "HF_HUB_OFFLINE":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        message = f"offline (HF_HUB_OFFLINE): not asking the Hub for {REPO}"
    else:  # a host whose name resolution hangs: the probe gives up after PROBE_SECONDS, not the HTTP client's timeouts
        def hanging(*args, **kwargs):
            time.sleep(5)
            raise OSError("no answer")

        monkeypatch.setattr(published, "PROBE_SECONDS", 0.3)
        monkeypatch.setattr(network.socket, "create_connection", hanging)
        message = f"{local_hub.url} does not answer within 0.3 s: not downloading {REPO}"
    start = time.perf_counter()
    assert evaluators.resolve(TINY.name, "my-data", True) == Path("built") / TINY.name
    assert time.perf_counter() - start < 1.5
    assert builds == [(TINY.name, "my-data", True)] and local_hub.requests == []
    err = capsys.readouterr().err
    assert message in err and f"the {TINY.name!r} evaluator: not in the cache nor from the Hub: building it" in err


def test_an_unpublished_evaluator_is_built(cache, monkeypatch, capsys) -> None:
    builds = record_builds(monkeypatch)
    assert evaluators.resolve(TINY.name, "my-data", False) == Path("built") / TINY.name
    assert builds == [(TINY.name, "my-data", False)]


def test_evaluate_and_evaluate_load_share_one_loader_of_named_evaluators(cache, tiny_run, tiny_bundles, tmp_path,
                                                                         monkeypatch) -> None:
    """`larev-hf evaluate --evaluator NAME` and `evaluate.load(..., evaluator=NAME)` both resolve the name in
    evaluators.load and load its bundle once per process (larev_hf.hub.load_bundle)."""
    import evaluate

    from larev_hf import metric_path
    from larev_hf.hub import EvaluatorBundle

    path = fake_build(TINY, tiny_bundles["larev"], tmp_path / "data")
    resolved, loaded = [], []
    resolve, from_pretrained = evaluators.resolve, EvaluatorBundle.from_pretrained
    monkeypatch.setattr(loading, "resolve", lambda name, *args: (resolved.append(name), resolve(name, *args))[1])
    monkeypatch.setattr(EvaluatorBundle, "from_pretrained", classmethod(
        lambda cls, location, **kwargs: (loaded.append(location), from_pretrained(location, **kwargs))[1]))
    data = tmp_path / "mine.jsonl"
    data.write_text("".join(json.dumps({k: r[k] for k in ("question", "choices", "label", "rationale")}) + "\n"
                            for _, r in read_jsonl(tiny_run / "data" / "test.jsonl")))
    assert main(["--quiet", "evaluate", "--evaluator", TINY.name, "--data-file", str(data), "--output-dir",
                 str(tmp_path / "out"), "--force"]) == 0
    module = evaluate.load(metric_path("larev"), evaluator=TINY.name, keep_in_memory=True)
    assert resolved == [TINY.name, TINY.name] and loaded == [path]
    assert module.bundle is evaluators.load(TINY.name)


# --------------------------------------------------------------------------- publishing, up to the upload
def test_evaluators_build_push_to_hub_publishes_the_recipe_trust_and_figures(cache, tiny_bundles, tmp_path,
                                                                              monkeypatch, capsys) -> None:
    path = fake_build(TINY, tiny_bundles["larev"], tmp_path / "data")
    builds = record_builds(monkeypatch)
    api = LocalTargetApi(tmp_path / "hub")
    monkeypatch.setattr(published, "HfApi", lambda **kwargs: api)
    assert main(["--quiet", "evaluators", "build", TINY.name, "--push-to-hub", REPO, "--private"]) == 0
    out = capsys.readouterr().out
    assert builds == [] and out.splitlines() == [str(path), f"pushed: https://huggingface.co/{REPO}/commit/local"]
    (create, create_args), (upload, upload_args) = api.calls
    assert (create, create_args["repo_id"], create_args["private"]) == ("create_repo", REPO, True)
    assert upload_args["commit_message"] == f"Upload the {TINY.name!r} named evaluator (larev-hf, recipe {TINY.fingerprint})"
    remote = tmp_path / "hub" / REPO
    assert {k: v for k, v in tree(remote).items() if k not in ("README.md", "recipe.json")} == {
        k: v for k, v in tree(path).items() if k != "README.md"}
    # the recipe as published: no path of the build machine
    recipe = read_json(remote / "recipe.json")
    assert (recipe["name"], recipe["fingerprint"], recipe["data"]) == (TINY.name, TINY.fingerprint, "local")
    assert recipe["steps"][0][:5] == ["run", "--dataset", "synthetic", "--data-dir", "DATA/synthetic"]
    assert recipe["steps"][0][-2:] == ["--output-dir", "BUILD/run"]
    card = ModelCard.load(remote / "README.md")
    assert str(tmp_path) not in card.text and str(tmp_path) not in (remote / "recipe.json").read_text()
    # the card: the recipe's settings and commands, the trust check's outcome, the measured figures
    assert "## Recipe" in card.text and f"recipe fingerprint\n`{TINY.fingerprint}`" in card.text
    assert "the run: `method=larev, max_train_examples=48, max_eval_examples=12, num_train_epochs=1, n_boot=50`" \
        in card.text and "export despite the trust check: `True`" in card.text
    assert "larev-hf run --dataset synthetic --data-dir DATA/synthetic --method larev" in card.text
    config = read_json(path / CONFIG_NAME)
    from larev_hf.hub.trust import Trust

    assert f"**Trust check at export**: {Trust(**config['trust']).sentence()}" in card.text
    assert "| Gold − Vacuous |" in card.text and card.data.eval_results
    assert card.data.model_name == "tiny-published"


def test_push_to_hub_goes_with_build_and_a_failed_push_says_where_the_evaluator_is(cache, tiny_bundles, tmp_path,
                                                                                   monkeypatch, capsys) -> None:
    assert main(["--quiet", "evaluators", "path", TINY.name, "--push-to-hub", REPO]) == 2
    assert "--push-to-hub publishes a built evaluator" in capsys.readouterr().err
    path = fake_build(TINY, tiny_bundles["larev"], tmp_path / "data")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert main(["--quiet", "evaluators", "build", TINY.name, "--push-to-hub", REPO]) == 1
    assert f"pushing the {TINY.name!r} evaluator to {REPO} failed" in (err := capsys.readouterr().err)
    assert f"it is built in {path}" in err


def test_evaluators_list_says_each_built_bundles_size(cache, tiny_bundles, tmp_path, capsys) -> None:
    path = fake_build(TINY, tiny_bundles["larev"], tmp_path / "data")
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6
    assert main(["--quiet", "evaluators", "list"]) == 0
    listing = capsys.readouterr().out
    assert f"built (0.5 min), {size:.1f} MB: {path}" in listing
    assert f"not built (about {recipes.RECIPES['esnli'].minutes:.0f} min on first use): " in listing


# --------------------------------------------------------------------------- the withdrawn commonsenseqa recipe
@pytest.mark.parametrize("name", ["commonsenseqa", "csqa", "cose"])
def test_commonsenseqa_is_withdrawn_with_its_measured_reason(name, tmp_path, capsys) -> None:
    assert "commonsenseqa" not in recipes.RECIPES and "commonsenseqa" in recipes.NOT_OFFERED
    assert main(["--quiet", "evaluators", "path", name]) == 2
    error = capsys.readouterr().err
    assert f"no named evaluator {name!r}" in error and "59.6%" in error and "−0.661 nats" in error
    # evaluate and evaluate.load say so at once too, before any build or Hub look-up of the name
    assert main(["--quiet", "evaluate", "--evaluator", name, "--data-file", str(tmp_path / "none.jsonl"),
                 "--output-dir", str(tmp_path / "out")]) == 2
    assert "59.6%" in capsys.readouterr().err
    with pytest.raises(ValueError, match="Gold − Vacuous is −0.661 nats"):
        evaluators.load(name)
