"""Every package's lazy exports (``larev_hf.lazy``) are spelled out in a ``TYPE_CHECKING`` block that IDEs and type
checkers read, and each name resolves at runtime to the object its submodule defines."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
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


# --------------------------------------------------------------------------- docs/api.md, name by name
API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def _needs_missing_extra(module: str, error: ImportError) -> bool:
    """Whether ``module`` is one of ours whose import failed only for a third-party package (an optional extra, such
    as lighteval, that this environment does not have): its names are then read from its source."""
    missing = getattr(error, "name", None) or ""
    return (isinstance(error, ModuleNotFoundError) and not missing.startswith("larev_hf")
            and importlib.util.find_spec(module) is not None)


def _top_level_names(module: str) -> set[str]:
    """The functions, classes and assignments a module defines at its top level, read from its source file."""
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _resolve(dotted: str) -> bool:
    """Whether ``larev_hf.a.b.Name(.attr)`` resolves: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError as error:
            if cut == len(parts) - 1 and _needs_missing_extra(".".join(parts[:cut]), error):
                return parts[-1] in _top_level_names(".".join(parts[:cut]))
            continue
        for part in parts[cut:]:
            if isinstance(value, type) and not hasattr(value, part):  # an instance attribute its __init__ sets
                return f"self.{part} = " in inspect.getsource(value.__init__)
            if not hasattr(value, part):
                return False
            value = getattr(value, part)
        return True
    return False


def documented_names() -> list[tuple[str, str]]:
    """``(where, dotted name)`` of every name docs/api.md shows as importable: in a reference block, each name that
    opens a line (or a ``;``-separated part of one) under the module of its ``## larev_hf.…`` heading, or of the last
    ``# larev_hf.…`` comment line above it in the block; in an example block, what its ``from larev_hf… import``
    lines import."""
    text = API_PAGE.read_text(encoding="utf-8")
    names, heading = [], None
    for match in re.finditer(r"^## (larev_hf[\w.]*)|^```python\n(.*?)^```", text, re.M | re.S):
        if match.group(1):
            heading = match.group(1)
            continue
        code = match.group(2)
        if re.search(r"^(?:from|import) larev_hf", code, re.M):
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.ImportFrom) and node.module.startswith("larev_hf"):
                    names += [(f"example under {heading}", f"{node.module}.{a.name}") for a in node.names]
            continue
        module = heading
        for line in code.splitlines():
            if switch := re.match(r"# (larev_hf(?:\.\w+)*)\b", line):
                try:  # a module: the names below are its own; else a name of one, checked as such
                    importlib.import_module(switch.group(1))
                    module = switch.group(1)
                except ImportError as error:
                    if _needs_missing_extra(switch.group(1), error):
                        module = switch.group(1)
                    else:
                        names.append((module, switch.group(1)))
                continue
            if module is None or not line or line[0] in " #@)":
                continue
            for part in re.split(r";\s+", line.split("#", 1)[0].removeprefix("class ")):
                if name := re.match(r"([A-Za-z_][\w.]*)\s*(?:\(|=|:|->|$)", part.strip()):
                    dotted = name.group(1) if name.group(1).startswith("larev_hf.") else f"{module}.{name.group(1)}"
                    names.append((module, dotted))
    return names


def test_every_name_the_api_page_shows_exists_where_it_says() -> None:
    names = documented_names()
    assert len(names) > 200  # the page's reference blocks were read, not skipped
    missing = [f"{where}: {dotted}" for where, dotted in names if not _resolve(dotted)]
    assert missing == [], "docs/api.md shows names that do not exist there:\n" + "\n".join(missing)


def test_the_api_page_states_the_version_it_documents() -> None:
    import larev_hf

    assert f"(version `{larev_hf.__version__}`)" in API_PAGE.read_text(encoding="utf-8")
