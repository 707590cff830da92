"""A model's generated explanations scored where it is trained and evaluated: ``compute_metrics`` in a Seq2SeqTrainer
run, lighteval's metric on a custom task, and saved generations scored again, each equal to ``larev-hf evaluate`` on
the same explanations (the tiny e-SNLI LAREV bundle of tests/conftest.py)."""

from __future__ import annotations

import copy
import importlib.util
import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import larev_hf
from larev_hf.cli.app import main
from larev_hf.explain.generated import (
    ExplanationMetrics,
    GenerationScorer,
    read_generations,
    score_saved_generations,
    summary,
    trainer_metrics,
)
from larev_hf.io import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
LABELS = ("entailment", "neutral", "contradiction")


@pytest.fixture(scope="module")
def esnli_rows(data_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (data_dir / "esnli" / "test.jsonl").read_text().splitlines()[:6]]


def generations_for(rows: list[dict]) -> list[str]:
    """What a self-rationalizer might write: the gold label and explanation, a wrong label, a label it misspells, and
    an answer without an explanation."""
    out = []
    for i, row in enumerate(rows):
        label = LABELS[row["label"]]
        if i % 4 == 1:
            label = LABELS[(row["label"] + 1) % 3]
        elif i % 4 == 2:
            label = label.upper()[:-1]  # "ENTAILMEN": repaired to the closest label
        out.append(label if i % 4 == 3 else f"{label} explanation: {row['explanation_1']}")
    return out


def evaluate_cli(bundle: Path, labels: list[str], rationales: list[str], rows: list[dict], tmp_path: Path) -> dict:
    """`larev-hf evaluate` on these explanations: per-row scores (file order) and the mean."""
    path = tmp_path / "explanations.jsonl"
    path.write_text("".join(json.dumps({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": label,
                                        "rationale": rationale}) + "\n"
                            for r, label, rationale in zip(rows, labels, rationales, strict=True)))
    out = tmp_path / "evaluated"
    assert main(["--quiet", "evaluate", "--evaluator", str(bundle), "--data-file", str(path), "--output-dir",
                 str(out), "--force", "--score-empty"]) == 0
    report = json.loads((out / "report.json").read_text())
    return {"scores": [r["score"] for _, r in read_jsonl(out / "scores.jsonl")], "mean": report["mean_score"]}


def test_generations_are_parsed_and_scored_as_larev_hf_evaluate_scores_them(nli_bundle, esnli_rows, tmp_path):
    generations = generations_for(esnli_rows)
    inputs = [{"premise": r["premise"], "hypothesis": r["hypothesis"], "label": LABELS[r["label"]]} for r in esnli_rows]
    result = GenerationScorer(str(nli_bundle)).score(generations, inputs)
    assert result["labels"][0] == LABELS[esnli_rows[0]["label"]]
    assert result["rationales"][0] == esnli_rows[0]["explanation_1"]
    assert result["labels"][2] == LABELS[esnli_rows[2]["label"]] and result["label_repaired"][2]
    assert result["rationales"][3] == ""
    assert result["label_correct"] == [True, False, True, True, True, False]
    expected = evaluate_cli(nli_bundle, result["labels"], result["rationales"], esnli_rows, tmp_path)
    assert result["scores"] == pytest.approx(expected["scores"], abs=1e-4)
    assert result["mean_score"] == pytest.approx(expected["mean"], abs=1e-4)
    metrics = summary(result)
    assert metrics["explanation/mean_score"] == pytest.approx(expected["mean"], abs=1e-4)
    assert metrics["explanation/label_accuracy"] == pytest.approx(4 / 6)
    assert metrics["explanation/label_repaired"] == pytest.approx(sum(result["label_repaired"]) / 6)


