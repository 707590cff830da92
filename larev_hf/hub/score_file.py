"""``larev-hf evaluate``: a person's file of explanations scored by an evaluator bundle, with the trust check first.

The evaluator is a named default (:mod:`larev_hf.evaluators`), a bundle directory or Hub id, or a trained run (then
bundled in memory, exactly as ``larev-hf export`` would, and the run's report on the explanations' degraded variants is
written beside, under ``variants/``). The file's rows are validated once, into schema records, and those records are
scored through :meth:`BundleScoring.score <larev_hf.hub.scoring.BundleScoring.score>` — the call behind
``evaluate.load`` and :meth:`EvaluatorBundle.score` — so one explanation gets one score whichever way it is scored.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.hub.bundle import EvaluatorBundle
from larev_hf.hub.console import column_notes, finding_counts, markdown_explanation_table, summary_line
from larev_hf.hub.explanations import (
    explanation_table,
    in_dataset_format,
    read_explanation_records,
    scoring_details,
    write_explanation_table,
)
from larev_hf.hub.findings import FINDINGS
from larev_hf.hub.trust import MIN_TRAIN_ROWS_ADVICE, Trust, UntrustedEvaluatorError
from larev_hf.scores.stats import bootstrap_ci

logger = logging.getLogger(__name__)

#: What the report says about which score to read (docs/hub.md has the measurements behind it).
READING = ("Read scores within an instance (the `rank` column, with `instance_id`s) or across labels with "
           "`label_centred`; where there is a `calibrated` column it is the score to read per explanation "
           "(it agrees best with people and no VARSuite attack gains from it). Scores are comparable only under one "
           "hashcode. How much to trust them: docs/hub.md, \"Which score to trust\".")


def check_trust(trust: Trust, name: str, force: bool) -> str | None:
    """``None`` when per-explanation scores can be used; otherwise a warning (``force``) or an
    :class:`UntrustedEvaluatorError` that says what failed and what to do."""
    if trust.ok:
        return None
    message = f"{name}: {trust.sentence()}"
    if not force:
        raise UntrustedEvaluatorError(f"{message}. Train on more rows, {MIN_TRAIN_ROWS_ADVICE}, or pass --force to "
                                      "score anyway")
    return f"warning: {message} (scored anyway: --force)"


def _summary(scores: np.ndarray, n_boot: int = 1000) -> dict[str, Any]:
    low, high = bootstrap_ci(scores, n_boot=n_boot, seed=0) if len(scores) > 1 else (None, None)
    return {"mean_score": float(np.mean(scores)), "mean_score_ci95": [low, high]}


def render_report(report: Mapping[str, Any]) -> str:
    """``report.md``: the evaluator, the trust check, the table of what each explanation scored, how to read it."""
    ci = report["mean_score_ci95"]
    interval = "" if ci[0] is None else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]"
    out = [f"# Your explanations: {report['data_file']}", "",
           f"Scored by `{report['evaluator']}` ({report['hashcode']}): {report['n_explanations']} explanations, mean "
           f"score {report['mean_score']:+.3f} nats{interval} (95% bootstrap interval).", "",
           f"**Trust check**: {Trust(**report['trust']).sentence()}.", ""]
    if report.get("warning"):
        out += [f"> {report['warning']}", ""]
    if report.get("findings"):
        out += ["## Findings", "", "| finding | explanations |", "| --- | --- |",
                *[f"| {FINDINGS[name]} | {n} |" for name, n in report["findings"].items()], "",
                "What each finding means and how its threshold was chosen: docs/findings.md.", ""]
    if report.get("summary"):
        out += [f"**{report['summary']}**", ""]
    out += ["## Each explanation", "", markdown_explanation_table(report["explanations"]), "",
            *[f"- {line}" for line in report["columns"]], "", READING, ""]
    if report.get("variants"):
        out += ["## Against their degraded variants", "",
                f"Every method of the run on your explanations and on variants built from them (yours + \"The answer "
                f"is <label>.\", the vacuous baseline, the label sentence alone): [{report['variants']}]"
                f"({report['variants']}).", ""]
    return "\n".join(out)


def score_file(bundle: EvaluatorBundle, evaluator: str, data_file: str | os.PathLike, output_dir: str | os.PathLike,
               *, column_mapping: Mapping[str, str] | None = None, force: bool = False, progress: bool = True,
               variants: str | None = None, rows: list[dict[str, Any]] | None = None,
               allow_empty: bool = False, records: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Score ``data_file`` with ``bundle`` and write ``scores.jsonl``, ``scores.csv``, ``report.md`` and
    ``report.json`` to ``output_dir``; returns the report (its ``explanations`` are the table's rows). ``rows``:
    the file already read as schema records (a data set's own format), instead of the "my explanations" reader;
    ``allow_empty``: score empty or whitespace-only rationales (with the finding ``empty``) instead of refusing them;
    ``records``: the file already validated for this bundle (:func:`read_explanation_records`), read once.

    Raises:
        UntrustedEvaluatorError: the evaluators fail the trust checks and ``force`` is not set.
        DataError: a line of the file (named with its line number) does not fit the bundle's task.
    """
    trust = Trust(**bundle.config.trust) if bundle.config.trust else None
    warning = check_trust(trust, evaluator, force) if trust is not None else None
    config = bundle.config
    records = records if records is not None else read_explanation_records(data_file, task=config.task, label_set=config.label_set,
                                       column_mapping=column_mapping, allow_empty=allow_empty, rows=rows,
                                       require_choices=bundle.spec.reads_input and config.task == "qa")
    result = bundle.scoring.score(records, progress=progress, check_labels=True)
    extra = scoring_details(records, result.log_p_rationale, result.log_p_baseline, result.baselines,
                            findings=result.findings, contributions=result.contributions,
                            intercept=result.calibration_intercept)
    table = explanation_table(records, result.scores, result.label_centred, result.calibrated,
                              findings=result.findings, contributions=result.contributions,
                              raw_informative=result.raw_informative)
    report = {"data_file": str(data_file), "evaluator": evaluator, "method": bundle.config.method,
              "hashcode": result.hashcode, "trust": (trust or Trust(None, None, None, None)).to_dict(),
              "warning": warning, "n_explanations": len(records), **_summary(result.scores),
              "findings": finding_counts(table), "summary": summary_line(table),
              "columns": column_notes(table), "variants": variants, "explanations": table}
    write_explanation_table(table, output_dir, extra, report, render_report(report))
    return report


