"""``evaluate.load("larev")`` by name (``larev_hf.evaluate_names``): in a fresh process that imports only ``evaluate``,
from a directory outside the repository, offline, with an empty Hugging Face cache; a local ``./larev/larev.py``
still comes first; the start-up hook imports nothing; the cache is the one evaluate reads and its copy the one it picks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch

import larev_hf
from larev_hf import evaluate_names
from larev_hf.io import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
PTH_NAME = "larev_hf-evaluate-names.pth"


def offline_env(tmp_path: Path) -> dict[str, str]:
    """This environment with an empty Hugging Face home and module cache under ``tmp_path``, offline, and the
    parent's torch thread count (so that scores compare across the two processes)."""
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_MODULES_CACHE": str(tmp_path / "modules"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
           "OMP_NUM_THREADS": str(torch.get_num_threads())}
    env.pop(evaluate_names.DISABLE_ENV, None)
    return env


def outside(tmp_path: Path) -> Path:
    """A working directory outside the repository."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    assert ROOT not in cwd.resolve().parents
    return cwd


def test_the_environment_has_the_start_up_hook() -> None:
    """The install (a wheel or an editable one) put the .pth in site-packages: what makes the names work."""
    found = [Path(d) / PTH_NAME for d in [*site.getsitepackages(), site.getusersitepackages()]
             if (Path(d) / PTH_NAME).is_file()]
    assert found, f"no {PTH_NAME} in site-packages: reinstall the package (pip install -e .) to get the hook"
    assert found[0].read_text() == "import larev_hf.evaluate_names; larev_hf.evaluate_names.install()\n"


BY_NAME = """
import json, sys
import evaluate
columns = json.load(open(sys.argv[1]))
out = {}
for name, bundle in json.load(open(sys.argv[2])).items():
    metric = evaluate.load(name, evaluator=bundle)
    results = metric.compute(**columns)
    out[name] = {"module": type(metric).__module__, "scores": results["scores"], "hashcode": results["hashcode"]}
