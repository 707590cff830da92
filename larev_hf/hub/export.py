"""A run's evaluators as a bundle: the trust check, the optional calibration, the atomic save.

``larev-hf export`` and the build of a named evaluator (:mod:`larev_hf.evaluators`) both call :func:`export_run`, so a
named evaluator's bundle is exactly what the documented command would write.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from larev_hf.hub.bundle import EvaluatorBundle
from larev_hf.hub.trust import MIN_TRAIN_ROWS_ADVICE, Trust, UntrustedEvaluatorError
from larev_hf.runner import StageRunner
from larev_hf.scores.calibration import Calibration


def export_run(run_dir: str | os.PathLike, method: str, output_dir: str | os.PathLike,
               calibration: str | os.PathLike | None = None, force: bool = False, repo_id: str | None = None,
               nli_judge: str | os.PathLike | None = None) -> tuple[EvaluatorBundle, Path, Trust]:
    """Bundle ``method``'s evaluators of the finished run ``run_dir`` into ``output_dir`` (atomically), with the
    calibration saved by ``larev-hf human --calibrate`` (``calibration.json``) and the NLI judge trained by ``larev-hf
    nli-train --read-explanations`` (:meth:`EvaluatorBundle.with_nli_judge`) when given.

    Raises :class:`UntrustedEvaluatorError` when the trust check fails and ``force`` is false (nothing is written);
    ``repo_id`` only names the Hub repo in the model card (pushing is :meth:`EvaluatorBundle.push_to_hub`). Holds the
    run directory's lock while the models are copied, so no run retrains them meanwhile. Returns the bundle, where it
    was written and the trust check's figures.
    """
    with StageRunner(run_dir).lock():
        bundle = EvaluatorBundle.from_run(run_dir, method)
        trust = Trust(**bundle.config.trust)
        if not trust.ok and not force:
            raise UntrustedEvaluatorError(f"{run_dir} ({method}): {trust.sentence()}. Train on more rows, "
                                          f"{MIN_TRAIN_ROWS_ADVICE}, or pass --force to export it anyway")
        if calibration is not None:
            bundle.config = dataclasses.replace(bundle.config, calibration=Calibration.load(calibration).to_dict())
        if nli_judge is not None:
            bundle = bundle.with_nli_judge(nli_judge)
        path = bundle.save_pretrained(output_dir, repo_id=repo_id)
    return bundle, path, trust
