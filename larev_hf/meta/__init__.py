"""Which metric to trust: the VARSuite adversarial families, the statistics that check whether a metric ranks gold
rationales above them (VARIF proposal §4-§6), and agreement with human judgments of real explanations.

The suite (:mod:`~larev_hf.meta.suite`, its family registry :mod:`~larev_hf.meta.family_registry`, the
surface-proof families :mod:`~larev_hf.meta.surface_families`) and the statistics (:mod:`~larev_hf.meta.stats`,
:mod:`~larev_hf.meta.human_stats`) depend only on :mod:`larev_hf.data`, :mod:`larev_hf.io`, numpy and scipy;
:mod:`larev_hf.meta.evaluation` (``meta_evaluate``: a trained run's methods on the suite) and
:mod:`larev_hf.meta.human` (``human_evaluate``: agreement with judged explanations, read by
:mod:`~larev_hf.meta.judgments`) sit above the run; :mod:`~larev_hf.meta.seeds` reads a multi-seed run's AUCs.

VARIF and FRAME moved to :mod:`larev_hf.varif` and :mod:`larev_hf.frame`, and what they share to
:mod:`larev_hf.explain`. The names below that lived in those modules still resolve here for one release, with a
DeprecationWarning. Every name loads on first use (:mod:`larev_hf.lazy`).
"""

from larev_hf.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("DEFAULT_FAMILIES", "DEFAULT_GENERATORS", "FAMILY_LETTERS", "FrameSettings", "HumanSettings",
                 "MetaSettings", "VarifSettings"),
    "human_stats": ("acceptability_auc", "agreement_table", "difference", "instance_bootstrap_indices", "kendall",
                    "pairwise_agreement", "spearman"),
    "judgments": ("instance_half", "load_judgments"),
    "human": ("HumanEvaluation", "human_evaluate", "render_human_markdown"),
    "stats": (
        "EXPECTED_ORDER", "NOT_WORSE_THAN_GOLD", "auc", "auc_ci", "auc_difference_ci", "kendall_tau_b",
        "mean_separation", "paired_win_rate", "summarize_method"
    ),
    "suite": (
        "FAMILIES", "NEGATORS", "ROW_KEYS", "STOPWORDS", "TEMPLATES", "FamilyFn", "UserFamily",
        "build_suite", "build_suite_with_skips", "content_words", "drift_family", "example_rng",
        "hf_negation_editor", "is_negation_edit", "load_suite", "load_user_family", "negation_edits",
        "register_family", "template_family", "write_suite"
    ),
    "frame": (
        "AXIOM_META_METRICS", "NLI_PARAPHRASES", "QA_PREFIXES", "asd", "contrastive_perturbation",
        "equivalent_perturbation", "mar", "noisy_labels", "nrg", "phi", "scv"
    ),
    "varif": (
        "harmonic", "hypervolume_2d", "identity_aware", "keep_equivalent", "pareto_front", "robustness", "sim_nli",
        "specificity", "transform_informativeness", "varif_scores"
    ),
    "generators": (
        "ExplanationGenerator", "GoldGenerator", "JsonlGenerator", "RandomKGenerator", "SelfRationalizerGenerator",
        "TemplateGenerator", "Text2TextGenerator", "TfidfTopKGenerator", "build_generator"
    ),
    "nli": ("NLIJudge", "train_nli_judge"),
    "perturb": ("format_perturbation", "hf_paraphraser", "perturb_records", "rule_paraphrases"),
    "lcig": ("LCIG", "MaskSettings", "choice_log_probs", "mask_rationales"),
    "specificity": ("SentenceEmbedder", "other_inputs", "specificity_scores"),
    "frame_run": ("FrameRun", "RLC_METRICS", "SimulatorPair", "Simulators"),
    "varif_run": ("VarifRun", "check_hypotheses", "plot_frontier", "render_varif_markdown", "summarize_varif"),
    "task_model": ("SelfRationalizer",),
    "evaluation": (
        "MetaEvaluation", "meta_evaluate", "meta_evaluate_bundles", "meta_summary", "render_meta_markdown",
        "write_meta_report"
    ),
})
