"""Evaluator bundles: export from a run, save/load round trip, model card, push path, errors, RoRA bundles."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from huggingface_hub import HfApi, ModelCard, RepoUrl

from larev_hf.cli import main
from larev_hf.data import (
    HFBaselineBuilder,
    TemplateBaselineBuilder,
    baseline_builder_from_config,
    make_baseline_builder,
)
from larev_hf.data.schema import NLI_LABELS
from larev_hf.hub import (
    CONFIG_NAME,
    EvaluatorBundle,
    build_records,
)
from larev_hf.io import DataError, read_json, read_jsonl
from larev_hf.report import SEPARATION_TITLES
from larev_hf.scores.stats import SEPARATIONS, VARIANTS


def run_records(run_dir: Path) -> list[dict]:
    """The run's test split in the schema, with the baselines the run built."""
    return [record for _, record in read_jsonl(run_dir / "data" / "test.jsonl")]


def score(bundle: EvaluatorBundle, records: list[dict], **kwargs) -> np.ndarray:
    return bundle.score([r["rationale"] for r in records], [r["label"] for r in records], records, **kwargs).scores


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- baseline builders
@pytest.mark.parametrize("builder", [TemplateBaselineBuilder(seed=3, variants=False),
                                     HFBaselineBuilder("some/paraphraser", mode="qa2d", seed=2, num_return_sequences=3)])
def test_baseline_builder_from_config_rebuilds_the_builder(builder):
    rebuilt = baseline_builder_from_config(builder.to_config())
    assert type(rebuilt) is type(builder) and rebuilt.to_config() == builder.to_config()
    assert rebuilt.to_config() == make_baseline_builder(**builder.to_config()).to_config()


@pytest.mark.parametrize(("config", "message"), [
    ({"seed": 0}, "with a 'name' key"),
    ({"name": "paraphrase"}, "unknown name 'paraphrase'"),
    ({"name": "template", "seed": 0, "beams": 5}, "unexpected keyword argument 'beams'"),
])
def test_baseline_builder_from_config_names_the_problem(config, message):
    with pytest.raises(ValueError, match=message):
        baseline_builder_from_config(config)


# --------------------------------------------------------------------------- export and round trip
def test_export_writes_the_documented_layout(tiny_run, tiny_bundles):
    path = tiny_bundles["larev"]
    assert {p.name for p in path.iterdir()} == {CONFIG_NAME, "README.md", "report.json", "phi_base", "phi_la", "tokenizer"}
    config = read_json(path / CONFIG_NAME)
    assert config["method"] == "larev" and config["task"] == "qa" and config["dataset"] == "synthetic"
    assert config["label_set"] is None  # synthetic QA: three of four places per example, an open label set
    assert config["models"] == {"baseline": "phi_base", "rationale": "phi_la"}
    assert config["baseline_builder"] == read_json(tiny_run / "data" / "baseline_builder.json")
    assert config["training"] == read_json(tiny_run / "run_config.json")
    assert config["input_format"] == "larev" and config["reduction"] == "sum"
    saved = {f"{d}/{name}": hashlib.sha256(content).hexdigest()
             for d in ("phi_base", "phi_la", "tokenizer") for name, content in tree(path / d).items()}
    assert config["files_sha256"] == saved and any(k.endswith("model.safetensors") for k in saved)
    assert tree(path / "phi_la") == tree(tiny_run / "models" / "phi_la")
    assert read_json(path / "report.json") == read_json(tiny_run / "report.json")
    assert not list(path.parent.glob(".*.tmp"))


