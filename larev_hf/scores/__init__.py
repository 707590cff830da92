"""Metrics computed from trained evaluators: REV / LAREV (conditional V-information) and their summaries.

Names load on first use (:mod:`larev_hf.lazy`): the summaries need numpy only, the scorer torch.
"""

from larev_hf.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "cvi": ("ConditionalVScorer", "CVIScores"),
    "stats": ("DEGRADED", "SEPARATIONS", "VARIANTS", "bootstrap_ci", "separation_matrix", "summarize_variants"),
})
