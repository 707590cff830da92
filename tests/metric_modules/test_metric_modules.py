"""The ``evaluate`` modules in ``metrics/`` over tiny bundles, and the docs' walk-through end to end (docs/hub.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import evaluate
import numpy as np
import pytest
import yaml

from larev_hf.cli import main
from larev_hf.evaluators import load
from larev_hf.hub import EvaluatorBundle
from larev_hf.io import DataError, read_json, read_jsonl

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("larev", "rev", "rora", "bundle")
OUTPUT_KEYS = {"scores", "mean_score", "log_p_rationale", "log_p_baseline", "baselines", "hashcode", "findings",
               "raw_score_informative"}


def load_module(method: str, evaluator, **kwargs) -> evaluate.EvaluationModule:
    return evaluate.load(str(ROOT / "metrics" / method), evaluator=evaluator if isinstance(evaluator, EvaluatorBundle)
                         else str(evaluator), keep_in_memory=True, **kwargs)


@pytest.fixture(scope="module")
def records(tiny_run) -> list[dict]:
    return [record for _, record in read_jsonl(tiny_run / "data" / "test.jsonl")]


def columns(records: list[dict]) -> dict:
    return {"rationales": [r["rationale"] for r in records], "labels": [r["label"] for r in records],
            "inputs": [{"id": r["id"], "question": r["question"], "choices": r["choices"]} for r in records]}


@pytest.mark.parametrize("method", ["larev", "rev"])
def test_module_returns_the_bundles_scores_mean_and_hash(method, tiny_run, tiny_bundles, records):
    results = load_module(method, tiny_bundles[method]).compute(**columns(records))
    assert set(results) - {"label_centred_scores"} == OUTPUT_KEYS  # label-centred: bundles with a fixed label set
    bundle = EvaluatorBundle.from_pretrained(tiny_bundles[method])
    expected = bundle.score(**columns(records))
    assert results["scores"] == expected.scores.tolist() and len(results["scores"]) == len(records)
    assert results["mean_score"] == pytest.approx(np.mean(results["scores"]), abs=1e-12)
    assert results["log_p_rationale"] == expected.log_p_rationale.tolist()
    assert results["hashcode"] == bundle.hashcode == f"larev-hf:{method}:{bundle.settings_hash}"
    run_scores = [row[f"{method}/gold"] for _, row in read_jsonl(tiny_run / "scores" / "test_scores.jsonl")]
    np.testing.assert_allclose(results["scores"], run_scores, rtol=0, atol=1e-6)


def test_no_baselines_equals_the_builders_baselines_given_explicitly(tiny_bundles, records):
    module = load_module("larev", tiny_bundles["larev"])
    default = module.compute(**columns(records))
    built = module.bundle.scoring.make_baselines(module.bundle.scoring.records(**columns(records)))
    assert default["baselines"] == built == [r["baseline"] for r in records]
    assert module.compute(**columns(records), baselines=built) == default


def test_the_bundle_is_loaded_once_per_process(tiny_bundles):
    first, second = load_module("rev", tiny_bundles["rev"]), load_module("rev", tiny_bundles["rev"])
    assert first.bundle is second.bundle is load(tiny_bundles["rev"])
    assert load(tiny_bundles["rev"], device="cpu") is not first.bundle  # another device, another entry


def test_add_batch_accumulates_and_positions_count_across_batches(tiny_bundles, records):
    module = load_module("larev", tiny_bundles["larev"])
    data = columns(records)
    for start in (0, 5):
        stop = 5 if start == 0 else None
        module.add_batch(**{key: values[start:stop] for key, values in data.items()})
    assert module.compute() == load_module("larev", tiny_bundles["larev"]).compute(**data)
    for record in records[:2]:
        one = columns([record])
        module.add(rationale=one["rationales"][0], label=one["labels"][0], input=one["inputs"][0])
    assert module.compute()["scores"] == load_module("larev", tiny_bundles["larev"]).compute(**columns(records[:2]))["scores"]
    module.add_batch(**{key: values[:3] for key, values in data.items()})
    bad = columns(records[:2])
    bad["inputs"][1] = {"choices": bad["inputs"][1]["choices"]}
    with pytest.raises(DataError, match=r"inputs\[4\]\['question'\]: missing; expected a non-empty string"):
        module.add_batch(**bad)


def test_each_example_is_validated_once_on_its_way_to_the_scorer(tiny_bundles, records, tmp_path, monkeypatch):
    """compute scores the records add_batch validated, as they are; `larev-hf evaluate` scores the records it
    validated from the file the same way: one validation per example on either path."""
    from larev_hf.hub import inputs

    checked, validate = [], inputs.validate_example
    monkeypatch.setattr(inputs, "validate_example", lambda record, **kwargs: (checked.append(record["id"]),
                                                                              validate(record, **kwargs))[1])
    ids = sorted(r["id"] for r in records)
    load_module("larev", tiny_bundles["larev"]).compute(**columns(records))
    assert sorted(checked) == ids
    checked.clear()
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({k: r[k] for k in ("id", "question", "choices", "label", "rationale")}) + "\n"
                            for r in records))
    assert main(["--quiet", "evaluate", "--evaluator", str(tiny_bundles["larev"]), "--data-file", str(path),
                 "--output-dir", str(tmp_path / "out"), "--force"]) == 0
    assert sorted(checked) == ids


def test_what_add_batch_cannot_see_is_checked_at_compute(tiny_bundles, records):
    """The id rule across batches, and compute's own ``baselines``, are checked once, over every row added."""
    module = load_module("larev", tiny_bundles["larev"])
    data = columns(records[:2])
    module.add_batch(**data)
    module.add_batch(**data)
    with pytest.raises(DataError, match=rf"inputs\[2\]: duplicate id '{records[0]['id']}' \(first at inputs\[0\]\)"):
        module.compute()
    with pytest.raises(DataError, match=r"baselines\[1\]: ''; expected a non-empty baseline string"):
        module.compute(**data, baselines=["The answer is kitchen.", ""])
    with pytest.raises(DataError, match="1 baselines, 2 inputs: expected one of each per example"):
        module.compute(**data, baselines=["The answer is kitchen."])


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("inputs"), "inputs: expected a list with one entry per example, got NoneType"),
    (lambda d: d["labels"].__setitem__(2, "attic"), r"labels\[2\]: 'attic' is not one of this example's choices"),
    (lambda d: d["inputs"][1].__setitem__("question", 7), r"inputs\[1\]\['question'\]: 7 \(int\); expected a non-empty string"),
    (lambda d: d["rationales"].pop(), "15 rationales, 16 labels, 16 inputs: expected one of each per example"),
])
def test_compute_errors_name_the_argument_position_and_field(tiny_bundles, records, change, message):
    data = columns(records)
    change(data)
    with pytest.raises(DataError, match=message):
        load_module("larev", tiny_bundles["larev"]).compute(**data)


