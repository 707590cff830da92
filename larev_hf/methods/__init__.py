"""Rationale metrics, one module each, and the registry everything above reads.

``rev`` (REV), ``larev`` (LAREV), ``larev_grounded`` (LAREV-G, our extension), ``new_information`` (LAREV-NI, the new information a
rationale adds: our extension), ``rora`` (RoRA), ``simulatability``
(LAS, RQ), and the metric baselines of VARIF §5 (``heuristics``: ROUGE-L, length, grounding, copied span,
copy excess, rationale-only accuracy; ``explanation_lm``: the explanation likelihood, our extension). Each module declares its
method's spec (name, title, formula, citation, model roles), settings dataclass, stages, ``score`` and bundle
scorer; importing this package registers them in canonical order. A new metric is one module with a :class:`Method` subclass and one
:func:`register_method` call (``docs/architecture.md``).
"""

from larev_hf.methods.base import BundleScorer, Method, MethodResult, RunContext, Stage
from larev_hf.methods.explanation_lm import ExplanationLanguageModel, ExplanationLM
from larev_hf.methods.heuristics import (
    CopiedSpan,
    CopyExcess,
    Grounding,
    Length,
    PremiseLink,
    RationaleOnly,
    RougeL,
    content_tokens,
    input_text,
    longest_copied_run,
    share_of_content_words_in,
)
from larev_hf.methods.larev import LAREV
from larev_hf.methods.larev_grounded import GroundedLAREV
from larev_hf.methods.new_information import NewInformation, NewInformationInputs, new_information_scores
from larev_hf.methods.registry import (
    exportable_methods,
    get_method,
    method_names,
    register_method,
    resolve_methods,
    text_features,
    unregister_method,
)
from larev_hf.methods.rev import REV, ConditionalVMethod
from larev_hf.methods.rora import RoRA
from larev_hf.methods.simulatability import LAS, RQ

for _method in (REV(), LAREV(), RoRA(), LAS(), RQ(), GroundedLAREV(), NewInformation(), RougeL(), Length(), Grounding(), CopiedSpan(), CopyExcess(), PremiseLink(), ExplanationLM(), RationaleOnly()):
    if _method.name not in method_names():
        register_method(_method)

__all__ = [
    "BundleScorer", "ConditionalVMethod", "CopiedSpan", "CopyExcess", "ExplanationLM", "ExplanationLanguageModel", "Grounding", "GroundedLAREV", "LAREV", "LAS", "Length", "Method", "MethodResult", "NewInformation", "NewInformationInputs", "new_information_scores", "PremiseLink", "REV", "RQ",
    "RationaleOnly", "RoRA", "RougeL", "RunContext",
    "Stage", "exportable_methods", "get_method", "method_names", "register_method", "resolve_methods",
    "text_features", "unregister_method",
    # the text helpers the heuristic baselines read, for a feature of one's own
    "content_tokens", "input_text", "longest_copied_run", "share_of_content_words_in",
]
