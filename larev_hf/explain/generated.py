"""Scoring the explanations a self-rationalizing model generates, where it is trained and evaluated.

A self-rationalizing model writes ``"ŷ explanation: r̂"`` (:mod:`larev_hf.explain.task_model`). These helpers parse
such texts, pair each with its input, and score ``r̂`` for ``ŷ`` through the evaluator's public scoring path, the one
``larev-hf evaluate`` takes (:func:`larev_hf.evaluators.load`, then the bundle's ``scoring.records`` and
``scoring.score``). They compute no score themselves: whatever the bundle returns (``scores`` and any further columns)
is passed on.

- :class:`GenerationScorer`: texts + inputs → the bundle's result, plus the parsed labels and rationales;
- :class:`ExplanationMetrics` (:func:`trainer_metrics`): a ``compute_metrics`` for ``Seq2SeqTrainer`` with
  ``predict_with_generate``;
- :func:`score_saved_generations`: a JSONL of outputs, or lighteval's details files, scored again without the model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf import evaluators
from larev_hf.explain.task_model import parse_self_rationalization

#: Prefix of the metric keys :class:`ExplanationMetrics` returns (the Trainer adds ``eval_``).
METRIC_PREFIX = "explanation/"
#: What a saved generation may be called in a JSONL line (the first present is used).
GENERATION_FIELDS = ("generation", "prediction", "output", "text")


class GenerationScorer:
    """Score generated ``"label explanation: rationale"`` texts with an evaluator (a named one such as ``"esnli"``, a
    bundle directory, a Hub id or an :class:`~larev_hf.hub.EvaluatorBundle`), loaded on first use.

    Args:
        evaluator: what :func:`larev_hf.evaluators.load` takes.
        revision (`str`, *optional*): Hub revision of a bundle repo.
        device (`str`, *optional*): where the evaluators run.
        batch_size (`int`, *optional*, defaults to 64): scoring batch size.
    """

    def __init__(self, evaluator: Any = "esnli", *, revision: str | None = None, device: str | None = None,
                 batch_size: int = 64) -> None:
        self.evaluator, self.revision, self.device, self.batch_size = evaluator, revision, device, batch_size
        self._bundle = None

    @property
    def bundle(self) -> Any:
        if self._bundle is None:
            # a named evaluator says on stderr where it came from (the cache, the Hub, or a build of minutes)
            self._bundle = evaluators.load(self.evaluator, self.revision, self.device)
        return self._bundle

    def choices(self, row: Mapping[str, Any], index: int) -> list[str]:
        """The labels a generated label may be: the bundle's label set, else the row's ``choices``."""
        label_set = self.bundle.config.label_set
        if label_set:
            return list(label_set)
        if not row.get("choices"):
            raise ValueError(f"inputs[{index}] has no 'choices' and the evaluator has no fixed label set: give each "
                             "input its answer choices, so a generated label can be read")
        return list(row["choices"])

    def score(self, generations: Sequence[str], inputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Parse each generation into (label, rationale) and score the rationale for that label with its input.

        Returns the bundle's result as ``scoring.score(...).to_dict()`` gives it (``scores``, ``mean_score``, ...), plus
        ``labels`` and ``rationales`` (parsed), ``label_repaired`` (the generated label was none of the choices and was
        mapped to the closest) and, where the inputs carry a gold ``label``, ``label_correct``.
        """
        if len(generations) != len(inputs):
            raise ValueError(f"got {len(generations)} generations for {len(inputs)} inputs; expected one input per "
                             "generation, in the same order")
        parsed = [parse_self_rationalization(str(text), self.choices(row, i))
                  for i, (text, row) in enumerate(zip(generations, inputs, strict=True))]
        labels = [label for label, _, _ in parsed]
        rationales = [rationale for _, rationale, _ in parsed]
        rows = [{k: v for k, v in row.items() if k not in ("label", "rationale")} for row in inputs]
        bundle = self.bundle
        records = bundle.scoring.records(rationales, labels, rows)
        result = bundle.scoring.score(records, batch_size=self.batch_size).to_dict()
        result.update(labels=labels, rationales=rationales, label_repaired=[bool(r) for _, _, r in parsed])
        if all(isinstance(row.get("label"), str) for row in inputs):  # a gold label string: was ŷ right?
            result["label_correct"] = [label == str(row["label"]) for label, row in zip(labels, inputs, strict=True)]
        return result


