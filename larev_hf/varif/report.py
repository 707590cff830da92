"""VARIF's report, from the per-example scores of a ``larev-hf varif`` run (:class:`~larev_hf.varif.run.VarifRun`):
the per-method means with bootstrap intervals, the (R, Ĩ) frontier and its hypervolume, the proposal's
hypotheses H1, H2 and H5 checked with numbers (``papers/varif-proposal.md`` §6), the markdown and the frontier
plot, written by :func:`write_varif_report`. The summaries import numpy only."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from larev_hf.io import read_json, read_jsonl, write_json, write_text
from larev_hf.report import markdown_table, save_figure
from larev_hf.scores.stats import bootstrap_ci
from larev_hf.varif.measures import hypervolume_2d, pareto_front, transform_informativeness, varif_scores
from larev_hf.varif.settings import VarifSettings, generator_name

#: The methods VARIF §6 H5 orders, best first; the last group ties ({A, B, C}).
H5_ORDER = ("gold", "self_rationalizer", "pseudo_specific")
H5_WORST = ("vacuous", "leak", "circular")
#: Methods whose rationale states or restates the label (H2 is checked on them).
LEAKY_METHODS = ("leak", "circular", "gold_leaky")


def summarize_varif(scores: Mapping[str, Sequence[Mapping[str, Any]]], base: Sequence[Mapping[str, Any]],
                    settings: VarifSettings) -> dict[str, Any]:
    """Per method the means (with bootstrap 95% intervals) of R, I, I unmasked, Ĩ, S, H and VARIF, the detector's
    accuracy on r and r⁻; the (R, Ĩ) frontier and its hypervolume; the hypotheses H1, H2, H5."""

    def mean_ci(values: np.ndarray) -> dict[str, Any]:
        kept = values[np.isfinite(values)]
        if len(kept) == 0:
            return {"mean": None, "ci95": [None, None], "n": 0}
        low, high = bootstrap_ci(kept, n_boot=settings.n_boot, seed=settings.seed)
        return {"mean": float(kept.mean()), "ci95": [low, high], "n": int(len(kept))}

    all_i = np.concatenate([[row["I"] for row in rows] for rows in scores.values()])
    methods: dict[str, Any] = {}
    for name, rows in scores.items():
        robust = np.array([np.nan if row["R"] is None else row["R"] for row in rows], dtype=float)
        info = np.array([row["I"] for row in rows], dtype=float)
        if settings.informativeness_transform == "minmax":  # rescaled over every method's examples together
            low, high = all_i.min(), all_i.max()
            tilde = np.ones_like(info) if high == low else (info - low) / (high - low)
        else:
            tilde = transform_informativeness(info, "exp")
        spec = np.array([row["S"] for row in rows], dtype=float)
        harmonic_scores = varif_scores(np.ones_like(spec), robust, tilde, settings.eps)
        scalar = varif_scores(spec, robust, tilde, settings.eps)
        methods[name] = {
            "regenerable": bool(np.isfinite(robust).any()),
            "R": mean_ci(robust), "I": mean_ci(info), "I_unmasked": mean_ci(np.array([r["I_unmasked"] for r in rows])),
            "masking_drop": mean_ci(np.array([r["I_unmasked"] - r["I"] for r in rows])),
            "I_tilde": mean_ci(tilde), "S": mean_ci(spec), "H": mean_ci(harmonic_scores), "VARIF": mean_ci(scalar),
            "detector_accuracy": float(np.mean([r["d_correct"] for r in rows])),
            "detector_accuracy_masked": float(np.mean([r["d_masked_correct"] for r in rows])),
            "h1_accuracy": float(np.mean([r["h1_correct"] for r in rows])),
            "mean_perturbations": float(np.mean([r["n_perturbations"] for r in rows])),
        }
    points = {name: (m["R"]["mean"], m["I_tilde"]["mean"]) for name, m in methods.items() if m["regenerable"]}
    reference = tuple(float(v) for v in settings.reference_point)
    front = pareto_front(points)
    return {
        "methods": methods,
        "frontier": front,
        "hypervolume": hypervolume_2d([points[n] for n in front], reference) if front else 0.0,
        "reference_point": list(reference),
        "h0_accuracy": float(np.mean([row["h0_correct"] for row in base])),
        "hypotheses": check_hypotheses(methods),
        "n_examples": len(base),
    }


def _mean(methods: Mapping[str, Any], name: str, key: str) -> float | None:
    return methods[name][key]["mean"] if name in methods else None


def check_hypotheses(methods: Mapping[str, Any]) -> dict[str, Any]:
    """H1, H2 and H5 of VARIF §6 on the measured means (criteria in docs/varif.md); a hypothesis whose methods were
    not compared is ``None``."""
    out: dict[str, Any] = {}
    if "vacuous" in methods:
        vacuous = methods["vacuous"]
        reference = "gold" if "gold" in methods else None
        checks = {"R >= 0.9": vacuous["R"]["mean"] is not None and vacuous["R"]["mean"] >= 0.9,
                  "|I| <= 0.05 nats": abs(vacuous["I"]["mean"]) <= 0.05,
                  "VARIF < H (S pulls it down)": vacuous["VARIF"]["mean"] < (vacuous["H"]["mean"] or 0.0)}
        if reference:
            checks["S below gold's"] = vacuous["S"]["mean"] < methods[reference]["S"]["mean"]
        out["H1"] = {"holds": all(checks.values()), "checks": checks,
                     "values": {"R": vacuous["R"]["mean"], "I": vacuous["I"]["mean"], "S": vacuous["S"]["mean"],
                                "H": vacuous["H"]["mean"], "VARIF": vacuous["VARIF"]["mean"]}}
    leaky = [name for name in LEAKY_METHODS if name in methods]
    if leaky:
        checks = {name: methods[name]["masking_drop"]["ci95"][0] is not None
                  and methods[name]["masking_drop"]["ci95"][0] > 0 for name in leaky}
        if "gold" in methods:
            for name in leaky:
                checks[f"{name} drops more than gold"] = (methods[name]["masking_drop"]["mean"]
                                                          > methods["gold"]["masking_drop"]["mean"])
        out["H2"] = {"holds": all(checks.values()), "checks": checks,
                     "values": {name: {"I_unmasked": _mean(methods, name, "I_unmasked"), "I": _mean(methods, name, "I")}
                                for name in [*leaky, "gold"] if name in methods}}
    order = [name for name in H5_ORDER if name in methods]
    worst = [name for name in H5_WORST if name in methods]
    if len(order) + bool(worst) >= 2:
        out["H5"] = {}
        for key in ("I_tilde", "VARIF"):
            ranked = [name for name in order if key == "I_tilde" or methods[name]["regenerable"]]
            pairs = {}
            for a, b in zip(ranked, ranked[1:], strict=False):
                pairs[f"{a} > {b}"] = _mean(methods, a, key) > _mean(methods, b, key)
            if ranked and worst:
                best_of_worst = max(worst, key=lambda n: _mean(methods, n, key))
                pairs[f"{ranked[-1]} > {{{', '.join(worst)}}}"] = (_mean(methods, ranked[-1], key)
                                                                  > _mean(methods, best_of_worst, key))
            out["H5"][key] = {"holds": all(pairs.values()), "pairs": pairs}
        out["H5"]["holds"] = all(v["holds"] for v in out["H5"].values())
    return out


def _cell(entry: Mapping[str, Any], digits: int = 3) -> str:
    if entry["mean"] is None:
        return "—"
    low, high = entry["ci95"]
    return f"{entry['mean']:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def render_varif_markdown(report: Mapping[str, Any]) -> str:
    """The VARIF report: the method table, the frontier, the hypotheses, the judge and the stage times."""

    methods = report["methods"]
    order = sorted(methods, key=lambda n: -(methods[n]["VARIF"]["mean"] if methods[n]["VARIF"]["mean"] is not None
                                            else -1.0))
    rows = [[name + ("" if methods[name]["regenerable"] else " †"), _cell(methods[name]["R"]), _cell(methods[name]["I"]),
             _cell(methods[name]["I_unmasked"]), _cell(methods[name]["I_tilde"]), _cell(methods[name]["S"]),
             _cell(methods[name]["VARIF"]), f"{methods[name]['detector_accuracy']:.2f} → "
             f"{methods[name]['detector_accuracy_masked']:.2f}"] for name in order]
    lines = [f"# VARIF report: {report.get('dataset', '')} ({report['n_examples']} test examples)", "",
             "Means with bootstrap 95% intervals. R: robustness under paraphrase (§3.1); I: LC-IG in nats, masked "
             "(§3.2); I unmasked: the same with r unmasked; Ĩ: I mapped to [0, 1]; S: specificity (§3.3); VARIF = S·H. "
             "d: the leakage detector's accuracy p_d(y | r) on r → on r⁻. † cannot be regenerated for perturbed "
             "inputs, so R (and VARIF) is omitted.", "",
             markdown_table(["method", "R", "I (nats)", "I unmasked", "Ĩ", "S", "VARIF", "d acc r → r⁻"], rows), "",
             f"**Frontier** (R, Ĩ): {', '.join(report['frontier']) or '—'}; **hypervolume** "
             f"{report['hypervolume']:.4f} above the reference point {tuple(report['reference_point'])}.", "",
             f"h₀ = p(y | x) accuracy: {report['h0_accuracy']:.3f}.", "", "## Hypotheses (VARIF §6)", ""]
    for name, entry in report["hypotheses"].items():
        if name == "H5":
            for key in ("I_tilde", "VARIF"):
                pairs = "; ".join(f"{pair}: {'yes' if ok else 'no'}" for pair, ok in entry[key]["pairs"].items())
                lines.append(f"- **H5 on {key}**: {'holds' if entry[key]['holds'] else 'fails'} ({pairs})")
        else:
            checks = "; ".join(f"{check}: {'yes' if ok else 'no'}" for check, ok in entry["checks"].items())
            lines.append(f"- **{name}**: {'holds' if entry['holds'] else 'fails'} ({checks})")
    judge = report.get("nli_judge", {})
    perturb = report.get("perturbations", {})
    lines += ["", "## NLI judge and perturbations", "",
              f"- judge: {judge.get('model')}" + (f", e-SNLI test accuracy {judge['accuracy']:.3f}"
                                                 if "accuracy" in judge else ""),
              f"- paraphraser: {perturb.get('paraphraser')}; perturbations kept of the candidates: "
              + ", ".join(f"{kind} {perturb.get('kept', {}).get(kind)}/{count}"
                          for kind, count in perturb.get("candidates", {}).items())]
    if report.get("stage_seconds"):
        lines += ["", "## Stage wall times (s)", "",
                  markdown_table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in report["stage_seconds"].items()])]
    return "\n".join(lines) + "\n"


def plot_frontier(report: Mapping[str, Any], path: str | os.PathLike) -> None:
    """The (R, Ĩ) plane: one labelled point per method, the Pareto front as a step line, and methods without R
    (gold, a user's file) as dashed horizontal lines at their Ĩ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    methods = report["methods"]
    fig, ax = plt.subplots(figsize=(7.2, 5.0))
    def near(point: tuple[float, float], groups: dict[tuple[float, float], list[str]]) -> tuple[float, float]:
        """The group whose first point is within 0.03 on both axes (labels closer than that would overlap)."""
        return next((key for key in groups if abs(key[0] - point[0]) < 0.03 and abs(key[1] - point[1]) < 0.03), point)

    clusters: dict[tuple[float, float], list[str]] = {}  # methods at (nearly) the same point share one label
    lines: dict[tuple[float, float], list[str]] = {}  # methods without R: one dashed line per level
    for name, entry in methods.items():
        r, i = entry["R"]["mean"], entry["I_tilde"]["mean"]
        if r is None:
            lines.setdefault(near((0.0, i), lines), []).append(name)
            ax.axhline(i, linestyle="--", color="grey", linewidth=1)
            continue
        clusters.setdefault(near((r, i), clusters), []).append(name)
        on_front = name in report["frontier"]
        ax.scatter([r], [i], s=40, color="tab:red" if on_front else "tab:blue", zorder=4 if on_front else 3)
    for (_, i), names in lines.items():
        ax.annotate(f"{', '.join(names)} (no R)", (0.01, i), textcoords="offset points", xytext=(2, 3), fontsize=8,
                    color="grey")
    for k, ((r, i), names) in enumerate(sorted(clusters.items())):  # by R, labels alternately above and below
        ax.annotate(", ".join(names), (r, i), textcoords="offset points", xytext=(-4, 6 if k % 2 == 0 else -13),
                    fontsize=8, ha="right")
    front = [(methods[n]["R"]["mean"], methods[n]["I_tilde"]["mean"]) for n in report["frontier"]]
    if front:
        xs, ys = [], []
        for k, (r, i) in enumerate(front):
            xs += [r, r] if k else [r]
            ys += [front[k - 1][1], i] if k else [i]
        ax.plot(xs, ys, color="tab:red", linewidth=1, zorder=2, label=f"Pareto front (HV {report['hypervolume']:.3f})")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("robustness R (Sim_NLI under paraphrase)")
    ax.set_ylabel("informativeness Ĩ (LC-IG)")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, max(0.1, 1.15 * max((m["I_tilde"]["mean"] or 0) for m in methods.values())))
    ax.set_title(f"VARIF frontier — {report.get('dataset', '')}")
    fig.tight_layout()
    save_figure(fig, path)


