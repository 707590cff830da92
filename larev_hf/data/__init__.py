"""Data layer: one schema, loaders for rationale data sets, a synthetic task, baselines and variants.

Names load on first use (:mod:`larev_hf.lazy`), each with its submodule (``vacuous`` and ``negation`` without
``datasets``).
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.data.baseline_builders import (
        LEAKY_TEMPLATE,
        VARIANTS,
        HFBaselineBuilder,
        add_baselines,
        add_variants,
        baseline_builder_from_config,
        baseline_builder_from_spec,
        build_variants,
        make_baseline_builder,
    )
    from larev_hf.data.formats import (
        EXPLANATION_COLUMNS,
        infer_dataset_kind,
        load_explanations,
        load_schema_jsonl,
    )
    from larev_hf.data.loaders import (
        KINDS,
        load_cose,
        load_ecqa,
        load_esnli,
        load_examples,
        load_jsonl,
        load_strategyqa,
    )
    from larev_hf.data.schema import (
        COLUMNS,
        FEATURES,
        NLI_LABELS,
        TASKS,
        YESNO_LABELS,
        make_example,
        to_dataset,
        validate_example,
    )
    from larev_hf.data.sources import source_files
    from larev_hf.data.synthetic import (
        SYNTHETIC_CATEGORIES,
        SYNTHETIC_PLACES,
        SYNTHETIC_SPLITS,
        load_synthetic,
        make_synthetic_split,
        synthetic_ground_truth,
    )
    from larev_hf.data.vacuous import (
        NLI_VERBALIZERS,
        BaselineBuilder,
        TemplateBaselineBuilder,
        instance_key,
        label_verbalization,
        nli_baseline,
        qa_baseline,
        yesno_baseline,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "baseline_builders": ("LEAKY_TEMPLATE", "VARIANTS", "HFBaselineBuilder", "add_baselines",
                          "add_variants", "baseline_builder_from_config", "baseline_builder_from_spec",
                          "build_variants", "make_baseline_builder"),
    "formats": ("EXPLANATION_COLUMNS", "infer_dataset_kind", "load_explanations", "load_schema_jsonl"),
    "loaders": ("KINDS", "load_cose", "load_ecqa", "load_esnli", "load_examples", "load_jsonl",
                "load_strategyqa"),
    "schema": ("COLUMNS", "FEATURES", "NLI_LABELS", "TASKS", "YESNO_LABELS", "make_example", "to_dataset",
               "validate_example"),
    "sources": ("source_files",),
    "synthetic": ("SYNTHETIC_CATEGORIES", "SYNTHETIC_PLACES", "SYNTHETIC_SPLITS", "load_synthetic",
                  "make_synthetic_split", "synthetic_ground_truth"),
    "vacuous": ("NLI_VERBALIZERS", "BaselineBuilder", "TemplateBaselineBuilder", "instance_key",
                "label_verbalization", "nli_baseline", "qa_baseline", "yesno_baseline"),
})
