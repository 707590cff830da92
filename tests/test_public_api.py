"""Every package's lazy exports (``larev_hf.lazy``) are spelled out in a ``TYPE_CHECKING`` block that IDEs and type
checkers read, and each name resolves at runtime to the object its submodule defines."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGES = sorted(path.parent for path in (Path(__file__).resolve().parents[1] / "larev_hf").glob("*/__init__.py")
                  if "lazy_exports(" in path.read_text())


def _table_and_mirror(init: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    tree = ast.parse(init.read_text())
    table, mirror = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_exports":
            table = {sub: set(names) for sub, names in ast.literal_eval(node.args[1]).items()}
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                mirror.setdefault(statement.module.rsplit(".", 1)[1], set()).update(a.name for a in statement.names)
    return table, mirror


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_the_type_checking_block_mirrors_the_lazy_table(package: Path) -> None:
    table, mirror = _table_and_mirror(package / "__init__.py")
    assert table and mirror == table
    module = importlib.import_module(f"larev_hf.{package.name}")
    for submodule, names in table.items():
        source = importlib.import_module(f"larev_hf.{package.name}.{submodule}")
        for name in names:
            assert getattr(module, name) is getattr(source, name)
