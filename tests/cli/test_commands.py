"""The ``larev-hf`` command table: one module per subcommand, dispatched by name, each one's help without the
heavy libraries."""

from __future__ import annotations

import subprocess
import sys

import pytest

from larev_hf.cli import main
from larev_hf.cli.commands import COMMANDS
from larev_hf.cli.commands.export import ExportCommand

HEAVY_MODULES = ("torch", "transformers", "datasets", "scipy", "sklearn", "peft", "captum", "evaluate")


def test_each_subcommand_is_one_command_module_in_help_order() -> None:
    assert list(COMMANDS) == ["demo", "run", "evaluate", "evaluators", "meta", "human", "varif", "nli-train", "frame",
                              "export"]
    for name, command in COMMANDS.items():
        assert command.name == name and command.help_text
        assert type(command).__module__ == f"larev_hf.cli.commands.{name.replace('-', '_')}"


def test_every_subcommands_help_loads_none_of_the_heavy_libraries() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from larev_hf.cli import main\n"
        f"for words in ([], *([name] for name in {list(COMMANDS)!r})):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main([*words, '--help'])\n"
        f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_python_dash_m_is_the_console_script() -> None:
    done = subprocess.run([sys.executable, "-m", "larev_hf.cli", "--help"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("usage: larev-hf ")


EXPORT = ["--quiet", "export", "--run-dir", "run", "--method", "rev", "--output-dir", "bundle"]


def test_main_runs_the_named_command_and_returns_its_exit_status(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(ExportCommand, "run", lambda self, args, progress: calls.append((args.method, progress)) or 7)
    assert main(EXPORT) == 7
    assert calls == [("rev", False)]  # --quiet: no progress bars


@pytest.mark.parametrize(("error", "status", "line"), [
    (ValueError("no such stage"), 2, "larev-hf: error: no such stage\n"),
    (KeyboardInterrupt(), 130, "larev-hf: interrupted; rerun the same command to resume (finished stages are kept)\n"),
])
def test_a_commands_error_becomes_one_line_and_an_exit_status(monkeypatch, capsys, error, status, line) -> None:
    def fail(self, args, progress):
        raise error

    monkeypatch.setattr(ExportCommand, "run", fail)
    assert main(EXPORT) == status
    assert capsys.readouterr().err.endswith(line)
