"""The method registry: one place that knows which rationale metrics exist.

``register_method(MyMethod())`` makes a metric available to ``--method``, the run, ``report.json``, ``larev-hf
export`` and the ``evaluate`` modules. The built-in methods register themselves when :mod:`larev_hf.methods` is
imported; their order here is the canonical order of stages, report entries and ``--method all``.
"""

from __future__ import annotations

from larev_hf.methods.base import Method

_METHODS: dict[str, Method] = {}


def register_method(method: Method, *, replace: bool = False) -> Method:
    """Add ``method`` to the registry (``replace=True`` to redefine a name); returns it."""
    if not isinstance(method, Method):
        raise TypeError(f"expected a larev_hf.methods.Method instance, got {type(method).__name__}")
    name = getattr(method, "name", "")
    if not name or not name.isidentifier() or name == "all":
        raise ValueError(f"method name {name!r}: expected a Python identifier other than 'all'")
    if method.text_feature and not callable(getattr(method, "text_scores", None)):
        raise TypeError(f"method {name!r} is a text feature but has no text_scores(records, texts, state)")
    if name in _METHODS and not replace:
        raise ValueError(f"a method named {name!r} is already registered ({_METHODS[name]!r}); pass replace=True")
    _METHODS[name] = method
    return method


def unregister_method(name: str) -> None:
    """Remove a method (tests register toy methods and remove them again)."""
    _METHODS.pop(name, None)


def method_names() -> tuple[str, ...]:
    """Every registered method name, in canonical order."""
    return tuple(_METHODS)


def text_features() -> tuple[str, ...]:
    """The registered methods a bundle's calibration may read beside the bundle's own score (:attr:`Method.text_feature
    <larev_hf.methods.base.Method.text_feature>`), in canonical order: registering one is all it takes."""
    return tuple(name for name, method in _METHODS.items() if method.text_feature)


def get_method(name: str) -> Method:
    """The registered method ``name``; an unknown name raises a ``ValueError`` listing the known ones."""
    if name not in _METHODS:
        raise ValueError(f"method {name!r} is not available; expected one of {method_names()}")
    return _METHODS[name]


def resolve_methods(spec: str) -> tuple[str, ...]:
    """``"all"`` (every registered method with ``in_all``) or a comma-separated list → the registered names, in
    canonical order (stage tags do not depend on the order a user typed)."""
    if spec == "all":
        return tuple(name for name, method in _METHODS.items() if method.in_all)
    asked = [name.strip() for name in spec.split(",")]
    unknown = [name for name in asked if name not in _METHODS]
    if unknown or not spec.strip():
        raise ValueError(f"method {spec!r} is not available; expected 'all' or a comma-separated list of "
                         f"{method_names()} (e.g. 'rev,larev')")
    return tuple(name for name in _METHODS if name in asked)


def exportable_methods() -> tuple[str, ...]:
    """The methods ``larev-hf export`` can bundle."""
    return tuple(name for name, method in _METHODS.items() if method.exportable)
