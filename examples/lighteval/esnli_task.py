"""A lighteval custom task: e-SNLI, with the model's generated explanation scored by a larev-hf evaluator.

The model reads ``"explain nli premise: ... hypothesis: ..."`` and answers ``"<label> explanation: <why>"``, as a T5
fine-tuned on e-SNLI does. The metric ``explanation_score`` is the evaluator's score of each explanation for the label
the model gave (``larev_hf.explain.lighteval_metric``); the gold ``label`` and the inputs travel in ``doc.specific``, so
lighteval's details files can be scored again later without the model:
``larev_hf.explain.generated.score_saved_generations("details_..._.parquet", "esnli")``.

    pip install "larev-hf[lighteval]"
    lighteval accelerate "model_name=<your seq2seq or causal LM>" "esnli_explained|0" \
        --custom-tasks examples/lighteval/esnli_task.py --save-details --max-samples 200

Environment variables: ``LAREV_ESNLI`` (the data: a Hub id or a local directory with e-SNLI's jsonl files, default
``esnli``), ``LAREV_EVALUATOR`` (a named evaluator, a bundle directory or a Hub id; default ``esnli``).
"""

from __future__ import annotations

import os

from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

from larev_hf.explain.lighteval_metric import explanation_metric

#: e-SNLI's label ids, as on the Hub and in the shared data.
LABELS = ("entailment", "neutral", "contradiction")


def esnli_prompt(line: dict, task_name: str = "") -> Doc:
    """One e-SNLI pair as a generation request; the reference is its first gold explanation."""
    label = LABELS[line["label"]] if isinstance(line["label"], int) else line["label"]
    return Doc(
        task_name=task_name,
        query=f"explain nli premise: {line['premise']} hypothesis: {line['hypothesis']}",
        choices=[f"{label} explanation: {line['explanation_1']}"],
        gold_index=0,
        specific={"premise": line["premise"], "hypothesis": line["hypothesis"], "label": label},
    )


esnli_explained = LightevalTaskConfig(
    name="esnli_explained",
    prompt_function=esnli_prompt,
    hf_repo=os.environ.get("LAREV_ESNLI", "esnli"),
    hf_subset="default",
    hf_avail_splits=["train", "validation", "test"],
    evaluation_splits=["test"],
    metrics=[explanation_metric(os.environ.get("LAREV_EVALUATOR", "esnli"))],
    generation_size=64,
    stop_sequence=["\n"],
)

TASKS_TABLE = [esnli_explained]
