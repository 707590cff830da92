"""FRAME's results per seed and across seeds (numpy only): each RLC metric's accuracies, Φ and meta-metrics from one
seed's evaluation rows (:func:`seed_results`), and every meta-metric's mean ± std over the seeds with each table's
NRG (:func:`aggregate_seeds`). The arithmetic is :mod:`larev_hf.frame.meta_metrics`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.frame.meta_metrics import (
    AXIOM_META_METRICS,
    FACTORS,
    NON_REFERENCE,
    RATIONALE_NAMES,
    TABLE_COLUMNS,
    accuracy,
    asd,
    cell_note,
    defined_nrg,
    mar,
    phi,
    scv_value,
    seed_summary,
)
from larev_hf.frame.variants import BASE
from larev_hf.scores.stats import bootstrap_ci


def axiom_nrg(meta: Mapping[str, Mapping[str, Any]], axiom: str, columns: Sequence[str] | None = None) -> dict[str, Any]:
    """The NRG of ``axiom`` across the metrics of ``meta`` (metric → {meta-metric: value}); a meta-metric undefined
    for some metric is left out (``dropped``); ``values`` is None when fewer than two metrics or no meta-metric is
    left. ``columns``: only these meta-metrics."""
    return defined_nrg(meta, {name: d for name, d in AXIOM_META_METRICS[axiom].items()
                              if columns is None or name in columns})


def seed_results(evaluations: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
                 factors: Mapping[str, Sequence[str]], axioms: Sequence[str], scv_denominator: str = "abs",
                 n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """One seed's accuracies, Φ and meta-metrics per metric, and each axiom's NRG, from the evaluation rows
    (metric → variant → rows ``{id, gold, target, control, treatment: {type: label}}``)."""

    metrics: dict[str, Any] = {}
    for metric, by_variant in evaluations.items():
        accuracies: dict[str, Any] = {}
        phis: dict[str, dict[str, float]] = {}
        for variant, rows in by_variant.items():
            targets = [row["target"] for row in rows]
            control = accuracy([row["control"] for row in rows], targets)
            treatment = {kind: accuracy([row["treatment"][kind] for row in rows], targets) for kind in rows[0]["treatment"]}
            accuracies[variant] = {"control": control, "treatment": treatment}
            phis[variant] = {kind: phi(value, control) for kind, value in treatment.items()}
        base_rows, base = by_variant[BASE], accuracies[BASE]
        meta: dict[str, Any] = {}
        notes: dict[str, dict[str, str]] = {}
        extra: dict[str, Any] = {}
        per_example = np.array([100.0 * ((row["treatment"]["y_hat"] == row["target"]) - (row["control"] == row["target"]))
                                for row in base_rows])
        extra["phi_reference_ci95"] = bootstrap_ci(per_example, n_boot=n_boot, seed=seed)
        if "1" in axioms:
            meta["phi_reference"] = phis[BASE]["y_hat"]
            value = mar(base["treatment"]["y_hat"], {kind: base["treatment"][kind] for kind in NON_REFERENCE})
            meta["mar"] = value if math.isfinite(value) else None
            if not math.isfinite(value):
                zero = [RATIONALE_NAMES[k] for k in NON_REFERENCE if base["treatment"][k] == 0]
                notes["mar"] = cell_note("undefined", f"𝟙_H(ŷ|x,r) = 0 for r = {', '.join(zero)}: the ratio is infinite")
        if "2" in axioms:
            meta["asd_equivalent"] = asd(phis[BASE]["y_hat"], phis[BASE]["psi_e"])
            meta["asd_contrastive"] = asd(phis[BASE]["y_hat"], phis[BASE]["psi_c"])
        if "3" in axioms:
            extra["phi_by_variant"] = {variant: phis[variant]["y_hat"] for variant in phis}
            for factor in FACTORS:
                members = list(factors.get(factor, []))
                value, note = scv_value([phis[v]["y_hat"] for v in members], scv_denominator)
                meta[f"scv_{factor}"] = value
                if note:
                    notes[f"scv_{factor}"] = note
            groups = {}
            for name, keep in (("correct", True), ("incorrect", False)):
                rows = [row for row in base_rows if (row["target"] == row["gold"]) is keep]
                if rows:
                    targets = [row["target"] for row in rows]
                    control = accuracy([row["control"] for row in rows], targets)
                    treatment = accuracy([row["treatment"]["y_hat"] for row in rows], targets)
                    groups[name] = {"n": len(rows), "control": control, "treatment": treatment,
                                    "phi": phi(treatment, control)}
                else:
                    groups[name] = {"n": 0, "control": None, "treatment": None, "phi": None}
            extra["subpopulation"] = groups
            if groups["correct"]["n"] and groups["incorrect"]["n"]:
                meta["asd_subpopulation"] = asd(groups["correct"]["phi"], groups["incorrect"]["phi"])
            else:
                empty = "correct" if not groups["correct"]["n"] else "incorrect"
                meta["asd_subpopulation"] = None
                notes["asd_subpopulation"] = cell_note("undefined", f"F made no {empty} test prediction: Φ of that "
                                                   "subpopulation is undefined")
        metrics[metric] = {"accuracy": accuracies, "phi": phis, "meta": meta, "notes": notes, **extra}
    results: dict[str, Any] = {"metrics": metrics, "nrg": {}}
    for axiom in (f"axiom{a}" for a in sorted(axioms)):
        results["nrg"][axiom] = axiom_nrg({m: metrics[m]["meta"] for m in metrics}, axiom)
    if "3" in axioms:  # the paper's printed "All" column of table 3 is the NRG of (A) and (B) alone (docs/frame.md)
        results["nrg"]["axiom3_ab"] = axiom_nrg({m: metrics[m]["meta"] for m in metrics}, "axiom3",
                                                ["scv_train_size", "scv_label_noise"])
    return results


def aggregate_seeds(per_seed: Mapping[int, Mapping[str, Any]], metrics: Sequence[str],
                    axioms: Sequence[str]) -> dict[str, Any]:
    """Every meta-metric's mean ± std over the seeds, each table's NRG from the means (and the per-seed NRG's
    mean ± std), the notes of undefined or |μ| cells."""
    seeds = list(per_seed)
    tables: dict[str, Any] = {}
    nrg_out: dict[str, Any] = {}
    notes = []
    for seed in seeds:
        for metric in metrics:
            for name, note in per_seed[seed]["metrics"][metric]["notes"].items():
                notes.append({"seed": seed, "metric": metric, "meta_metric": name, **note})
    keys = [f"axiom{a}" for a in sorted(axioms)] + (["axiom3_ab"] if "3" in axioms else [])
    for key in keys:
        axiom = "axiom3" if key == "axiom3_ab" else key
        columns = [name for name, _ in TABLE_COLUMNS[axiom]]
        if key == "axiom3_ab":
            columns = ["scv_train_size", "scv_label_noise"]
        cells = {metric: {name: seed_summary([per_seed[s]["metrics"][metric]["meta"].get(name) for s in seeds])
                          for name in columns} for metric in metrics}
        from_means = axiom_nrg({m: {name: cells[m][name]["mean"] for name in columns} for m in metrics}, axiom, columns)
        per_seed_nrg = {metric: seed_summary([(per_seed[s]["nrg"][key]["values"] or {}).get(metric) for s in seeds])
                        for metric in metrics}
        nrg_out[key] = {**from_means, "per_seed": per_seed_nrg}
        if key != "axiom3_ab":
            tables[key] = cells
    return {"tables": tables, "nrg": nrg_out, "notes": notes}
