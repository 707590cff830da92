"""Meta-evaluation of rationale metrics: the VARSuite adversarial families and the statistics that
check whether a metric ranks gold rationales above them (VARIF proposal §4-§6).

The suite and the statistics depend only on :mod:`larev_hf.data`, :mod:`larev_hf.io`, numpy and scipy;
:mod:`larev_hf.meta.evaluation` (``meta_evaluate``, ``MetaEvaluation``, ``MetaSettings``: scoring a trained run's
methods on the suite) sits above the run and is imported on first use.
"""

from larev_hf.meta.stats import (
    EXPECTED_ORDER,
    NOT_WORSE_THAN_GOLD,
    auc,
    auc_ci,
    auc_difference_ci,
    kendall_tau_b,
    mean_separation,
    paired_win_rate,
    summarize_method,
)
from larev_hf.meta.suite import (
    DEFAULT_FAMILIES,
    FAMILIES,
    FAMILY_LETTERS,
    NEGATORS,
    ROW_KEYS,
    STOPWORDS,
    TEMPLATES,
    FamilyFn,
    UserFamily,
    build_suite,
    build_suite_with_skips,
    content_words,
    drift_family,
    example_rng,
    hf_negation_editor,
    is_negation_edit,
    load_suite,
    load_user_family,
    negation_edits,
    register_family,
    template_family,
    write_suite,
)

_EVALUATION = ("MetaEvaluation", "MetaSettings", "meta_evaluate", "meta_evaluate_bundles", "meta_summary", "render_meta_markdown",
               "write_meta_report")


def __getattr__(name: str):
    """``meta_evaluate`` & co. load the run machinery (torch, transformers) only when asked for."""
    if name in _EVALUATION:
        from larev_hf.meta import evaluation

        return getattr(evaluation, name)
    raise AttributeError(f"module 'larev_hf.meta' has no attribute {name!r}")


__all__ = [
    *_EVALUATION,
    "DEFAULT_FAMILIES",
    "EXPECTED_ORDER",
    "FAMILIES",
    "FAMILY_LETTERS",
    "NEGATORS",
    "NOT_WORSE_THAN_GOLD",
    "ROW_KEYS",
    "STOPWORDS",
    "TEMPLATES",
    "FamilyFn",
    "UserFamily",
    "auc",
    "auc_ci",
    "auc_difference_ci",
    "build_suite",
    "build_suite_with_skips",
    "content_words",
    "drift_family",
    "example_rng",
    "hf_negation_editor",
    "is_negation_edit",
    "kendall_tau_b",
    "load_suite",
    "load_user_family",
    "mean_separation",
    "negation_edits",
    "paired_win_rate",
    "register_family",
    "summarize_method",
    "template_family",
    "write_suite",
]
