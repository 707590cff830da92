"""Lazy package exports (PEP 562), so ``larev-hf --help`` and the settings dataclasses load without torch.

A package lists which submodule defines each public name; the submodule is imported the first time the name is
read (``from larev_hf.modeling import build_model`` or ``larev_hf.modeling.build_model``) and the value is cached on
the package. ``dir(package)`` and ``__all__`` list every name before any is loaded.

:func:`moved` keeps a deprecated import path working for one release: a module left at the old path forwards each
name to its new home with a DeprecationWarning.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(package: str, submodules: Mapping[str, Sequence[str]]) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` whose names live in ``submodules`` ({submodule: names})."""
    owner = {name: submodule for submodule, names in submodules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in owner:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{owner[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(owner) | set(vars(sys.modules[package])))

    return __getattr__, __dir__, list(owner)


def moved(old: str, new: str | Sequence[str], *, names: Mapping[str, str] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for a deprecated import path (one release): ``old``'s names now live in ``new`` (a
    module, or several searched in order; ``names`` maps single names to their module instead). Each name read
    through ``old`` warns (DeprecationWarning) and returns the new module's object; the modules are imported by
    name, so the old path draws no import arrow into the new packages."""
    homes = [new] if isinstance(new, str) else list(new)

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        for home in ([names[name]] if names and name in names else homes):
            module = importlib.import_module(home)
            if hasattr(module, name):
                value = getattr(module, name)
                owner = getattr(value, "__module__", None)  # a function or class: the module that defines it
                if not (isinstance(owner, str) and getattr(sys.modules.get(owner), name, None) is value):
                    owner = home
                warn_moved(f"{old}.{name}", f"{owner}.{name}", stacklevel=3)
                return value
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def warn_moved(old: str, new: str, stacklevel: int = 2) -> None:
    """The DeprecationWarning of a moved import path."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}", DeprecationWarning,
                  stacklevel=stacklevel)
