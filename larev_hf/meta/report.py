"""The meta report: each method's summary over the VARSuite families, and its markdown table and heatmap.

:func:`meta_summary` turns one method's scored suite rows (``scores/<method>.jsonl``: ``id``, ``family``, ``score``)
into the statistics of :func:`larev_hf.meta.stats.summarize_method` (per family the AUC of gold against it with its
bootstrap interval, the paired win rate and the mean separation; the worst-family AUC and Kendall τ-b against VARIF
H5's order) and, given the gold labels, each family's AUC within every label. :func:`assemble_report` makes
``meta_report.json`` of the summaries; :func:`write_meta_report` writes it with ``meta_report.md`` and
``meta_heatmap.png``. A run's meta-evaluation (:mod:`larev_hf.meta.evaluation`) and the meta-evaluation of bundles
(:mod:`larev_hf.meta.bundles`) both report through here. For a multi-seed run (``larev-hf run --seeds``),
:func:`seed_aucs` and :func:`render_seed_aucs` give each family's AUC per evaluator seed, across seeds, and the
ensemble's (docs/reliability.md): a verdict about which metric to trust should not be one seed's luck.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.io import write_json, write_text
from larev_hf.meta.settings import FAMILY_LETTERS, REFERENCE
from larev_hf.meta.stats import EXPECTED_ORDER, NOT_WORSE_THAN_GOLD, auc, paired_win_rate, summarize_method
from larev_hf.methods import get_method
from larev_hf.report import markdown_table, save_figure, variant_title


def scored_rows(rows: Sequence[Mapping[str, Any]], scores: Sequence[float]) -> list[dict[str, Any]]:
    """``{id, family, score}`` per suite row: what ``scores/<method>.jsonl`` holds and :func:`meta_summary` reads."""
    return [{"id": row["id"], "family": row["family"], "score": float(value)}
            for row, value in zip(rows, scores, strict=True)]


def by_label_aucs(scored_rows: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> dict[str, dict]:
    """Per gold label (``labels``: example id → gold label), per family: the AUC of gold against the family on that
    label's examples, the paired gold-win rate (ties ½), the mean separation gold − family and the number of pairs (a
    leak that works for one label is hidden in the AUC over all labels)."""
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
                                 "mean_separation": float(np.mean(g - f)), "n": len(pairs)}
        out[str(label)] = cells
    return out


def meta_summary(name: str, scored_rows: Sequence[Mapping[str, Any]], n_boot: int = 1000, seed: int = 0,
                 title: str | None = None, labels: Mapping[str, str] | None = None) -> dict:
    """:func:`~larev_hf.meta.stats.summarize_method` of one method's scored suite rows (``id``, ``family``,
    ``score``), with the method's title (or ``title``), kind and unit; with ``labels`` (id → gold label) also
    :func:`by_label_aucs` as ``by_label``; and :func:`leak_gain` as ``leak_gain`` where ``gold_leaky`` is scored."""
    scores: dict[str, list[float]] = {}
    ids: dict[str, list[str]] = {}
    for row in scored_rows:
        scores.setdefault(row["family"], []).append(row["score"])
        ids.setdefault(row["family"], []).append(row["id"])
    method = get_method(name)
    summary = summarize_method(scores, ids, n_boot=n_boot, seed=seed, reference=REFERENCE)
    out = {"title": title or method.title, "kind": method.kind, "unit": method.unit, **summary,
           **({"by_label": by_label_aucs(scored_rows, labels)} if labels else {})}
    if (gain := leak_gain(out)) is not None:
        out["leak_gain"] = gain
    return out


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


#: The family whose separation from the gold is the leak's gain: the gold with "The answer is <label>." appended.
LEAK_FAMILY = "gold_leaky"


def leak_gain(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """A method's gain from appending the label sentence to the gold, mean score(gold_leaky) − score(gold) over the
    examples (the negated mean separation, in the metric's unit), with its paired 95% interval and, where the summary
    has them, per gold label; ``None`` without a scored ``gold_leaky`` family. A leakage-aware metric gains ≈ 0
    (REV §3, LAREV's aim); a metric that rewards stating the label gains > 0."""
    cell = entry["families"].get(LEAK_FAMILY)
    if not cell or cell.get("mean_separation") is None:
        return None
    ci = cell.get("separation_ci95")
    out: dict[str, Any] = {"value": -cell["mean_separation"], "ci95": [-ci[1], -ci[0]] if ci else None,
                           "n": cell["n"]}
    by_label = {label: -cells[LEAK_FAMILY]["mean_separation"] for label, cells in entry.get("by_label", {}).items()
                if cells.get(LEAK_FAMILY, {}).get("mean_separation") is not None}
    if by_label:
        out["by_label"] = by_label
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
    gains = {name: gain for name, entry in methods.items() if (gain := leak_gain(entry)) is not None}
    if gains:
        labels = list(dict.fromkeys(label for gain in gains.values() for label in gain.get("by_label", {})))
        out += ["", "## The leak's gain: gold + \"The answer is <label>.\" − gold (paired, the metric's unit) "
                "[95%]", "", "What a rationale gains by stating its label after the gold's own content: ≈ 0 for a "
                "leakage-aware metric, > 0 where stating the label is rewarded.", ""]
        out.append(markdown_table(
            ["Method", "Unit", "Gain [95% interval]", *labels],
            [[methods[name]["title"], methods[name]["unit"],
              f"{gain['value']:+.3f}" + (f" [{gain['ci95'][0]:+.3f}, {gain['ci95'][1]:+.3f}]" if gain["ci95"] else ""),
              *(f"{gain['by_label'][label]:+.3f}" if label in gain.get("by_label", {}) else "n/a" for label in labels)]
             for name, gain in gains.items()]))
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


def _by_family(rows: Sequence[Mapping[str, Any]]) -> tuple[dict[str, list[float]], dict[str, list[str]]]:
    scores: dict[str, list[float]] = {}
    ids: dict[str, list[str]] = {}
    for row in rows:
        scores.setdefault(row["family"], []).append(row["score"])
        ids.setdefault(row["family"], []).append(row["id"])
    return scores, ids


def seed_aucs(method: str, rows_by_seed: Mapping[int, Sequence[Mapping[str, Any]]], n_boot: int = 1000,
              seed: int = 0) -> dict[str, Any]:
    """Per family: each seed's AUC of gold against it, their mean and SD (ddof 1), and the ensemble's AUC with its
    interval (the ensemble scores a row by the mean of the seeds' scores of that row)."""
    per_seed = {}
    for s, rows in rows_by_seed.items():
        scores, ids = _by_family(rows)
        per_seed[s] = summarize_method(scores, ids, n_boot=1, seed=seed, reference=REFERENCE)["families"]
    table: dict[tuple[str, str], list[float]] = {}
    for rows in rows_by_seed.values():
        for row in rows:
            table.setdefault((row["family"], row["id"]), []).append(row["score"])
    mean_rows = [{"family": f, "id": i, "score": float(np.mean(v))} for (f, i), v in table.items()]
    scores, ids = _by_family(mean_rows)
    ensemble = summarize_method(scores, ids, n_boot=n_boot, seed=seed, reference=REFERENCE)["families"]
    families = {}
    for family, stats in ensemble.items():
        values = [per_seed[s][family]["auc"] for s in per_seed if per_seed[s][family]["auc"] is not None]
        families[family] = {"per_seed": {str(s): per_seed[s][family]["auc"] for s in per_seed},
                            "mean": float(np.mean(values)) if values else None,
                            "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None,
                            "ensemble": {"auc": stats["auc"], "ci95": stats["ci95"]}}
    return {"method": method, "seeds": [int(s) for s in rows_by_seed], "families": families}


def render_seed_aucs(report: Mapping[str, Any]) -> list[str]:
    """Markdown lines: per learned metric and family, the AUC in each seed, mean ± SD and the ensemble's."""
    if not report.get("seeds"):
        return []
    rows = []
    for name, entry in report["seeds"].items():
        for family, stats in entry["families"].items():
            ensemble = stats["ensemble"]
            rows.append([report["methods"][name]["title"], variant_title(family),
                         " / ".join("n/a" if v is None else f"{v:.3f}" for v in stats["per_seed"].values()),
                         "n/a" if stats["mean"] is None else f"{stats['mean']:.3f} ± {stats['sd'] or 0:.3f}",
                         "n/a" if ensemble["auc"] is None else
                         f"{ensemble['auc']:.3f} [{ensemble['ci95'][0]:.3f}, {ensemble['ci95'][1]:.3f}]"])
    seeds = ", ".join(str(s) for s in next(iter(report["seeds"].values()))["seeds"])
    return ["", f"## AUC per evaluator seed ({seeds}) and combined", "",
            "The tables above are the first seed's. Ensemble: each row scored by the mean of the seeds' scores.", "",
            markdown_table(["Method", "Family", "Per seed", "Mean ± SD", "Ensemble [95%]"], rows)]
