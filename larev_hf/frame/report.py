"""FRAME's report: gathered from a run's evaluations (:func:`write_frame_report`: each seed's results, their
aggregate over the seeds, the library metrics' rows), then tables 1-3 in markdown (rows: metrics; cells: mean ± std
over seeds; the NRG) and the NRG plot, rendered from ``frame_report.json``'s content."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from larev_hf.frame.library import LIBRARY_COLUMNS, PERCENT_UNITS, aggregate_library, library_seed_results
from larev_hf.frame.meta_metrics import (
    AXIOM_TITLES,
    METRIC_NAMES,
    NOTE_MARKS,
    PAPER_DATASETS,
    PAPER_TABLES,
    RATIONALE_NAMES,
    RATIONALES,
    TABLE_COLUMNS,
    seed_summary,
)
from larev_hf.frame.seeds import aggregate_seeds, seed_results
from larev_hf.frame.variants import BASE, rationale_types
from larev_hf.io import read_json, read_jsonl, write_json, write_text
from larev_hf.methods import get_method
from larev_hf.report import markdown_table, save_figure


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def format_cell(entry: Mapping[str, Any], n_seeds: int, marks: str = "") -> str:
    """``mean (±std)`` as FRAME prints it; ``n/a`` where no seed defines it, ``[k/n seeds]`` where some do not, and
    the ``marks`` of :data:`NOTE_MARKS` (σ/|μ|, σ = 0)."""
    if not entry["n"]:
        return "n/a"
    cell = f"{entry['mean']:.2f} (±{entry['std']:.2f})"
    if entry["n"] < n_seeds:
        cell += f" [{entry['n']}/{n_seeds} seeds]"
    return cell + (f" {marks}" if marks else "")


def render_frame_markdown(report: Mapping[str, Any]) -> str:
    """FRAME's tables 1-3 (rows: metrics; columns: meta-metrics, mean ± std over the seeds, and the NRG), F's
    accuracies, Φ(ŷ) per variant of F, the accuracies behind Φ, the notes and the stage times."""

    seeds = report["seeds"]
    stand_ins = report["stand_ins"]
    lines = [f"# FRAME report: {report['dataset']} ({report['n_train']} train / {report['n_test']} test examples, "
             f"seeds {', '.join(map(str, seeds)) or '—'})", "",
             "Offline stand-ins for the paper's models (FRAME §3.3, §4.2):", ""]
    lines += [f"- {role}: `{', '.join(value) if isinstance(value, list) else value}`"
              for role, value in stand_ins.items() if value is not None]
    lines += ["", "Every cell: mean (±std) over the seeds (population std). NRG: Normalized Relative Gain across the "
              "metrics (§4), from the means; 'NRG per seed': the mean ± std of the per-seed NRG. Φ(r) = 𝟙_H(ŷ|x,r) − "
              "𝟙_G(ŷ|x) in accuracy points (§2.2)."]
    if not seeds:
        lines += ["", "No seed has finished yet."]
        return "\n".join(lines) + "\n"
    metrics = list(report["metrics"])
    marks: dict[tuple[str, str], str] = {}
    for note in report["notes"]:
        key = (note["metric"], note["meta_metric"])
        if NOTE_MARKS[note["kind"]] and NOTE_MARKS[note["kind"]] not in marks.get(key, ""):
            marks[key] = marks.get(key, "") + NOTE_MARKS[note["kind"]]
    for axiom in report["tables"]:
        columns = TABLE_COLUMNS[axiom]
        entry = report["nrg"][axiom]
        header = ["RLC metric", *[title for _, title in columns], "NRG (↑)", "NRG per seed"]
        extra = axiom == "axiom3" and "axiom3_ab" in report["nrg"]
        if extra:
            header.append("NRG (A, B) (↑)")
        rows = []
        for metric in metrics:
            cells = [format_cell(report["tables"][axiom][metric][name], len(seeds), marks.get((metric, name), ""))
                     for name, _ in columns]
            per_seed = entry["per_seed"][metric]
            row = [report["metrics"][metric], *cells, fmt((entry["values"] or {}).get(metric)),
                   format_cell(per_seed, len(seeds)) if per_seed["n"] else "n/a"]
            if extra:
                row.append(fmt((report["nrg"]["axiom3_ab"]["values"] or {}).get(metric)))
            rows.append(row)
        number = axiom[-1]
        lines += ["", f"## Table {number}: {AXIOM_TITLES[axiom]}", "", markdown_table(header, rows)]
        if entry["dropped"]:
            lines += ["", f"NRG without {', '.join(entry['dropped'])} (undefined for some metric)."]
        if extra:
            lines += ["", "NRG (A, B): the NRG of the % Train and % Noisy Train SCVs alone — the paper's printed 'All' "
                      "column of table 3 is exactly this (docs/frame.md)."]
        if "library" in report and axiom in report["library"]["tables"]:
            lines += render_library_table(report["library"], axiom)
    if report.get("paper"):
        lines += render_paper_comparison(report["paper"])
    if "task_model" in report:
        rows = [[name, fmt(entry["test_accuracy"]["mean"]) + f" (±{fmt(entry['test_accuracy']['std'])})",
                 fmt(entry["train_accuracy"]["mean"]) + f" (±{fmt(entry['train_accuracy']['std'])})",
                 ", ".join(report["variants"][name]["factors"]) or "—"]
                for name, entry in report["task_model"].items()]
        lines += ["", "## The task model F", "", "Accuracy of F's labels ŷ against the gold ẏ, percent.", "",
                  markdown_table(["variant", "test accuracy", "train accuracy", "factors"], rows)]
    if "phi_by_variant" in report:
        variants = list(report["variants"])
        rows = [[report["metrics"][m], *[format_cell(report["phi_by_variant"][m][v], len(seeds)) for v in variants]]
                for m in metrics]
        lines += ["", "## Φ(ŷ) per variant of F (axiom 3, FRAME Fig. 7-8)", "",
                  markdown_table(["RLC metric", *variants], rows)]
    kinds = list(next(iter(report["accuracy"].values()))["treatment"])
    rows = [[report["metrics"][m], format_cell(report["accuracy"][m]["control"], len(seeds)),
             *[format_cell(report["accuracy"][m]["treatment"][k], len(seeds)) for k in kinds]] for m in metrics]
    lines += ["", "## Accuracies of the default F's simulators", "",
              "𝟙_G(ŷ|x) and 𝟙_H(ŷ|x,r) per rationale r, percent.", "",
              markdown_table(["RLC metric", "𝟙_G(ŷ|x)", *[f"𝟙_H(ŷ|x,{RATIONALE_NAMES[k]})" for k in kinds]], rows)]
    if report["notes"]:
        lines += ["", "## Notes", "", "n/a: undefined in every seed; [k/n seeds]: defined in k seeds; †: σ/|μ| "
                  "(μ < 0) in some seed; ‡: SCV 0 where every setting gave the same Φ(ŷ) ≤ 0 in some seed.", ""]
        lines += [f"- seed {n['seed']}, {report['metrics'][n['metric']]}, {n['meta_metric']}: {n['text']}"
                  for n in report["notes"]]
    if report.get("stage_seconds"):
        lines += ["", "## Stage wall times (s)", "",
                  markdown_table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in report["stage_seconds"].items()])]
    return "\n".join(lines) + "\n"


def paper_comparison(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Our seed means against FRAME's printed means for the paper's version of the dataset (:data:`PAPER_TABLES`):
    per meta-metric the four RLC metrics' values on both sides, whether each sign agrees and Kendall's τ-b of their
    order (scipy); per table the metric the NRG ranks first on both sides (table 3: the paper's printed NRG is that
    of its first two columns, compared with our "NRG (A, B)"). None when the dataset or the metrics differ."""

    key = PAPER_DATASETS.get(report["dataset"])
    metrics = list(METRIC_NAMES)
    if key is None or list(report.get("metrics", {})) != metrics or "tables" not in report:
        return None
    out: dict[str, Any] = {"dataset": key, "tables": {}}
    for axiom, cells in report["tables"].items():
        rows, printed = PAPER_TABLES[axiom][key]
        entry: dict[str, Any] = {"meta_metrics": {}}
        for j, (name, _) in enumerate(TABLE_COLUMNS[axiom]):
            ours = [cells[m][name]["mean"] for m in metrics]
            paper = [row[j] for row in rows]
            defined = all(v is not None for v in ours)
            tau = kendalltau(ours, paper).statistic if defined and len(set(ours)) > 1 else None
            entry["meta_metrics"][name] = {
                "ours": dict(zip(metrics, ours, strict=True)), "paper": dict(zip(metrics, paper, strict=True)),
                "same_sign": [None if o is None else bool(np.sign(o) == np.sign(p)) for o, p in zip(ours, paper, strict=True)],
                "kendall_tau": None if tau is None or np.isnan(tau) else float(tau)}
        ours_nrg = report["nrg"]["axiom3_ab" if axiom == "axiom3" else axiom]["values"] or {}
        entry["nrg_best"] = {"ours": max(ours_nrg, key=ours_nrg.get) if ours_nrg else None,
                             "paper": metrics[int(np.argmax(printed))]}
        entry["nrg"] = {"ours": dict(ours_nrg), "paper": dict(zip(metrics, printed, strict=True))}
        out["tables"][axiom] = entry
    return out


