"""Deprecated path (one release): varif_run moved to :mod:`larev_hf.varif.run`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, ("larev_hf.varif.run", "larev_hf.varif.report"))
