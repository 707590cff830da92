"""Deprecated path (one release): frame_run moved to :mod:`larev_hf.frame.run` and the modules beside it."""

from larev_hf.lazy import moved

__getattr__ = moved(__name__, [f"larev_hf.frame.{m}" for m in ("run", "simulators", "variants", "seeds", "stages",
                                                               "report", "meta_metrics", "settings")])
