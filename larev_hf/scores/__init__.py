"""Metrics computed from trained evaluators: REV / LAREV (conditional V-information) and their summaries."""

from larev_hf.scores.cvi import ConditionalVScorer, CVIScores
from larev_hf.scores.stats import (
    DEGRADED,
    SEPARATIONS,
    VARIANTS,
    bootstrap_ci,
    separation_matrix,
    summarize_variants,
)

__all__ = [
    "ConditionalVScorer", "CVIScores", "DEGRADED", "SEPARATIONS", "VARIANTS", "bootstrap_ci", "separation_matrix",
    "summarize_variants",
]
