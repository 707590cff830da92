"""Deprecated path (one release): varif moved to :mod:`larev_hf.varif.measures`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.varif.measures")
