"""The explanation generators VARIF compares (``papers/varif-proposal.md`` §2, §5 and §6), behind one protocol.

VARIF scores *explanation methods*: each method E writes e_i = E(x_i, y_i) for a record and a label (label-conditional,
§"Key definitions"), and R (§3.1) needs E again on perturbed inputs x̃. Every generator here implements
:class:`ExplanationGenerator`: ``explain(records, labels=None) -> list[str]``, with ``labels`` defaulting to each
record's gold ``label``; ``regenerable`` is False for fixed rationales (the gold ones, a user's JSONL), which cannot
explain a perturbed input they have not seen, so R is omitted for them.

- :class:`GoldGenerator` — the human rationale (§5 baseline 1).
- :class:`TemplateGenerator` — the VARSuite template families A–D (§2.3, §4): vacuous, leak, circular, pseudo-specific.
- :class:`TfidfTopKGenerator`, :class:`RandomKGenerator` — the extractive heuristics of §2.2 at word level.
- :class:`SelfRationalizerGenerator` — the trained task model F (:mod:`larev_hf.explain.task_model`) with its decoder
  forced to start with ``"{label} explanation:"``, or unconditional (§"Key definitions": the sensitivity variant).
- :class:`Text2TextGenerator` — any HF text2text checkpoint with a prompt (the proposal's LLM generator, §2.1).
- :class:`JsonlGenerator` — a user's pre-generated rationales.

:func:`build_generator` maps the CLI's spec strings to generators. torch and transformers load only inside the
methods that need them. The package holds the protocol and its shared checks (``base``), the fixed rationales
(``fixed``), the templates (``templates``), the extractive heuristics (``extractive``), the model-based generators
(``models``) and the spec parser (``specs``); every public name is importable from here.

Names load on first use (:mod:`larev_hf.lazy`), each with its submodule.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.explain.generators.base import ExplanationGenerator, raw_input_text, resolve_labels
    from larev_hf.explain.generators.extractive import RandomKGenerator, TfidfTopKGenerator
    from larev_hf.explain.generators.fixed import GoldGenerator, JsonlGenerator
    from larev_hf.explain.generators.models import (
        DEFAULT_PROMPT,
        SelfRationalizerGenerator,
        Text2TextGenerator,
        build_prompt,
    )
    from larev_hf.explain.generators.specs import SPEC_FORMS, build_generator
    from larev_hf.explain.generators.templates import TEMPLATE_FAMILIES, TemplateGenerator


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "base": ("ExplanationGenerator", "raw_input_text", "resolve_labels"),
    "extractive": ("RandomKGenerator", "TfidfTopKGenerator"),
    "fixed": ("GoldGenerator", "JsonlGenerator"),
    "models": ("DEFAULT_PROMPT", "SelfRationalizerGenerator", "Text2TextGenerator", "build_prompt"),
    "specs": ("SPEC_FORMS", "build_generator"),
    "templates": ("TEMPLATE_FAMILIES", "TemplateGenerator"),
})