def score_file_with_run(run_dir: str | os.PathLike, method: str, data_file: str | os.PathLike,
                        output_dir: str | os.PathLike, *, column_mapping: Mapping[str, str] | None = None,
                        force: bool = False, progress: bool = True, allow_empty: bool = False) -> dict[str, Any]:
    """:func:`score_file` with the run's ``method`` evaluators, after the run's own report on the explanations and
    their degraded variants (:meth:`larev_hf.pipeline.Run.evaluate_file`) in ``output_dir/variants``."""
    # here: a file scored by a bundle needs no pipeline (slow to import: docs/architecture.md, "Imports")
    from larev_hf.pipeline import Run

    bundle = EvaluatorBundle.from_run(run_dir, method)
    trust = Trust(**bundle.config.trust)
    check_trust(trust, f"{run_dir} ({method})", force)  # before any scoring
    run = Run.load(run_dir, progress)
    run.evaluate_file(data_file, Path(output_dir) / "variants", column_mapping)
    rows = None
    if not column_mapping and in_dataset_format(data_file):  # the data set's own format (e-SNLI's, ...)
        rows = [{k: v for k, v in r.items() if k != "baseline"} for r in run.read_data_file(data_file)]
    return score_file(bundle, f"{run_dir} ({method})", data_file, output_dir, column_mapping=column_mapping,
                      force=force, progress=progress, variants="variants/report.md", rows=rows,
                      allow_empty=allow_empty)

