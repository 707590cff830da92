# Copyright 2026 The larev-hf Authors. Licensed under the Apache License, Version 2.0.
"""REV: information-theoretic evaluation of free-text rationales (an ``evaluate`` module)."""

import evaluate

from larev_hf import metric as larev_metric

_CITATION = larev_metric.citation("rev")

_DESCRIPTION = """\
REV measures the new, label-relevant information a free-text rationale adds beyond the input and
the label, as conditional V-information: REV(r) = log p_Φ(y | r ⊕ b) − log p_Φbase(y | b), in nats,
where b is a vacuous baseline built from the input and the label, Φ_base is trained on b → y and Φ
on r ⊕ b → y. The evaluators come from an evaluator bundle made by `larev-hf export --method rev`.
"""

_KWARGS_DESCRIPTION = larev_metric.kwargs_description("rev")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rev(larev_metric.BundleMetric):
    """REV scores from a REV evaluator bundle."""

    method = "rev"

    def _info(self):
        return self._info_from(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION)
