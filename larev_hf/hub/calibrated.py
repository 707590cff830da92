"""A bundle's calibrated score: its :class:`~larev_hf.scores.calibration.Calibration` applied to the method's own
pointwise scores and the text scores it may read (:data:`~larev_hf.hub.config.CALIBRATION_TEXT_FEATURES`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.hub.config import CALIBRATION_TEXT_FEATURES
from larev_hf.methods import get_method
from larev_hf.scores.calibration import Calibration


def calibrated_scores(calibration: Mapping[str, Any] | Calibration, method: str, scores: Any,
                      records: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """The calibrated score of each scored record: ``calibration`` over ``{method: scores, length, rouge_l}`` (the
    text scores computed by the registered metric baselines, from the records' rationales and inputs)."""
    calibration = calibration if isinstance(calibration, Calibration) else Calibration.from_dict(calibration)
    columns: dict[str, Any] = {method: np.asarray(scores, dtype=float)}
    rationales = {"r": [record["rationale"] for record in records]}
    for name in CALIBRATION_TEXT_FEATURES:
        if name in calibration.features:
            columns[name] = get_method(name).pointwise(None, list(records), rationales, {})["r"]
    return calibration(columns)
