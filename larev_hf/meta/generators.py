"""Deprecated path (one release): generators moved to :mod:`larev_hf.explain.generators`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.explain.generators", names={"DEFAULT_GENERATORS": "larev_hf.varif.settings"})
