"""Every command line the docs show must still parse, so a renamed or removed flag fails CI, not a reader.

The commands are taken from the fenced shell blocks (```bash, ```sh, ```console, plain ```) of README.md,
docs/**/*.md, examples/**/*.md, benchmarks/**/*.md and metrics/*/README.md:

* ``larev-hf ...`` (and ``python -m larev_hf.cli ...``) is parsed with ``larev_hf.cli.build_parser()``;
* ``python examples/<script>.py ...`` / ``python benchmarks/<script>.py ...`` (also after ``accelerate launch
  [options]`` or ``torchrun [options]``) is parsed without running the script: with its ``HfArgumentParser``
  (the module is imported, ``main`` is not called), or with an ``argparse`` parser rebuilt from the
  ``add_argument`` calls of its source (option strings, action, nargs, required, choices, builtin types), or,
  when neither can be had, by checking that each documented ``--flag`` occurs in the script's source.
  Abbreviated flags are refused everywhere (argparse's ``allow_abbrev`` is turned off).

Shell syntax handled: ``\\`` line continuations, ``# comments``, quotes, ``NAME=value`` prefixes, ``&&`` / ``||`` /
``;`` / ``|`` chains (each segment is a command), redirections, ``<placeholder>`` (a dummy value), and
``[--optional flags]`` (parsed both without and with them; a trailing comment made only of such groups,
``larev-hf export ...   # [--push-to-hub you/repo]``, counts as optional flags of its command).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import io
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_GLOBS = ("README.md", "docs/**/*.md", "examples/**/*.md", "benchmarks/**/*.md", "metrics/*/README.md")
SHELL_LANGUAGES = {"", "bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession"}
PROMPT_LANGUAGES = {"console", "shell-session", "shellsession"}  # only `$ ` lines are commands, the rest is output
SCRIPT_DIRS = ("examples/", "benchmarks/")
LAUNCHERS = {"accelerate", "torchrun", "deepspeed"}  # `<launcher> [options] script.py args`: check the script part
PREFIX_COMMANDS = {"time", "nohup", "exec", "env", "command"}
PLACEHOLDER = "PLACEHOLDER"
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
OPERATORS = ("&&", "||", ";;", "|&", "|", ";", "&")


# --------------------------------------------------------------------------------------------------- extraction


@dataclass
class Command:
    """One documented command: where it is, its words, and its ``[optional]`` groups."""

    path: str
    line: int
    text: str
    words: list[str]
    groups: list[list[str]] = field(default_factory=list)  # bracketed optional parts, in order

    def variants(self) -> list[list[str]]:
        """The argv without the optional groups, and (when there are any) with all of them."""
        if not self.groups:
            return [self.words]
        return [self.words, self.words + [word for group in self.groups for word in group]]

    def where(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


@dataclass
class _Word:
    text: str = ""
    line: int = 0
    started: bool = False  # a quoted empty string is still a word


def shell_blocks(text: str) -> list[tuple[int, str]]:
    """``(first line number, body)`` of each fenced shell block; prompt-style blocks keep only their commands."""
    blocks, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        info = opening["info"].strip().lstrip("{").lstrip(".").split()
        language = info[0].lower() if info else ""
        body, start = [], index + 2
        index += 1
        while index < len(lines):
            closing = FENCE.match(lines[index])
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence) \
                    and not closing["info"].strip():
                break
            line = lines[index]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            index += 1
        index += 1
        if language in SHELL_LANGUAGES:
            if language in PROMPT_LANGUAGES:
                body = _prompt_lines(body)
            blocks.append((start, "\n".join(body)))
    return blocks


def _prompt_lines(body: list[str]) -> list[str]:
    kept, continued = [], False
    for line in body:
        match = re.match(r"^\s*[$%] ?(.*)$", line)
        if continued:
            kept.append(line)
        elif match:
            kept.append(match[1])
        else:
            kept.append("")  # command output (keeps the line numbers)
        continued = kept[-1].rstrip().endswith("\\")
    return kept


def split_commands(body: str, first_line: int, path: str) -> list[Command]:
    """Split a shell block into simple commands (a small POSIX-shell lexer: quotes, escapes, comments, operators)."""
    commands: list[Command] = []
    words: list[str] = []
    groups: list[list[str]] = []
    group: list[str] | None = None  # the words of the open `[...]` group (nested groups are merged into it)
    depth = 0
    word = _Word()
    line = first_line
    start_line: int | None = None
    drop_next_word = False  # the target of a redirection

    def finish_word() -> None:
        nonlocal word, start_line, drop_next_word
        if word.started:
            if drop_next_word:
                drop_next_word = False
            else:
                target = group if group is not None else words
                target.append(word.text)
                if start_line is None:
                    start_line = word.line
        word = _Word()

    def add_char(char: str) -> None:
        if not word.started:
            word.started, word.line = True, line
        word.text += char

    def finish_command(end: int) -> None:
        nonlocal words, groups, group, depth, start_line
        finish_word()
        if group is not None:  # an unclosed `[`: keep its words as optional
            groups.append(group)
            group, depth = None, 0
        if words:
            source_lines = body.splitlines()[start_line - first_line:end - first_line + 1]
            text = " ".join(part.strip().rstrip("\\").strip() for part in source_lines)
            commands.append(Command(path, start_line, text, words, groups))
        words, groups, start_line = [], [], None

    i, n = 0, len(body)
    while i < n:
        char = body[i]
        if char == "\\" and i + 1 < n and body[i + 1] == "\n":  # line continuation
            line += 1
            i += 2
            continue
        if char == "\\" and i + 1 < n:
            add_char(body[i + 1])
            i += 2
            continue
        if char == "'":
            end = body.find("'", i + 1)
            end = n if end < 0 else end
            add_char("")
            word.text += body[i + 1:end]
            line += body.count("\n", i, end)
            i = end + 1
            continue
        if char == '"':
            add_char("")
            i += 1
            while i < n and body[i] != '"':
                if body[i] == "\\" and i + 1 < n and body[i + 1] in '"\\$`\n':
                    if body[i + 1] != "\n":
                        word.text += body[i + 1]
                    else:
                        line += 1
                    i += 2
                    continue
                if body[i] == "\n":
                    line += 1
                word.text += body[i]
                i += 1
            i += 1
            continue
        if char == "#" and not word.started:  # a comment runs to the end of the line
            end = body.find("\n", i)
            end = n if end < 0 else end
            optional = _optional_groups(body[i + 1:end])
            if optional and (words or group is not None):
                groups.extend(optional)
            i = end
            continue
        if char == "\n":
            finish_command(line)
            line += 1
            i += 1
            continue
        if char in " \t":
            finish_word()
            i += 1
            continue
        if char == "[" and not word.started and i + 1 < n and body[i + 1] not in " \t\n":
            group = [] if group is None else group
            depth += 1
            i += 1
            continue
        if char == "]" and group is not None and (i + 1 == n or body[i + 1] in " \t\n;|&]"):
            finish_word()
            depth -= 1
            if depth == 0:
                groups.append(group)
                group = None
            i += 1
            continue
        if char == "<" and i + 1 < n and body[i + 1] not in " \t\n<(":
            end = body.find(">", i)
            newline = body.find("\n", i)
            if end > 0 and (newline < 0 or end < newline) and body[end - 1] not in " \t":  # `<placeholder>`
                add_char(PLACEHOLDER)
                i = end + 1
                continue
        if char in "<>":  # a redirection: drop `2>`'s fd and the target (`>&1` has no separate target)
            if word.started and word.text.isdigit():
                word = _Word()
            else:
                finish_word()
            i += 1
            while i < n and body[i] in "<>":
                i += 1
            if i < n and body[i] == "&":
                i += 1
                while i < n and (body[i].isdigit() or body[i] == "-"):
                    i += 1
            else:
                drop_next_word = True
            continue
        operator = next((op for op in OPERATORS if body.startswith(op, i)), None)
        if operator:
            finish_command(line)
            i += len(operator)
            continue
        add_char(char)
        i += 1
    finish_command(line)
    return commands


def _optional_groups(comment: str) -> list[list[str]]:
    """``[--flag value] [--other]`` -> ``[["--flag", "value"], ["--other"]]``; [] if the comment is anything else."""
    comment = comment.strip()
    found = re.findall(r"\[([^\[\]]+)\]", comment)
    if not found or re.sub(r"\[[^\[\]]+\]", "", comment).strip() or not all(g.strip().startswith("-") for g in found):
        return []
    return [re.sub(r"<[^<>\s][^<>]*>", PLACEHOLDER, group).split() for group in found]


def documented_commands() -> list[Command]:
    paths = sorted({path for pattern in DOC_GLOBS for path in ROOT.glob(pattern) if path.is_file()})
    commands = []
    for path in paths:
        relative = path.relative_to(ROOT).as_posix()
        for first_line, body in shell_blocks(path.read_text(encoding="utf-8")):
            commands.extend(split_commands(body, first_line, relative))
    return commands


# ------------------------------------------------------------------------------------------------ classification


def strip_prefixes(words: list[str]) -> list[str]:
    """Drop ``NAME=value`` assignments and wrappers such as ``time`` / ``env``."""
    index = 0
    while index < len(words) and (ENV_ASSIGNMENT.match(words[index]) or words[index] in PREFIX_COMMANDS):
        index += 1
    return words[index:]


def is_python(word: str) -> bool:
    return re.fullmatch(r"(.*/)?python(\d+(\.\d+)*)?", word) is not None


def larev_hf_argv(words: list[str]) -> list[str] | None:
    """The argv of a ``larev-hf`` command (``python -m larev_hf.cli`` included), else None."""
    words = strip_prefixes(words)
    if not words:
        return None
    if words[0] == "larev-hf" or words[0].endswith("/larev-hf"):
        return words[1:]
    if is_python(words[0]) and words[1:3] == ["-m", "larev_hf.cli"]:
        return words[3:]
    return None


def script_call(words: list[str]) -> tuple[str, list[str], list[str]] | None:
    """``(script path, its argv, launcher words)`` of ``python examples/x.py ...`` (also under a launcher)."""
    words = strip_prefixes(words)
    if not words or not (is_python(words[0]) or Path(words[0]).name in LAUNCHERS):
        return None
    for index, word in enumerate(words[1:], start=1):
        if word.endswith(".py"):
            script = word.removeprefix("./")
            if script.startswith(SCRIPT_DIRS):
                return script, words[index + 1:], words[1:index]
            return None
        if is_python(words[0]) and word == "-m":
            return None
    return None


# ---------------------------------------------------------------------------------------------------- parsing


def parse_error(parser: argparse.ArgumentParser, argv: list[str], known: bool = False) -> tuple[str | None, list]:
    """``(error, leftovers)``: parse ``argv``; error is None when it parses (``--help`` counts as parsed)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            if known:
                _, extra = parser.parse_known_args(argv)
                return None, extra
            parser.parse_args(argv)
    except SystemExit as exit_:
        if exit_.code in (0, None):
            return None, []
        message = stderr.getvalue().strip().splitlines()
        return (message[-1] if message else f"exit status {exit_.code}"), []
    except Exception as error:  # noqa: BLE001 - a type= function that raises something else
        return f"{type(error).__name__}: {error}", []
    return None, []


