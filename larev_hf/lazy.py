"""Lazy package exports (PEP 562), so ``larev-hf --help`` and the settings dataclasses load without torch.

A package lists which submodule defines each public name; the submodule is imported the first time the name is
read (``from larev_hf.modeling import build_model`` or ``larev_hf.modeling.build_model``) and the value is cached on
the package. ``dir(package)`` and ``__all__`` list every name before any is loaded.
"""

from __future__ import annotations

import sys

# typing and collections.abc only for the annotations, importlib when a name is first read: the package root uses
# this module, and the start-up hook (larev_hf.evaluate_names) imports the root in every interpreter
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any


def lazy_exports(package: str, submodules: Mapping[str, Sequence[str]]) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` whose names live in ``submodules`` ({submodule: names})."""
    owner = {name: submodule for submodule, names in submodules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in owner:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(f"{package}.{owner[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(owner) | set(vars(sys.modules[package])))

    return __getattr__, __dir__, list(owner)
