"""Deprecated path (one release): frame_library moved to :mod:`larev_hf.frame.library`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.frame.library")