def write_varif_report(run: Any) -> dict[str, Any]:
    """The report of a VARIF run (:class:`~larev_hf.varif.run.VarifRun`) over every generator's per-example scores
    (``varif_report.json``, ``varif_report.md``, ``frontier.png``), rebuilt on every call; returns the report."""
    report = summarize_varif(
        {generator_name(spec): [row for _, row in read_jsonl(run.dir / "scores" / f"{generator_name(spec)}.jsonl")]
         for spec in run.settings.generators},
        [row for _, row in read_jsonl(run.dir / "base.jsonl")], run.settings)
    report["dataset"] = run.settings.dataset
    report["settings"] = asdict(run.settings)
    report["perturbations"] = read_json(run.dir / "perturb_stats.json")
    nli_metrics = run.dir / "models" / "nli" / "nli_metrics.json"
    report["nli_judge"] = {"model": run.settings.nli_model or "MiniLM-L6 cross-encoder trained in the run",
                           **(read_json(nli_metrics) if nli_metrics.is_file() else {})}
    markers = run.runner.markers()
    report["stage_seconds"] = {name: markers[name]["seconds"] for name, _ in run.stages() if name in markers}
    write_json(run.dir / "varif_report.json", report)
    write_text(run.dir / "varif_report.md", render_varif_markdown(report))
    plot_frontier(report, run.dir / "frontier.png")
    return report