def render_paper_comparison(comparison: Mapping[str, Any]) -> list[str]:
    """The markdown lines of :func:`paper_comparison`."""

    names = [METRIC_NAMES[m] for m in METRIC_NAMES]
    rows = []
    for axiom, entry in comparison["tables"].items():
        titles = dict(TABLE_COLUMNS[axiom])
        for name, cell in entry["meta_metrics"].items():
            rows.append([f"{axiom[-1]}", titles[name], " / ".join(fmt(v) for v in cell["ours"].values()),
                         " / ".join(fmt(v) for v in cell["paper"].values()),
                         f"{sum(bool(x) for x in cell['same_sign'])}/{len(cell['same_sign'])}",
                         fmt(cell["kendall_tau"])])
        rows.append([f"{axiom[-1]}", "NRG" + (" (A, B)" if axiom == "axiom3" else ""),
                     " / ".join(fmt(entry["nrg"]["ours"].get(m)) for m in METRIC_NAMES),
                     " / ".join(fmt(v) for v in entry["nrg"]["paper"].values()),
                     "", f"best: {METRIC_NAMES.get(entry['nrg_best']['ours'], '—')} (paper "
                         f"{METRIC_NAMES[entry['nrg_best']['paper']]})"])
    return ["", f"## Against the paper (FRAME's printed means, {comparison['dataset']})", "",
            f"Values in the order {' / '.join(names)}; 'signs': how many of the four agree in sign with the paper's; "
            "τ: Kendall's τ-b between the two orders of the four metrics (1 = same order).", "",
            markdown_table(["table", "meta-metric", "ours", "paper", "signs", "τ / NRG"], rows)]