def test_round_trip_gives_identical_scores_and_hash(tiny_run, tiny_bundles):
    records = run_records(tiny_run)
    run_scores = [row for _, row in read_jsonl(tiny_run / "scores" / "test_scores.jsonl")]
    for method in ("rev", "larev"):
        exported = EvaluatorBundle.from_run(tiny_run, method)
        loaded = EvaluatorBundle.from_pretrained(tiny_bundles[method])
        assert loaded.settings_hash == exported.settings_hash and loaded.hashcode == f"larev-hf:{method}:{loaded.settings_hash}"
        ours = score(loaded, records)
        np.testing.assert_array_equal(ours, score(exported, records))
        # the bundle reproduces the run's own gold scores: same models, same baselines (same builder, same ids)
        np.testing.assert_allclose(ours, [row[f"{method}/gold"] for row in run_scores], rtol=0, atol=1e-6)
    assert EvaluatorBundle.from_pretrained(tiny_bundles["rev"]).settings_hash != loaded.settings_hash


def test_resaving_a_loaded_bundle_keeps_it_byte_identical(tiny_bundles, tmp_path):
    loaded = EvaluatorBundle.from_pretrained(tiny_bundles["larev"])
    copy = loaded.save_pretrained(tmp_path / "copy")
    assert tree(copy) == tree(tiny_bundles["larev"])
    loaded.save_pretrained(copy)  # replacing an existing bundle
    assert tree(copy) == tree(tiny_bundles["larev"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]  # no temporary or old directory left behind


def test_save_refuses_to_overwrite_what_is_not_a_bundle(tiny_bundles, tmp_path):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    bundle = EvaluatorBundle.from_pretrained(tiny_bundles["rev"])
    with pytest.raises(FileExistsError, match="without config_larev.json; refusing to overwrite"):
        bundle.save_pretrained(other)
    assert (other / "keep.txt").read_text() == "mine"


def test_cli_export_and_an_offline_push_failure(tiny_run, tmp_path, capsys, monkeypatch):
    assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "rev", "--output-dir", str(tmp_path / "b"),
                 "--force"]) == 0
    assert f"(larev-hf:rev:{EvaluatorBundle.from_run(tiny_run, 'rev').settings_hash})" in capsys.readouterr().out
    assert read_json(tmp_path / "b" / CONFIG_NAME)["method"] == "rev"
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    code = main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "rev", "--output-dir", str(tmp_path / "c"),
                 "--push-to-hub", "someone/rev-tiny", "--force"])
    assert code == 1
    assert "pushing to someone/rev-tiny failed" in capsys.readouterr().err
    assert (tmp_path / "c" / CONFIG_NAME).is_file()
    assert "name: rev-tiny" in (tmp_path / "c" / "README.md").read_text()


def test_a_bundle_of_lora_adapters_travels_with_their_base(tiny_run, tmp_path):
    """An adapter directory (adapter + base_model/) is copied whole: the saved bundle scores without the run."""
    import torch

    from larev_hf.modeling import load_evaluator
    from larev_hf.modeling.lora import LoraSettings, apply_lora, save_adapter

    model, tokenizer = load_evaluator(tiny_run / "models" / "phi_la", device="cpu")
    adapted = apply_lora(model, LoraSettings(r=4, dropout=0.0))
    generator = torch.Generator().manual_seed(0)
    for name, parameter in adapted.named_parameters():
        if "lora_B" in name:  # LoRA starts as a no-op; give the adapter an effect
            parameter.data = torch.randn(parameter.shape, generator=generator) * 0.05
    adapter_dir = tmp_path / "elsewhere" / "phi_la"
    save_adapter(adapted, adapter_dir)
    tokenizer.save_pretrained(adapter_dir)
    bundle = EvaluatorBundle.from_models(
        "larev", {"baseline": tiny_run / "models" / "phi_base", "rationale": adapter_dir}, tiny_run / "tokenizer",
        task="qa", report=read_json(tiny_run / "report.json"),
        baseline_builder=read_json(tiny_run / "data" / "baseline_builder.json"),
    )
    records = run_records(tiny_run)
    expected = score(bundle, records)
    path = bundle.save_pretrained(tmp_path / "lora-bundle")
    shutil.rmtree(tmp_path / "elsewhere")
    assert (path / "phi_la" / "adapter_config.json").is_file() and (path / "phi_la" / "base_model").is_dir()
    np.testing.assert_array_equal(score(EvaluatorBundle.from_pretrained(path), records), expected)
    assert not np.allclose(expected, score(EvaluatorBundle.from_run(tiny_run, "larev"), records))


