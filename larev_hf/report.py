"""Reports in the thesis's layout: ``report.json``, ``report.md`` and a bar chart PNG.

``report.json`` always has ``{"dataset", "split", "n_examples", "methods": {METHOD: {"absolute",
"separations", "ci95", "win_rate"}}}`` (see :func:`larev_hf.scores.summarize_variants`);
optional keys: ``accuracy`` (evaluator accuracy per model and variant, thesis table 5.7),
``ablations``, ``settings`` and ``timings``. The accuracy-based methods LAS and RQ
(:func:`larev_hf.scores.simulatability.summarize_simulatability`) have ``"unit": "accuracy"``,
LAS ``groups`` instead of ``win_rate``, and ``None`` where LAS is undefined; they get their own
tables and stay out of the chart, whose axis is in nats. The metric baselines (VARIF §5) carry
``"kind": "baseline"`` and their own ``unit``; they get their own tables too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from larev_hf.io import atomic_path, write_json, write_text
from larev_hf.scores.stats import VARIANTS

VARIANT_TITLES = {"gold": "Gold", "gold_leaky": "Gold-Leaky", "vacuous": "Vacuous", "leaky": "Leaky"}
SEPARATION_TITLES = {
    "gold_minus_leaky": "Gold − Leaky",
    "gold_minus_gold_leaky": "Gold − Gold-Leaky",
    "gold_minus_vacuous": "Gold − Vacuous",
    "sum": "SUM",
}


#: Run settings that change what the evaluators learn, not only how fast: a report names each one that is on.
TRAINING_SHORTCUTS = ("lora", "freeze_word_embeddings")


def variant_title(variant: str) -> str:
    """How tables name a variant: the thesis's names for its four, ``pseudo_specific`` → "Pseudo-Specific" otherwise."""
    return VARIANT_TITLES.get(variant) or "-".join(part.capitalize() for part in variant.split("_"))


def separation_title(key: str) -> str:
    """``gold_minus_<variant>`` → "Gold − <Variant>"; ``sum`` → "SUM"."""
    if key in SEPARATION_TITLES:
        return SEPARATION_TITLES[key]
    return f"Gold − {variant_title(key.removeprefix('gold_minus_'))}"


def _union(entries: Any, field: str) -> list[str]:
    """The keys of ``entry[field]`` over all entries, in first-seen order (the variants are an open set)."""
    keys: dict[str, None] = {}
    for entry in entries:
        keys.update(dict.fromkeys(entry.get(field) or {}))
    return list(keys)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _group(entry: dict[str, Any]) -> str:
    """Which tables a method entry belongs to: ``"nats"`` (REV, LAREV, RoRA), ``"accuracy"`` (LAS, RQ: accuracy
    differences) or ``"baseline"`` (the heuristic metric baselines of VARIF §5, each in its own unit)."""
    if entry.get("kind") == "baseline":
        return "baseline"
    return "accuracy" if entry.get("unit") == "accuracy" else "nats"


def _in_group(report: dict[str, Any], group: str) -> dict[str, Any]:
    return {name: e for name, e in report["methods"].items() if _group(e) == group}


def _separation_cell(entry: dict[str, Any], key: str) -> str:
    if key not in entry["separations"]:
        return ""
    low, high = entry["ci95"][key]
    return f"{_fmt(entry['separations'][key])} [{_fmt(low)}, {_fmt(high)}]"


def _separation_table(methods: dict[str, Any]) -> str:
    keys = _union(methods.values(), "separations")
    return markdown_table(["Method"] + [separation_title(k) for k in keys],
                  [[name.upper()] + [_separation_cell(e, k) for k in keys] for name, e in methods.items()])


def _absolute_table(methods: dict[str, Any]) -> str:
    variants = _union(methods.values(), "absolute")
    return markdown_table(["Method"] + [variant_title(v) for v in variants],
                  [[name.upper()] + [_fmt(e["absolute"][v]) if v in e["absolute"] else "" for v in variants]
                   for name, e in methods.items()])


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (the run report and the meta report both use it)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def save_figure(fig: Any, path: str | os.PathLike) -> None:
    """Write a matplotlib figure as PNG atomically and close it."""
    import matplotlib.pyplot as plt

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


