"""Do the metrics agree with people? Every method of a trained run scored on explanations judged by annotators.

``HumanEvaluation(run, settings).execute()`` (CLI: ``larev-hf human --run-dir DIR --judgments FILE.jsonl``) reads a
judged file (:mod:`larev_hf.meta.judgments`), builds each instance's vacuous baseline b with the run's builder (one b
per instance, shared by its explanations), scores every explanation with every method of the run and the metric
baselines through the registry (:meth:`larev_hf.methods.Method.pointwise`, the run's trained evaluators, nothing
retrained), adds the file's own baseline columns (e.g. GPT-3's NLL, lower = better) and reports, per metric and human
column, the statistics of :mod:`larev_hf.meta.human_stats` with instance-bootstrap intervals, and each learned
metric's paired difference from every other column. Outputs, under ``<run>/human/<file stem>`` by default:

- ``judged.jsonl``: the records scored (row id ``<instance>#<k>``, baseline b, the file's numeric columns);
- ``scores/<method>.jsonl``: ``{id, instance, score}`` per explanation;
- ``human_report.json``, ``human_report.md`` and ``human_agreement.png`` (each metric's score against the human
  share, one panel per metric).

Like ``larev-hf meta``: stages with markers (``judged``, ``score-<method>``) fingerprinted on what they read, so a
rerun resumes, adding a method scores only it, and a changed file rescores everything; the run directory's lock is
held throughout. The report is rebuilt on every call; ``--half select|held`` restricts it to one half of a split by
instance (:func:`~larev_hf.meta.judgments.instance_half`), for choosing a change on one half and reporting on the other.
"""

from __future__ import annotations

import copy
import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.io import file_sha256, read_json, read_jsonl, write_json, write_jsonl, write_text
from larev_hf.meta.evaluation import MetaEvaluation
from larev_hf.meta.human_stats import (
    STATISTICS,
    agreement_table,
    annotator_agreement,
    difference,
    point_statistics,
    select_one,
    select_one_references,
    share_of_ceiling,
)
from larev_hf.meta.judgments import instance_half, load_judgments
from larev_hf.meta.robust_calibration import (
    AttackScores,
    render_robustness,
    robust_calibration,
    robustness_shortfalls,
    worst_family,
)
from larev_hf.meta.settings import HumanSettings, MetaSettings
from larev_hf.methods import get_method, method_names
from larev_hf.methods.heuristics import text_models
from larev_hf.pipeline import Run, baseline_builder_from_spec
from larev_hf.report import markdown_table, save_figure
from larev_hf.runner import StageRunner
from larev_hf.scores.calibration import fit_calibration

#: How the report names each statistic of :data:`~larev_hf.meta.human_stats.STATISTICS`.
STATISTIC_TITLES = {"pairwise": "Pairwise agreement", "spearman": "Spearman ρ", "kendall": "Kendall τ-b",
                    "auc": "AUC acceptable vs not"}


def parse_baseline_columns(entries: Sequence[str]) -> dict[str, int]:
    """``NAME`` or ``NAME:lower`` / ``NAME:higher`` → ``{name: +1 or -1}`` (the sign that makes higher = better)."""
    out = {}
    for entry in entries:
        name, _, direction = entry.partition(":")
        if not name.strip() or direction not in ("", "higher", "lower"):
            raise ValueError(f"--baseline-columns entry {entry!r}: expected NAME, NAME:higher or NAME:lower")
        out[name.strip()] = -1 if direction == "lower" else 1
    return out