# --------------------------------------------------------------------------- model card
def test_model_card_metadata_holds_the_separation_table(tiny_run, tiny_bundles):
    card = ModelCard.load(tiny_bundles["larev"] / "README.md")
    data = card.data.to_dict()
    assert data["library_name"] == "larev-hf"
    assert {"larev-hf", "rationale-evaluation", "larev"} <= set(data["tags"])
    assert "base_model" not in data and "datasets" not in data  # an offline preset on generated data
    entry = read_json(tiny_run / "report.json")["methods"]["larev"]
    results = {r.metric_type: r for r in card.data.eval_results}
    assert list(results) == [*SEPARATIONS, *(f"score_{v}" for v in VARIANTS)]
    for key in SEPARATIONS:
        assert results[key].metric_value == entry["separations"][key]
        assert results[key].metric_args == {"ci95_low": entry["ci95"][key][0], "ci95_high": entry["ci95"][key][1]}
        assert results[key].metric_name == f"LAREV {SEPARATION_TITLES[key]}"
        assert f"| {SEPARATION_TITLES[key]} | {entry['separations'][key]:.4f} |" in card.text
    for variant in VARIANTS:
        assert results[f"score_{variant}"].metric_value == entry["absolute"][variant]
    assert {(r.task_type, r.dataset_name, r.dataset_split) for r in card.data.eval_results} == {
        ("rationale-evaluation", "synthetic", "test")}
    assert card.data.model_name == "larev-synthetic-t5-tiny"
    assert "@mastersthesis{li-2026-larev" in card.text and "@inproceedings{chen-etal-2023-rev" in card.text
    assert 'evaluate.load(larev_hf.metric_path("larev"), evaluator="path/to/bundle")' in card.text
    assert "LAREV(r) = log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b)" in card.text


# --------------------------------------------------------------------------- push to the Hub
class LocalTargetApi(HfApi):
    """An HfApi whose repo creation and upload land in a local directory: the push path up to the upload."""

    def __init__(self, target: Path) -> None:
        super().__init__(token=False)
        self.target = target
        self.calls: list[tuple[str, dict]] = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        return RepoUrl(f"https://huggingface.co/{repo_id}")

    def upload_folder(self, *, repo_id, folder_path, **kwargs):
        self.calls.append(("upload_folder", {"repo_id": repo_id, **kwargs}))
        shutil.copytree(folder_path, self.target / repo_id)
        return f"https://huggingface.co/{repo_id}/commit/local"


def test_push_to_hub_uploads_one_repo_with_its_card(tiny_run, tiny_bundles, tmp_path):
    api = LocalTargetApi(tmp_path / "hub")
    bundle = EvaluatorBundle.from_pretrained(tiny_bundles["larev"])
    assert bundle.push_to_hub("someone/larev-tiny", private=True, api=api) == "https://huggingface.co/someone/larev-tiny/commit/local"
    (create, create_args), (upload, upload_args) = api.calls
    assert (create, create_args["repo_id"], create_args["private"], create_args["exist_ok"]) == (
        "create_repo", "someone/larev-tiny", True, True)
    assert (upload, upload_args["repo_id"], upload_args["commit_message"]) == (
        "upload_folder", "someone/larev-tiny", "Upload evaluator bundle (larev-hf)")
    remote = tmp_path / "hub" / "someone" / "larev-tiny"
    uploaded, local = tree(remote), tree(tiny_bundles["larev"])
    assert {k: v for k, v in uploaded.items() if k != "README.md"} == {k: v for k, v in local.items() if k != "README.md"}
    card = ModelCard.load(remote / "README.md")
    assert card.data.model_name == "larev-tiny"
    assert 'EvaluatorBundle.from_pretrained("someone/larev-tiny")' in card.text
    records = run_records(tiny_run)
    np.testing.assert_array_equal(score(EvaluatorBundle.from_pretrained(remote), records), score(bundle, records))


