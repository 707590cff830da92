"""``larev-hf human --calibrate``: a calibrated score fitted on the select half of the judged file.

The calibration (:mod:`larev_hf.scores.calibration`) is a logistic combination of scored methods (the first learned
metric among ``--calibrate``'s features anchors it), fitted out-of-fold on the select half of a split by instance and
applied to the held half. ``--calibration-fit agreement`` chooses its weights by agreement with
the judgments alone. ``--calibration-fit robust`` (the default) chooses them by agreement *and* by AUC against every
VARSuite family (:mod:`larev_hf.meta.robust_calibration`): people reward explanations that reuse the input's words, so
a fit by agreement alone can let a copy of the input outscore the gold; the robust fit caps the other features and
keeps only candidates whose AUC against every family stays above a floor (or near the anchor alone, where the anchor is below it). Its attack rows
come from VARSuite built on the run's splits, each scored by a ``larev-hf meta`` run of its own
(:class:`~larev_hf.meta.evaluation.MetaEvaluation`: ``attacks/<split>``, resumable): the validation split checks the
choice, the test split reports it, and with ``--robustness-fit-split train`` the training split provides the rows the
candidates are fitted against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.meta.evaluation import MetaEvaluation
from larev_hf.meta.human_scoring import JudgedScores
from larev_hf.meta.robust_calibration import AttackScores, robust_calibration, robustness_shortfalls
from larev_hf.meta.settings import MetaSettings
from larev_hf.methods import get_method, method_names
from larev_hf.methods.heuristics import text_models
from larev_hf.scores.calibration import fit_calibration


class HumanCalibration:
    """The calibrated score of ``larev-hf human --calibrate`` over the explanations of ``judged`` (see the module
    docstring); the settings, run and directory are the judged scores'."""

    def __init__(self, judged: JudgedScores) -> None:
        self.judged = judged
        self.run, self.settings, self.dir = judged.run, judged.settings, judged.dir

    def anchor(self) -> str:
        """The first learned metric among ``--calibrate``'s features (the score the robust fit is anchored on).

        Raises ``ValueError`` when a feature is not a method this report scores (a column of the file is refused:
        no one else can compute it for a new explanation) or when no feature is a learned metric; called before
        anything is written, so bad settings stop the command at once."""
        scored = self.judged.methods()
        if unknown := [f for f in self.settings.calibrate if f not in scored or f in self.judged.baseline_columns]:
            raise ValueError(f"--calibrate: {unknown} are not scored methods of this report; the calibration reads "
                             f"only scores the library computes for any explanation: {scored}")
        learned = [f for f in self.settings.calibrate if f in method_names() and get_method(f).kind == "metric"]
        if not learned:
            raise ValueError(f"--calibrate {','.join(self.settings.calibrate)}: name a learned metric (e.g. "
                             "larev,grounding); the first one anchors the fit, the other features are capped")
        return learned[0]

    def attacks(self) -> dict[str, AttackScores] | None:
        """The robust fit's attack rows: VARSuite on the run's validation split (to choose the fit), test split (to
        report it; ``--robustness-report-split none``: not built) and, with ``--robustness-fit-split train``, training
        split (to fit against), scored with the calibration's features under ``attacks/<split>`` (each the stages of a
        ``larev-hf meta`` directory, resumable, taking the run directory's lock itself; the fit reads the scores only,
        so no meta report is written there). ``None`` for a fit by agreement alone, which reads no attacks."""
        if self.settings.calibration_fit != "robust":
            return None
        out = {}
        splits = ("validation", *(["test"] if self.settings.robustness_report_split == "test" else []),
                  *(["train"] if self.settings.robustness_fit_split == "train" else []))
        for split in splits:
            evaluation = MetaEvaluation(self.run, MetaSettings(methods=list(self.settings.calibrate), split=split,
                                                               max_examples=self.settings.robustness_examples),
                                        self.dir / "attacks" / split)
            evaluation.execute(report=False)
            out[split] = evaluation.files.suite_scores(self.settings.calibrate)
        return out

    def columns(self, records: Sequence[Mapping[str, Any]], columns: Mapping[str, np.ndarray],
                halves: Mapping[str, str], attacks: Mapping[str, AttackScores] | None
                ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The calibrated scores of every explanation, fitted on the select half (out-of-fold there), applied to the
        held half: ``calibrated`` (robust, or by agreement with ``--calibration-fit agreement``) and, beside a robust
        one, ``calibrated_agreement``. The fit is saved as ``calibration.json``; returns the columns and the report's
        ``calibration`` section (the candidates and each calibrated score's AUC against every family on the test
        split)."""
        features = list(self.settings.calibrate)
        human = self.settings.human_columns[0]
        select = np.array([halves[r["instance"]] == "select" for r in records])
        fit_columns = {f: columns[f][select] for f in features}
        judged = np.array([r["numbers"][human] for r in records])[select]
        instances = [r["instance"] for r, keep in zip(records, select, strict=True) if keep]
        fits = {"calibrated_agreement": fit_calibration(fit_columns, judged, instances, features,
                                                        seed=self.run.config.training.seed)}
        section: dict[str, Any] = {"features": features, "fit": self.settings.calibration_fit}
        if attacks is not None:
            method = self.anchor()
            calibration, out_of_fold, table = robust_calibration(fit_columns, judged, instances, features, method,
                                                                 attacks["validation"], seed=self.run.config.training.seed,
                                                                 fit_attacks=attacks.get("train"),
                                                                 statistic=self.settings.robustness_statistic)
            fits = {"calibrated": (calibration, out_of_fold), **fits}
            section.update(method=method, candidates=table,
                           check_examples=calibration.fitted_on["robust"]["n_check_examples"],
                           fit_split=self.settings.robustness_fit_split,
                           statistic=self.settings.robustness_statistic)
            if "test" in attacks:
                test = attacks["test"]
                statistic = self.settings.robustness_statistic
                method_aucs = test.family_statistics(test.columns[method], statistic)
                section["robustness"] = {"method": method_aucs, **{
                    name: {"aucs": (aucs := test.family_statistics(fit[0](test.columns), statistic)),
                           "shortfalls": robustness_shortfalls(aucs, method_aucs)} for name, fit in fits.items()}}
        else:
            fits = {"calibrated": fits["calibrated_agreement"]}
        out = {}
        for name, (calibration, out_of_fold) in fits.items():
            calibration.fitted_on.update(judgments=str(self.settings.judgments), human_column=human, half="select",
                                         split_seed=self.settings.split_seed, run_dir=str(self.run.dir))
            calibration.text_models.update(text_models(features, self.run))
            scores = calibration({f: columns[f] for f in features})
            scores[select] = out_of_fold
            out[name] = scores
        fits["calibrated"][0].save(self.dir / "calibration.json")
        return out, section