def test_a_module_needs_a_bundle_of_its_own_method(tiny_bundles):
    with pytest.raises(ValueError, match=r"is a larev bundle, not a rev one; load it with evaluate.load\(\"larev\""):
        load_module("rev", tiny_bundles["larev"])
    with pytest.raises(ValueError, match="the LAREV metric needs an evaluator bundle"):
        evaluate.load(str(ROOT / "metrics" / "larev"))


def _rora_bundle(tiny_run) -> EvaluatorBundle:
    report = read_json(tiny_run / "report.json")
    return EvaluatorBundle.from_models(
        "rora", {"baseline": tiny_run / "models" / "phi_base", "rationale": tiny_run / "models" / "phi"},
        tiny_run / "tokenizer", task="qa", report={**report, "methods": {"rora": report["methods"]["rev"]}},
    )


def test_rora_module_scores_a_rora_bundle(tiny_run, records, tmp_path):
    pytest.importorskip("larev_hf.rora.evaluator")
    path = _rora_bundle(tiny_run).save_pretrained(tmp_path / "rora")
    results = load_module("rora", path).compute(**columns(records))
    assert results["baselines"] is None and results["hashcode"].startswith("larev-hf:rora:")
    assert results["scores"] == EvaluatorBundle.from_pretrained(path).score(**columns(records)).scores.tolist()