# --------------------------------------------------------------------------- errors
def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(("break_it", "error", "message"), [
    (lambda b: shutil.rmtree(b / "phi_la"), FileNotFoundError, "no phi_la/ directory, which config_larev.json lists"),
    (lambda b: (b / "report.json").unlink(), FileNotFoundError, "no report.json; the bundle is incomplete"),
    (lambda b: (b / CONFIG_NAME).unlink(), FileNotFoundError, "no config_larev.json; expected an evaluator bundle"),
    (lambda b: _write(b / CONFIG_NAME, "{not json"), ValueError, "config_larev.json: malformed JSON"),
    (lambda b: _write(b / CONFIG_NAME, "{}"), ValueError, r"missing key\(s\) \['method', 'task'"),
    (lambda b: _write(b / CONFIG_NAME, json.dumps({**_config(b), "method": "las"})), ValueError, "'las' is not a bundle method"),
    (lambda b: _write(b / CONFIG_NAME, json.dumps({**_config(b), "task": "summarization"})), ValueError,
     r"task 'summarization': expected one of \('nli', 'qa', 'yesno'\)"),
    (lambda b: _write(b / CONFIG_NAME, json.dumps({**_config(b), "format_version": 99})), ValueError, "bundle format 99 is newer"),
])
def test_a_broken_bundle_fails_clearly(tiny_bundles, tmp_path, break_it, error, message):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_bundles["larev"], broken)
    break_it(broken)
    with pytest.raises(error, match=message):
        EvaluatorBundle.from_pretrained(broken)


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("break_it", "message"), [
    (lambda b: _flip_a_byte(next((b / "phi_la").glob("*.safetensors"))), r"phi_la/model\.safetensors has SHA-256"),
    (lambda b: next((b / "tokenizer").glob("*.json")).unlink(), r"tokenizer/\S+\.json is missing"),
    (lambda b: _write(b / "phi_base" / "extra.bin", "x"), r"phi_base/extra\.bin was added"),
])
def test_a_bundle_whose_files_changed_is_refused_unless_told(tiny_bundles, tmp_path, break_it, message):
    broken = tmp_path / "corrupted"
    shutil.copytree(tiny_bundles["larev"], broken)
    break_it(broken)
    with pytest.raises(ValueError, match=message):
        EvaluatorBundle.from_pretrained(broken)
    EvaluatorBundle.from_pretrained(broken, verify=False)  # the escape hatch loads it as it is


def _config(bundle_dir: Path) -> dict:
    return read_json(bundle_dir / CONFIG_NAME) if (bundle_dir / CONFIG_NAME).is_file() else {}


def test_a_missing_bundle_fails_clearly(tiny_run, tmp_path):
    with pytest.raises(FileNotFoundError, match="is a run directory: export it with `larev-hf export"):
        EvaluatorBundle.from_pretrained(tiny_run)
    with pytest.raises(FileNotFoundError, match="./nowhere/bundle: no such local directory"):
        EvaluatorBundle.from_pretrained("./nowhere/bundle")
    with pytest.raises(NotADirectoryError, match="is a file; expected an evaluator bundle directory"):
        EvaluatorBundle.from_pretrained(tiny_run / "report.json")
    with pytest.raises(FileNotFoundError, match="someone/no-such-bundle: no such local directory, and not a Hub repo the Hugging Face Hub could"):
        EvaluatorBundle.from_pretrained("someone/no-such-bundle", cache_dir=tmp_path / "hub-cache", local_files_only=True)


