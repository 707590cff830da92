"""Evaluator bundles, their config, input validation, file utilities and model card (see :mod:`larev_hf.hub.bundle`).

``bundle`` (:class:`EvaluatorBundle`: identity and construction), ``saving`` (save, push, load: :class:`BundleHubMixin`),
``models`` (:class:`BundleModels`: evaluators loaded on first use), ``scoring`` (:class:`BundleScoring`,
:class:`BundleScores`), ``loading`` (:func:`load_bundle`: once per process), ``construct`` (a bundle's parts from a
run), ``config`` (:class:`BundleConfig`, file names), ``inputs`` (:func:`build_records`), ``files`` (Hub resolution,
checksums, atomic replacement) and ``model_card`` (the card, rendered from ``model_card_template.md``). Which methods
can be bundled, and how each scores, comes from the method registry (:mod:`larev_hf.methods`).

Names load on first use (:mod:`larev_hf.lazy`): a file of explanations is read and validated (``inputs``,
``explanations``) without torch, so a bad file is refused before any model loads.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.hub.bundle import EvaluatorBundle, load_bundle
    from larev_hf.hub.config import (
        CONFIG_NAME,
        FORMAT_VERSION,
        MODEL_CARD_NAME,
        REPORT_NAME,
        TOKENIZER_DIR,
        BundleConfig,
        read_bundle_config,
    )
    from larev_hf.hub.files import resolve_bundle_dir
    from larev_hf.hub.inputs import build_records
    from larev_hf.hub.models import BundleModels
    from larev_hf.hub.saving import BundleHubMixin
    from larev_hf.hub.scoring import BundleScores, BundleScoring

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "bundle": ("EvaluatorBundle", "load_bundle"),
    "config": ("CONFIG_NAME", "FORMAT_VERSION", "MODEL_CARD_NAME", "REPORT_NAME", "TOKENIZER_DIR", "BundleConfig",
               "read_bundle_config"),
    "files": ("resolve_bundle_dir",),
    "inputs": ("build_records",),
    "models": ("BundleModels",),
    "saving": ("BundleHubMixin",),
    "scoring": ("BundleScores", "BundleScoring"),
})