def exact_flags_only(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Turn off argparse's prefix matching (here and in sub-commands): a doc's ``--output`` must not pass for
    ``--output-dir``."""
    parser.allow_abbrev = False
    for action in getattr(parser, "_actions", ()):
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict):
            for sub in choices.values():
                if isinstance(sub, argparse.ArgumentParser):
                    exact_flags_only(sub)
    return parser


@pytest.fixture(scope="module")
def commands() -> list[Command]:
    return documented_commands()


@pytest.fixture(scope="module")
def cli_parser() -> argparse.ArgumentParser:
    from larev_hf.cli import build_parser

    return exact_flags_only(build_parser())


def test_documented_larev_hf_commands_parse(commands, cli_parser):
    larev = [(command, larev_hf_argv(command.words)) for command in commands]
    larev = [(command, argv) for command, argv in larev if argv is not None]
    assert len(larev) > 5, f"only {len(larev)} larev-hf commands found in the docs: is the extractor broken?"
    failures = []
    for command, _ in larev:
        for variant in command.variants():
            error, _ = parse_error(cli_parser, larev_hf_argv(variant))
            if error:
                failures.append(f"{command.where()}\n    argv: {larev_hf_argv(variant)}\n    {error}")
    assert not failures, f"{len(failures)} documented larev-hf command(s) do not parse:\n" + "\n".join(failures)


# ------------------------------------------------------------------------------------------- example scripts


@dataclass
class ScriptParser:
    kind: str  # "hf" (the script's HfArgumentParser), "argparse" (rebuilt from its source) or "source" (literal)
    parser: argparse.ArgumentParser | None = None
    known_args: bool = False  # the script uses parse_known_args: leftovers are its business
    forwards_to_cli_run: bool = False  # ... and it hands them to `larev-hf run` (benchmarks/reproduce_tables.py)
    source: str = ""
    reason: str = ""

    @property
    def forwarded_command(self) -> str:
        """The `larev-hf` subcommand the leftovers go to: the script's ``FORWARDS_TO = "..."``, else ``run``."""
        match = re.search(r'^FORWARDS_TO\s*=\s*"(\w[\w-]*)"', self.source, re.MULTILINE)
        return match.group(1) if match else "run"


class _Unsupported(Exception):
    pass


def _literal(node: ast.expr):
    """A literal kwarg value; ``argparse.X`` and the builtins int/float/str are resolved, anything else raises."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "argparse":
        return getattr(argparse, node.attr)
    if isinstance(node, ast.Name) and node.id in ("int", "float", "str"):
        return {"int": int, "float": float, "str": str}[node.id]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise _Unsupported(ast.unparse(node)) from None


def _rebuilt_argparse(tree: ast.Module, script: str) -> argparse.ArgumentParser:
    """An ``argparse`` parser with the options of the script's ``add_argument`` calls (help, default, custom types
    left out: values are then taken as strings)."""
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    if any(call.func.attr in ("add_subparsers", "add_parser") for call in calls):
        raise _Unsupported("sub-commands")
    parser = argparse.ArgumentParser(prog=script, allow_abbrev=False)
    added = 0
    for call in sorted((c for c in calls if c.func.attr == "add_argument"), key=lambda c: (c.lineno, c.col_offset)):
        names = [_literal(arg) for arg in call.args]
        if not all(isinstance(name, str) for name in names):
            raise _Unsupported(ast.unparse(call))
        kwargs = {}
        for keyword in call.keywords:
            if keyword.arg in ("action", "nargs", "required", "dest", "const", "metavar"):
                kwargs[keyword.arg] = _literal(keyword.value)
            elif keyword.arg in ("type", "choices"):
                with contextlib.suppress(_Unsupported):
                    kwargs[keyword.arg] = _literal(keyword.value)
            elif keyword.arg is None:
                raise _Unsupported(ast.unparse(call))
        if "choices" in kwargs and kwargs.get("type", str) is not str:
            kwargs["choices"] = [str(choice) for choice in kwargs["choices"]]
            kwargs.pop("type")
        parser.add_argument(*names, **kwargs)
        added += 1
    if not added:
        raise _Unsupported("no add_argument calls")
    return parser


def _hf_argument_parser(tree: ast.Module, path: Path) -> argparse.ArgumentParser | None:
    """The script's ``HfArgumentParser(<dataclasses>)``, its argument evaluated in the imported module (whose
    ``if __name__ == "__main__"`` block does not run)."""
    call = next((node for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Name) and node.func.id == "HfArgumentParser" and node.args), None)
    if call is None:
        return None
    name = f"_documented_script_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    sys.modules[name] = module  # dataclasses and HfArgumentParser look the module up by name
    try:
        spec.loader.exec_module(module)
        from transformers import HfArgumentParser

        dataclass_types = eval(ast.unparse(call.args[0]), vars(module))  # the script's own expression
        return exact_flags_only(HfArgumentParser(dataclass_types))
    finally:
        sys.modules.pop(name, None)
        sys.path[:] = saved_path


@cache
def script_parser(script: str) -> ScriptParser:
    path = ROOT / script
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    known = "parse_known_args" in source
    forwards = known and ("from larev_hf.cli import main" in source or "from larev_hf.cli import build_parser" in source)
    hf = _hf_argument_parser(tree, path)
    if hf is not None:
        hf.prog = script
        return ScriptParser("hf", hf, known, forwards, source)
    try:
        return ScriptParser("argparse", _rebuilt_argparse(tree, script), known, forwards, source)
    except _Unsupported as why:
        return ScriptParser("source", None, known, forwards, source, reason=str(why))


def flags_of(argv: list[str]) -> list[str]:
    return [word.split("=", 1)[0] for word in argv if re.match(r"^--?[A-Za-z]", word)]


def launcher_configs(launcher: list[str]) -> list[str]:
    """The ``--config_file`` values of ``accelerate launch [options]``."""
    configs = []
    for index, word in enumerate(launcher):
        name, _, value = word.partition("=")
        if name in ("--config_file", "--config-file"):
            configs.append(value if value else launcher[index + 1] if index + 1 < len(launcher) else "")
    return [config for config in configs if config]


def script_error(script: str, argv: list[str], launcher: list[str], cli_parser) -> str | None:
    if not (ROOT / script).is_file():
        return f"{script} does not exist"
    for config in launcher_configs(launcher):
        if PLACEHOLDER not in config and not (ROOT / config).is_file():
            return f"launcher config {config} does not exist"
    found = script_parser(script)
    if found.kind == "source":
        missing = [flag for flag in flags_of(argv) if flag not in found.source]
        return f"flags not found in {script}: {missing}" if missing else None
    error, extra = parse_error(found.parser, argv, known=found.known_args)
    if error:
        return error
    extra = [word for word in extra if word != "--"]
    if found.forwards_to_cli_run and extra:  # e.g. reproduce_tables.py ... -- --num-train-epochs 10
        command = found.forwarded_command
        output_dir = [] if "--output-dir" in extra else ["--output-dir", PLACEHOLDER]
        error, _ = parse_error(cli_parser, [command, *output_dir, *extra])
        return error and f"forwarded to `larev-hf {command}`: {error}"
    missing = [flag for flag in flags_of(extra) if flag not in found.source]
    return f"unparsed flags not found in {script}: {missing}" if missing else None


def test_documented_script_commands_parse(commands, cli_parser):
    calls = [(command, script_call(command.words)) for command in commands]
    calls = [(command, call) for command, call in calls if call is not None]
    assert len(calls) > 5, f"only {len(calls)} example/benchmark commands found in the docs: is the extractor broken?"
    failures = []
    for command, _ in calls:
        for variant in command.variants():
            script, argv, launcher = script_call(variant)
            error = script_error(script, argv, launcher, cli_parser)
            if error:
                failures.append(f"{command.where()}\n    {script} argv: {argv}\n    {error}")
    assert not failures, f"{len(failures)} documented script command(s) do not parse:\n" + "\n".join(failures)


# ------------------------------------------------------------------------------------------- the extractor


def test_extractor_handles_shell_syntax():
    markdown = """
