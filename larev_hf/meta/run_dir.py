"""Deprecated path (one release): run_dir moved to :mod:`larev_hf.explain.run_dir`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.explain.run_dir")
