"""Evaluator bundles loaded once per process, by directory or Hub repo id.

``larev-hf evaluate`` and the ``evaluate`` modules (:mod:`larev_hf.metric`) both load their bundle here, through
:func:`larev_hf.evaluators.load`, which first turns a named evaluator (``"esnli"``) into its bundle directory. Loading
the same bundle twice in one process, or the example script loading it before ``evaluate.load``, loads its models once.
"""

from __future__ import annotations

import os
from pathlib import Path

from larev_hf.hub.bundle import EvaluatorBundle
from larev_hf.hub.config import CONFIG_NAME

_BUNDLES: dict[tuple, EvaluatorBundle] = {}


def _cache_key(location: str | os.PathLike, revision: str | None, device: str | None) -> tuple:
    path = Path(os.fspath(location)).expanduser()
    if path.is_dir():  # a local bundle: keyed by where it is and when its config was written
        config = path / CONFIG_NAME
        return ("local", str(path.resolve()), config.stat().st_mtime_ns if config.is_file() else None, device)
    return ("hub", os.fspath(location), revision, device)


def load_bundle(location: str | os.PathLike | EvaluatorBundle, revision: str | None = None,
                device: str | None = None) -> EvaluatorBundle:
    """The :class:`EvaluatorBundle` at ``location`` (a bundle directory or a Hub repo id), loaded once per process
    and device (a bundle object is returned as is).

    Args:
        location (`str`, `os.PathLike` or `EvaluatorBundle`): the bundle directory or Hub repo id.
        revision (`str`, *optional*): Hub branch, tag or commit.
        device (`str`, *optional*): where the evaluators run (defaults to CUDA when available).
    """
    if isinstance(location, EvaluatorBundle):
        return location
    key = _cache_key(location, revision, device)
    if key not in _BUNDLES:
        _BUNDLES[key] = EvaluatorBundle.from_pretrained(location, revision=revision, device=device)
    return _BUNDLES[key]
