"""Deprecated path (one release): task_model moved to :mod:`larev_hf.explain.task_model`."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, "larev_hf.explain.task_model")