Some prose with `larev-hf run --not-in-a-block`.

```bash
# a comment: larev-hf run --nope
FOO=1 BAR=2 larev-hf run --method rev \\
    --output-dir runs/x   # trailing comment --nope
pip install -e . && larev-hf demo --output-dir <dir> | tee log.txt 2>&1
larev-hf export --run-dir r --method rev --output-dir b [--push-to-hub you/repo [--private]]
larev-hf export --run-dir r --method rev --output-dir b   # [--push-to-hub <you>/repo]
larev-hf run --column-mapping '{"a": ["b"]}' --label-set "x, y" --output-dir o#1 > out.txt
ACCELERATE_USE_CPU=1 accelerate launch --config_file c.yaml examples/train.py \\
    --output_dir o
```

```python
larev-hf = "not a command"
```

```console
$ larev-hf demo --output-dir a
some output --nope
```
"""
    commands = [c for first, body in shell_blocks(markdown) for c in split_commands(body, first, "x.md")]
    found = [(c.line, larev_hf_argv(c.words), c.groups) for c in commands if larev_hf_argv(c.words) is not None]
    assert found == [
        (6, ["run", "--method", "rev", "--output-dir", "runs/x"], []),
        (8, ["demo", "--output-dir", PLACEHOLDER], []),
        (9, ["export", "--run-dir", "r", "--method", "rev", "--output-dir", "b"],
         [["--push-to-hub", "you/repo", "--private"]]),  # a nested group is merged into its outer one
        (10, ["export", "--run-dir", "r", "--method", "rev", "--output-dir", "b"],
         [["--push-to-hub", f"{PLACEHOLDER}/repo"]]),
        (11, ["run", "--column-mapping", '{"a": ["b"]}', "--label-set", "x, y", "--output-dir", "o#1"], []),
        (21, ["demo", "--output-dir", "a"], []),
    ]
    launched = [script_call(c.words) for c in commands if script_call(c.words)]
    assert launched == [("examples/train.py", ["--output_dir", "o"], ["launch", "--config_file", "c.yaml"])]
    export = next(c for c in commands if c.groups)
    assert export.variants() == [export.words, [*export.words, "--push-to-hub", "you/repo", "--private"]]
