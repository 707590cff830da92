"""docs/architecture.md's claims about the code, checked against it: the rooms' order, who imports whom, which package
``__init__`` is lazy, and the layer order the package's own docstring gives."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import larev_hf

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "larev_hf"
#: What every room may import (docs/architecture.md, "The rooms, from the ground up").
LEAVES = {"io", "lazy", "defaults", "network", "citations", "threads", "evaluate_names"}


def documented_rooms() -> list[tuple[str, set[str] | None, str]]:
    """``(room, the rooms it imports or None for a subpackage, its __init__)`` in the table's order."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("<!-- rooms: checked by tests/test_architecture.py -->", 1)[1].strip().split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        room, imports, init = (cell.strip() for cell in line.strip("|").split("|"))
        names = None if imports.startswith("(inside") else set(re.findall(r"`([\w.]+)`", imports))
        rows.append((room.strip("`"), names, init))
    return rows


def room_of(module: str) -> str:
    """The room of a ``larev_hf`` module: its first part below the package (``larev_hf`` for the root's names)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "larev_hf"


def imported_rooms() -> dict[str, set[str]]:
    """Room → the other rooms and leaves its modules import, wherever the import sits (top, function, TYPE_CHECKING)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        source = room_of(module)
        if source == "metric_modules":  # evaluate's scripts, loaded by evaluate.load, not a room
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "larev_hf":
                targets = [node.module] if node.module != "larev_hf" else [
                    f"larev_hf.{alias.name}" if (PACKAGE / alias.name).is_dir()
                    or (PACKAGE / f"{alias.name}.py").is_file() else "larev_hf" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names if alias.name.split(".")[0] == "larev_hf"]
            else:
                continue
            graph.setdefault(source, set()).update(room_of(t) for t in targets if room_of(t) != source)
    return graph


def test_the_documented_rooms_import_what_the_table_says_and_only_rooms_before_them() -> None:
    rows = [(room, imports) for room, imports, _ in documented_rooms() if imports is not None]
    graph = imported_rooms()
    order = [room for room, _ in rows]
    modules = {p.stem if p.suffix else p.name for p in PACKAGE.iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").is_file()) and p.stem != "__init__"}
    assert sorted(order + sorted(LEAVES)) == sorted(modules), "a room or leaf missing from the table, or one too many"
    for position, (room, documented) in enumerate(rows):
        actual = graph.get(room, set()) - LEAVES - {"larev_hf"}
        assert actual == documented, f"{room} imports {sorted(actual)}; docs/architecture.md says {sorted(documented)}"
        assert all(order.index(other) < position for other in actual), f"{room} imports a room after it"
    for leaf in LEAVES:
        assert graph.get(leaf, set()) <= {"larev_hf"}, f"the leaf {leaf} imports {sorted(graph[leaf])}"
    # the package root imports only leaves; trainer_metrics (explain's) is a name of its lazy table, a string
    assert graph.get("larev_hf", set()) <= LEAVES
    root = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    assert '"explain.generated": ("trainer_metrics",)' in root


def test_which_package_init_is_lazy_is_what_the_table_says() -> None:
    for room, _, init in documented_rooms():
        path = PACKAGE.joinpath(*room.split("."))
        if init == "module":
            assert (path.parent / f"{path.name}.py").is_file(), room
            continue
        text = (path / "__init__.py").read_text(encoding="utf-8")
        assert init == ("lazy" if "lazy_exports(" in text else "eager"), f"larev_hf.{room}'s __init__ is not {init}"
    documented = {room for room, _, init in documented_rooms() if init != "module"}
    packages = {".".join(p.parent.relative_to(PACKAGE).parts) for p in PACKAGE.rglob("__init__.py")} - {""}
    assert packages - {"metric_modules"} == documented  # every package is in the table
    # the rule: lazy, unless importing the package is what registers its modules (the methods, the commands)
    assert {room for room, _, init in documented_rooms() if init == "eager"} == {"methods", "cli.commands"}


def test_the_package_docstring_gives_the_rooms_in_the_tables_order() -> None:
    named = re.findall(r"``(\w+)``", larev_hf.__doc__.split("\n\n", 1)[1])
    rooms = [room for room, imports, _ in documented_rooms() if imports is not None]
    assert [name for name in named if name in rooms] == rooms


#: The modules whose functions may import the library's own modules (docs/architecture.md, "Imports"): each keeps
#: an import cost off a light path (`larev-hf --help`, a file checked before torch loads, a bundle loaded without the
#: pipeline).
LOCAL_IMPORTS = ("cli/commands/", "methods/", "training/settings.py", "rora/settings.py", "evaluators/loading.py",
                 "evaluators/published.py", "hub/findings.py", "hub/construct.py",
                 "hub/score_file.py", "training/nli_judge.py")


def test_function_local_imports_of_the_library_are_only_where_the_rule_allows() -> None:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (inner.module or "").split(".")[0] == "larev_hf":
                        found.add(path.relative_to(PACKAGE).as_posix())
    assert {f for f in found if not f.startswith(LOCAL_IMPORTS)} == set()
    assert all(any(f.startswith(prefix) for f in found) for prefix in LOCAL_IMPORTS), "a stale entry"