def render_library_table(library: Mapping[str, Any], axiom: str) -> list[str]:
    """The markdown lines of the library metrics' rows of one axiom's table."""

    n_seeds = len(library["seeds"])
    columns = LIBRARY_COLUMNS[axiom]
    header = ["Library metric", "unit", *[title for _, title in columns], "NRG within unit (↑)"]
    if axiom in ("axiom1", "axiom2"):
        header.append("holds in")
    rows = []
    for name, title in library["methods"].items():
        unit = "points" if library["units"][name] in PERCENT_UNITS else library["units"][name]
        row = [title, unit, *[format_cell(library["tables"][axiom][name][column], n_seeds) for column, _ in columns],
               "—" if library["nrg"][axiom]["values"] is None or name not in library["nrg"][axiom]["values"]
               else f"{library['nrg'][axiom]['values'][name]:.2f}"]
        if axiom in ("axiom1", "axiom2"):
            row.append(f"{library['holds'][name][axiom]}/{n_seeds} seeds")
        rows.append(row)
    return ["", "Library metrics under the same axiom (mean pointwise score with label ŷ; adaptation in "
            "docs/frame.md; holds: axiom 1 ⇔ Φ_m(ŷ) above Φ_m of r̂, ṙ and ẏ, axiom 2 ⇔ contrastive ASD > "
            "equivalent ASD):", "", markdown_table(header, rows)]


