# Copyright 2026 The larev-hf Authors. Licensed under the Apache License, Version 2.0.
"""Any larev-hf evaluator bundle as an ``evaluate`` module: the method is the one the bundle holds."""

import evaluate

from larev_hf import metric as larev_metric

_CITATION = ""

_DESCRIPTION = """\
Scores free-text rationales with a larev-hf evaluator bundle of any registered method (REV, LAREV, RoRA, or one you
registered with larev_hf.methods.register_method): per-example scores in nats, their mean, and the bundle's hashcode.
The bundle's method, models, baseline builder and label set come from its config_larev.json; cite the method's paper
(the bundle's model card has its BibTeX).
"""

_KWARGS_DESCRIPTION = larev_metric.kwargs_description(None)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bundle(larev_metric.BundleMetric):
    """Scores with whatever method the evaluator bundle holds."""

    method = None

    def _info(self):
        return self._info_from(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION)
