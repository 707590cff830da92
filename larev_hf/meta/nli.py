"""Deprecated path (one release): nli moved to :mod:`larev_hf.explain.nli`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.explain.nli")