print(json.dumps(out))
"""


@pytest.mark.slow  # a subprocess that loads torch, evaluate and two bundles, beside the session's tiny run
def test_a_fresh_process_loads_the_modules_by_name_offline_from_anywhere(tiny_run, tiny_bundles, tmp_path) -> None:
    records = [record for _, record in read_jsonl(tiny_run / "data" / "test.jsonl")]
    columns = {"rationales": [r["rationale"] for r in records], "labels": [r["label"] for r in records],
               "inputs": [{"id": r["id"], "question": r["question"], "choices": r["choices"]} for r in records]}
    loads = {"larev": str(tiny_bundles["larev"]), "rev": str(tiny_bundles["rev"]), "bundle": str(tiny_bundles["larev"])}
    (tmp_path / "columns.json").write_text(json.dumps(columns))
    (tmp_path / "loads.json").write_text(json.dumps(loads))
    done = subprocess.run([sys.executable, "-c", BY_NAME, str(tmp_path / "columns.json"), str(tmp_path / "loads.json")],
                          cwd=outside(tmp_path), env=offline_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    by_name = json.loads(done.stdout.strip().splitlines()[-1])

    for name, bundle in loads.items():
        assert by_name[name]["module"].startswith(f"evaluate_modules.metrics.evaluate-metric--{name}.")
        reference = evaluate.load(larev_hf.metric_path(name), evaluator=bundle, keep_in_memory=True).compute(**columns)
        assert by_name[name]["hashcode"] == reference["hashcode"]
        np.testing.assert_allclose(by_name[name]["scores"], reference["scores"], rtol=0, atol=1e-6)
    for name, script in evaluate_names.shipped_modules().items():  # every shipped module, rora included
        (copy,) = (tmp_path / "modules" / "evaluate_modules" / "metrics" / f"evaluate-metric--{name}").glob(f"*/{name}.py")
        assert copy.read_bytes() == Path(script).read_bytes()
    assert set(evaluate_names.shipped_modules()) == {"larev", "rev", "rora", "bundle"}


LOCAL_LAREV = '''
import datasets
import evaluate


class Larev(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="a local module", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": datasets.Value("int32"),
                                                               "references": datasets.Value("int32")}))

    def _compute(self, predictions, references):
        return {"local": len(predictions)}
'''


def test_a_local_larev_module_in_the_working_directory_comes_first(tmp_path) -> None:
    cwd = outside(tmp_path)
    (cwd / "larev").mkdir()
    (cwd / "larev" / "larev.py").write_text(LOCAL_LAREV)
    script = ("import evaluate; m = evaluate.load('larev'); "
              "print(type(m).__module__, m.compute(predictions=[1, 2], references=[1, 2]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=offline_env(tmp_path), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    module, result = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert module.startswith("evaluate_modules.metrics.larev.") and result == "{'local': 2}"
    # the hook did seed the cache: the local folder won on evaluate's own precedence, not for want of a copy
    assert list((tmp_path / "modules" / "evaluate_modules" / "metrics" / "evaluate-metric--larev").glob("*/larev.py"))


def test_the_start_up_hook_imports_nothing_and_waits_for_evaluate(tmp_path) -> None:
    """What every interpreter of the environment runs at start-up: the package's __init__ (with its lazy table,
    ``larev_hf.lazy``) and the hook module only, no cache written until evaluate is imported."""
    script = ("import os, sys; before = set(sys.modules); import larev_hf.evaluate_names as h; h.install(); "
              "new = sorted(set(sys.modules) - before); armed = sys.meta_path[0] is h._SeedOnEvaluateImport; "
              "import json; print(json.dumps([new, armed]))")
    env = {**offline_env(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-S", "-c", script], cwd=outside(tmp_path), env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    imported, armed = json.loads(done.stdout)
    assert set(imported) <= {"__future__", "larev_hf", "larev_hf.lazy", "larev_hf.evaluate_names"} and armed
    assert not (tmp_path / "modules").exists()
    disabled = subprocess.run([sys.executable, "-S", "-c", script], cwd=tmp_path / "elsewhere",
                              env={**env, evaluate_names.DISABLE_ENV: "0"}, capture_output=True, text=True, timeout=60)
    assert json.loads(disabled.stdout)[1] is False


def _evaluate_config(monkeypatch, **env: str):
    """evaluate's config module executed afresh under ``env`` (it reads the environment once, at import)."""
    for key in ("HF_MODULES_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    spec = importlib.util.spec_from_file_location("evaluate._config_probe", evaluate.config.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("env", [{}, {"XDG_CACHE_HOME": "/x"}, {"HF_HOME": "~/hf"}, {"HF_HOME": "/h", "XDG_CACHE_HOME": "/x"},
                                 {"HF_MODULES_CACHE": "/m", "HF_HOME": "/h"}])
def test_the_cache_without_evaluate_imported_is_the_one_evaluate_reads(env, monkeypatch) -> None:
    config = _evaluate_config(monkeypatch, **env)
    assert evaluate_names.environment_modules_cache() == str(config.HF_MODULES_CACHE)
    assert evaluate_names.modules_cache() == str(evaluate.config.HF_MODULES_CACHE)  # evaluate loaded: its own value


def test_the_seeded_copy_is_the_one_evaluate_picks_even_beside_a_newer_one(tmp_path) -> None:
    from evaluate.loading import CachedEvaluationModuleFactory

    copies = evaluate_names.seed(tmp_path)
    other = tmp_path / "evaluate_modules" / "metrics" / "evaluate-metric--larev" / ("f" * 64)
    other.mkdir()
    (other / "larev.py").write_text("# another version's copy\n")
    later = Path(copies["larev"]).stat().st_mtime_ns + 10**10
    os.utime(other / "larev.py", ns=(later, later))
    assert evaluate_names.seed(tmp_path) == copies  # same copies, made the newest again
    module = CachedEvaluationModuleFactory("evaluate-metric--larev",
                                           dynamic_modules_path=str(tmp_path / "evaluate_modules")).get_module()
    assert module.hash == Path(copies["larev"]).parent.name != other.name
    assert module.module_path == f"evaluate_modules.metrics.evaluate-metric--larev.{module.hash}.larev"
    stamp = Path(copies["larev"]).stat().st_mtime_ns
    assert evaluate_names.seed(tmp_path) == copies and Path(copies["larev"]).stat().st_mtime_ns == stamp  # idempotent
