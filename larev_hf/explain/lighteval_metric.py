"""A lighteval metric: each sample's generated explanation scored by a larev-hf evaluator (needs ``lighteval``, the
``lighteval`` extra).

The model answers a sample with ``"ŷ explanation: r̂"``; :class:`ExplanationScore` scores ``r̂`` for ``ŷ`` with the
sample's input, taken from ``doc.specific`` (what a task's prompt function keeps: ``premise`` and ``hypothesis`` for
NLI, ``question`` and ``choices`` for QA), in one batch for all samples, through
:class:`~larev_hf.explain.generated.GenerationScorer` (the scoring path of ``larev-hf evaluate``). Register it in a
custom task as any lighteval metric; ``examples/lighteval/esnli_task.py`` is one for e-SNLI::

    from larev_hf.explain.lighteval_metric import explanation_metric

    task = LightevalTaskConfig(name="esnli_explained", prompt_function=esnli_prompt, hf_repo="esnli",
                               hf_subset="default", metrics=[explanation_metric("esnli")], generation_size=64, ...)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import SampleLevelMetric
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.requests import Doc, SamplingMethod

from larev_hf.explain.generated import GenerationScorer


def column_metric_name(name: str, column: str) -> str:
    """``name`` for the ``scores`` column, ``name:<column>`` for another (``explanation_score:calibrated_scores``)."""
    return name if column == "scores" else f"{name}:{column}"


class ExplanationScore(SampleLevelComputation):
    """Batched: one per-sample column of the evaluator's result for all samples' generated explanations at once.

    Args:
        scorer (`GenerationScorer`): the evaluator; metrics of several columns share one, and score a batch once.
        column (`str`, *optional*, defaults to `"scores"`): the per-sample column of the evaluator's result to report
            (``calibrated_scores``, ``label_centred_scores``, ... where the evaluator returns them).
        shared (`dict`, *optional*): the last batch scored, shared by the metrics of one :func:`explanation_metrics`
            call, so the other columns' metrics reuse the first one's scoring.
    """

    def __init__(self, scorer: GenerationScorer, column: str = "scores", shared: dict | None = None) -> None:
        self.scorer, self.column = scorer, column
        self.shared = {} if shared is None else shared
        self.last_result: dict[str, Any] | None = None

    def compute(self, responses: list[ModelResponse], docs: list[Doc], **kwargs: Any) -> list[float]:
        generations, inputs = [], []
        for index, (response, doc) in enumerate(zip(responses, docs, strict=True)):
            texts = response.text_post_processed or response.text
            if not texts:
                raise ValueError(f"sample {index} ({doc.id or doc.query[:40]!r}) has no generated text; the "
                                 "explanation score needs a generative task (generation_size set)")
            if not doc.specific:
                raise ValueError(f"sample {index} ({doc.id or doc.query[:40]!r}) has no doc.specific: the task's "
                                 "prompt function must keep the input fields there (premise and hypothesis, or "
                                 "question and choices)")
            generations.append(texts[0])
            inputs.append(dict(doc.specific))
        key = json.dumps([generations, inputs], sort_keys=True, default=str)
        if self.shared.get("key") != key:  # the first column's metric scores; the others reuse it
            self.shared.update(key=key, result=self.scorer.score(generations, inputs))
        result = self.last_result = self.shared["result"]
        if self.column not in result:
            available = sorted(k for k, v in result.items() if isinstance(v, list))
            raise ValueError(f"the evaluator returned no {self.column!r}; its per-sample columns are {available}")
        return [float(v) for v in result[self.column]]


def explanation_metrics(evaluator: Any = "esnli", columns: Sequence[str] = ("scores",),
                        name: str = "explanation_score", **scorer_options: Any) -> list[SampleLevelMetric]:
    """One lighteval metric per column of the evaluator's result (``scores`` → ``explanation_score``, another column
    → ``explanation_score:<column>``), sharing one evaluator: per sample, then the mean over the corpus (higher = the
    explanation adds more information about the label, docs/hub.md). ``scorer_options``: :class:`GenerationScorer`'s
    ``revision``, ``device``, ``batch_size``."""
    scorer, shared = GenerationScorer(evaluator, **scorer_options), {}
    return [SampleLevelMetric(metric_name=column_metric_name(name, column), higher_is_better=True,
                              category=SamplingMethod.GENERATIVE,
                              sample_level_fn=ExplanationScore(scorer, column, shared),
                              corpus_level_fn=np.mean, batched_compute=True)
            for column in columns]


def explanation_metric(evaluator: Any = "esnli", **options: Any) -> SampleLevelMetric:
    """The evaluator's ``scores`` as one lighteval metric, ``explanation_score`` (:func:`explanation_metrics`)."""
    return explanation_metrics(evaluator, ("scores",), **options)[0]