def test_compute_metrics_in_a_seq2seq_trainer_run(nli_bundle, esnli_rows, tmp_path):
    """A tiny T5 evaluated by Seq2SeqTrainer with predict_with_generate: the logged explanation scores are
    `larev-hf evaluate`'s on the explanations it generated (and the metric reads the texts it is given)."""
    import datasets
    from transformers import DataCollatorForSeq2Seq, EvalPrediction, Seq2SeqTrainer, Seq2SeqTrainingArguments

    from larev_hf.modeling import build_model, build_tokenizer

    targets = generations_for(esnli_rows)
    sources = [f"explain nli premise: {r['premise']} hypothesis: {r['hypothesis']}" for r in esnli_rows]
    tokenizer = build_tokenizer("t5-tiny", sources + targets + ["explanation :"])
    model = build_model("t5-tiny", tokenizer, seed=0)
    encoded = datasets.Dataset.from_dict({"input_ids": tokenizer(sources)["input_ids"],
                                          "labels": tokenizer(text_target=targets)["input_ids"]})
    raw = [{"premise": r["premise"], "hypothesis": r["hypothesis"], "label": LABELS[r["label"]]} for r in esnli_rows]
    metrics_fn = larev_hf.trainer_metrics(str(nli_bundle), inputs=raw, tokenizer=tokenizer)
    assert isinstance(metrics_fn, ExplanationMetrics) and isinstance(trainer_metrics(inputs=raw, tokenizer=tokenizer),
                                                                      ExplanationMetrics)
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path / "t5"), predict_with_generate=True,
                                    generation_max_length=24, per_device_eval_batch_size=4, report_to="none",
                                    disable_tqdm=True)
    trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=encoded, processing_class=tokenizer,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model), compute_metrics=metrics_fn)
    logged = trainer.evaluate()
    result = metrics_fn.last_result
    assert len(result["scores"]) == len(esnli_rows)
    expected = evaluate_cli(nli_bundle, result["labels"], result["rationales"], esnli_rows, tmp_path)
    assert result["scores"] == pytest.approx(expected["scores"], abs=1e-4)
    assert logged["eval_explanation/mean_score"] == pytest.approx(expected["mean"], abs=1e-4)

    # the same callable on known generated ids: parsed back into the labels and explanations written
    ids = tokenizer(text_target=targets, padding=True, return_tensors="np")["input_ids"]
    ids = np.where(ids == tokenizer.pad_token_id, -100, ids)
    known = ExplanationMetrics(str(nli_bundle), raw, tokenizer)(EvalPrediction(predictions=ids, label_ids=ids))
    direct = GenerationScorer(str(nli_bundle)).score(tokenizer.batch_decode(np.where(ids == -100, 0, ids),
                                                                            skip_special_tokens=True), raw)
    assert known["explanation/mean_score"] == pytest.approx(direct["mean_score"], abs=1e-6)
    with pytest.raises(ValueError, match="got 6 generations but was given 5 input rows"):
        ExplanationMetrics(str(nli_bundle), raw[:5], tokenizer)(EvalPrediction(predictions=ids, label_ids=ids))
    with pytest.raises(ValueError, match="set predict_with_generate=True"):
        metrics_fn(EvalPrediction(predictions=np.zeros((6, 3, 5)), label_ids=ids))


def test_saved_generations_are_scored_again_without_the_model(nli_bundle, esnli_rows, tmp_path):
    generations = generations_for(esnli_rows)
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join(json.dumps({"premise": r["premise"], "hypothesis": r["hypothesis"], "generation": g}) + "\n"
                            for r, g in zip(esnli_rows, generations, strict=True)))
    read, inputs = read_generations(path)
    assert read == generations and "generation" not in inputs[0]
    again = score_saved_generations(path, str(nli_bundle))
    direct = GenerationScorer(str(nli_bundle)).score(generations, inputs)
    assert again["scores"] == pytest.approx(direct["scores"], abs=1e-6)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"premise": "a", "hypothesis": "b", "answer": "x"}) + "\n")
    with pytest.raises(ValueError, match=r"broken.jsonl, line 1: no generated text; expected one of"):
        read_generations(broken)


