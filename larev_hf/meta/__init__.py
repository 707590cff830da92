"""Which metric to trust: the VARSuite adversarial families, the statistics that check whether a metric ranks gold
rationales above them (VARIF proposal §4-§6), and agreement with human judgments of real explanations.

The suite (:mod:`~larev_hf.meta.suite`, its family registry :mod:`~larev_hf.meta.family_registry`, the
surface-proof families :mod:`~larev_hf.meta.surface_families`) and the statistics (:mod:`~larev_hf.meta.stats`,
:mod:`~larev_hf.meta.human_stats`) depend only on :mod:`larev_hf.data`, :mod:`larev_hf.io`, numpy and scipy;
:mod:`larev_hf.meta.evaluation` (``meta_evaluate``: a trained run's methods on the suite, reported by
:mod:`~larev_hf.meta.report`; :mod:`~larev_hf.meta.bundles` does the same for exported bundles) and
:mod:`larev_hf.meta.human` (``human_evaluate``: agreement with judged explanations, read by
:mod:`~larev_hf.meta.judgments`, scored by :mod:`~larev_hf.meta.human_scoring`, calibrated by
:mod:`~larev_hf.meta.human_calibration` and reported by :mod:`~larev_hf.meta.human_report`) sit above the run;
:mod:`~larev_hf.meta.report` reads a multi-seed run's AUCs.

VARIF and FRAME live in :mod:`larev_hf.varif` and :mod:`larev_hf.frame`, and what they share in
:mod:`larev_hf.explain`. Every name loads on first use (:mod:`larev_hf.lazy`).
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.meta.bundles import meta_evaluate_bundles
    from larev_hf.meta.evaluation import MetaEvaluation, meta_evaluate
    from larev_hf.meta.family_registry import FamilyFn, example_rng, register_family
    from larev_hf.meta.human import HumanEvaluation, human_evaluate
    from larev_hf.meta.human_report import render_human_markdown
    from larev_hf.meta.human_stats import (
        STATISTICS,
        acceptability_auc,
        agreement_table,
        difference,
        instance_bootstrap_indices,
        judged_pairs,
        kendall,
        pairwise_agreement,
        percentile_interval,
        point_statistics,
        select_one,
        select_one_replicates,
        spearman,
    )
    from larev_hf.meta.judgments import instance_half, load_judgments
    from larev_hf.meta.report import meta_summary, render_meta_markdown, write_meta_report
    from larev_hf.meta.robust_calibration import AttackScores, robustness_shortfalls
    from larev_hf.meta.settings import (
        DEFAULT_FAMILIES,
        FAMILY_LETTERS,
        REFERENCE,
        HumanSettings,
        MetaSettings,
    )
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
        FAMILIES,
        NEGATORS,
        ROW_KEYS,
        STOPWORDS,
        TEMPLATES,
        UserFamily,
        build_suite,
        build_suite_with_skips,
        content_words,
        drift_family,
        hf_negation_editor,
        is_negation_edit,
        load_suite,
        load_user_family,
        negation_edits,
        template_family,
        write_suite,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("DEFAULT_FAMILIES", "FAMILY_LETTERS", "REFERENCE", "HumanSettings", "MetaSettings"),
    "human_stats": ("STATISTICS", "acceptability_auc", "agreement_table", "difference", "instance_bootstrap_indices",
                    "judged_pairs", "kendall", "pairwise_agreement", "percentile_interval", "point_statistics",
                    "select_one", "select_one_replicates", "spearman"),
    # the fit itself stays larev_hf.meta.robust_calibration.robust_calibration: a package attribute of the same name
    # as its submodule would be the module once that submodule is imported
    "robust_calibration": ("AttackScores", "robustness_shortfalls"),
    "judgments": ("instance_half", "load_judgments"),
    "human": ("HumanEvaluation", "human_evaluate"),
    "human_report": ("render_human_markdown",),
    "stats": (
        "EXPECTED_ORDER", "NOT_WORSE_THAN_GOLD", "auc", "auc_ci", "auc_difference_ci", "kendall_tau_b",
        "mean_separation", "paired_win_rate", "summarize_method"
    ),
    "suite": ("FAMILIES", "NEGATORS", "ROW_KEYS", "STOPWORDS", "TEMPLATES", "UserFamily", "build_suite",
              "build_suite_with_skips", "content_words", "drift_family", "hf_negation_editor",
              "is_negation_edit", "load_suite", "load_user_family", "negation_edits", "template_family",
              "write_suite"),
    "family_registry": ("FamilyFn", "example_rng", "register_family"),
    "evaluation": ("MetaEvaluation", "meta_evaluate"),
    "report": ("meta_summary", "render_meta_markdown", "write_meta_report"),
    "bundles": ("meta_evaluate_bundles",),
})
