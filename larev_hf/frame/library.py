"""FRAME's axioms for the library's own metrics: REV, LAREV, RoRA, LAS and RQ, so a rationale metric of this library
is meta-evaluated by the same axioms as FRAME's accuracy-based Φ.

FRAME (``papers/frame.txt`` §2.2-§4) meta-evaluates rationale-label-consistency metrics through
Φ(r) = 𝟙_H(ŷ|x,r) − 𝟙_G(ŷ|x), an accuracy difference over a test set. The library's metrics score one rationale of
one example at a time (:meth:`larev_hf.methods.Method.pointwise`), so the axioms are applied to each metric m through
its mean pointwise score (the **adaptation**, docs/frame.md):

- Φ_m(r) = mean_i s_m(x_i, ŷ_i, r_i): the label scored is F's prediction ŷ (as FRAME's simulators predict ŷ), the
  metric's evaluators are the trained ones of a ``larev-hf run`` on the same dataset (trained on gold rationales and
  gold labels, nothing retrained), and the vacuous baseline b of REV/LAREV is rebuilt for ŷ where ŷ ≠ ẏ
  (:func:`~larev_hf.meta.suite.label_baselines`). Nats for REV, LAREV and RoRA; accuracy points (×100, as FRAME's
  Φ) for LAS and RQ — RQ's pointwise score 𝟙[S(x,r)=ŷ] − 𝟙[S(x)=ŷ] is FRAME's Φ with the run's simulator as G and H.
- Axiom 1: Φ_m(ŷ), and the **MAR margin** mean_{r ∈ {r̂, ṙ, ẏ}} [Φ_m(ŷ) − Φ_m(r)] in place of FRAME's ratio of
  accuracies (a ratio of scores that can be zero or negative is undefined); > 0 ⇔ the reference ŷ scores above the
  non-reference rationales on average, FRAME's axiom 1.
- Axiom 2: ASD as FRAME's, |Φ_m(ŷ) − Φ_m(Ψ(ŷ))|, for Ψe and Ψc.
- Axiom 3: the SCV of Φ_m(ŷ) across the variants of F (ŷ changes with F; the metric's evaluators do not) and the
  subpopulation ASD |Φ_m(ŷ) on F's correct − on its incorrect predictions|, as FRAME's.
- NRG: among the library metrics that share a unit (nats: REV, LAREV, RoRA; accuracy points: LAS, RQ), since min-max
  normalising a difference in nats against one in accuracy points is meaningless; FRAME's own NRG (its four RLC
  metrics) is unchanged.

LAREV is where FRAME's axiom 1 and the thesis disagree by design: a rationale that only states the label (r = ŷ) is
label leakage, which LAREV's leakage-aware evaluator Φ_LA is built to discount, so LAREV *should* fail axiom 1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.frame.meta_metrics import (
    AXIOM_META_METRICS,
    FACTORS,
    NON_REFERENCE,
    TABLE_COLUMNS,
    asd,
    cell_note,
    defined_nrg,
    scv_value,
    seed_summary,
)
from larev_hf.frame.settings import FrameSettings
from larev_hf.io import read_json, write_jsonl
from larev_hf.meta.suite import label_baselines
from larev_hf.methods import get_method
from larev_hf.pipeline import Run
from larev_hf.scores.stats import bootstrap_ci

#: The columns of the library metrics' rows in tables 1-3 (FRAME's, with the MAR margin for MAR).
LIBRARY_COLUMNS: dict[str, list[tuple[str, str]]] = {
    **TABLE_COLUMNS, "axiom1": [("phi_reference", "Φ_m(ŷ) (↑)"), ("mar_margin", "MAR margin (↑, > 0 holds)")]}
#: Meta-metric directions for the library's NRG (FRAME's, with the MAR margin in place of MAR).
LIBRARY_DIRECTIONS: dict[str, dict[str, str]] = {
    **AXIOM_META_METRICS, "axiom1": {"phi_reference": "max", "mar_margin": "max"}}
#: Units whose pointwise scores are accuracy differences in [−1, 1], reported ×100 as FRAME's Φ.
PERCENT_UNITS: tuple[str, ...] = ("accuracy",)


def library_records(records: Sequence[Mapping[str, Any]], ids: Sequence[str], labels: Sequence[str],
                    builder: Any) -> list[dict[str, Any]]:
    """The records of ``ids`` (from a run's split, ``records``) with ``label`` set to F's ``labels`` and the baseline
    b rebuilt for that label where it is not the gold one; an id the run lacks raises naming it."""

    by_id = {record["id"]: record for record in records}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ValueError(f"--library-run: its test split lacks example id {missing[0]!r} ({len(missing)} of "
                         f"{len(ids)} missing); expected a run on the same dataset whose test split holds FRAME's")
    baselines = label_baselines(records, list(zip(ids, labels, strict=True)), builder)
    return [{**by_id[i], "label": label, "gold_label": by_id[i]["label"], "baseline": b}
            for i, label, b in zip(ids, labels, baselines, strict=True)]


def phi_scale(unit: str) -> float:
    """100 for accuracy-difference metrics (reported in points, as FRAME's Φ), 1 otherwise (nats)."""
    return 100.0 if unit in PERCENT_UNITS else 1.0


def library_seed_meta(rows_by_variant: Mapping[str, Sequence[Mapping[str, Any]]], factors: Mapping[str, Sequence[str]],
                      axioms: Sequence[str], scv_denominator: str = "abs", n_boot: int = 1000, seed: int = 0,
                      base: str = "base", non_reference: Sequence[str] = NON_REFERENCE,
                      scale: float = 1.0) -> dict[str, Any]:
    """One library metric's Φ_m per variant and rationale, its meta-metrics and notes for one seed, from its scored
    rows (variant → rows ``{id, gold, target, scores: {rationale type: s_m}}``); ``scale`` multiplies every score."""

    phis = {variant: {kind: scale * float(np.mean([row["scores"][kind] for row in rows])) for kind in rows[0]["scores"]}
            for variant, rows in rows_by_variant.items()}
    base_rows = rows_by_variant[base]
    reference = np.array([scale * row["scores"]["y_hat"] for row in base_rows])
    meta: dict[str, Any] = {}
    notes: dict[str, dict[str, str]] = {}
    extra: dict[str, Any] = {"phi_reference_ci95": bootstrap_ci(reference, n_boot=n_boot, seed=seed)}
    if "1" in axioms:
        meta["phi_reference"] = phis[base]["y_hat"]
        meta["mar_margin"] = float(np.mean([phis[base]["y_hat"] - phis[base][kind] for kind in non_reference]))
        extra["axiom1_holds"] = all(phis[base]["y_hat"] > phis[base][kind] for kind in non_reference)
    if "2" in axioms:
        meta["asd_equivalent"] = asd(phis[base]["y_hat"], phis[base]["psi_e"])
        meta["asd_contrastive"] = asd(phis[base]["y_hat"], phis[base]["psi_c"])
        extra["axiom2_holds"] = meta["asd_contrastive"] > meta["asd_equivalent"]
    if "3" in axioms:
        extra["phi_by_variant"] = {variant: phis[variant]["y_hat"] for variant in phis}
        for factor in FACTORS:
            value, note = scv_value([phis[v]["y_hat"] for v in factors.get(factor, [])], scv_denominator)
            meta[f"scv_{factor}"] = value
            if note:
                notes[f"scv_{factor}"] = note
        groups = {name: [scale * row["scores"]["y_hat"] for row in base_rows if (row["target"] == row["gold"]) is keep]
                  for name, keep in (("correct", True), ("incorrect", False))}
        extra["subpopulation"] = {name: {"n": len(values), "phi": float(np.mean(values)) if values else None}
                                  for name, values in groups.items()}
        if groups["correct"] and groups["incorrect"]:
            meta["asd_subpopulation"] = asd(float(np.mean(groups["correct"])), float(np.mean(groups["incorrect"])))
        else:
            meta["asd_subpopulation"] = None
            empty = "correct" if not groups["correct"] else "incorrect"
            notes["asd_subpopulation"] = cell_note("undefined", f"F made no {empty} test prediction")
    return {"phi": phis, "meta": meta, "notes": notes, **extra}


def library_nrg(meta: Mapping[str, Mapping[str, Any]], units: Mapping[str, str], axiom: str) -> dict[str, Any]:
    """The NRG of ``axiom`` among the library metrics of each unit (see the module docstring); a meta-metric
    undefined for some metric of the group is left out; a group of one metric has none."""
    values: dict[str, float] = {}
    dropped: dict[str, list[str]] = {}
    for unit in dict.fromkeys(units.values()):
        result = defined_nrg({m: meta[m] for m in meta if units[m] == unit}, LIBRARY_DIRECTIONS[axiom])
        values.update(result["values"] or {})
        dropped[unit] = result["dropped"]
    return {"values": values or None, "dropped": dropped}


def score_library_variant(run: Any, methods: Sequence[str], records: Sequence[Mapping[str, Any]],
                          rationales: Mapping[str, Sequence[str]], paths: Mapping[str, str | os.PathLike]) -> None:
    """Score ``rationales`` (type → one text per record) with each of ``methods``' pointwise scores on ``records``
    (:func:`library_records`: labels ŷ, baselines for ŷ) and write ``paths[method]`` (``{id, gold, target, scores:
    {type: s_m}}`` per record); the methods share one pass's common terms; a file already written is kept."""

    shared: dict[str, Any] = {}
    for name in methods:
        path = Path(paths[name])
        if path.is_file():
            continue
        scores = get_method(name).pointwise(run, list(records), dict(rationales), shared)
        write_jsonl(path, [{"id": record["id"], "gold": record["gold_label"], "target": record["label"],
                            "scores": {kind: float(scores[kind][i]) for kind in rationales}}
                           for i, record in enumerate(records)])


def library_seed_results(rows: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]], units: Mapping[str, str],
                         factors: Mapping[str, Sequence[str]], axioms: Sequence[str], scv_denominator: str = "abs",
                         n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """One seed's :func:`library_seed_meta` per method (``rows``: method → variant → scored rows) and each axiom's
    :func:`library_nrg`."""
    methods = {name: library_seed_meta(by_variant, factors, axioms, scv_denominator, n_boot, seed,
                                       scale=phi_scale(units[name])) for name, by_variant in rows.items()}
    return {"methods": methods, "nrg": {f"axiom{a}": library_nrg({m: methods[m]["meta"] for m in methods}, units,
                                                                 f"axiom{a}") for a in sorted(axioms)}}


def aggregate_library(per_seed: Mapping[int, Mapping[str, Any]], titles: Mapping[str, str], units: Mapping[str, str],
                      axioms: Sequence[str]) -> dict[str, Any]:
    """The library metrics' rows of tables 1-3: each meta-metric's mean ± std over the seeds, the NRG from the means
    within each unit, how many seeds satisfy axioms 1 and 2, Φ_m per rationale type, the notes."""
    seeds = list(per_seed)
    methods = list(titles)
    tables: dict[str, Any] = {}
    nrg_out: dict[str, Any] = {}
    for axiom in (f"axiom{a}" for a in sorted(axioms)):
        columns = [name for name, _ in LIBRARY_COLUMNS[axiom]]
        cells = {m: {name: seed_summary([per_seed[s]["methods"][m]["meta"].get(name) for s in seeds])
                     for name in columns} for m in methods}
        tables[axiom] = cells
        nrg_out[axiom] = library_nrg({m: {name: cells[m][name]["mean"] for name in columns} for m in methods}, units,
                                     axiom)
    holds = {m: {key: sum(bool(per_seed[s]["methods"][m].get(f"{key}_holds")) for s in seeds)
                 for key in ("axiom1", "axiom2") if key[-1] in axioms} for m in methods}
    first = per_seed[seeds[0]]["methods"][methods[0]]["phi"]["base"]
    phi = {m: {kind: seed_summary([per_seed[s]["methods"][m]["phi"]["base"][kind] for s in seeds]) for kind in first}
           for m in methods}
    notes = [{"seed": s, "metric": m, "meta_metric": name, **note} for s in seeds for m in methods
             for name, note in per_seed[s]["methods"][m]["notes"].items()]
    return {"methods": dict(titles), "units": dict(units), "tables": tables, "nrg": nrg_out, "holds": holds,
            "phi": phi, "notes": notes, "seeds": seeds}


class LibraryRun:
    """The trained ``larev-hf run`` of ``--library-run`` whose metrics FRAME puts through its axioms: the run (loaded
    once), the methods scored and their columns per evaluator seed, and what its ``library-s<seed>`` stages depend
    on."""

    def __init__(self, settings: FrameSettings) -> None:
        self.settings = settings
        self._run: Run | None = None
        self._methods: list[str] | None = None

    def run(self) -> Run | None:
        """The trained ``larev-hf run`` of ``--library-run`` (loaded once), or None."""
        if self.settings.library_run is None:
            return None
        if self._run is None:
            self._run = Run.load(self.settings.library_run, progress=False)
        return self._run

    def methods(self) -> list[str]:
        """The library metrics put through the axioms: ``--library-methods`` or every method the run has trained
        that has a pointwise score (none without ``--library-run``)."""
        if self._methods is not None:
            return self._methods
        run = self.run()
        if run is None:
            if self.settings.library_methods:
                raise ValueError("--library-methods needs --library-run (a trained `larev-hf run` directory)")
            return []
        if run.config.data.dataset != self.settings.dataset:
            raise ValueError(f"--library-run: {run.dir} is a {run.config.data.dataset!r} run; expected {self.settings.dataset!r}")
        names = list(self.settings.library_methods) or [m for m in run.config.methods if not run.unfinished_stages(m)]
        for name in names:
            get_method(name)  # an unknown name raises, listing the known ones
            if missing := run.unfinished_stages(name):  # in every evaluator seed of a multi-seed run
                raise ValueError(f"--library-methods: {name!r}'s stages {missing} have not finished in {run.dir}")
        self._methods = names
        return names

    def columns(self) -> list[tuple[str, str, Any]]:
        """``(column, method, view)`` for each library metric and evaluator seed of a multi-seed ``--library-run``
        (each seed's evaluators give their own column, so a result can be told from one seed's luck): the run's own
        seed keeps the method's name, another seed's column is ``<method>@seed<k>`` (as in
        ``larev-hf human``); a method without trained models is one column."""
        run = self.run()
        if run is None:
            return []
        return [(name if view is run else f"{name}@seed{view.config.training.seed}", name, view)
                for name in self.methods() for view in run.scoring_views(name)]

    def inputs(self) -> dict[str, Any] | None:
        """What the ``library-s<seed>`` stages read of the run: its directory, the methods and the markers of their
        trained models (retraining one rescores); None without ``--library-run``."""
        run = self.run()
        if run is None:
            return None
        methods = self.methods()
        markers = {m: [read_json(run.runner.marker(view.stage_name(stage.name))) for view in run.scoring_views(m)
                       for stage in get_method(m).stages(view.config)] for m in methods}
        return {"run": str(run.dir.resolve()), "methods": methods, "markers": markers}
