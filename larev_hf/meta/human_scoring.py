"""A judged file scored by every method of a trained run: the stages of ``larev-hf human`` and the columns they give.

:class:`JudgedScores` reads the judged file (:mod:`larev_hf.meta.judgments`), gives each instance its vacuous
baseline b with the run's builder (one b per instance, shared by its explanations) and scores every explanation with
every method of the run and the metric baselines through the registry (:meth:`larev_hf.methods.Method.pointwise`,
the run's trained evaluators, nothing retrained). Its stages write, under the human directory:

- ``judged.jsonl``: the records scored (row id ``<instance>#<k>``, baseline b, the file's numeric columns);
- ``scores/<method>.jsonl``: ``{id, instance, score}`` per explanation (``scores/seed-<k>/`` for a further evaluator
  seed).

:meth:`JudgedScores.score_columns` reads them back as one column per metric (higher = better), the file's own
baseline columns (e.g. GPT-3's NLL, lower = better) with their direction applied.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import baseline_builder_from_spec
from larev_hf.io import file_sha256, read_json, read_jsonl, write_jsonl
from larev_hf.meta.judgments import load_judgments
from larev_hf.meta.settings import HumanSettings
from larev_hf.methods import get_method
from larev_hf.pipeline import Run


def parse_baseline_columns(entries: Sequence[str]) -> dict[str, int]:
    """``NAME`` or ``NAME:lower`` / ``NAME:higher`` → ``{name: +1 or -1}`` (the sign that makes higher = better)."""
    out = {}
    for entry in entries:
        name, _, direction = entry.partition(":")
        if not name.strip() or direction not in ("", "higher", "lower"):
            raise ValueError(f"--baseline-columns entry {entry!r}: expected NAME, NAME:higher or NAME:lower")
        out[name.strip()] = -1 if direction == "lower" else 1
    return out


class JudgedScores:
    """The judged file of ``settings`` scored by the methods of ``run``, kept in ``directory`` (see the module
    docstring). ``judged.jsonl`` is read once and kept; writing it again (:meth:`stage_judged`) drops the copy."""

    def __init__(self, run: Run, settings: HumanSettings, directory: Path) -> None:
        self.run, self.settings, self.dir = run, settings, directory
        self.baseline_columns = parse_baseline_columns(settings.baseline_columns)
        self._records: list[dict[str, Any]] | None = None

    # ----------------------------------------------------------------- what is scored
    def task(self) -> str:
        return self.run.task()

    def methods(self) -> list[str]:
        """The asked methods, or the run's and every metric baseline whose stages have finished."""
        return self.run.methods_to_score(list(self.settings.methods), "the human-agreement evaluation")

    def numeric_columns(self) -> list[str]:
        return list(dict.fromkeys([*self.settings.human_columns, *self.baseline_columns]))

    def read_file(self) -> list[dict[str, Any]]:
        """The judged file as records (raises one :class:`~larev_hf.io.DataError` line on a malformed file)."""
        s = self.settings
        return load_judgments(s.judgments, self.task(), self.numeric_columns(), s.column_mapping, s.max_instances)

    # ----------------------------------------------------------------- stages
    def stage_judged(self) -> None:
        """Read the file and give every explanation its instance's baseline b (built once per instance, from the
        instance id, so the run's per-example frame choice is the same for all of an instance's explanations)."""
        records = self.read_file()
        builder = baseline_builder_from_spec(self.run.config.data.baseline_builder, self.run.config.training.seed)
        firsts = {record["instance"]: record for record in reversed(records)}
        instances = list(dict.fromkeys(record["instance"] for record in records))
        examples = [{**firsts[i], "id": i, "rationale": ""} for i in instances]
        baselines = dict(zip(instances, builder(examples), strict=True))
        for record in records:
            record["baseline"] = baselines[record["instance"]]
        write_jsonl(self.dir / "judged.jsonl", records)
        self._records = None  # read back from the file, as every later stage and the report see it

    def records(self) -> list[dict[str, Any]]:
        """The records of ``judged.jsonl`` (read on the first call, then kept)."""
        if self._records is None:
            self._records = [row for _, row in read_jsonl(self.dir / "judged.jsonl")]
        return self._records

    def score_method(self, name: str, run: Run | None = None) -> list[dict[str, Any]]:
        """One score per explanation under ``name`` with ``run``'s models (default: the run's ``--seed``; another
        evaluator seed's view): a single pass, every explanation a record with its own label."""
        records = self.records()
        run = run or self.run
        if self.settings.reduction and self.settings.reduction != run.config.model.reduction:
            run = copy.copy(run)  # the same models, scored with another label-token reduction
            run.config = run.config.replace(reduction=self.settings.reduction)
        scores = get_method(name).pointwise(run, records, {"judged": [r["rationale"] for r in records]}, {})
        return [{"id": r["id"], "instance": r["instance"], "score": float(value)}
                for r, value in zip(records, scores["judged"], strict=True)]

    def scored(self, name: str) -> list[tuple[Run, str, Path]]:
        """``(view, stage, scores file)`` per evaluator seed scoring ``name`` (one for a model-free baseline)."""
        views = self.run.scoring_views(name)
        return [(view, view.stage_name(f"score-{name}"), self.dir.joinpath(
            "scores", *([] if view is views[0] else [f"seed-{view.config.training.seed}"]), f"{name}.jsonl")) for view in views]

    def stages(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [("judged", self.stage_judged)]
        for name in self.methods():
            out += [(stage, lambda name=name, view=view, path=path: write_jsonl(path, self.score_method(name, view)))
                    for view, stage, path in self.scored(name)]
        return out

    def inputs(self) -> dict[str, Any]:
        """What each stage reads: the judged file, the run's data marker; each method's trained models' markers."""
        def markers(names: list[str]) -> list[Any]:
            return [read_json(self.run.runner.marker(n)) if self.run.is_done(n) else None for n in names]

        out: dict[str, Any] = {"judged": [file_sha256(self.settings.judgments), markers(["data"]),
                                          self.numeric_columns()]}
        for name in self.methods():
            for view, stage, _ in self.scored(name):
                out[stage] = markers([view.stage_name(s.name) for s in get_method(name).stages(self.run.config)])
        return out

    # ----------------------------------------------------------------- what the report reads
    def score_columns(self, methods: Sequence[str]) -> dict[str, np.ndarray]:
        """Metric → one score per judged explanation (file order), higher = better: the methods' (with several
        evaluator seeds: the first seed's, then ``<method>@seed<k>`` for the others and ``<method>@ensemble``, the mean
        over seeds), then the file's baseline columns with their direction applied."""
        records = self.records()
        out = {}
        for name in methods:
            seeds = []
            for k, (view, _, path) in enumerate(self.scored(name)):
                by_id = {row["id"]: row["score"] for _, row in read_jsonl(path)}
                seeds.append(np.array([by_id[r["id"]] for r in records]))
                out[name if k == 0 else f"{name}@seed{view.config.training.seed}"] = seeds[-1]
            if len(seeds) > 1:
                out[f"{name}@ensemble"] = np.mean(seeds, axis=0)
        for column, sign in self.baseline_columns.items():
            out[column] = sign * np.array([r["numbers"][column] for r in records])
        return out
