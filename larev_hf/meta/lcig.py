"""Deprecated path (one release): lcig moved to :mod:`larev_hf.varif.lcig`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, ("larev_hf.varif.lcig", "larev_hf.explain.choices"))
