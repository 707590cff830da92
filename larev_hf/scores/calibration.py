"""A calibrated score: a logistic combination of the library's own per-explanation scores, fitted on human judgments.

No metric paper offers this (REV, RoRA, LAREV, FRAME and VARIF report raw scores); it is our extension, documented in
docs/human.md. Given, for each judged explanation, the scores the library computes for *any* explanation (a method's
pointwise score, its length, ROUGE-L against the input; never a column of the judged file such as GPT-3's NLL), a
logistic regression is fitted to "judged acceptable" (the share of annotators ≥ ``threshold``) on standardised features,
its L2 strength chosen by cross-validation that keeps each instance's explanations in one fold
(``sklearn.model_selection.GroupKFold``). A feature may carry an upper **cap**: values above it count as the
cap, so an explanation cannot climb the calibrated score by inflating a surface cue past where acceptable explanations
sit (a copy of the input has the highest overlap with it); :mod:`larev_hf.meta.robust_calibration` chooses the caps. The calibrated score is the fitted log-odds: monotone in the predicted
probability, in nats-like units, higher = more likely acceptable.

:class:`Calibration` is a plain record (``to_dict``/``from_dict``, JSON) so an evaluator bundle can carry it
(``calibration.json``) and score with it; feature names are those of the registered methods (``larev``, ``length``,
``rouge_l``, ...), with ``length`` entering as log(1 + words).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from larev_hf.io import write_json

#: Features entered on a log scale (a long explanation is not linearly better or worse).
LOG_FEATURES = frozenset({"length"})
#: Inverse L2 strengths tried by the instance-grouped cross-validation.
DEFAULT_CS = (0.01, 0.1, 1.0, 10.0)


def feature_matrix(columns: Mapping[str, Any], features: Sequence[str],
                   caps: Sequence[float | None] | None = None) -> np.ndarray:
    """``[rows, features]``: each feature's scores as the calibration reads them (log(1 + x) for :data:`LOG_FEATURES`),
    bounded by ``caps``; a missing feature or a non-finite value raises naming it."""
    missing = [name for name in features if name not in columns]
    if missing:
        raise ValueError(f"the calibration needs the scores {missing}; got {sorted(columns)}")
    out = []
    for name in features:
        values = np.asarray(columns[name], dtype=float)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"feature {name!r}: {int(np.sum(~np.isfinite(values)))} values are NaN or infinite")
        out.append(np.log1p(np.maximum(values, 0.0)) if name in LOG_FEATURES else values)
    matrix = np.stack(out, axis=1)
    for j, cap in enumerate(caps or ()):
        if cap is not None:
            matrix[:, j] = np.minimum(matrix[:, j], cap)
    return matrix


@dataclass
class Calibration:
    """A fitted logistic combination of per-explanation scores (see the module docstring).

    Attributes:
        features: the score names it reads, in order.
        mean, scale: standardisation of each feature (after the log of :data:`LOG_FEATURES`).
        coef, intercept: the logistic regression on the standardised features.
        threshold: the human share at or above which an explanation counted as acceptable.
        caps: per feature, an upper bound applied before standardisation (after the log), or ``None``.
        fitted_on: where it was fitted (file, instances, cross-validated L2 strength, ...), for the record.
        text_models: per text feature that needs more than the text (``explanation_lm``: its training explanations,
            order and copy weight), what it needs, so that a bundle computes the feature as the run did.
    """

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float = 0.5
    fitted_on: dict[str, Any] = field(default_factory=dict)
    caps: list[float | None] | None = None
    text_models: dict[str, Any] = field(default_factory=dict)

    def __call__(self, columns: Mapping[str, Any]) -> np.ndarray:
        """The calibrated score (log-odds of "acceptable") of each explanation, from its feature scores: the sum of
        :meth:`contributions` and the intercept."""
        return self.contributions(columns).sum(axis=1) + self.intercept

    def contributions(self, columns: Mapping[str, Any]) -> np.ndarray:
        """``[rows, features]``: what each feature adds to each explanation's calibrated score, in its units
        (log-odds): coefficient × the standardised (capped, logged) value, so that ``calibrated = Σ contributions +
        intercept`` — a logistic model's additive decomposition (the intercept is the log-odds of an explanation
        whose every feature sits at the judged explanations' mean)."""
        z = (feature_matrix(columns, self.features, self.caps) - np.asarray(self.mean)) / np.asarray(self.scale)
        return z * np.asarray(self.coef)

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON; ``text_models`` only when there are some, so a calibration without them stays readable
        by a larev-hf that predates the key."""
        values = asdict(self)
        if not values["text_models"]:
            del values["text_models"]
        return values

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Calibration:
        known = {"features", "mean", "scale", "coef", "intercept", "threshold", "fitted_on", "caps", "text_models"}
        if unknown := sorted(set(values) - known):
            raise ValueError(f"calibration: unknown keys {unknown}; expected {sorted(known)}")
        calibration = cls(**values)
        lengths = {len(calibration.features), len(calibration.mean), len(calibration.scale), len(calibration.coef),
                   *([len(calibration.caps)] if calibration.caps is not None else [])}
        if len(lengths) != 1:
            raise ValueError("calibration: features, mean, scale, coef (and caps) must have one entry per feature")
        return calibration

    def save(self, path: str | os.PathLike) -> None:
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> Calibration:
        with open(path, encoding="utf-8") as handle:
            return cls.from_dict(json.load(handle))


def _logistic(c: float, seed: int) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=1000, random_state=seed)


def _fit(x: np.ndarray, y: np.ndarray, weights: np.ndarray, judged: np.ndarray, c: float, seed: int,
         shrink: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """``(mean, scale, coef, intercept)`` of one logistic fit on standardised ``x``; with ``shrink`` < 1 for some
    features, their coefficients are scaled by it and the log-odds re-fitted in one dimension (Platt) on the
    ``judged`` rows, so the result is still the log-odds of "acceptable" and ranks as the shrunk combination does."""
    judged_x = x[judged]
    mean, scale = judged_x.mean(axis=0), judged_x.std(axis=0) + 1e-12
    z = (x - mean) / scale
    model = _logistic(c, seed).fit(z, y, sample_weight=weights)
    coef, intercept = model.coef_[0] * shrink, float(model.intercept_[0])
    if np.any(shrink != 1.0):
        combined = (z[judged] @ coef)[:, None]
        platt = _logistic(1e6, seed).fit(combined, y[judged])
        coef, intercept = coef * platt.coef_[0, 0], float(platt.intercept_[0])
    return mean, scale, coef, intercept


def fit_calibration(columns: Mapping[str, Any], human: Any, instance_ids: Sequence[Any], features: Sequence[str],
                    threshold: float = 0.5, cs: Sequence[float] = DEFAULT_CS, n_splits: int = 5, seed: int = 0,
                    caps: Sequence[float | None] | None = None, unacceptable: Mapping[str, Any] | None = None,
                    unacceptable_weight: float = 0.0,
                    shrink: Mapping[str, float] | None = None) -> tuple[Calibration, np.ndarray]:
    """Fit a :class:`Calibration` on judged explanations.

    The L2 strength is the one of ``cs`` with the lowest log-loss in ``n_splits``-fold cross-validation grouped by
    instance. Returns the calibration fitted on all rows and the **out-of-fold** calibrated scores of these rows
    (each row scored by a model that never saw its instance), for an honest in-sample report.

    Robust fits (:mod:`larev_hf.meta.robust_calibration` chooses these, so the fit cannot be gamed by an attack
    that inflates a surface cue): ``caps`` bound features (see
    :class:`Calibration`); ``unacceptable`` holds feature columns of explanations that must never be credited (attack
    rows, e.g. VARSuite families), added to every training fold as unacceptable with a total weight of
    ``unacceptable_weight`` × the judged rows'; ``shrink`` scales named features' coefficients (0 removes a feature's
    say, 1 keeps the fit's), the log-odds then re-fitted by Platt scaling on the judged rows.
    """
    from scipy.special import expit
    from sklearn.metrics import log_loss
    from sklearn.model_selection import GroupKFold

    features = list(features)
    x = feature_matrix(columns, features, caps)
    y = (np.asarray(human, dtype=float) >= threshold).astype(int)
    groups = np.asarray([str(i) for i in instance_ids])
    if len({*y.tolist()}) < 2:
        raise ValueError(f"the calibration needs acceptable and unacceptable explanations (share ≥ {threshold} and "
                         "below); these judgments have only one kind")
    if unknown := sorted(set(shrink or {}) - set(features)):
        raise ValueError(f"shrink names {unknown}, which are not features of this calibration {features}")
    factors = np.array([(shrink or {}).get(name, 1.0) for name in features])
    extra = feature_matrix(unacceptable, features, caps) if unacceptable and unacceptable_weight > 0 else x[:0]
    folds = list(GroupKFold(n_splits=min(n_splits, len(set(groups)))).split(x, y, groups))

    def fit(rows: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        weights = np.concatenate([np.ones(len(rows)), np.full(len(extra), unacceptable_weight * len(rows) /
                                                              max(len(extra), 1))])
        judged = np.arange(len(rows) + len(extra)) < len(rows)
        return _fit(np.vstack([x[rows], extra]), np.concatenate([y[rows], np.zeros(len(extra), dtype=int)]),
                    weights, judged, c, seed, factors)

    def out_of_fold(c: float) -> np.ndarray:
        scores = np.zeros(len(y))
        for train, test in folds:
            mean, scale, coef, intercept = fit(train, c)
            scores[test] = (x[test] - mean) / scale @ coef + intercept
        return scores

    losses = {c: log_loss(y, expit(out_of_fold(c)), labels=[0, 1]) for c in cs}
    best = min(cs, key=lambda c: (losses[c], c))
    mean, scale, coef, intercept = fit(np.arange(len(y)), best)
    calibration = Calibration(features=features, mean=mean.tolist(), scale=scale.tolist(), coef=coef.tolist(),
                              intercept=intercept, threshold=threshold, caps=None if caps is None else list(caps),
                              fitted_on={"n_explanations": int(len(y)), "n_instances": int(len(set(groups))),
                                         "C": best, "cv_log_loss": {str(c): float(v) for c, v in losses.items()},
                                         **({"n_unacceptable_rows": int(len(extra)),
                                             "unacceptable_weight": unacceptable_weight} if len(extra) else {}),
                                         **({"shrink": dict(shrink)} if shrink else {})})
    return calibration, out_of_fold(best)