#: Where a reader of report.md learns to read it.
READING_GUIDE = "the section \"Reading a report\" of docs/reports.md in the larev-hf documentation"


def _listing(items: list[str], last: str = "and") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


#: A separation whose whole 95% interval lies closer to 0 than this (nats) is reported as none: the table rounds it to
#: ±0.00 and a verdict of "above" or "below" would be read as an effect.
NEGLIGIBLE_NATS = 0.01


def verdict(report: dict[str, Any]) -> list[str]:
    """One sentence per metric, derived from its separations' 95% intervals: which variants it separates from Gold
    (interval above 0), which it does not (interval includes 0, or lies within ±:data:`NEGLIGIBLE_NATS` nats) and
    which it prefers to Gold (interval below 0)."""
    lines = []
    for name, entry in report["methods"].items():
        if _group(entry) == "baseline":
            continue
        separated, unclear, reversed_, leaky_note = [], [], [], ""
        for key, (low, high) in entry["ci95"].items():
            if key == "sum" or low is None or high is None:
                continue
            if _group(entry) == "nats" and max(abs(low), abs(high)) < NEGLIGIBLE_NATS:
                low, high = 0.0, 0.0  # a difference too small to state a direction
            if key == "gold_minus_gold_leaky":  # gold + the label: scoring it like gold is right, above gold is not
                leaky_note = ("rewards the appended label (Gold-Leaky above Gold)" if high < 0 else
                              "scores Gold-Leaky like Gold (right: it holds all of gold's content)" if low <= 0 else
                              "scores Gold-Leaky below Gold")
                continue
            title = variant_title(key.removeprefix("gold_minus_"))
            (separated if low > 0 else reversed_ if high < 0 else unclear).append(title)
        parts = []
        if separated:
            parts.append(f"separates Gold from {_listing(separated)}")
        if unclear:
            parts.append(f"does not separate Gold from {_listing(unclear, 'or')} (the interval includes 0 or lies "
                         f"within ±{NEGLIGIBLE_NATS} nats)")
        if reversed_:
            parts.append(f"scores {_listing(reversed_)} above Gold")
        if leaky_note:
            parts.append(leaky_note)
        sentence = f"**{name.upper()}** " + ("; ".join(parts) if parts else "has no defined separation") + "."
        absolute = [abs(v) for v in entry["absolute"].values() if v is not None]
        if _group(entry) == "nats" and absolute and max(absolute) < 0.05:
            sentence += (" Every variant scores near 0 nats: the rationale model gains almost nothing over the "
                         "baseline model, whose vacuous baseline already states the label (thesis §4.4).")
        lines.append(sentence)
    return lines


def backbone_defaults_lines(settings: dict[str, Any]) -> list[str]:
    """One line per source of the settings the backbone decided: ``--flag value`` each, so a reader sees
    which values the run did not ask for (``run_config.json``'s ``backbone_defaults``)."""
    by_source: dict[str, list[str]] = {}
    for name, source in (settings.get("backbone_defaults") or {}).items():
        by_source.setdefault(source, []).append(f"`--{name.replace('_', '-')} {settings.get(name)}`")
    if not by_source:
        return []
    return ["Settings the run left to its backbone (`backbone_defaults` in run_config.json): "
            + "; ".join(f"{source}: {', '.join(flags)}" for source, flags in by_source.items()) + ".", ""]


#: How close to the majority class a rationale model's accuracy with gold rationales may come before the report warns
#: that its scores are noise (the export trust check asks more: 80% and above chance, docs/hub.md).
NEAR_MAJORITY = 0.05


def majority_class(labels: list[str]) -> dict[str, Any] | None:
    """The most frequent gold label and the accuracy of always answering it: the floor an evaluator must clear."""
    if not labels:
        return None
    label = max(sorted(set(labels)), key=labels.count)
    return {"label": label, "accuracy": labels.count(label) / len(labels)}


