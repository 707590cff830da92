"""Deprecated path (one release): frame_run moved to :mod:`larev_hf.frame.run`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.frame.run")
