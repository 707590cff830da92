"""Deprecated path (one release): specificity moved to :mod:`larev_hf.varif.specificity`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.varif.specificity")