def plot_axioms(report: Mapping[str, Any], path: str | os.PathLike) -> None:
    """A grouped bar chart: per axiom, one bar per RLC metric at its NRG (from the means), the per-seed std as
    error bars; an undefined NRG is marked n/a."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    axioms = list(report["tables"])
    metrics = list(report["metrics"])
    width = 0.8 / max(1, len(metrics))
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for k, metric in enumerate(metrics):
        xs = np.arange(len(axioms)) + (k - (len(metrics) - 1) / 2) * width
        heights = [(report["nrg"][a]["values"] or {}).get(metric) for a in axioms]
        errors = [report["nrg"][a]["per_seed"][metric]["std"] or 0.0 for a in axioms]
        ax.bar(xs, [h or 0.0 for h in heights], width, yerr=errors, capsize=2, label=report["metrics"][metric])
        for x, h in zip(xs, heights, strict=True):
            if h is None:
                ax.annotate("n/a", (x, 0.02), ha="center", fontsize=7, rotation=90)
    ax.set_xticks(np.arange(len(axioms)))
    ax.set_xticklabels([f"Axiom {a[-1]}" for a in axioms])
    ax.set_ylabel("NRG (↑)")
    ax.set_ylim(0, 1.3)
    ax.legend(fontsize=8, ncol=min(4, len(metrics)), loc="upper center")
    ax.set_title(f"FRAME — {report['dataset']}")
    fig.tight_layout()
    save_figure(fig, path)


# ---------------------------------------------------------------------- the report of a run
def seed_report(run: Any, seed: int) -> dict[str, Any]:
    """One finished seed's results (also written to ``results/seed<s>.json``)."""
    variants, factors = run.plan()
    s = run.settings
    evaluations = {metric: {v.name: [row for _, row in read_jsonl(run.paths.evaluation_path(metric, v.name, seed))]
                            for v in variants} for metric in s.metrics}
    results = seed_results(evaluations, factors, s.axioms, s.scv_denominator, s.n_boot, seed)
    results["seed"] = seed
    results["task_model"] = {}
    for v in variants:
        training = read_json(run.paths.task_dir(v.name, seed) / "training.json")
        results["task_model"][v.name] = {key: training[key] for key in (
            "backbone", "train_share", "noise_share", "n_trained", "train_accuracy", "test_accuracy", "repaired")}
        results["task_model"][v.name]["n_flipped"] = len(training["flipped_ids"])
    for metric in s.metrics:
        if metric == "f_gold":
            rows = evaluations[metric][BASE]
            results["metrics"][metric]["repaired"] = {kind: int(sum(row["repaired"][kind] for row in rows))
                                                     for kind in rows[0]["repaired"]}
    write_json(run.dir / "results" / f"seed{seed}.json", results)
    return results