def accuracy_warnings(report: dict[str, Any]) -> list[str]:
    """One sentence per rationale-reading model whose per-example scores say little about the rationale:

    - accuracy with gold rationales within :data:`NEAR_MAJORITY` of always answering the majority class: it has not
      learned the task, so its scores are noise;
    - accuracy with the vacuous baseline alone above the majority class and within :data:`NEAR_MAJORITY` of (or above)
      its accuracy with the gold rationales: it reads the answer from the baseline or the input, not from the
      rationale (REV's Φ does so by design wherever b states the label; for Φ_LA or RoRA's Φ it means the leakage
      was not removed).
    """
    majority = report.get("majority_class")
    if not majority:
        return []
    out = []
    for model, values in (report.get("accuracy") or {}).items():
        gold, vacuous = values.get("gold"), values.get("vacuous")
        if gold is not None and gold < majority["accuracy"] + NEAR_MAJORITY:
            out.append(f"`{model}` is right on {100 * gold:.1f}% of {report['split']} examples with the gold rationales; "
                       f"always answering '{majority['label']}' is right on {100 * majority['accuracy']:.1f}%. It has not "
                       "learned the task: its per-example scores are noise (train more rows or a stronger backbone; "
                       "`larev-hf export` and `evaluate` refuse such evaluators)")
        elif (gold is not None and vacuous is not None and vacuous >= majority["accuracy"] + NEAR_MAJORITY
              and vacuous >= gold - NEAR_MAJORITY):
            out.append(f"`{model}` is right on {100 * vacuous:.1f}% of {report['split']} examples with the vacuous "
                       f"baseline alone and {100 * gold:.1f}% with the gold rationales: it reads the answer from the "
                       "baseline or the input, not from the rationale, so its per-example scores say little about the "
                       "rationale")
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """Markdown: a verdict derived from the numbers, then absolute scores, separations with 95% intervals, win rates,
    accuracy, ablations and stage times."""
    methods, simulated = _in_group(report, "nats"), _in_group(report, "accuracy")
    baselines = _in_group(report, "baseline")
    out = [f"# Rationale evaluation report: {report['dataset']} ({report['split']}, n = {report['n_examples']})", ""]
    shortcuts = [name for name in TRAINING_SHORTCUTS if (report.get("settings") or {}).get(name)]
    if shortcuts:
        flags = [f"`--{name.replace('_', '-')}`" for name in shortcuts]
        out += [f"Trained with {_listing(flags)}: settings that change what the evaluators learn (docs/scale.md).", ""]
    out += backbone_defaults_lines(report.get("settings") or {})
    warnings = accuracy_warnings(report)
    if warnings:
        out += ["## Warning: evaluators that do not read the rationale", "", *(f"- {line}" for line in warnings), ""]
    out += ["## Verdict", "", *(f"- {line}" for line in verdict(report)), "",
            "A separation is a metric's Gold score minus a degraded variant's (Gold-Leaky: gold + \"The answer is "
            "<label>.\"; Vacuous: the vacuous baseline b alone, which restates the input with the label; Leaky: the "
            "label sentence alone). A good metric separates Gold "
            f"from Vacuous and Leaky and gives Gold-Leaky no more than Gold. How to read this report: {READING_GUIDE}.", ""]
    if methods:
        out += ["## Absolute scores (nats; thesis tables 5.3 / 5.9)", ""]
        out.append(_absolute_table(methods))
        out += ["", "## Gold − variant separations, mean [95% bootstrap interval] (thesis tables 5.4 / 5.10)", ""]
        out.append(_separation_table(methods))
    with_wins = {name: e for name, e in report["methods"].items() if "win_rate" in e}
    if with_wins:
        out += ["", "## Share of examples where Gold scores higher than the variant", ""]
        degraded = _union(with_wins.values(), "win_rate")
        out.append(markdown_table(["Method"] + [variant_title(v) for v in degraded],
                          [[name.upper()] + [f"{100 * e['win_rate'][v]:.1f}%" if v in e["win_rate"] else "" for v in degraded]
                           for name, e in with_wins.items()]))
    by_label = {name: e for name, e in methods.items() if e.get("by_label")}
    if by_label:
        out += ["", "## By gold label: separation, mean (gold-win rate)", "",
                "A leak that works for one label only is hidden in the means above; here each label's examples alone.",
                ""]
        degraded = _union(with_wins.values(), "win_rate") if with_wins else []
        out.append(markdown_table(["Method", "Gold label", "n"] + [f"Gold − {variant_title(v)}" for v in degraded],
                                  [[name.upper(), label, str(cell["n"])]
                                   + [f"{_fmt(cell['separations'].get(f'gold_minus_{v}'))} "
                                      f"({100 * cell['win_rate'][v]:.0f}%)" if v in cell["win_rate"] else ""
                                      for v in degraded]
                                   for name, e in by_label.items() for label, cell in e["by_label"].items()]))
    if simulated:
        out += ["", "## Simulatability: accuracy with − without the rationale (LAS: Hase et al. 2020; RQ: Wiegreffe et al. "
                "2021; n/a = undefined, a leakage group is empty)", ""]
        out.append(_absolute_table(simulated))
        out += ["", "### Gold − variant separations, mean [95% bootstrap interval]", ""]
        out.append(_separation_table(simulated))
        for name, entry in simulated.items():
            if "groups" in entry:
                out += ["", f"### {name.upper()} by leakage group (leaking: the simulator given the rationale alone is right)", ""]
                out.append(markdown_table(["Variant", "Leaking n", "Leaking Δacc", "Non-leaking n", "Non-leaking Δacc", name.upper()],
                                  [[variant_title(v), str(g["n_leaking"]), _fmt(g["leaking"]), str(g["n_nonleaking"]),
                                    _fmt(g["nonleaking"]), _fmt(g["las"])] for v, g in entry["groups"].items()]))
    if baselines:
        out += ["", "## Metric baselines (VARIF §5; each in its own unit, higher = the better rationale to a naive "
                "reader)", ""]
        out.append(markdown_table(["Baseline", "Unit"], [[name.upper(), str(e.get("unit", ""))] for name, e in baselines.items()]))
        out += [""]
        out.append(_absolute_table(baselines))
        out += ["", "### Gold − variant separations, mean [95% bootstrap interval]", ""]
        out.append(_separation_table(baselines))
    if report.get("seeds"):
        out += _seed_section(report["seeds"])
    if report.get("accuracy"):
        out += ["", "## Evaluator accuracy on the test split (%; thesis table 5.7)", ""]
        columns = sorted({key for values in report["accuracy"].values() for key in values}, key=_accuracy_order)
        out.append(markdown_table(["Model"] + [variant_title(c) if c != "baseline" else c for c in columns],
                          [[model] + [f"{100 * values[c]:.2f}" if c in values else "" for c in columns]
                           for model, values in report["accuracy"].items()]))
        if report.get("majority_class"):
            majority = report["majority_class"]
            out += ["", f"Always answering the majority class ('{majority['label']}'): "
                        f"{100 * majority['accuracy']:.2f}%."]
    if report.get("ablations"):
        out += ["", "## Ablations (thesis table 5.6)", ""]
        keys = _union(report["ablations"].values(), "separations")
        out.append(markdown_table(["Setting", "λ_IRM", "λ_probe"] + [separation_title(k) for k in keys],
                          [[name, str(a.get("lambda_irm", "n/a")), str(a.get("lambda_probe", "n/a"))]
                           + [_fmt(a["separations"].get(k)) for k in keys] for name, a in report["ablations"].items()]))
    if report.get("timings"):
        out += ["", "## Wall time per stage (s)", ""]
        rows = [[k, f"{v:.1f}"] for k, v in report["timings"].items()]
        out.append(markdown_table(["Stage (pipeline order)", "Seconds"],
                          rows + [["**total**", f"{sum(report['timings'].values()):.1f}"]]))
    return "\n".join(out) + "\n"


