"""Metrics computed from trained evaluators: REV / LAREV (conditional V-information) and their summaries.

Names load on first use (:mod:`larev_hf.lazy`): the summaries need numpy only, the scorer torch.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.scores.calibration import Calibration, feature_matrix, fit_calibration
    from larev_hf.scores.cvi import ConditionalVScorer, CVIScores
    from larev_hf.scores.ranking import within_instance_ranks
    from larev_hf.scores.stats import (
        DEGRADED,
        SEPARATIONS,
        VARIANTS,
        bootstrap_ci,
        separation_matrix,
        summarize_variants,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "calibration": ("Calibration", "feature_matrix", "fit_calibration"),
    "cvi": ("ConditionalVScorer", "CVIScores"),
    "ranking": ("within_instance_ranks",),
    "stats": ("DEGRADED", "SEPARATIONS", "VARIANTS", "bootstrap_ci", "separation_matrix", "summarize_variants"),
})