def library_report(run: Any, seeds: Sequence[int]) -> dict[str, Any]:
    """The library metrics' rows of tables 1-3 over the seeds whose ``library`` stage has finished."""

    s = run.settings
    variants, factors = run.plan()
    columns = [(column, method) for column, method, _ in run.library.columns()]
    units = {column: get_method(method).unit for column, method in columns}
    titles = {column: get_method(method).title + ("" if column == method else f" ({column.partition('@')[2]})")
              for column, method in columns}
    per_seed = {}
    for seed in seeds:
        rows = {c: {v.name: [row for _, row in read_jsonl(run.paths.library_path(c, v.name, seed))] for v in variants}
                for c, _ in columns}
        per_seed[seed] = library_seed_results(rows, units, factors, s.axioms, s.scv_denominator, s.n_boot, seed)
        write_json(run.dir / "results" / f"library_seed{seed}.json", per_seed[seed])
    report = aggregate_library(per_seed, titles, units, s.axioms)
    report["run"] = str(run.library.run().dir)
    report["backbone"] = run.library.run().config.model.backbone
    return report


def write_frame_report(run: Any) -> dict[str, Any]:
    """Every finished seed's results (``results/seed<s>.json``) and the report over the seeds (``frame_report.json``,
    ``frame_report.md``, ``frame_axioms.png``), rebuilt from the evaluations; returns the report."""
    s = run.settings
    variants, factors = run.plan()
    seeds = [seed for seed in s.seed_values() if run.runner.is_done(f"axioms-s{seed}")]
    per_seed = {seed: seed_report(run, seed) for seed in seeds}
    report: dict[str, Any] = {
        "dataset": s.dataset, "settings": asdict(s), "seeds": seeds,
        "n_train": len(run.records("train")), "n_test": len(run.records("test")),
        "metrics": {m: METRIC_NAMES[m] for m in s.metrics},
        "stand_ins": {
            "F (T5-Base)": s.task_backbone,
            "pretrained G, H (T5-Base; GH-GOLD, GH-PRED)": s.pretrained_simulator,
            "non-pretrained G, H (NP-GH-PRED)": s.scratch_simulator,
            "capacity (T5-Small / Base / Large)": list(s.capacity_backbones) if "3" in s.axioms else None,
        },
        "variants": {v.name: {**asdict(v), "factors": [f for f, names in factors.items() if v.name in names]}
                     for v in variants},
        "factors": factors,
    }
    if per_seed:
        report.update(aggregate_seeds(per_seed, s.metrics, s.axioms))
        report["task_model"] = {v.name: {key: seed_summary([per_seed[x]["task_model"][v.name][key] for x in seeds])
                                         for key in ("test_accuracy", "train_accuracy")} for v in variants}
        base_rationales = [k for k in RATIONALES if k in rationale_types(s.axioms, True)]
        report["accuracy"] = {m: {"control": seed_summary([per_seed[x]["metrics"][m]["accuracy"][BASE]["control"]
                                                       for x in seeds]),
                                  "treatment": {k: seed_summary([per_seed[x]["metrics"][m]["accuracy"][BASE]["treatment"][k]
                                                             for x in seeds]) for k in base_rationales}}
                              for m in s.metrics}
        if "3" in s.axioms:
            report["phi_by_variant"] = {m: {v.name: seed_summary([per_seed[x]["metrics"][m]["phi_by_variant"][v.name]
                                                              for x in seeds]) for v in variants}
                                        for m in s.metrics}
        report["phi_reference_ci95"] = {m: {str(x): per_seed[x]["metrics"][m]["phi_reference_ci95"] for x in seeds}
                                        for m in s.metrics}
    if per_seed:
        report["paper"] = paper_comparison(report)
    library_seeds = [seed for seed in seeds if run.runner.is_done(f"library-s{seed}")]
    if run.settings.library_run is not None and library_seeds:
        report["library"] = library_report(run, library_seeds)
    markers = run.runner.markers()
    report["stage_seconds"] = {name: markers[name]["seconds"] for name, _ in run.stages() if name in markers}
    write_json(run.dir / "frame_report.json", report)
    write_text(run.dir / "frame_report.md", render_frame_markdown(report))
    if per_seed:
        plot_axioms(report, run.dir / "frame_axioms.png")
    return report