class HumanEvaluation:
    """Agreement with human judgments of one trained run on one judged file (see the module docstring)."""

    def __init__(self, run: Run, settings: HumanSettings, output_dir: str | os.PathLike | None = None) -> None:
        if not settings.judgments:
            raise ValueError("--judgments is required: a JSONL file of judged explanations")
        self.run, self.settings = run, settings
        self.baseline_columns = parse_baseline_columns(settings.baseline_columns)
        stem = Path(settings.judgments).stem
        self.dir = Path(output_dir) if output_dir is not None else run.path("human", stem)
        self.runner = StageRunner(self.dir)

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

    def records(self) -> list[dict[str, Any]]:
        return [row for _, row in read_jsonl(self.dir / "judged.jsonl")]

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

    def execute(self) -> dict[str, Any]:
        """Score (or resume) and report; returns the ``human_report.json`` content. Holds the run directory's lock."""
        methods = self.methods()
        self.read_file()  # a malformed file stops here, before anything is written
        attacks = None
        if self.settings.calibrate:
            self.calibration_method()
        if self.settings.calibrate and self.settings.calibration_fit == "robust":
            attacks = self.attacks()  # each a meta run that takes the run directory's lock itself
        with self.run.runner.lock():
            self.dir.mkdir(parents=True, exist_ok=True)
            current = {**asdict(self.settings), "judgments": str(Path(self.settings.judgments).resolve()),
                       "run_dir": str(self.run.dir.resolve())}
            metadata = {f.name: dict(f.metadata) for f in fields(HumanSettings)}
            self.runner.check_settings(current, asdict(HumanSettings()), metadata, name="human_config.json")
            self.runner.run(self.stages(), inputs=self.inputs(),
                            independent=[stage for m in methods for _, stage, _ in self.scored(m)])
            return self.write_report(methods, attacks)

    # ----------------------------------------------------------------- report
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

    def calibration_method(self) -> str:
        """The first learned metric among ``--calibrate``'s features (the score the robust fit is anchored on); every
        feature must be a method this report scores (never a column of the file, which no one else can compute)."""
        scored = self.methods()
        if unknown := [f for f in self.settings.calibrate if f not in scored or f in self.baseline_columns]:
            raise ValueError(f"--calibrate: {unknown} are not scored methods of this report; the calibration reads "
                             f"only scores the library computes for any explanation: {scored}")
        learned = [f for f in self.settings.calibrate if f in method_names() and get_method(f).kind == "metric"]
        if not learned:
            raise ValueError(f"--calibrate {','.join(self.settings.calibrate)}: name a learned metric (e.g. "
                             "larev,grounding); the first one anchors the fit, the other features are capped")
        return learned[0]

    def attacks(self) -> dict[str, AttackScores]:
        """VARSuite on the run's validation split (to choose the fit) and test split (to report it), scored with the
        calibration's features under ``attacks/<split>`` (each a ``larev-hf meta`` directory, resumable)."""
        out = {}
        for split in ("validation", "test", *(["train"] if self.settings.robustness_fit_split == "train" else [])):
            evaluation = MetaEvaluation(self.run, MetaSettings(methods=list(self.settings.calibrate), split=split,
                                                               max_examples=self.settings.robustness_examples),
                                        self.dir / "attacks" / split)
            evaluation.execute()
            out[split] = evaluation.suite_scores(self.settings.calibrate)
        return out

    def calibrated_columns(self, records: Sequence[Mapping[str, Any]], columns: Mapping[str, np.ndarray],
                           halves: Mapping[str, str], attacks: Mapping[str, AttackScores] | None
                           ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The calibrated scores (:mod:`larev_hf.scores.calibration`) of every explanation, fitted on the select half
        (out-of-fold there), applied to the held half: ``calibrated`` (robust, :mod:`larev_hf.meta.robust_calibration`,
        or by agreement with ``--calibration-fit agreement``) and, beside a robust one, ``calibrated_agreement``. The fit
        is saved as ``calibration.json``; returns the columns and the report's ``calibration`` section (the candidates
        and each calibrated score's AUC against every family on the test split)."""
        features = list(self.settings.calibrate)
        human = self.settings.human_columns[0]
        select = np.array([halves[r["instance"]] == "select" for r in records])
        fit_columns = {f: columns[f][select] for f in features}
        judged = np.array([r["numbers"][human] for r in records])[select]
        instances = [r["instance"] for r, keep in zip(records, select, strict=True) if keep]
        fits = {"calibrated_agreement": fit_calibration(fit_columns, judged, instances, features,
                                                        seed=self.run.config.training.seed)}
        section: dict[str, Any] = {"features": features, "fit": self.settings.calibration_fit}
        if attacks is not None:
            method = self.calibration_method()
            calibration, out_of_fold, table = robust_calibration(fit_columns, judged, instances, features, method,
                                                                 attacks["validation"], seed=self.run.config.training.seed,
                                                                 fit_attacks=attacks.get("train"))
            fits = {"calibrated": (calibration, out_of_fold), **fits}
            test = attacks["test"]
            method_aucs = test.family_aucs(test.columns[method])
            section.update(method=method, candidates=table,
                           check_examples=calibration.fitted_on["robust"]["n_check_examples"],
                           fit_split=self.settings.robustness_fit_split,
                           robustness={"method": method_aucs, **{
                name: {"aucs": (aucs := test.family_aucs(fit[0](test.columns))),
                       "shortfalls": robustness_shortfalls(aucs, method_aucs)} for name, fit in fits.items()}})
        else:
            fits = {"calibrated": fits["calibrated_agreement"]}
        out = {}
        for name, (calibration, out_of_fold) in fits.items():
            calibration.fitted_on.update(judgments=str(self.settings.judgments), human_column=human, half="select",
                                         split_seed=self.settings.split_seed, run_dir=str(self.run.dir))
            calibration.text_models.update(text_models(features, self.run))
            scores = calibration({f: columns[f] for f in features})
            scores[select] = out_of_fold
            out[name] = scores
        fits["calibrated"][0].save(self.dir / "calibration.json")
        return out, section

    def write_report(self, methods: Sequence[str], attacks: Mapping[str, AttackScores] | None = None
                     ) -> dict[str, Any]:
        records = self.records()
        columns = self.score_columns(methods)
        halves = instance_half([r["instance"] for r in records], self.settings.split_seed)
        kinds = {name: get_method(name.split("@")[0]).kind for name in columns if name not in self.baseline_columns} | {
            c: "column" for c in self.baseline_columns}
        titles = {name: get_method(name.split("@")[0]).title + (f" ({name.split('@')[1]})" if "@" in name else "")
                  for name in columns if name not in self.baseline_columns} | {
            c: f"{c} ({'lower' if s < 0 else 'higher'} = better)" for c, s in self.baseline_columns.items()}
        calibration: dict[str, Any] | None = None
        if self.settings.calibrate:
            calibrated, calibration = self.calibrated_columns(records, columns, halves, attacks)
            for name, values in calibrated.items():
                columns[name], kinds[name] = values, "metric"
                fit = "by agreement alone" if name == "calibrated_agreement" or self.settings.calibration_fit == \
                    "agreement" else "robust"
                titles[name] = f"Calibrated ({' + '.join(self.settings.calibrate)}; {fit})"
        keep = np.ones(len(records), dtype=bool)
        if self.settings.half != "all":
            keep = np.array([halves[r["instance"]] == self.settings.half for r in records])
        kept = [r for r, k in zip(records, keep, strict=True) if k]
        report: dict[str, Any] = {
            "judgments": str(self.settings.judgments), "dataset": self.run.config.data.dataset, "task": self.task(),
            "run_dir": str(self.run.dir), "backbone": self.run.config.model.backbone, "half": self.settings.half,
            "n_empty_rationales": sum(not r["rationale"] for r in kept),
            "metrics": {name: {"title": titles[name], "kind": kinds[name]} for name in columns},
            "human": {}, "settings": {**asdict(self.settings)},
            "timings": {stage: content["seconds"] for stage, content in self.runner.markers().items()},
            **({"calibration": calibration} if calibration else {})}
        for human in self.settings.human_columns:
            table = agreement_table({name: values[keep] for name, values in columns.items()},
                                    np.array([r["numbers"][human] for r in kept]), [r["instance"] for r in kept],
                                    n_boot=self.settings.n_boot, seed=self.run.config.training.seed)
            learned = [name for name in columns if kinds[name] == "metric"]
            report["human"][human] = {
                **{k: v for k, v in table.items() if k != "replicates"},
                "differences": {name: {other: {stat: difference(table, name, other, stat) for stat in STATISTICS}
                                       for other in columns if other != name} for name in learned},
                **ceiling_figures({name: values[keep] for name, values in columns.items()}, kept, human,
                                  table["metrics"])}
        write_human_report(report, self.dir, columns={n: v[keep] for n, v in columns.items()},
                           human={h: np.array([r["numbers"][h] for r in kept]) for h in self.settings.human_columns})
        return report


def ceiling_figures(columns: Mapping[str, np.ndarray], records: Sequence[Mapping[str, Any]], human: str,
                    metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Issue 32's figures beside the agreement table: select-1 per metric with random and oracle; the annotators'
    own agreement from their votes (when every record has the same number of votes for ``human``) and each metric's
    agreement as a share of it; with a ``source`` column, the point statistics per source (crowd vs GPT-3, ...)."""
    judged = np.array([r["numbers"][human] for r in records])
    instances = [r["instance"] for r in records]
    out: dict[str, Any] = {
        "select_1": {name: select_one(values, judged, instances) for name, values in columns.items()},
        "select_1_references": select_one_references(judged, instances)}
    votes = [r.get("votes", {}).get(human) for r in records]
    if all(votes) and len({len(v) for v in votes}) == 1 and len(votes[0]) >= 2:
        ceiling = annotator_agreement(votes, instances)
        out["annotators"] = ceiling
        out["share_of_ceiling"] = {name: {stat: share_of_ceiling(entry[stat]["value"], ceiling["one_vs_rest"][stat],
                                                                 stat) for stat in STATISTICS}
                                   for name, entry in metrics.items()}
    sources = sorted({r["source"] for r in records if "source" in r})
    if len(sources) > 1:
        out["by_source"] = {}
        for source in sources:
            rows = np.array([r.get("source") == source for r in records])
            ids = [i for i, keep in zip(instances, rows, strict=True) if keep]
            out["by_source"][source] = {"n": int(rows.sum()), "metrics": {
                name: point_statistics(values[rows], judged[rows], ids) for name, values in columns.items()}}
    return out


# --------------------------------------------------------------------------- rendering


def _interval(entry: Mapping[str, Any]) -> str:
    if entry["value"] is None:
        return "n/a"
    ci = entry.get("ci95")
    return f"{entry['value']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _number(value: float | None) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.3f}"


def _signed(entry: Mapping[str, Any]) -> str:
    if entry["value"] is None:
        return "n/a"
    ci = entry["ci95"]
    return f"{entry['value']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" + (" ✓" if entry["established"] else "")


def render_human_markdown(report: Mapping[str, Any]) -> str:
    """``human_report.md``: per human column, the agreement table and each learned metric's paired differences."""
    metrics = report["metrics"]
    out = [f"# Agreement with human judgments: {Path(report['judgments']).name}", "",
           f"Run `{report['run_dir']}` ({report['dataset']}, {report['backbone']}); instances: {report['half']}. "
           "Every interval is a 95% percentile bootstrap that resamples instances (an instance's explanations stay "
           "together). How to read it: `docs/human.md`.", ""]
    for human, entry in report["human"].items():
        out += [f"## {human}", "",
                f"{entry['n_explanations']} explanations of {entry['n_instances']} instances; {entry['n_pairs']} "
                f"within-instance pairs ranked differently by the annotators; {entry['n_acceptable']} acceptable "
                f"(≥ ½) and {entry['n_unacceptable']} unacceptable (0) explanations.", ""]
        robust = "robustness" in report.get("calibration", {})
        out.append(markdown_table(
            ["Metric", "Kind", *(STATISTIC_TITLES[s] for s in STATISTICS), "Select-1",
             *(["Worst VARSuite AUC (test)"] if robust else [])],
            [[metrics[name]["title"], metrics[name]["kind"], *(_interval(stats[s]) for s in STATISTICS),
              _number(entry.get("select_1", {}).get(name)), *([worst_family(report, name)] if robust else [])]
             for name, stats in entry["metrics"].items()]))
        if "select_1_references" in entry:
            refs = entry["select_1_references"]
            out += ["", f"Select-1 (Wiegreffe et al. 2022: the share of instances whose top-scored explanation is "
                    f"acceptable): random {refs['random']:.3f}, oracle {refs['oracle']:.3f}."]
        if "annotators" in entry:
            ceiling = entry["annotators"]
            out += ["", f"### The annotators' own agreement ({ceiling['n_annotators']} votes per explanation)", "",
                    "One annotator against the mean of the others, averaged over annotators"
                    + ("; split-half: one half of the annotators against the other" if "split_half" in ceiling else "")
                    + ". Each metric's agreement as a share of one-vs-rest (correlations: the ratio; pairwise and "
                    "AUC: the ratio of the distances above ½; n/a where the annotators' own agreement is within 0.1 of "
                    "chance, which is no ceiling).", ""]
            rows = [["one annotator vs the rest", *(_number(ceiling["one_vs_rest"][s]) for s in STATISTICS)]]
            if "split_half" in ceiling:
                rows.append(["split-half", *(_number(ceiling["split_half"][s]) for s in STATISTICS)])
            rows += [[f"{metrics[name]['title']} (share)", *(_number(shares[s]) for s in STATISTICS)]
                     for name, shares in entry["share_of_ceiling"].items()]
            out.append(markdown_table(["", *(STATISTIC_TITLES[s] for s in STATISTICS)], rows))
        if "by_source" in entry:
            sources = list(entry["by_source"])
            out += ["", "### By source of the explanation (Spearman ρ / AUC)", ""]
            out.append(markdown_table(
                ["Metric", *(f"{source} (n = {entry['by_source'][source]['n']})" for source in sources)],
                [[metrics[name]["title"], *(f"{_number(entry['by_source'][src]['metrics'][name]['spearman'])} / "
                                            f"{_number(entry['by_source'][src]['metrics'][name]['auc'])}"
                                            for src in sources)] for name in entry["metrics"]]))
        for name, others in entry["differences"].items():
            out += ["", f"### {metrics[name]['title']} minus each other metric (paired; ✓ = lower bound above 0)", ""]
            out.append(markdown_table(["Other", *(STATISTIC_TITLES[s] for s in STATISTICS)],
                                      [[metrics[other]["title"], *(_signed(diff[s]) for s in STATISTICS)]
                                       for other, diff in others.items()]))
    out += render_robustness(report)
    if report.get("n_empty_rationales"):
        out += ["", f"{report['n_empty_rationales']} explanations are empty; they are scored as the empty string."]
    return "\n".join(out) + "\n"


def plot_human_agreement(report: Mapping[str, Any], columns: Mapping[str, np.ndarray], human: np.ndarray,
                         human_name: str, path: str | os.PathLike) -> None:
    """One panel per metric: box plots of its scores at each human value, titled with Spearman ρ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(columns)
    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.7 * rows), dpi=110, squeeze=False)
    levels = np.unique(human)
    stats = report["human"][human_name]["metrics"]
    for ax, name in zip(axes.ravel(), names, strict=False):
        ax.boxplot([columns[name][human == level] for level in levels], showfliers=False)
        ax.set_xticks(range(1, len(levels) + 1), [f"{level:.2g}" for level in levels])
        rho = stats[name]["spearman"]["value"]
        title = textwrap.shorten(report["metrics"][name]["title"], width=44, placeholder="…")
        ax.set_title(f"{title}\nρ = {'n/a' if rho is None else f'{rho:.2f}'}", fontsize=8)
        ax.set_xlabel(human_name, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    fig.suptitle(f"Score against human judgment: {Path(report['judgments']).name} ({report['half']})", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)


def write_human_report(report: Mapping[str, Any], output_dir: str | os.PathLike, columns: Mapping[str, np.ndarray],
                       human: Mapping[str, np.ndarray]) -> dict[str, Path]:
    """Write ``human_report.json``, ``human_report.md`` and ``human_agreement.png`` (the first human column)."""
    output_dir = Path(output_dir)
    paths = {"json": output_dir / "human_report.json", "markdown": output_dir / "human_report.md",
             "plot": output_dir / "human_agreement.png"}
    write_json(paths["json"], dict(report))
    write_text(paths["markdown"], render_human_markdown(report))
    first = next(iter(human))
    plot_human_agreement(report, columns, human[first], first, paths["plot"])
    return paths


def human_evaluate(run_dir: str | os.PathLike, judgments: str | os.PathLike,
                   output_dir: str | os.PathLike | None = None, progress: bool = True,
                   **settings: Any) -> dict[str, Any]:
    """Python API of ``larev-hf human``: agreement of a trained run's metrics with the judgments in ``judgments``.

    ``settings`` are :class:`~larev_hf.meta.settings.HumanSettings` fields (``human_columns``, ``baseline_columns``,
    ``column_mapping``, ``methods``, ``half``, ``max_instances``, ``n_boot``). Returns the ``human_report.json`` content.

    Example::

        from larev_hf.meta import human_evaluate
        report = human_evaluate("runs/esnli", "../shared/data/human/snli_accept_train.jsonl",
                                baseline_columns=["gpt3_nll:lower"])
        report["human"]["acceptable"]["metrics"]["larev"]["spearman"]
    """
    return HumanEvaluation(Run.load(run_dir, progress), HumanSettings(judgments=str(judgments), **settings),
                           output_dir).execute()