def test_from_run_says_what_is_missing(tiny_run, tmp_path):
    with pytest.raises(ValueError, match="unknown method 'las'"):
        EvaluatorBundle.from_run(tiny_run, "las")
    unfinished = tmp_path / "unfinished"
    shutil.copytree(tiny_run, unfinished)
    (unfinished / "stages" / "phi_la.done").unlink()  # as if killed while training Φ_LA
    with pytest.raises(FileNotFoundError, match="models/phi_la has not finished training"):
        EvaluatorBundle.from_run(unfinished, "larev")
    rev_only = tmp_path / "rev-only"
    shutil.copytree(tiny_run, rev_only)
    (rev_only / "run_config.json").write_text(json.dumps({**read_json(tiny_run / "run_config.json"), "method": "rev"}))
    with pytest.raises(ValueError, match="trained with --method rev, which has no LAREV evaluator"):
        EvaluatorBundle.from_run(rev_only, "larev")
    (rev_only / "report.json").unlink()
    with pytest.raises(FileNotFoundError, match="no report.json with REV results; the run has not finished"):
        EvaluatorBundle.from_run(rev_only, "rev")


# --------------------------------------------------------------------------- inputs and baselines
def test_no_baselines_means_the_bundles_builder(tiny_run, tiny_bundles):
    bundle = EvaluatorBundle.from_pretrained(tiny_bundles["larev"])
    records = run_records(tiny_run)
    built = bundle.scoring.make_baselines(records)
    assert built == [r["baseline"] for r in records]  # the run's builder, rebuilt from the bundle's settings
    rationales, labels = [r["rationale"] for r in records], [r["label"] for r in records]
    default = bundle.score(rationales, labels, records)
    assert default.baselines == built
    np.testing.assert_array_equal(default.scores, bundle.score(rationales, labels, records, baselines=built).scores)
    other = bundle.score(rationales, labels, records, baselines=[f"{b} Indeed." for b in built]).scores
    assert not np.array_equal(other, default.scores)


def test_without_ids_the_baseline_depends_only_on_the_input(tiny_bundles):
    bundle = EvaluatorBundle.from_pretrained(tiny_bundles["larev"])
    inputs = [{"question": f"Where is the {item} kept?", "choices": ["kitchen", "garage", "garden"]}
              for item in ("plonk", "zibber", "wub")]
    labels = ["kitchen", "garage", "garden"]
    forward = bundle.scoring.records([""] * 3, labels, inputs)
    backward = bundle.scoring.records([""] * 3, labels[::-1], inputs[::-1])
    renamed = bundle.scoring.records([""] * 3, labels, [{**x, "id": f"mine-{i}"} for i, x in enumerate(inputs)])
    assert len({r["id"] for r in forward}) == 3  # positional ids: unique, and they name rows, nothing else
    make = bundle.scoring.make_baselines
    assert make(forward) == make(backward)[::-1] == make(renamed)


NLI_INPUT = {"premise": "A man rides a bike.", "hypothesis": "A man is outside."}


@pytest.mark.parametrize(("rationales", "labels", "inputs", "message"), [
    (["r", "r"], ["entailment"], [NLI_INPUT, NLI_INPUT], r"2 rationales, 1 labels, 2 inputs: expected one of each per example"),
    (["r", "r"], ["entailment", "neutral"], [NLI_INPUT, {"premise": "A man rides."}],
     r"inputs\[1\]\['hypothesis'\]: missing; expected a non-empty string \(an NLI evaluator reads \{'premise': str, 'hypothesis': str\}\)"),
    (["r"], ["entailed"], [NLI_INPUT], r"labels\[0\]: 'entailed' is not in the evaluator's label set \['entailment', 'neutral', 'contradiction'\]"),
    (["r"], [0], [NLI_INPUT], r"labels\[0\]: 0 \(int\); expected a label string, one of"),
    ([None], ["neutral"], [NLI_INPUT], r"rationales\[0\]: None \(NoneType\); expected a string"),
    (["r"], ["neutral"], [("A man.", "A person.")], r"inputs\[0\]: expected a dict \{'premise': str, 'hypothesis': str\}"),
    (["r"], ["neutral"], [{**NLI_INPUT, "task": "qa"}], r"inputs\[0\]\['task'\]: 'qa', but this evaluator was trained on 'nli'"),
    ("r", ["neutral"], [NLI_INPUT], "rationales: expected a list with one entry per example, got str"),
])
def test_nli_inputs_are_validated_with_their_position_and_field(rationales, labels, inputs, message):
    with pytest.raises(DataError, match=message):
        build_records(rationales, labels, inputs, task="nli", label_set=list(NLI_LABELS))


