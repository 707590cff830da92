"""Evaluator bundles, their config, input validation, file utilities and model card (see :mod:`larev_hf.hub.bundle`).

``bundle`` (:class:`EvaluatorBundle`, :class:`BundleScores`), ``construct`` (a bundle's parts from a run or from
model directories), ``config`` (:class:`BundleConfig`, file names), ``inputs`` (:func:`build_records`), ``files`` (Hub resolution, checksums, atomic replacement) and ``model_card``
(the card, rendered from ``model_card_template.md``). Which methods can be bundled, and how each scores, comes
from the method registry (:mod:`larev_hf.methods`).
"""

from larev_hf.hub.bundle import BundleScores, EvaluatorBundle
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

__all__ = [
    "CONFIG_NAME", "FORMAT_VERSION", "MODEL_CARD_NAME", "REPORT_NAME", "TOKENIZER_DIR", "BundleConfig", "BundleScores",
    "EvaluatorBundle", "build_records", "read_bundle_config", "resolve_bundle_dir",
]
