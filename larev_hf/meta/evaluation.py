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
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.hub import EvaluatorBundle
from larev_hf.io import file_sha256, read_json, read_jsonl, write_json, write_jsonl, write_text
from larev_hf.meta.robust_calibration import AttackScores
from larev_hf.meta.seeds import render_seed_aucs, seed_aucs
from larev_hf.meta.settings import DEFAULT_FAMILIES, FAMILY_LETTERS, REFERENCE, MetaSettings
from larev_hf.meta.stats import EXPECTED_ORDER, NOT_WORSE_THAN_GOLD, auc, paired_win_rate, summarize_method
from larev_hf.meta.suite import (
    FAMILIES,
    build_suite_with_skips,
    drift_family,
    hf_negation_editor,
    load_user_family,
    register_family,
)
from larev_hf.methods import get_method
from larev_hf.pipeline import Run, baseline_builder_from_spec
from larev_hf.report import markdown_table, save_figure, variant_title
from larev_hf.runner import StageRunner
from larev_hf.scores.calibration import Calibration

logger = logging.getLogger(__name__)

def _settings_metadata() -> dict[str, dict[str, Any]]:
    return {f.name: dict(f.metadata) for f in fields(MetaSettings)}


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
        extra = [f for f in self.calibration().features if f not in names] if self.settings.calibration else []
        return names + self.run.methods_to_score(extra, "the calibrated score") if extra else names

    def calibration(self) -> Calibration:
        return Calibration.load(self.settings.calibration)

    def suite_scores(self, names: Sequence[str]) -> AttackScores:
        """The scored suite rows of methods ``names`` (the run's ``--seed``), one aligned column per method."""
        return AttackScores.from_rows({name: [row for _, row in read_jsonl(self.score_path(name, self.run))]
                                       for name in names})

    def calibrated_summary(self, labels: Mapping[str, str]) -> dict[str, Any]:
        """``--calibration``: the calibrated score of every suite row from its features' scores, summarised as a
        method's are (issue 35)."""
        calibration = self.calibration()
        scores = self.suite_scores(calibration.features)
        keys = list(zip(scores.ids.tolist(), scores.families.tolist(), strict=True))
        suite = {(row["id"], row["family"]): row for row in self.suite()}
        if calibration.text_models:  # a feature computed as the calibration was fitted, e.g. on another run's text
            scored = [suite[key] for key in keys]
            for name, state in calibration.text_models.items():
                scores.columns[name] = get_method(name).text_scores(scored, [r["rationale"] for r in scored], state)
        value = dict(zip(keys, calibration(scores.columns), strict=True))
        rows = [row for key, row in suite.items() if key in value]
        learned = [f for f in calibration.features if get_method(f).kind == "metric"] or calibration.features
        return meta_summary(learned[0], scored_rows(rows, [value[(r["id"], r["family"])] for r in rows]),
                            n_boot=self.settings.n_boot, seed=self.seed,
                            title=f"Calibrated ({' + '.join(calibration.features)})", labels=labels)

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

    def suite(self) -> list[dict[str, Any]]:
        return [row for _, row in read_jsonl(self.dir / "suite.jsonl")]

    def score_method(self, name: str, run: Run | None = None) -> list[dict[str, Any]]:
        """One score per suite row under method ``name`` with ``run``'s models (default: the run's ``--seed``; another
        evaluator seed's view, :meth:`~larev_hf.pipeline.Run.for_seed`; see the module docstring for the passes)."""
        run = run or self.run
        method, rows, records = get_method(name), self.suite(), self.records()
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

    def score_path(self, name: str, view: Run) -> Path:
        """``scores/<method>.jsonl`` (the run's ``--seed``) or ``scores/seed-<k>/<method>.jsonl`` (another seed)."""
        seed = [] if view is self.run else [f"seed-{view.config.training.seed}"]
        return self.dir.joinpath("scores", *seed, f"{name}.jsonl")

    def scored(self, name: str) -> list[tuple[Run, str]]:
        """``(view, stage name)`` of each evaluator seed that scores method ``name``: one (the run's) for a metric
        baseline without trained models, one per seed otherwise."""
        return [(view, view.stage_name(f"score-{name}")) for view in self.run.scoring_views(name)]

    def stages(self) -> list[tuple[str, Any]]:
        stages: list[tuple[str, Any]] = [("suite", self.stage_suite)]
        for name in self.methods():
            stages += [(stage, lambda name=name, view=view: write_jsonl(self.score_path(name, view),
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

    def execute(self) -> dict[str, Any]:
        """Build, score (or resume) and report; returns the ``meta_report.json`` content. Holds the run directory's
        lock, so no run retrains its models meanwhile."""
        self.check()
        with self.run.runner.lock():
            self.dir.mkdir(parents=True, exist_ok=True)
            current = {**asdict(self.settings), "seed": self.seed, "run_dir": str(self.run.dir.resolve())}
            self.runner.check_settings(current, asdict(MetaSettings()), _settings_metadata(), name="meta_config.json")
            # each score stage depends on the suite and its own method's models only
            self.runner.run(self.stages(), inputs=self.inputs(),
                            independent=[stage for m in self.methods() for _, stage in self.scored(m)])
            return self.write_report()

    # ----------------------------------------------------------------- report
    def write_report(self) -> dict[str, Any]:
        labels = {record["id"]: record["label"] for record in self.records()}
        methods = {name: meta_summary(name, [row for _, row in read_jsonl(self.dir / "scores" / f"{name}.jsonl")],
                                      n_boot=self.settings.n_boot, seed=self.seed, labels=labels)
                   for name in self.methods()}
        if self.settings.calibration:
            methods["calibrated"] = self.calibrated_summary(labels)
        markers = self.runner.markers()
        report = assemble_report(self.run.config.data.dataset, self.settings.split, self.suite(),
                                 read_json(self.dir / "suite_skips.json"), methods,
                                 {**asdict(self.settings), "seed": self.seed},
                                 {stage: content["seconds"] for stage, content in markers.items()}, self.families)
        if len(self.run.seed_views()) > 1:
            report["seeds"] = {name: seed_aucs(name, {view.config.training.seed: [row for _, row in read_jsonl(
                self.score_path(name, view))] for view, _ in self.scored(name)}, self.settings.n_boot, self.seed)
                for name in self.methods() if len(self.scored(name)) > 1}
        write_meta_report(report, self.dir)
        return report


def scored_rows(rows: Sequence[Mapping[str, Any]], scores: Sequence[float]) -> list[dict[str, Any]]:
    """``{id, family, score}`` per suite row: what ``scores/<method>.jsonl`` holds and :func:`meta_summary` reads."""
    return [{"id": row["id"], "family": row["family"], "score": float(value)}
            for row, value in zip(rows, scores, strict=True)]


def by_label_aucs(scored_rows: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> dict[str, dict]:
    """Per gold label (``labels``: example id → gold label), per family: the AUC of gold against the family on that
    label's examples, the paired gold-win rate (ties ½) and the number of pairs (issue 32: a leak that works for one
    label is hidden in the AUC over all labels)."""
    gold = {row["id"]: row["score"] for row in scored_rows if row["family"] == REFERENCE}
    out: dict[str, dict] = {}
    for label in dict.fromkeys(labels[i] for i in gold):
        ids = {i for i in gold if labels[i] == label}
        cells = {}
        for family in dict.fromkeys(row["family"] for row in scored_rows if row["family"] != REFERENCE):
            pairs = [(gold[row["id"]], row["score"]) for row in scored_rows
                     if row["family"] == family and row["id"] in ids]
            if pairs:
                g, f = np.array(pairs).T
                cells[family] = {"auc": auc(np.array([gold[i] for i in ids]), f), "win_rate": paired_win_rate(g, f),
                                 "n": len(pairs)}
        out[str(label)] = cells
    return out


def meta_summary(name: str, scored_rows: Sequence[Mapping[str, Any]], n_boot: int = 1000, seed: int = 0,
                 title: str | None = None, labels: Mapping[str, str] | None = None) -> dict:
    """:func:`~larev_hf.meta.stats.summarize_method` of one method's scored suite rows (``id``, ``family``,
    ``score``), with the method's title (or ``title``), kind and unit; with ``labels`` (id → gold label) also
    :func:`by_label_aucs` as ``by_label``."""
    scores: dict[str, list[float]] = {}
    ids: dict[str, list[str]] = {}
    for row in scored_rows:
        scores.setdefault(row["family"], []).append(row["score"])
        ids.setdefault(row["family"], []).append(row["id"])
    method = get_method(name)
    summary = summarize_method(scores, ids, n_boot=n_boot, seed=seed, reference=REFERENCE)
    return {"title": title or method.title, "kind": method.kind, "unit": method.unit, **summary,
            **({"by_label": by_label_aucs(scored_rows, labels)} if labels else {})}


def assemble_report(dataset: str, split: str, rows: Sequence[Mapping[str, Any]], skipped: Mapping[str, Sequence[str]],
                    methods: Mapping[str, dict], settings: Mapping[str, Any], timings: Mapping[str, float],
                    family_order: Sequence[str] | None = None) -> dict:
    """The ``meta_report.json`` content from the suite, its skips and each method's :func:`meta_summary`; families in
    ``family_order`` (then as they first appear)."""
    present = set(row["family"] for row in rows)
    families = [f for f in dict.fromkeys([*(family_order or ()), *(row["family"] for row in rows)]) if f in present]
    return {"dataset": dataset, "split": split, "n_examples": len({row["id"] for row in rows}),
            "families": {family: {"letter": FAMILY_LETTERS.get(family),
                                  "n_rows": sum(row["family"] == family for row in rows),
                                  "n_skipped": len(skipped.get(family, []))} for family in families},
            "methods": dict(methods), "expected_order": [list(tier) for tier in EXPECTED_ORDER],
            "settings": dict(settings), "timings": dict(timings)}


# --------------------------------------------------------------------------- rendering

def _cell(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _family_title(report: dict[str, Any], family: str) -> str:
    """``B Leak``: the VARIF §4 letter, then the name as the run report writes variants."""
    letter = report["families"].get(family, {}).get("letter")
    return f"{letter} {variant_title(family)}" if letter else variant_title(family)


def baseline_failures(report: dict[str, Any]) -> dict[str, list[str]]:
    """Per learned metric, the families on which its AUC is not above every metric baseline's (VARIF §5)."""
    methods = report["methods"]
    baselines = [name for name, entry in methods.items() if entry["kind"] == "baseline"]
    out: dict[str, list[str]] = {}
    for name, entry in methods.items():
        if entry["kind"] == "baseline" or not baselines:
            continue
        failed = []
        for family, stats in entry["families"].items():
            if family in NOT_WORSE_THAN_GOLD:
                continue
            best = max((methods[b]["families"][family]["auc"] for b in baselines
                        if methods[b]["families"].get(family, {}).get("auc") is not None), default=None)
            if stats["auc"] is not None and best is not None and stats["auc"] <= best:
                failed.append(family)
        out[name] = failed
    return out


def render_meta_markdown(report: dict[str, Any]) -> str:
    """``meta_report.md``: the AUC table with intervals, the at-a-glance table, win rates, separations, baselines."""
    methods = report["methods"]
    families = [f for f in report["families"] if f != REFERENCE]
    titles = [_family_title(report, f) for f in families]
    out = [f"# Meta-evaluation: {report['dataset']} ({report['split']}, n = {report['n_examples']} examples)", "",
           "Each cell answers: does the metric score the gold rationale above the family's rationale? AUC = "
           "P(gold > family), ties ½: 1 = always, 0.5 = chance, < 0.5 = the metric prefers the attack. "
           "How to read it: `docs/meta.md`.", "",
           "## At a glance", ""]
    failures = baseline_failures(report)
    out.append(markdown_table(["Method", "Kind", "Worst family", "Worst AUC", "Kendall τ-b vs VARIF H5", "Not above the best "
                       "baseline on"],
                      [[entry["title"], entry["kind"], _family_title(report, entry["worst_family"])
                        if entry["worst_family"] else "n/a", _cell(entry["worst_auc"]), _cell(entry["tau_b"]),
                        ", ".join(_family_title(report, f) for f in failures.get(name, [])) or
                        ("—" if entry["kind"] != "baseline" else "")]
                       for name, entry in methods.items()]))
    out += ["", f"Worst family: over every family except the reference and {', '.join(NOT_WORSE_THAN_GOLD)} "
            "(which carries all of gold's information). τ-b: the family means' order against "
            + " > ".join("{" + ", ".join(tier) + "}" for tier in report["expected_order"]) + ".", "",
            "## AUC of gold against each family [95% bootstrap interval]", ""]
    out.append(markdown_table(["Method", *titles],
                      [[entry["title"], *(f"{_cell(s['auc'])} [{_cell(s['ci95'][0])}, {_cell(s['ci95'][1])}]"
                                          if s["auc"] is not None else "n/a"
                                          for s in (entry["families"][f] for f in families))]
                       for entry in methods.values()]))
    out += ["", "## Paired gold-win rate (share of examples whose gold rationale scores higher; a tie counts ½)", ""]
    out.append(markdown_table(["Method", *titles], [[entry["title"], *(_cell(entry["families"][f]["win_rate"]) for f in families)]
                                            for entry in methods.values()]))
    out += ["", "## Mean separation, gold − family (the metric's own unit)", ""]
    out.append(markdown_table(["Method", "Unit", *titles],
                      [[entry["title"], entry["unit"], *(_cell(entry["families"][f]["mean_separation"]) for f in families)]
                       for entry in methods.values()]))
    labelled = {name: e for name, e in methods.items() if e.get("by_label") and e["kind"] != "baseline"}
    if labelled:
        out += ["", "## AUC of gold against each family, by gold label", "",
                "Each label's examples alone: a leak that works for one label (e.g. \"the answer is entailment .\") "
                "shows here, not in the AUC over all labels.", ""]
        out.append(markdown_table(["Method", "Gold label", *titles],
                                  [[entry["title"], label, *(_cell(cells[f]["auc"]) if f in cells else "n/a"
                                                             for f in families)]
                                   for entry in labelled.values() for label, cells in entry["by_label"].items()]))
    out += ["", "## Families", ""]
    out.append(markdown_table(["Family", "VARIF §4", "Rows", "Examples skipped"],
                      [[family, info["letter"] or "", str(info["n_rows"]), str(info["n_skipped"])]
                       for family, info in report["families"].items()]))
    out += render_seed_aucs(report)
    if report.get("timings"):
        out += ["", "## Wall time per stage (s)", ""]
        out.append(markdown_table(["Stage", "Seconds"], [[k, f"{v:.1f}"] for k, v in report["timings"].items()]))
    return "\n".join(out) + "\n"


def plot_meta_heatmap(report: dict[str, Any], path: str | os.PathLike) -> None:
    """Methods × families heatmap of the AUC, annotated, centred on chance (0.5)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = report["methods"]
    families = [f for f in report["families"] if f != REFERENCE]
    grid = np.array([[np.nan if entry["families"][f]["auc"] is None else entry["families"][f]["auc"]
                      for f in families] for entry in methods.values()], dtype=float)
    fig, ax = plt.subplots(figsize=(1.1 * len(families) + 3, 0.5 * len(methods) + 1.8), dpi=120)
    image = ax.imshow(grid, cmap="RdBu", vmin=0.0, vmax=1.0, aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if abs(grid[i, j] - 0.5) > 0.3 else "black")
    kinds = [entry["kind"] for entry in methods.values()]
    if "baseline" in kinds and kinds.index("baseline") > 0:  # a rule between the learned metrics and the baselines
        ax.axhline(kinds.index("baseline") - 0.5, color="black", linewidth=2)
    ax.set_xticks(range(len(families)), [_family_title(report, f) for f in families], rotation=30, ha="right")
    ax.set_yticks(range(len(methods)), [entry["title"] + (" (baseline)" if entry["kind"] == "baseline" else "")
                                        for entry in methods.values()])
    ax.set_title(f"AUC of gold vs family: {report['dataset']} ({report['split']}, n = {report['n_examples']})")
    fig.colorbar(image, ax=ax, label="AUC (0.5 = chance)")
    fig.tight_layout()
    save_figure(fig, path)


def write_meta_report(report: dict[str, Any], output_dir: str | os.PathLike) -> dict[str, Path]:
    """Write ``meta_report.json``, ``meta_report.md`` and ``meta_heatmap.png``; return their paths."""
    output_dir = Path(output_dir)
    paths = {"json": output_dir / "meta_report.json", "markdown": output_dir / "meta_report.md",
             "plot": output_dir / "meta_heatmap.png"}
    write_json(paths["json"], report)
    write_text(paths["markdown"], render_meta_markdown(report))
    plot_meta_heatmap(report, paths["plot"])
    return paths


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


def meta_evaluate_bundles(bundles: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                          output_dir: str | os.PathLike, families: Sequence[str] | None = None, seed: int = 0,
                          n_boot: int = 1000, baselines: Sequence[str] = ("rouge_l", "length"),
                          batch_size: int = 64, progress: bool = False, dataset: str = "records") -> dict[str, Any]:
    """The meta-evaluation of evaluator bundles (``larev-hf export`` / the Hub) on schema ``records``.

    Args:
        bundles: name → :class:`~larev_hf.hub.EvaluatorBundle` or a path / repo id to load; the name labels the
            method in the report (two bundles of one method, e.g. trained on different data, may be compared).
        records: schema records with a gold ``rationale`` (e.g. ``load_examples(...).to_list()``).
        output_dir: where ``suite.jsonl``, ``scores/<name>.jsonl`` and the three report files go.
        families: VARSuite families (default: all); ``gold`` is always included.
        baselines: metric baselines that need no trained model, scored alongside.

    Each bundle builds the baselines b it needs with its own builder, row by row (label swaps included), so this
    path costs more than :class:`MetaEvaluation`'s shared passes. Returns the ``meta_report.json`` content.
    """

    output_dir = Path(output_dir)
    names = [REFERENCE, *(f for f in (families or DEFAULT_FAMILIES) if f != REFERENCE)]
    rows, skipped = build_suite_with_skips(records, names, seed=seed)
    write_jsonl(output_dir / "suite.jsonl", rows)
    write_json(output_dir / "suite_skips.json", skipped)
    methods = {}
    for key, bundle in bundles.items():
        if not isinstance(bundle, EvaluatorBundle):
            bundle = EvaluatorBundle.from_pretrained(bundle)
        result = bundle.score([r["rationale"] for r in rows], [r["label"] for r in rows], rows,
                              batch_size=batch_size, progress=progress)
        scored = scored_rows(rows, result.scores)
        write_jsonl(output_dir / "scores" / f"{key}.jsonl", scored)
        methods[key] = meta_summary(bundle.config.method, scored, n_boot=n_boot, seed=seed,
                                    title=f"{bundle.spec.title} ({key})")
        if result.calibrated is not None:  # a calibrated bundle's second score, judged like any metric (issue 35)
            scored = scored_rows(rows, result.calibrated)
            write_jsonl(output_dir / "scores" / f"{key}_calibrated.jsonl", scored)
            methods[f"{key}_calibrated"] = meta_summary(bundle.config.method, scored, n_boot=n_boot, seed=seed,
                                                        title=f"{bundle.spec.title} ({key}, calibrated)")
    for name in baselines:
        method = get_method(name)
        if method.stages(None) or getattr(method, "needs_state", False):
            raise ValueError(f"baseline {name!r} needs a run (trained models or its training text); only baselines "
                             "computed from the rationale and the input go with bundles")
        values = method.pointwise(None, rows, {"suite": [r["rationale"] for r in rows]}, {})["suite"]
        scored = scored_rows(rows, values)
        write_jsonl(output_dir / "scores" / f"{name}.jsonl", scored)
        methods[name] = meta_summary(name, scored, n_boot=n_boot, seed=seed)
    report = assemble_report(dataset, "records", rows, skipped, methods,
                             {"families": names, "seed": seed, "n_boot": n_boot, "bundles": list(bundles)}, {}, names)
    write_meta_report(report, output_dir)
    return report
