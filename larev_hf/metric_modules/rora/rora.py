# Copyright 2026 The larev-hf Authors. Licensed under the Apache License, Version 2.0.
"""RoRA: robust free-text rationale evaluation against label leakage (an ``evaluate`` module)."""

import evaluate

from larev_hf import metric as larev_metric

_CITATION = larev_metric.citation("rora")

_DESCRIPTION = """\
RoRA measures the new information a free-text rationale supplies to justify the label, robustly to
label leakage: RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅), in nats, where Θ sees the input x
alone and Φ is trained with IRM across label-counterfactual edits of the rationale's leaky tokens
(found by a small model's attributions, rewritten by a label-conditioned infiller). The evaluators
come from a RoRA evaluator bundle.
"""

_KWARGS_DESCRIPTION = larev_metric.kwargs_description("rora")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rora(larev_metric.BundleMetric):
    """RoRA scores from a RoRA evaluator bundle."""

    method = "rora"

    def _info(self):
        return self._info_from(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION)
