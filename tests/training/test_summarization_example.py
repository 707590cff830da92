"""examples/summarization/run_summarization.py (our script in the shape of HF's seq2seq examples, with
IRMProbeTrainer), run in-process on a tiny local data set (documents × 3 environments with `environment` and
`group_id` columns) and the t5-tiny preset: train, evaluate and predict, with and without generation, with and
without a probe."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("rouge_score")  # the script's ROUGE (HF's evaluate module wraps the same package)

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "summarization" / "run_summarization.py"
PLACES = ["kitchen", "garden", "garage", "bathroom", "cellar"]
THINGS = ["spice", "rake", "bicycle", "towel", "wine"]


def rows(documents: range) -> list[dict]:
    """Each document under three environments: as written, its place masked, its place swapped for another."""
    out = []
    for doc in documents:
        place, thing = PLACES[doc % 5], THINGS[doc % 5]
        text = f"the {thing} number {doc} is kept in the {{}} ."
        variants = [place, "<mask>", PLACES[(doc + 1) % 5]]
        for environment, word in enumerate(variants):
            out.append({"document": text.format(word), "summary": f"the {thing} .", "environment": environment,
                        "group_id": doc, "masked_document": text.format("<mask>")})
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    from larev_hf.modeling import build_model, build_tokenizer

    root = tmp_path_factory.mktemp("summarization")
    splits = {"train": rows(range(20)), "validation": rows(range(20, 25)), "test": rows(range(25, 30))}
    for name, split in splits.items():
        (root / f"{name}.json").write_text("\n".join(json.dumps(row) for row in split) + "\n")
    tokenizer = build_tokenizer("t5-tiny", [r[k] for split in splits.values() for r in split
                                            for k in ("document", "summary", "masked_document")])
    for name, seed in (("model", 0), ("probe", 1)):
        model = build_model("t5-tiny", tokenizer, seed=seed)
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
    return root


def run_script(workspace: Path, output: Path, *extra: str, monkeypatch) -> dict:
    """main() of the example with these arguments; returns its all_results.json."""
    spec = importlib.util.spec_from_file_location("run_summarization", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    arguments = ["run_summarization.py", "--model_name_or_path", str(workspace / "model"),
                 "--train_file", str(workspace / "train.json"), "--validation_file", str(workspace / "validation.json"),
                 "--test_file", str(workspace / "test.json"), "--text_column", "document", "--summary_column",
                 "summary", "--output_dir", str(output), "--do_train", "--do_eval", "--do_predict",
                 "--per_device_train_batch_size", "2", "--per_device_eval_batch_size", "15", "--max_steps", "2",
                 "--learning_rate", "1e-3", "--lambda_irm", "1.0", "--penalty_warmup_ratio", "0",
                 "--logging_steps", "1", "--max_source_length", "64", "--max_target_length", "8",
                 "--save_strategy", "no", "--report_to", "none", "--disable_tqdm", "true", "--seed", "0", *extra]
    monkeypatch.setattr(sys, "argv", arguments)
    try:
        module.main()
    finally:
        import transformers

        transformers.utils.logging.set_verbosity_warning()
    return json.loads((output / "all_results.json").read_text())


def mean_token_nll(model_dir: Path, split: list[dict]) -> float:
    """Mean over rows of the summary's mean token NLL, from the saved model: what eval_erm/loss should be."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(model_dir), AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    values = []
    with torch.no_grad():
        for row in split:
            labels = tokenizer(text_target=[row["summary"]], max_length=8, truncation=True, return_tensors="pt")["input_ids"]
            inputs = tokenizer([row["document"]], max_length=64, truncation=True, return_tensors="pt")
            logits = model(**inputs, labels=labels).logits
            values.append(float(-torch.log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1)).mean()))
    return sum(values) / len(values)


