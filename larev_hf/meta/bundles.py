"""The meta-evaluation of evaluator bundles (``larev-hf export`` / the Hub) on schema records, without their run.

Each bundle scores every VARSuite row itself, building the baselines b it needs with its own builder, row by row (label
swaps included): slower than a run's shared scoring passes (:mod:`larev_hf.meta.evaluation`), but it needs only the
bundle, so two bundles of one method (e.g. trained on different data) can be compared on the same suite.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from larev_hf.hub import EvaluatorBundle
from larev_hf.io import write_json, write_jsonl
from larev_hf.meta.report import assemble_report, meta_summary, scored_rows, write_meta_report
from larev_hf.meta.settings import DEFAULT_FAMILIES, REFERENCE
from larev_hf.meta.suite import build_suite_with_skips
from larev_hf.methods import get_method


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
        # a suite row is one family's rationale of an instance: unique per (id, family), the instance its id
        inputs = [{**r, "id": f"{r['id']}/{r['family']}", "instance_id": r["id"]} for r in rows]
        result = bundle.score(rationales=[r["rationale"] for r in rows], labels=[r["label"] for r in rows],
                              inputs=inputs, batch_size=batch_size, progress=progress)
        scored = scored_rows(rows, result.scores)
        write_jsonl(output_dir / "scores" / f"{key}.jsonl", scored)
        methods[key] = meta_summary(bundle.config.method, scored, n_boot=n_boot, seed=seed,
                                    title=f"{bundle.spec.title} ({key})")
        if result.calibrated is not None:  # a calibrated bundle's second score is judged like any metric
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
