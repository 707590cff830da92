"""Leakage in the baseline: IG leakage terms, environments E1/E2/E3 and counter-label rewriters.

Names load on first use (:mod:`larev_hf.lazy`), each with its submodule.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
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


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "attribution": ("STOP_WORDS", "IGSettings", "LeakageTerm", "integrated_gradients_terms",
                    "select_leakage_term"),
    "environments": ("ENVIRONMENTS", "GROUNDING_ENVIRONMENTS", "GROUNDING_TARGETS",
                     "RATIONALE_ENVIRONMENTS", "grounding_rationales", "make_environments", "mask_token_of",
                     "rationale_environments", "verbalization_environments", "verbalization_term",
                     "widen_to_verbalization"),
    "rationale_leakage": ("content_stems", "drop_label_statements", "drop_ungrounded_sentences",
                          "input_content_stems", "mask_input_copies", "mask_label_words", "masked_baseline",
                          "sentences", "uninformative_rationales"),
    "rewriters": ("ANTONYM_PROMPT", "CounterLabelRewriter", "HFRewriter", "Rewriter"),
})