def test_qa_inputs_are_validated_with_their_position_and_field(tiny_bundles):
    bundle = EvaluatorBundle.from_pretrained(tiny_bundles["rev"])
    good = {"question": "Where is the wub kept?", "choices": ["kitchen", "garage"]}
    with pytest.raises(DataError, match=r"labels\[1\]: 'garden' is not one of this example's choices \['kitchen', 'garage'\]"):
        bundle.score(["r", "r"], ["kitchen", "garden"], [good, good])
    with pytest.raises(DataError, match=r"inputs\[0\]\['choices'\]: 'kitchen'; expected a non-empty list"):
        bundle.score(["r"], ["kitchen"], [{**good, "choices": "kitchen"}])
    with pytest.raises(DataError, match=r"inputs\[0\]\['question'\]: ''"):
        bundle.score(["r"], ["kitchen"], [{**good, "question": ""}])
    with pytest.raises(DataError, match=r"baselines\[0\]: ''; expected a non-empty baseline string"):
        bundle.score(["r"], ["kitchen"], [good], baselines=[""])
    assert np.isfinite(bundle.score(["Spices are kept where food is cooked."], ["kitchen"], [good]).scores).all()


# --------------------------------------------------------------------------- RoRA
def test_rora_bundles_score_like_the_rora_scorer(tiny_run, tmp_path):
    evaluator = pytest.importorskip("larev_hf.rora.evaluator")
    report = read_json(tiny_run / "report.json")
    bundle = EvaluatorBundle.from_models(
        "rora", {"baseline": tiny_run / "models" / "phi_base", "rationale": tiny_run / "models" / "phi"},
        tiny_run / "tokenizer", task="qa", report={**report, "methods": {"rora": report["methods"]["rev"]}},
        dataset="synthetic",
    )
    assert bundle.config.baseline_builder is None and bundle.config.input_format == "rora"
    loaded = EvaluatorBundle.from_pretrained(bundle.save_pretrained(tmp_path / "rora"))
    assert "RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅)" in (tmp_path / "rora" / "README.md").read_text()
    records = run_records(tiny_run)
    scores = loaded.score([r["rationale"] for r in records], [r["label"] for r in records], records)
    assert scores.baselines is None
    models = loaded.models
    direct = evaluator.RoRAScorer(models.model("baseline"), models.model("rationale"), models.tokenizer).score_records(records)
    np.testing.assert_array_equal(scores.scores, direct.scores)
    with pytest.raises(ValueError, match="reads the input x, not vacuous baselines"):
        loaded.score(["r"], [records[0]["label"]], records[:1], baselines=["b"])
    with pytest.raises(DataError, match=r"inputs\[0\]\['choices'\]: missing; expected the answer options"):
        loaded.score(["r"], ["kitchen"], [{"question": "Where is the wub kept?"}])
    # a run with --method all trains RoRA's Θ and Φ: its bundle reproduces the run's own RoRA scores
    from_run = EvaluatorBundle.from_run(tiny_run, "rora")
    assert from_run.config.input_format == "rora" and from_run.config.models == {"baseline": "rora_theta",
                                                                                   "rationale": "rora_phi"}
    run_scores = [row for _, row in read_jsonl(tiny_run / "scores" / "test_scores.jsonl")]
    np.testing.assert_allclose(score(from_run, records), [row["rora/gold"] for row in run_scores], rtol=0, atol=1e-5)
