"""Deprecated path (one release): frame moved to :mod:`larev_hf.frame.meta_metrics`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.frame.meta_metrics")
