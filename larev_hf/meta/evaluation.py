"""The meta-evaluation of a trained run: every method scores every VARSuite family (VARIF §4-§6).

``MetaEvaluation(run, settings).execute()`` (CLI: ``larev-hf meta --run-dir DIR``) builds the suite from one split of
the run, scores it with every method through the registry (:meth:`larev_hf.methods.Method.pointwise`, the trained
evaluators of the run reused, nothing retrained) and writes, under ``<run>/meta`` by default:

- ``suite.jsonl`` and ``suite_skips.json``: the rationales scored and the examples each family skipped;
- ``scores/<method>.jsonl``: one score per suite row (``id``, ``family``, ``score``);
- ``meta_report.json``, ``meta_report.md`` and ``meta_heatmap.png``: per method × family the AUC of gold against
  the family with its bootstrap interval, the paired win rate, the mean separation; per method the worst-family
  AUC and Kendall τ-b against VARIF H5's order (:func:`larev_hf.meta.stats.summarize_method`).

Scoring passes. Every family that keeps the gold label is scored in one pass over the split's records, one variant
per family, so the terms a method shares between rationales (log p_Φbase(y | b), log p_Θ(y | x), the simulator's
S(x)) are computed once; an example a family skipped is filled with its gold rationale and dropped from the
statistics. A family that changes the label (``label_swap``, a user family with ``label_used``) is a pass of its
own over its rows, each row a record with its label and the baseline rebuilt for it.

Resuming: ``suite`` and ``score-<method>`` are stages with markers (:class:`~larev_hf.runner.StageRunner`),
fingerprinted on what they read (the run's data and models, the user families' files); adding a method later scores
only that method, retraining one method's models rescores only it, a changed suite rescores everything; the report is
rebuilt each time (seconds).

The report (each method's summary, ``meta_report.md``, the heatmap) is :mod:`larev_hf.meta.report`; the
meta-evaluation of exported bundles without their run is :mod:`larev_hf.meta.bundles`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from larev_hf.data import baseline_builder_from_spec
from larev_hf.io import file_sha256, read_json, read_jsonl, write_json, write_jsonl
from larev_hf.meta.report import assemble_report, meta_summary, scored_rows, seed_aucs, write_meta_report
from larev_hf.meta.robust_calibration import AttackScores
from larev_hf.meta.settings import DEFAULT_FAMILIES, REFERENCE, MetaSettings
from larev_hf.meta.suite import (
    FAMILIES,
    build_suite_with_skips,
    drift_family,
    hf_negation_editor,
    load_user_family,
    register_family,
)
from larev_hf.methods import get_method
from larev_hf.pipeline import Run
from larev_hf.runner import StageRunner
from larev_hf.scores.calibration import Calibration

logger = logging.getLogger(__name__)

def _settings_metadata() -> dict[str, dict[str, Any]]:
    return {f.name: dict(f.metadata) for f in fields(MetaSettings)}


class MetaDirectory:
    """The files of a meta-evaluation directory: the suite, the examples each family skipped, and each method's
    scores per evaluator seed (``scores/<method>.jsonl`` for the run's ``--seed``, ``scores/seed-<k>/`` for the others).

    Args:
        path: the directory.
        run: the trained run it scores (its ``--seed`` is the one without a ``seed-<k>`` folder).
    """

    def __init__(self, path: str | os.PathLike, run: Run) -> None:
        self.path, self.run = Path(path), run

    def suite(self) -> list[dict[str, Any]]:
        return [row for _, row in read_jsonl(self.path / "suite.jsonl")]

    def skips(self) -> dict[str, list[str]]:
        return read_json(self.path / "suite_skips.json")

    def score_path(self, name: str, view: Run) -> Path:
        """``scores/<method>.jsonl`` (the run's ``--seed``) or ``scores/seed-<k>/<method>.jsonl`` (another seed)."""
        seed = [] if view is self.run else [f"seed-{view.config.training.seed}"]
        return self.path.joinpath("scores", *seed, f"{name}.jsonl")

    def scores(self, name: str, view: Run | None = None) -> list[dict[str, Any]]:
        """The scored suite rows (``id``, ``family``, ``score``) of method ``name`` under ``view`` (default: the run)."""
        return [row for _, row in read_jsonl(self.score_path(name, view or self.run))]

    def suite_scores(self, names: Sequence[str]) -> AttackScores:
        """The scored suite rows of methods ``names`` (the run's ``--seed``), one aligned column per method."""
        return AttackScores.from_rows({name: self.scores(name) for name in names})


class MetaEvaluation:
    """The meta-evaluation of one trained run (see the module docstring).

    Args:
        run: a trained run (:meth:`larev_hf.pipeline.Run.load`).
        settings: what to build and score.
        output_dir: where the outputs go (default ``<run>/meta``).
    """

    def __init__(self, run: Run, settings: MetaSettings | None = None,
                 output_dir: str | os.PathLike | None = None) -> None:
        self.run = run
        self.settings = settings or MetaSettings()
        self.dir = Path(output_dir) if output_dir is not None else run.path("meta")
        self.files = MetaDirectory(self.dir, run)
        self.runner = StageRunner(self.dir)
        self.seed = self.settings.seed if self.settings.seed is not None else run.config.training.seed
        #: per scoring pass, the terms methods share (log p_Φbase(y | b), the simulator's correctness, ...): methods
        #: scored in one process reuse them, as the methods of one ``score`` stage do.
        self._shared: dict[str, dict[str, Any]] = {}

    # ----------------------------------------------------------------- what is scored
    @property
    def families(self) -> list[str]:
        names = [REFERENCE, *(f for f in self.settings.families if f != REFERENCE)]
        names += ["drift_model"] if self.settings.drift_model else []
        return names + [name for name in self.settings.user_family_paths() if name not in names]

    def methods(self) -> list[str]:
        """The methods to score: the asked ones, or the run's and every baseline whose stages have finished; with
        ``--calibration``, its features too."""
        names = self.run.methods_to_score(list(self.settings.methods), "the meta-evaluation")
        extra = ([f for f in Calibration.load(self.settings.calibration).features if f not in names]
                 if self.settings.calibration else [])
        return names + self.run.methods_to_score(extra, "the calibrated score") if extra else names

    def check(self) -> None:
        """Refuse bad settings before anything is written."""
        unknown = [name for name in self.settings.families if name not in FAMILIES]
        if unknown:
            raise ValueError(f"--families: unknown families {unknown}; built in: {list(DEFAULT_FAMILIES)}")
        for name, path in self.settings.user_family_paths().items():
            if name in DEFAULT_FAMILIES:
                raise ValueError(f"--user-families: {name!r} is a built-in family; choose another name")
            if not Path(path).is_file():
                raise FileNotFoundError(f"--user-families: {name}={path}: no such file")
        self.methods()

    # ----------------------------------------------------------------- stages
    def records(self) -> list[dict[str, Any]]:
        records = self.run.split_records(self.settings.split)
        return records[: self.settings.max_examples] if self.settings.max_examples else records

    def stage_suite(self) -> None:
        """Build the suite from the split's records; the run's own baselines are kept, label swaps get new ones."""
        records = self.records()
        for name, path in self.settings.user_family_paths().items():
            load_user_family(path, name, records=records)
        if self.settings.drift_model:
            register_family("drift_model", drift_family(hf_negation_editor(self.settings.drift_model)), overwrite=True)
        builder = baseline_builder_from_spec(self.run.config.data.baseline_builder, self.seed)
        rows, skipped = build_suite_with_skips(records, self.families, seed=self.seed, baseline_builder=builder)
        write_jsonl(self.dir / "suite.jsonl", rows)
        write_json(self.dir / "suite_skips.json", skipped)

    def score_method(self, name: str, run: Run | None = None) -> list[dict[str, Any]]:
        """One score per suite row under method ``name`` with ``run``'s models (default: the run's ``--seed``; another
        evaluator seed's view, :meth:`~larev_hf.pipeline.Run.for_seed`; see the module docstring for the passes)."""
        run = run or self.run
        method, rows, records = get_method(name), self.files.suite(), self.records()
        by_family: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_family.setdefault(row["family"], []).append(row)
        same_label = [f for f, fr in by_family.items() if all(r["label_used"] == r["gold_label"] for r in fr)]
        out: list[dict[str, Any]] = []
        if same_label:
            variants = {}
            for family in same_label:
                texts = {row["id"]: row["rationale"] for row in by_family[family]}
                variants[family] = [texts.get(record["id"], record["rationale"]) for record in records]
            scores = method.pointwise(run, records, variants, self._shared.setdefault(run.stage_name(""), {}))
            index = {record["id"]: i for i, record in enumerate(records)}
            for family in same_label:
                out += scored_rows(by_family[family], [scores[family][index[row["id"]]] for row in by_family[family]])
        for family, family_rows in by_family.items():
            if family in same_label:
                continue
            scores = method.pointwise(run, family_rows, {family: [r["rationale"] for r in family_rows]},
                                      self._shared.setdefault(run.stage_name(family), {}))
            out += scored_rows(family_rows, scores[family])
        return out

    def scored(self, name: str) -> list[tuple[Run, str]]:
        """``(view, stage name)`` of each evaluator seed that scores method ``name``: one (the run's) for a metric
        baseline without trained models, one per seed otherwise."""
        return [(view, view.stage_name(f"score-{name}")) for view in self.run.scoring_views(name)]

    def stages(self) -> list[tuple[str, Any]]:
        stages: list[tuple[str, Any]] = [("suite", self.stage_suite)]
        for name in self.methods():
            stages += [(stage, lambda name=name, view=view: write_jsonl(self.files.score_path(name, view),
                                                                        self.score_method(name, view)))
                       for view, stage in self.scored(name)]
        return stages

    def inputs(self) -> dict[str, Any]:
        """What each meta stage reads of the run: its records (the ``data`` stage's marker) and each method's trained
        models (their stages' markers); a rerun of any of them in the run reruns the meta stages after it."""
        def markers(names: list[str]) -> list[Any]:
            return [read_json(self.run.runner.marker(name)) if self.run.is_done(name) else None for name in names]

        files = {name: file_sha256(path) for name, path in self.settings.user_family_paths().items()}
        out: dict[str, Any] = {"suite": [markers(["data"]), files, self.settings.drift_model]}
        for name in self.methods():
            for view, stage in self.scored(name):
                out[stage] = markers([view.stage_name(s.name) for s in get_method(name).stages(self.run.config)])
        return out

    def execute(self, report: bool = True) -> dict[str, Any] | None:
        """Build, score (or resume) and report; returns the ``meta_report.json`` content (``report=False``: the
        stages only, for a caller that reads the scores, and ``None``). Holds the run directory's lock, so no run
        retrains its models meanwhile."""
        self.check()
        with self.run.runner.lock():
            self.dir.mkdir(parents=True, exist_ok=True)
            current = {**asdict(self.settings), "seed": self.seed, "run_dir": str(self.run.dir.resolve())}
            self.runner.check_settings(current, asdict(MetaSettings()), _settings_metadata(), name="meta_config.json")
            # each score stage depends on the suite and its own method's models only
            self.runner.run(self.stages(), inputs=self.inputs(),
                            independent=[stage for m in self.methods() for _, stage in self.scored(m)])
            return self.write_report() if report else None

    # ----------------------------------------------------------------- report
    def write_report(self) -> dict[str, Any]:
        labels = {record["id"]: record["label"] for record in self.records()}
        methods = {name: meta_summary(name, self.files.scores(name), n_boot=self.settings.n_boot, seed=self.seed,
                                      labels=labels)
                   for name in self.methods()}
        if self.settings.calibration:
            methods["calibrated"] = calibrated_summary(Calibration.load(self.settings.calibration), self.files, labels,
                                                       self.settings.n_boot, self.seed)
        markers = self.runner.markers()
        report = assemble_report(self.run.config.data.dataset, self.settings.split, self.files.suite(),
                                 self.files.skips(), methods,
                                 {**asdict(self.settings), "seed": self.seed},
                                 {stage: content["seconds"] for stage, content in markers.items()}, self.families)
        if len(self.run.seed_views()) > 1:
            report["seeds"] = {name: seed_aucs(name, {view.config.training.seed: self.files.scores(name, view)
                                                      for view, _ in self.scored(name)}, self.settings.n_boot, self.seed)
                for name in self.methods() if len(self.scored(name)) > 1}
        write_meta_report(report, self.dir)
        return report


def calibrated_summary(calibration: Calibration, files: MetaDirectory, labels: Mapping[str, str], n_boot: int,
                       seed: int) -> dict[str, Any]:
    """``larev-hf meta --calibration``: the calibrated score (:mod:`larev_hf.scores.calibration`) of every suite row,
    computed from its features' scores in ``files``, summarised as a method's are, so a calibrated score is judged
    against every VARSuite family like any metric; a feature the calibration computes from text (a text model fitted
    with it, e.g. on another run's training text) is scored here with that state."""
    scores = files.suite_scores(calibration.features)
    keys = list(zip(scores.ids.tolist(), scores.families.tolist(), strict=True))
    suite = {(row["id"], row["family"]): row for row in files.suite()}
    if calibration.text_models:  # a feature computed as the calibration was fitted, e.g. on another run's text
        scored = [suite[key] for key in keys]
        for name, state in calibration.text_models.items():
            scores.columns[name] = get_method(name).text_scores(scored, [r["rationale"] for r in scored], state)
    value = dict(zip(keys, calibration(scores.columns), strict=True))
    rows = [row for key, row in suite.items() if key in value]
    learned = [f for f in calibration.features if get_method(f).kind == "metric"] or calibration.features
    return meta_summary(learned[0], scored_rows(rows, [value[(r["id"], r["family"])] for r in rows]),
                        n_boot=n_boot, seed=seed, title=f"Calibrated ({' + '.join(calibration.features)})",
                        labels=labels)


def meta_evaluate(run_dir: str | os.PathLike, output_dir: str | os.PathLike | None = None, progress: bool = True,
                  **settings: Any) -> dict[str, Any]:
    """Python API of ``larev-hf meta``: the meta-evaluation of a trained run directory.

    ``settings`` are :class:`MetaSettings` fields (``families``, ``user_families``, ``methods``, ``split``, ``seed``,
    ``max_examples``, ``n_boot``). Returns the ``meta_report.json`` content.

    Example::
        from larev_hf.meta import meta_evaluate
        report = meta_evaluate("runs/esnli", families=["gold", "vacuous", "leak"])
        report["methods"]["larev"]["families"]["leak"]["auc"]
    """
    return MetaEvaluation(Run.load(run_dir, progress), MetaSettings(**settings), output_dir).execute()
