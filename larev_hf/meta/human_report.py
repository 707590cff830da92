"""The human-agreement report: the figures that put an agreement in context, ``human_report.md`` and the plot.

:func:`ceiling_figures` adds to each human column's agreement table what says how good an agreement is (select-1
with its random and oracle references, the annotators' own agreement as a ceiling, the statistics per source of the
explanations); :func:`write_human_report` writes ``human_report.json``, ``human_report.md``
(:func:`render_human_markdown`) and ``human_agreement.png`` (:func:`plot_human_agreement`). The report dict itself is
assembled by :class:`larev_hf.meta.human.HumanEvaluation`.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.io import write_json, write_text
from larev_hf.meta.human_stats import (
    STATISTICS,
    annotator_agreement,
    percentile_interval,
    point_statistics,
    select_one,
    select_one_references,
    select_one_replicates,
    share_of_ceiling,
)
from larev_hf.meta.robust_calibration import render_robustness, worst_family
from larev_hf.report import markdown_table, save_figure

#: How the report names each statistic of :data:`~larev_hf.meta.human_stats.STATISTICS`.
STATISTIC_TITLES = {"pairwise": "Pairwise agreement", "spearman": "Spearman ρ", "kendall": "Kendall τ-b",
                    "auc": "AUC acceptable vs not"}


def ceiling_figures(columns: Mapping[str, np.ndarray], records: Sequence[Mapping[str, Any]], human: str,
                    metrics: Mapping[str, Mapping[str, Any]], n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The figures beside the agreement table that say how good an agreement is: select-1 per metric with its 95%
    instance-bootstrap interval (the agreement table's draws for the same ``n_boot`` and ``seed``) and its random and
    oracle references (Wiegreffe et al. 2022, §5); the annotators' own agreement from their votes (when every record
    has the same number of votes for ``human``) and each metric's agreement as a share of it; with a ``source``
    column, the point statistics per source (crowd vs GPT-3, ...)."""
    judged = np.array([r["numbers"][human] for r in records])
    instances = [r["instance"] for r in records]
    out: dict[str, Any] = {
        "select_1": {name: select_one(values, judged, instances) for name, values in columns.items()},
        "select_1_ci95": {name: percentile_interval(select_one_replicates(values, judged, instances, n_boot, seed))
                          for name, values in columns.items()},
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


def _select_one(entry: Mapping[str, Any], name: str) -> str:
    """Select-1 with its interval where the report has one (reports written before it have none)."""
    value = entry.get("select_1", {}).get(name)
    ci = entry.get("select_1_ci95", {}).get(name)
    return _number(value) + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and value is not None else "")


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
              _select_one(entry, name), *([worst_family(report, name)] if robust else [])]
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
        if "generators" in entry:
            out += render_generators(entry["generators"], metrics)
        for name, others in entry["differences"].items():
            out += ["", f"### {metrics[name]['title']} minus each other metric (paired; ✓ = lower bound above 0)", ""]
            out.append(markdown_table(["Other", *(STATISTIC_TITLES[s] for s in STATISTICS)],
                                      [[metrics[other]["title"], *(_signed(diff[s]) for s in STATISTICS)]
                                       for other, diff in others.items()]))
    out += render_robustness(report)
    if report.get("n_empty_rationales"):
        out += ["", f"{report['n_empty_rationales']} explanations are empty; they are scored as the empty string."]
    return "\n".join(out) + "\n"


def render_generators(figures: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[str]:
    """RoRA's tables 2 and 3 (:mod:`larev_hf.meta.human_generators`): mean per generator and Kendall τ of the order;
    Spearman, Pearson and the partial Spearman given length per rationale."""
    names = figures["generators"]
    out = ["", "### By generator (RoRA table 2: the mean per generator; τ: Kendall τ of the order against people's, "
           "with its interval; P(τ = 1): the share of bootstrap replicates ordering the generators as people do)", "",
           markdown_table(["", *names, "τ", "P(τ = 1)"],
                          [["people", *(f"{figures['people'][g]:.2f}" for g in names), "1.00", ""],
                           *[[metrics[name]["title"], *(f"{entry['means'][g]:+.3f}" for g in names),
                              _tau(entry), f"{entry['share_tau_1']:.2f}" if "share_tau_1" in entry else "—"]
                             for name, entry in figures["metrics"].items()]]),
           "", "### Per rationale (RoRA table 3), and what each metric adds to length", "",
           markdown_table(["Metric", "Spearman ρ", "Pearson r", "partial ρ given length"],
                          [[metrics[name]["title"], _interval(entry["spearman"]), _interval(entry["pearson"]),
                            _interval(entry["partial_spearman_given_length"])
                            if "partial_spearman_given_length" in entry else "—"]
                           for name, entry in figures["metrics"].items()])]
    return out


def _tau(entry: Mapping[str, Any]) -> str:
    interval = entry.get("kendall_tau_ci95")
    text = _number(entry["kendall_tau"])
    return f"{text} [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else text


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
