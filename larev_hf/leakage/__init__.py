"""Leakage in the baseline: IG leakage terms, environments E1/E2/E3 and counter-label rewriters."""

from larev_hf.leakage.attribution import (
    STOP_WORDS,
    IGSettings,
    LeakageTerm,
    integrated_gradients_terms,
    select_leakage_term,
)
from larev_hf.leakage.environments import (
    ENVIRONMENTS,
    GROUNDING_ENVIRONMENTS,
    GROUNDING_TARGETS,
    RATIONALE_ENVIRONMENTS,
    grounding_rationales,
    make_environments,
    mask_token_of,
    rationale_environments,
    verbalization_environments,
    verbalization_term,
    widen_to_verbalization,
)
from larev_hf.leakage.rationale_leakage import (
    content_stems,
    drop_label_statements,
    drop_ungrounded_sentences,
    input_content_stems,
    mask_input_copies,
    mask_label_words,
    masked_baseline,
    sentences,
    uninformative_rationales,
)
from larev_hf.leakage.rewriters import ANTONYM_PROMPT, CounterLabelRewriter, HFRewriter, Rewriter

__all__ = [
    "STOP_WORDS", "IGSettings", "LeakageTerm", "integrated_gradients_terms", "select_leakage_term", "ENVIRONMENTS",
    "RATIONALE_ENVIRONMENTS", "rationale_environments", "GROUNDING_ENVIRONMENTS", "GROUNDING_TARGETS", "grounding_rationales", "make_environments", "mask_token_of", "verbalization_environments", "verbalization_term", "widen_to_verbalization", "ANTONYM_PROMPT", "CounterLabelRewriter",
    "HFRewriter", "Rewriter", "content_stems", "drop_label_statements", "drop_ungrounded_sentences",
    "input_content_stems", "mask_input_copies", "mask_label_words", "masked_baseline", "sentences",
    "uninformative_rationales",
]