def _seed_section(seeds: dict[str, Any]) -> list[str]:
    """The across-seed table: what survives retraining (docs/reports.md, "Reading seed intervals")."""
    names = ", ".join(str(s) for s in seeds["seeds"])
    out = ["", f"## Across evaluator seeds ({names}): what survives retraining", "",
           "Every trained model was trained once per seed; the tables above are seed "
           f"{seeds['seeds'][0]}'s. Combined interval: a two-level bootstrap (seeds, then examples). **Established** = "
           "its lower bound is above 0 and the separation holds (its own interval above 0) in every seed. Ensemble: "
           f"the mean of the seeds' pointwise scores. Determinism: {seeds['determinism']}.", ""]
    rows = []
    for name, entry in seeds["methods"].items():
        for key, sep in entry["separations"].items():
            ensemble = entry.get("ensemble")
            rows.append([name.upper(), separation_title(key),
                         " / ".join(f"{v:+.3f}" for v in sep["per_seed"].values()),
                         f"{sep['mean']:+.3f} ± {sep['sd']:.3f}", _fmt(sep["single_seed_ci_width"]),
                         f"[{sep['ci95'][0]:+.3f}, {sep['ci95'][1]:+.3f}]", f"{sep['holds']}/{sep['of']}",
                         "yes" if sep["established"] else "**no**",
                         _separation_cell(ensemble, key) if ensemble else ""])
    out.append(markdown_table(["Method", "Separation", "Per seed", "Mean ± SD", "Single-seed CI width",
                               "Combined 95%", "Holds", "Established", "Ensemble [95%]"], rows))
    return out


