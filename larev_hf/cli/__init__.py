"""The ``larev-hf`` command line: ``demo``, ``run``, ``evaluate``, ``evaluators``, ``meta``, ``human``, ``varif``,
``nli-train``, ``frame`` and ``export``.

:mod:`~larev_hf.cli.app` is the program (:func:`main`, :func:`build_parser`, the start-up before torch loads),
:mod:`~larev_hf.cli.commands` holds one module per subcommand (its flags' dataclasses, its parser and its run) and
the table ``main`` dispatches on, :mod:`~larev_hf.cli.arguments` the flags several subcommands share.
``python -m larev_hf.cli`` is the ``larev-hf`` console script. Every name loads on first use (:mod:`larev_hf.lazy`).
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.cli.app import build_parser, detect_offline, main

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "app": ("build_parser", "detect_offline", "main"),
})