# --------------------------------------------------------------------------- module files and cards
CARD_SECTIONS = ("## Metric description", "## How to use", "### Inputs", "## Output values",
                 "### Values from popular papers", "## Examples", "## Limitations and bias", "## Citation")


def test_a_module_published_as_a_space_loads_from_what_was_uploaded(tiny_bundles, records, tmp_path):
    """push_metric_module creates a Gradio Space and uploads the module folder; what lands there loads in evaluate
    (offline here: the upload goes to a local directory) and scores like the shipped module."""
    import shutil

    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoUrl

    from larev_hf import metric_path
    from larev_hf.metric import push_metric_module

    class LocalSpaceApi(HfApi):
        calls: list = []

        def create_repo(self, repo_id, **kwargs):
            self.calls.append(("create_repo", repo_id, kwargs))
            return RepoUrl(f"https://huggingface.co/spaces/{repo_id}")

        def upload_folder(self, *, repo_id, folder_path, **kwargs):
            self.calls.append(("upload_folder", repo_id, kwargs))
            shutil.copytree(folder_path, tmp_path / repo_id, ignore=shutil.ignore_patterns("__pycache__"))
            return "local-commit"

    api = LocalSpaceApi(token=False)
    assert push_metric_module("larev", "someone/larev", private=True, api=api) == "local-commit"
    (_, _, create), (_, _, upload) = api.calls
    assert (create["repo_type"], create["space_sdk"], create["private"]) == ("space", "gradio", True)
    assert upload["repo_type"] == "space"
    space = tmp_path / "someone" / "larev"
    assert sorted(p.name for p in space.iterdir()) == sorted(p.name for p in Path(metric_path("larev")).iterdir()
                                                             if p.name != "__pycache__")
    online = evaluate.load(str(space), evaluator=str(tiny_bundles["larev"]), keep_in_memory=True)
    assert online.compute(**columns(records))["scores"] == load_module("larev", tiny_bundles["larev"]).compute(
        **columns(records))["scores"]