def _accuracy_order(column: str) -> int:
    order = ["baseline", *VARIANTS]
    return order.index(column) if column in order else len(order)


def plot_separations(report: dict[str, Any], path: str | os.PathLike) -> None:
    """Grouped bar chart of Gold − variant separations per method with 95% intervals (thesis figure 5.1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    methods = _in_group(report, "nats")
    keys = [k for k in _union(methods.values(), "separations") if k != "sum"]
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    peaks = []
    for i, (name, entry) in enumerate(methods.items()):
        means = np.array([entry["separations"].get(k, np.nan) for k in keys], dtype=float)
        lows = means - np.array([entry["ci95"].get(k, [np.nan, np.nan])[0] for k in keys], dtype=float)
        highs = np.array([entry["ci95"].get(k, [np.nan, np.nan])[1] for k in keys], dtype=float) - means
        x = np.arange(len(keys)) + (i - (len(methods) - 1) / 2) * width
        ax.bar(x, means, width, yerr=[lows, highs], capsize=3, label=f"{name.upper()} (SUM {entry['separations']['sum']:.3g})")
        for xi, mean, low, high in zip(x, means, lows, highs, strict=True):  # values written beyond the error bars
            if np.isfinite(mean):
                tip = mean + (high if mean >= 0 else -low) if np.isfinite(low + high) else mean
                ax.annotate(f"{mean:.2g}", (xi, tip), xytext=(0, 3 if mean >= 0 else -9), textcoords="offset points",
                            ha="center", fontsize=7)
        if np.isfinite(means).any():
            peaks.append(float(np.nanmax(np.abs(means))))
    nonzero = [p for p in peaks if p > 0]
    if len(nonzero) > 1 and max(nonzero) / min(nonzero) > 20:  # methods on very different scales: symmetric log axis
        ax.set_yscale("symlog", linthresh=min(nonzero))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(keys)), [separation_title(k) for k in keys], rotation=20 if len(keys) > 4 else 0)
    ax.set_ylabel("Gold − variant (nats)" + (", symlog" if ax.get_yscale() == "symlog" else ""))
    ax.set_title(f"Rationale separation on {report['dataset']} ({report['split']})\n"
                 "bars: mean over examples; error bars: paired bootstrap 95% intervals", fontsize=10)
    if methods:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    save_figure(fig, path)


def write_report(report: dict[str, Any], output_dir: str | os.PathLike) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``separations.png`` to ``output_dir``; return their paths."""
    output_dir = Path(output_dir)
    paths = {"json": output_dir / "report.json", "markdown": output_dir / "report.md", "plot": output_dir / "separations.png"}
    write_json(paths["json"], report)
    write_text(paths["markdown"], render_markdown(report))
    plot_separations(report, paths["plot"])
    return paths


def dumps_summary(report: dict) -> str:
    """A one-screen text summary of a report for the console."""
    lines = [f"{report['dataset']} / {report['split']} (n = {report['n_examples']})"]

    def number(value: float | None) -> str:  # LAS is None where a leakage group is empty
        return "   n/a" if value is None else f"{value:+.3f}"

    for method, entry in report["methods"].items():
        seps = entry["separations"]
        parts = " ".join(f"{separation_title(key).replace(' ', '')} {number(value)}" for key, value in seps.items()
                         if key != "sum")
        lines.append(f"  {method.upper():6s} gold {number(entry['absolute'].get('gold'))} | {parts} "
                     f"SUM {number(seps['sum'])}" + (" (accuracy)" if entry.get("unit") == "accuracy" else ""))
    return "\n".join(lines) + "\n" + json.dumps(report.get("accuracy", {}))