def summary(result: Mapping[str, Any], prefix: str = METRIC_PREFIX) -> dict[str, float]:
    """The scalar metrics of a :meth:`GenerationScorer.score` result: ``mean_score``, the mean of every further
    per-example score column the bundle returned (``calibrated_scores``, ``label_centred_scores``, ...), and the shares
    of repaired and correct labels."""
    metrics = {f"{prefix}mean_score": float(result["mean_score"])}
    for key, value in result.items():
        if key != "scores" and key.endswith("scores") and isinstance(value, list) and value \
                and all(isinstance(v, (int, float)) for v in value):
            metrics[f"{prefix}{key}"] = float(np.mean(value))
    metrics[f"{prefix}label_repaired"] = float(np.mean(result["label_repaired"])) if result["label_repaired"] else 0.0
    if "label_correct" in result:
        metrics[f"{prefix}label_accuracy"] = float(np.mean(result["label_correct"]))
    return metrics


class ExplanationMetrics:
    """A ``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)``: decodes the generated token ids,
    scores each ``"label explanation: rationale"`` with its input (the eval set's rows, in order) and returns
    :func:`summary`'s numbers, which the Trainer logs as ``eval_explanation/mean_score``, ... The full result of the
    last call (per-example ``scores`` and the parsed texts) is kept in :attr:`last_result`.

    Args:
        evaluator: what :func:`larev_hf.evaluators.load` takes (``"esnli"``, a bundle directory, ...).
        inputs: the raw rows of the evaluation set (a ``datasets.Dataset`` or a list of dicts: ``premise`` and
            ``hypothesis`` for NLI, ``question`` and ``choices`` for QA; an optional gold ``label``), in the order the
            Trainer evaluates them.
        tokenizer: decodes the generated ids.
        scorer_options: :class:`GenerationScorer`'s ``revision``, ``device``, ``batch_size``.
    """

    def __init__(self, evaluator: Any, inputs: Any, tokenizer: Any, **scorer_options: Any) -> None:
        self.scorer = GenerationScorer(evaluator, **scorer_options)
        self.inputs = [dict(row) for row in inputs]
        self.tokenizer = tokenizer
        self.last_result: dict[str, Any] | None = None

    def __call__(self, eval_prediction: Any) -> dict[str, float]:
        predictions = eval_prediction.predictions
        if isinstance(predictions, tuple):
            predictions = predictions[0]
        predictions = np.asarray(predictions)
        if predictions.ndim != 2 or not np.issubdtype(predictions.dtype, np.integer):
            raise ValueError(f"compute_metrics got predictions of shape {predictions.shape} ({predictions.dtype}); "
                             "expected generated token ids: set predict_with_generate=True")
        if len(predictions) != len(self.inputs):
            raise ValueError(f"compute_metrics got {len(predictions)} generations but was given {len(self.inputs)} "
                             "input rows; pass the evaluation set's raw rows, all of them, in order")
        ids = np.where(predictions != -100, predictions, self.tokenizer.pad_token_id)
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        self.last_result = self.scorer.score(texts, self.inputs)
        return summary(self.last_result)


def trainer_metrics(evaluator: Any = "esnli", *, inputs: Any, tokenizer: Any, **scorer_options: Any) -> ExplanationMetrics:
    """``Seq2SeqTrainer(compute_metrics=trainer_metrics("esnli", inputs=raw_eval_rows, tokenizer=tokenizer))``: the
    evaluator's scores of the explanations the model generates at each evaluation (:class:`ExplanationMetrics`)."""
    return ExplanationMetrics(evaluator, inputs, tokenizer, **scorer_options)


def read_generations(path: str | os.PathLike) -> tuple[list[str], list[dict[str, Any]]]:
    """Generations and their inputs from a saved file: a JSONL of outputs (one line per example: the input's fields
    and the text under one of :data:`GENERATION_FIELDS`), or a lighteval details file (``details_*.parquet``: the
    input from ``doc.specific``, the text from ``model_response.text[0]``)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import datasets

        details = datasets.load_dataset("parquet", data_files=str(path), split="train")
        generations, inputs = [], []
        for row, detail in enumerate(details):
            texts = (detail.get("model_response") or {}).get("text") or []
            specific = (detail.get("doc") or {}).get("specific")
            if not texts or not specific:
                raise ValueError(f"{path}, row {row}: a lighteval detail needs model_response.text and doc.specific "
                                 "(the input fields the task's prompt function keeps)")
            generations.append(texts[0])
            inputs.append(dict(specific))
        return generations, inputs
    generations, inputs = [], []
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        field = next((name for name in GENERATION_FIELDS if isinstance(row.get(name), str)), None)
        if field is None:
            raise ValueError(f"{path}, line {line_number}: no generated text; expected one of {list(GENERATION_FIELDS)}")
        generations.append(row.pop(field))
        inputs.append(row)
    return generations, inputs


def score_saved_generations(path: str | os.PathLike, evaluator: Any = "esnli", **scorer_options: Any) -> dict[str, Any]:
    """Score saved generations again without the model that wrote them (:func:`read_generations`); returns
    :meth:`GenerationScorer.score`'s result."""
    generations, inputs = read_generations(path)
    return GenerationScorer(evaluator, **scorer_options).score(generations, inputs)