@pytest.mark.parametrize("method", MODULES)
def test_module_folder_has_the_evaluate_layout_and_card(method):
    folder = ROOT / "metrics" / method
    assert {p.name for p in folder.iterdir() if p.suffix in (".py", ".md", ".txt")} == {
        "README.md", "app.py", f"{method}.py", "requirements.txt"}
    text = (folder / "README.md").read_text()
    front = yaml.safe_load(re.match(r"---\n(.*?)\n---\n", text, re.DOTALL).group(1))
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py" and {"evaluate", "metric"} <= set(front["tags"])
    positions = [text.index(section) for section in CARD_SECTIONS]
    assert positions == sorted(positions)
    spec = importlib.util.spec_from_file_location(f"card_{method}", folder / f"{method}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for entry in re.findall(r"@\w+\{([\w-]+),", module._CITATION):
        assert entry in text  # the card cites what the module cites
    assert f'with_name("{method}.py")' in (folder / "app.py").read_text()
    assert "larev-hf" in (folder / "requirements.txt").read_text().split()


# --------------------------------------------------------------------------- the docs' walk-through
DOCS_STEP = re.compile(r"<!-- docs-flow: (\w+)(?: (\S+))? -->\n```\w+\n(.*?)\n```", re.DOTALL)


def docs_steps(esnli_dir: Path) -> dict[str, tuple[str | None, str]]:
    """The walk-through blocks of docs/hub.md (step → (argument, text)), with the repository's and the data's paths."""
    text = (ROOT / "docs" / "hub.md").read_text()
    steps = {}
    for name, argument, block in DOCS_STEP.findall(text):
        block = block.replace("../shared/data/esnli", str(esnli_dir))
        block = block.replace("examples/", f"{ROOT}/examples/").replace('"metrics/', f'"{ROOT}/metrics/')
        steps[name] = (argument, block)
    return steps


def command(block: str) -> list[str]:
    return shlex.split(block.replace("\\\n", " "))


def test_docs_walkthrough_trains_on_esnli_exports_and_scores_in_a_fresh_process(data_dir, tmp_path, monkeypatch):
    """docs/hub.md steps 1-5 as written: `larev-hf run` (e-SNLI), `larev-hf export`, a JSONL of rationales,
    the example script in a fresh Python process (evaluate.load inside), and the Python snippet."""
    steps = docs_steps(data_dir / "esnli")
    assert list(steps) == ["train", "export", "file", "score", "python"]
    monkeypatch.chdir(tmp_path)
    for name in ("train", "export"):
        argv = command(steps[name][1])
        assert argv[0] == "larev-hf"
        assert main(["--quiet", *argv[1:]]) == 0, name
    bundle_dir = tmp_path / "bundles" / "larev-esnli-small"
    config = read_json(bundle_dir / "config_larev.json")
    assert (config["method"], config["task"], config["label_set"]) == ("larev", "nli", ["entailment", "neutral", "contradiction"])

    filename, lines = steps["file"]
    (tmp_path / filename).write_text(lines + "\n")
    argv = command(steps["score"][1])
    assert argv[0] == "python"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    scores = [row for _, row in read_jsonl(tmp_path / "runs" / "llm-scores" / "scores.jsonl")]
    summary = read_json(tmp_path / "runs" / "llm-scores" / "summary.json")
    assert [row["id"] for row in scores] == ["q1", "q2", "q3", "q4"]
    assert summary["n_examples"] == 4 and summary["method"] == "larev"
    assert summary["mean_score"] == pytest.approx(np.mean([row["score"] for row in scores]), abs=1e-12)
    low, high = summary["mean_score_ci95"]
    assert low <= summary["mean_score"] <= high

    namespace: dict = {}
    exec(compile(steps["python"][1], "docs/hub.md", "exec"), namespace)  # noqa: S102 - the docs' own snippet
    results = namespace["results"]
    assert results["hashcode"] == summary["hashcode"] == EvaluatorBundle.from_pretrained(bundle_dir).hashcode
    np.testing.assert_allclose(results["scores"], [row["score"] for row in scores], rtol=0, atol=1e-5)
    assert results["baselines"] == [row["baseline"] for row in scores]
    assert "implies" in results["baselines"][0]  # REV's NLI verbalizer of "entailment", from the bundle's builder


def test_example_script_names_the_line_and_field_of_bad_input(tiny_bundles, tmp_path, records, capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location("score_llm_rationales", ROOT / "examples" / "score_llm_rationales.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)  # dataclasses look their module up there
    spec.loader.exec_module(script)
    good = {"id": "a", "question": records[0]["question"], "choices": records[0]["choices"], "label": records[0]["label"],
            "rationale": "r"}
    path = tmp_path / "rationales.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "label": "attic"}) + "\n")
    argv = ["--evaluator", str(tiny_bundles["larev"]), "--input", str(path), "--output_dir", str(tmp_path / "out")]
    assert script.main(argv) == 2
    assert f"{path}, line 3: field 'label': 'attic' is not one of this example's choices" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "baseline": "The thing is kept: garage."}) + "\n")
    assert script.main(argv) == 2
    assert "1 of 2 lines have a 'baseline'; give one on every line or on none" in capsys.readouterr().err
