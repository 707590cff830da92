# Copyright 2026 The larev-hf Authors. Licensed under the Apache License, Version 2.0.
"""LAREV: leakage-aware rationale evaluation with conditional V-information (an ``evaluate`` module)."""

import evaluate

from larev_hf import metric as larev_metric

_CITATION = larev_metric.citation("larev")

_DESCRIPTION = """\
LAREV measures how much new, label-relevant information a free-text rationale adds, robustly to
label leakage: LAREV(r) = log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b), in nats, where b is a vacuous
baseline built from the input and the label, Φ_base is trained on b → y and Φ_LA on r ⊕ b → y with
IRM across baseline environments (original, leakage term masked, leakage term rewritten) and a
frozen leakage probe, so that its gains must come from the rationale rather than from label cues
in b. The evaluators come from an evaluator bundle made by `larev-hf export`.
"""

_KWARGS_DESCRIPTION = larev_metric.kwargs_description("larev")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Larev(larev_metric.BundleMetric):
    """LAREV scores from a LAREV evaluator bundle."""

    method = "larev"

    def _info(self):
        return self._info_from(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION)
