"""Deprecated path (one release): frame_report moved to :mod:`larev_hf.frame.report`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.frame.report")
