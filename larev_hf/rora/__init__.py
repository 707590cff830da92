"""RoRA (Jiang et al., ACL 2024): rationale evaluation robust to label leakage in the rationale.

The flow (RoRA §3): :class:`LeakageDetector` (a fastText-style r → y model, IG attributions averaged
per n-gram, masking) → :func:`train_infiller` / :func:`generate_counterfactuals` (a label-conditioned
infiller produces D^e for every label e) → :func:`train_phi` (IRMv1 across the D^e, eq. 7) and
:func:`train_theta` (x with an empty rationale, eq. 8) → :class:`RoRAScorer` (eq. 9).
:func:`fit_rora` runs every step in one call. :mod:`larev_hf.rora.classifier` is the classifier variant
(RoRA_DeBERTa, §4.1) with a pretrained encoder and a classification head. :class:`RoRASettings` holds the run's
flags, :class:`RoRAConfig` the training arguments of Φ.

Names load on first use (:mod:`larev_hf.lazy`): :class:`RoRASettings` without torch.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.rora.classifier import (
        MINILM,
        ClassifierIRMLoss,
        RoRAClassifierScorer,
        build_classifier,
        classifier_dataset,
        classifier_labels,
        shared_label_set,
        train_classifier,
    )
    from larev_hf.rora.detector import DetectorSettings, FastTextClassifier, LeakageDetector
    from larev_hf.rora.evaluator import (
        NORMALIZATIONS,
        CandidateCollator,
        LabelSetIRMLoss,
        RoRAConfig,
        RoRAScorer,
        RoRATrainer,
        counterfactual_dataset,
        label_set_irm_penalty,
        train_phi,
        train_plain_evaluator,
        train_theta,
    )
    from larev_hf.rora.fit import RoRAFit, fit_rora, mask_rationales, tokenizer_texts
    from larev_hf.rora.infiller import (
        Counterfactuals,
        add_sentinel_tokens,
        build_infiller,
        generate_counterfactuals,
        infiller_pairs,
        load_counterfactuals,
        parse_fills,
        save_counterfactuals,
        train_infiller,
    )
    from larev_hf.rora.masking import (
        RORA_FORMAT,
        MaskedRationale,
        baseline_input,
        evaluator_input,
        infiller_input,
        load_masked,
        merge_spans,
        save_masked,
        sentinel,
        span_target,
        task_text,
    )
    from larev_hf.rora.ngrams import NGramVocab, extract_ngrams
    from larev_hf.rora.settings import RoRASettings, evaluator_backbone, phi_groups_per_batch


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "classifier": ("MINILM", "ClassifierIRMLoss", "RoRAClassifierScorer", "build_classifier", "classifier_dataset",
                   "classifier_labels", "shared_label_set", "train_classifier"),
    "detector": ("DetectorSettings", "FastTextClassifier", "LeakageDetector"),
    "evaluator": ("CandidateCollator", "LabelSetIRMLoss", "NORMALIZATIONS", "RoRAConfig", "RoRAScorer",
                  "RoRATrainer", "counterfactual_dataset", "label_set_irm_penalty", "train_phi",
                  "train_plain_evaluator", "train_theta"),
    "fit": ("RoRAFit", "fit_rora", "mask_rationales", "tokenizer_texts"),
    "infiller": ("Counterfactuals", "add_sentinel_tokens", "build_infiller", "generate_counterfactuals",
                 "infiller_pairs", "load_counterfactuals", "parse_fills", "save_counterfactuals", "train_infiller"),
    "masking": ("MaskedRationale", "RORA_FORMAT", "baseline_input", "evaluator_input", "infiller_input",
                "load_masked", "merge_spans", "save_masked", "sentinel", "span_target", "task_text"),
    "ngrams": ("NGramVocab", "extract_ngrams"),
    "settings": ("RoRASettings", "evaluator_backbone", "phi_groups_per_batch"),
})
