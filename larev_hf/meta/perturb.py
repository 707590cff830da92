"""Deprecated path (one release): perturb moved to :mod:`larev_hf.varif.perturb`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.varif.perturb")