@pytest.mark.parametrize("generate", [True, False], ids=["generate", "no-generate"])
@pytest.mark.parametrize("probe", [False, True], ids=["no-probe", "probe"])
def test_example_trains_evaluates_and_predicts(workspace, tmp_path, monkeypatch, generate, probe):
    extra = (["--predict_with_generate", "--generation_max_length", "8"] if generate else [])
    if probe:
        extra += ["--probe_model_name_or_path", str(workspace / "probe"), "--lambda_probe", "0.1",
                  "--probe_column", "masked_document"]
    output = tmp_path / "run"
    results = run_script(workspace, output, *extra, monkeypatch=monkeypatch)

    # evaluation and prediction report the training objective's parts, on the same scale as training
    for prefix in ("eval", "predict"):
        for key in ("loss", "erm/loss", "irm/penalty", "env/0/loss", "env/2/loss"):
            assert f"{prefix}_{key}" in results, (prefix, key)
        expected = (results[f"{prefix}_erm/loss"] + results[f"{prefix}_irm/penalty"]
                    - 0.1 * results.get(f"{prefix}_probe/loss", 0.0))  # λ_IRM = 1, λ_probe = 0.1, no warm-up
        assert results[f"{prefix}_loss"] == pytest.approx(expected, rel=1e-4)
        assert (f"{prefix}_rouge1" in results) is generate
        assert (f"{prefix}_probe/loss" in results) is probe
    validation = rows(range(20, 25))
    assert results["eval_erm/loss"] == pytest.approx(mean_token_nll(output, validation), rel=1e-4)
    history = json.loads((output / "trainer_state.json").read_text())["log_history"]
    steps = [entry for entry in history if "irm/penalty" in entry]
    assert len(steps) == 2 and all(("probe/loss" in entry) is probe for entry in steps)
    # per-token scale, as Seq2SeqTrainer's: a tiny random T5 starts near log(vocabulary size), not ×tokens
    assert steps[0]["erm/loss"] < 10
    if generate:
        assert len((output / "generated_predictions.txt").read_text().split("\n")) == 15
    card = (output / "README.md").read_text()
    assert "- larev\n" in card and "- irm\n" in card


def test_example_warns_when_max_train_samples_cuts_groups(workspace, tmp_path, monkeypatch):
    with pytest.warns(UserWarning, match=r"1 of 4 groups \('group_id'\) have fewer environments than the fullest "
                                         r"group's 3 \(1 have only one\)"):
        run_script(workspace, tmp_path / "cut", "--max_train_samples", "10", monkeypatch=monkeypatch)


def test_example_refuses_a_probe_weight_without_a_probe_model(workspace, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"lambda_probe=0.01 but no probe_model was given"):
        run_script(workspace, tmp_path / "no-probe", "--lambda_probe", "0.01", monkeypatch=monkeypatch)


def test_example_with_renamed_columns_trains_as_with_the_default_names(workspace, tmp_path, monkeypatch):
    """--environment_column domain --group_column doc with HF's DataCollatorForSeq2Seq: the same losses as the
    default names on the same rows."""
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    for split in ("train", "validation", "test"):
        rows = [json.loads(line) for line in (workspace / f"{split}.json").read_text().splitlines()]
        (renamed / f"{split}.json").write_text("\n".join(json.dumps(
            {("domain" if k == "environment" else "doc" if k == "group_id" else k): v for k, v in row.items()})
            for row in rows) + "\n")
    (renamed / "model").symlink_to(workspace / "model")

    def losses(root: Path, output: Path, *extra: str) -> list[tuple[float, float]]:
        run_script(root, output, *extra, monkeypatch=monkeypatch)
        history = json.loads((output / "trainer_state.json").read_text())["log_history"]
        return [(entry["loss"], entry["irm/penalty"]) for entry in history if "irm/penalty" in entry]

    expected = losses(workspace, tmp_path / "default")
    assert len(expected) == 2
    assert losses(renamed, tmp_path / "renamed-run", "--environment_column", "domain", "--group_column", "doc") == expected
