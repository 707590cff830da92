"""The benchmarks are users of the library: they import what ``larev_hf`` makes public, put nothing on ``sys.path``,
and ``benchmarks/README.md`` says which doc figure each one reproduces.

A name is public when the package (or top-level module) right under ``larev_hf`` exports it (its ``__all__``), or
when docs/api.md documents it under its own module path (``larev_hf.training.leakage_aware``'s ``freeze_encoder``).
A benchmark that needs anything else names the module in an ``Internals:`` paragraph of its docstring, with the
reason.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))
API_DOC = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
#: Scripts whose imports are still being moved onto the public names (their next change does it).
NOT_YET = {"finding_thresholds.py"}


@cache
def exported(module: str) -> frozenset[str]:
    """The public names of ``larev_hf`` or of a package or module right under it."""
    loaded = importlib.import_module(module)
    names = getattr(loaded, "__all__", None)
    return frozenset(names if names is not None else (n for n in vars(loaded) if not n.startswith("_")))


def imported(script: Path) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every ``larev_hf`` import of a script (``name`` None for ``import larev_hf.x``)."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "larev_hf":
            out += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(alias.name, None) for alias in node.names if alias.name.split(".")[0] == "larev_hf"]
    return out


def is_public(module: str, name: str | None) -> bool:
    """Whether ``from module import name`` (or ``import module``) uses only public names."""
    parts = module.split(".")
    if name is None:
        return len(parts) <= 2
    if len(parts) <= 2:
        return name in exported(module)
    documented = re.search(rf"\b{re.escape(name)}\b", API_DOC) is not None
    return module in API_DOC and documented


def internals_note(script: Path) -> str:
    """The ``Internals:`` paragraph of a script's docstring ('' when it has none)."""
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    found = re.search(r"^Internals:(.*?)(?:\n\s*\n|\Z)", doc, re.MULTILINE | re.DOTALL)
    return found.group(1) if found else ""


def test_no_benchmark_edits_sys_path() -> None:
    edits = [path.relative_to(ROOT).as_posix() for path in BENCHMARKS.rglob("*.py")
             if re.search(r"\bsys\.path\.(insert|append|extend)\b", path.read_text(encoding="utf-8"))]
    assert not edits, f"benchmarks that edit sys.path (import larev_hf as installed, siblings as modules): {edits}"


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name not in NOT_YET], ids=lambda s: s.name)
def test_benchmark_imports_public_names_or_says_why(script: Path) -> None:
    note = internals_note(script)
    unexplained = [f"{module}.{name}" if name else module for module, name in imported(script)
                   if not is_public(module, name) and module not in note]
    assert not unexplained, (f"{script.name} imports internals without an 'Internals:' paragraph naming their module "
                             f"and why: {unexplained}")


def test_readme_maps_every_script() -> None:
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    scripts = [p.relative_to(BENCHMARKS).as_posix() for p in sorted(BENCHMARKS.rglob("*"))
               if p.suffix in (".py", ".sh") and "results" not in p.parts]
    missing = [name for name in scripts if f"`{name}`" not in readme]
    assert not missing, f"scripts benchmarks/README.md does not map to a doc figure: {missing}"
