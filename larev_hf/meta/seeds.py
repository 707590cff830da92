"""The meta-evaluation of a multi-seed run (``larev-hf run --seeds``): each family's AUC per evaluator seed, across
seeds, and the ensemble's (docs/reliability.md). A verdict about which metric to trust should not be one seed's luck:
the table says how far the AUC moves when the evaluators are retrained."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.meta.settings import REFERENCE
from larev_hf.meta.stats import summarize_method
from larev_hf.report import markdown_table, variant_title


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