# --------------------------------------------------------------------------- lighteval
def load_task_module():
    pytest.importorskip("lighteval")
    spec = importlib.util.spec_from_file_location("lighteval_esnli_task", ROOT / "examples" / "lighteval" / "esnli_task.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lighteval_metric_on_the_esnli_task_equals_larev_hf_evaluate(nli_bundle, esnli_rows, tmp_path):
    pytest.importorskip("lighteval")
    from lighteval.metrics import apply_metric
    from lighteval.models.model_output import ModelResponse

    from larev_hf.explain.lighteval_metric import explanation_metric, explanation_metrics

    task = load_task_module()
    docs = [task.esnli_prompt(row, "esnli_explained") for row in esnli_rows]
    assert docs[0].specific == {"premise": esnli_rows[0]["premise"], "hypothesis": esnli_rows[0]["hypothesis"],
                                "label": LABELS[esnli_rows[0]["label"]]}
    responses = [ModelResponse(text=[g]) for g in generations_for(esnli_rows)]
    metric = explanation_metric(str(nli_bundle))
    outputs = apply_metric(responses, docs, [metric])
    per_sample = [output["explanation_score"] for output in outputs]
    result = metric.sample_level_fn.last_result
    expected = evaluate_cli(nli_bundle, result["labels"], result["rationales"], esnli_rows, tmp_path)
    assert per_sample == pytest.approx(expected["scores"], abs=1e-4)
    assert metric.get_corpus_aggregations()["explanation_score"](per_sample) == pytest.approx(expected["mean"], abs=1e-4)
    both = explanation_metrics(str(nli_bundle), columns=("scores", "log_p_rationale"))
    outputs = apply_metric(responses, docs, both)
    assert [o["explanation_score"] for o in outputs] == pytest.approx(per_sample, abs=1e-6)
    assert [o["explanation_score:log_p_rationale"] for o in outputs] == pytest.approx(result["log_p_rationale"], abs=1e-6)
    with pytest.raises(ValueError, match=r"the evaluator returned no 'no_such_scores'; its per-sample columns are"):
        apply_metric(responses, docs, explanation_metrics(str(nli_bundle), columns=("scores", "no_such_scores")))
    bare = [copy.copy(doc) for doc in docs]
    for doc in bare:
        doc.specific = None
    with pytest.raises(ValueError, match="has no doc.specific"):
        apply_metric(responses, bare, [metric])


class StandInModel:
    """Built lazily (lighteval is optional): a lighteval model that answers each sample with a fixed generation."""

    @staticmethod
    def build(generations: list[str]):
        from lighteval.models.dummy.dummy_model import DummyModel, DummyModelConfig
        from lighteval.models.model_output import ModelResponse

        from larev_hf.modeling import build_tokenizer

        class Answers(DummyModel):
            @property
            def tokenizer(self):  # DummyModel's is gpt2's, a download
                return build_tokenizer("t5-tiny", ["explanation"] * 5)

            def greedy_until(self, docs):
                return [ModelResponse(text=[generations[int(doc.specific["row"])]]) for doc in docs]

        return Answers(DummyModelConfig(model_name="stand-in"))


def offline_lighteval_registry(monkeypatch) -> None:
    """lighteval's registry imports every built-in task module; three of them cannot be imported offline here
    (tiny_benchmarks downloads a pickle at import, mix_eval and mt_bench call a Hub API of another version). They are
    not the task under test: replace whichever fails to import by an empty task table."""
    import importlib
    import sys
    import types

    for name in ("tiny_benchmarks", "mix_eval.main", "mt_bench.main"):
        module = f"lighteval.tasks.tasks.{name}"
        try:
            importlib.import_module(module)
        except Exception:
            empty = types.ModuleType(module)
            empty.TASKS_TABLE = []
            monkeypatch.setitem(sys.modules, module, empty)


@pytest.mark.slow  # lighteval's registry imports every built-in task (about a minute)
def test_a_lighteval_run_on_the_custom_task_and_its_details_scored_again(nli_bundle, esnli_rows, tmp_path,
                                                                        monkeypatch, request):
    """lighteval's own Pipeline, offline, with a stand-in model on a tiny local copy of e-SNLI: the task's
    explanation_score is `larev-hf evaluate`'s per sample and on average, and the saved details score the same."""
    pytest.importorskip("lighteval")
    import torch
    import xxhash

    # lighteval's transformers model module turns autograd off for the whole process when imported: give it back, so
    # the tests after this one in the same worker can train
    request.addfinalizer(partial(torch.set_grad_enabled, torch.is_grad_enabled()))
    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters

    try:
        xxhash.xxh64("query")
    except TypeError:
        pytest.skip("lighteval 0.13's details logger hashes str, which xxhash >= 4 refuses: every lighteval run fails "
                    "here (the details format is tested below without a run)")

    offline_lighteval_registry(monkeypatch)
    data = tmp_path / "esnli"
    data.mkdir()
    (data / "test.jsonl").write_text("".join(json.dumps({**row, "row": i}) + "\n" for i, row in enumerate(esnli_rows)))
    task_file = tmp_path / "esnli_task.py"  # the example, keeping each row's position for the stand-in model
    task_file.write_text((ROOT / "examples" / "lighteval" / "esnli_task.py").read_text().replace(
        '"label": label},', '"label": label, "row": line["row"]},'))
    monkeypatch.setenv("LAREV_ESNLI", str(data))
    monkeypatch.setenv("LAREV_EVALUATOR", str(nli_bundle))
    generations = generations_for(esnli_rows)
    tracker = EvaluationTracker(output_dir=str(tmp_path / "lighteval"), save_details=True)
    parameters = PipelineParameters(launcher_type=ParallelismManager.NONE, custom_tasks_directory=str(task_file))
    pipeline = Pipeline(tasks="esnli_explained|0", pipeline_parameters=parameters, evaluation_tracker=tracker,
                        model=StandInModel.build(generations))
    pipeline.evaluate()
    pipeline.save_and_push_results()
    results = pipeline.get_results()["results"]
    mean = next(value for key, value in results.items() if "esnli_explained" in key)["explanation_score"]

    (details,) = (tmp_path / "lighteval").rglob("details_*.parquet")
    read, inputs = read_generations(details)
    order = [int(row["row"]) for row in inputs]
    assert sorted(order) == list(range(len(esnli_rows))) and [read[i] for i in range(len(read))] == \
        [generations[j] for j in order]
    again = score_saved_generations(details, str(nli_bundle))
    ordered = [esnli_rows[j] for j in order]
    expected = evaluate_cli(nli_bundle, again["labels"], again["rationales"], ordered, tmp_path)
    assert again["scores"] == pytest.approx(expected["scores"], abs=1e-4)
    assert mean == pytest.approx(expected["mean"], abs=1e-4)


def test_lighteval_details_files_are_scored_again_without_the_model(nli_bundle, esnli_rows, tmp_path):
    """A details file as lighteval writes it (its Detail records, asdict, a parquet per task) scores as
    `larev-hf evaluate` scores the same explanations."""
    pytest.importorskip("lighteval")
    from dataclasses import asdict

    import datasets
    from lighteval.logging.info_loggers import DetailsLogger
    from lighteval.models.model_output import ModelResponse

    task = load_task_module()
    generations = generations_for(esnli_rows)
    details = [DetailsLogger.Detail(task.esnli_prompt(row, "esnli_explained"), ModelResponse(text=[g]), {"explanation_score": 0.0})
               for row, g in zip(esnli_rows, generations, strict=True)]
    path = tmp_path / "details_esnli_explained|0_2026-11-29T00-00-00.parquet"
    datasets.Dataset.from_list([asdict(detail) for detail in details]).to_parquet(str(path))
    read, inputs = read_generations(path)
    assert read == generations and inputs[0]["premise"] == esnli_rows[0]["premise"]
    again = score_saved_generations(path, str(nli_bundle))
    expected = evaluate_cli(nli_bundle, again["labels"], again["rationales"], esnli_rows, tmp_path)
    assert again["scores"] == pytest.approx(expected["scores"], abs=1e-4)
    assert again["mean_score"] == pytest.approx(expected["mean"], abs=1e-4)
