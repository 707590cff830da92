"""Settings dataclasses, the HF way: one dataclass per concern, each field with ``metadata={"help": ...}``.

The ``larev-hf`` CLI, ``run_config.json`` and the resume checks are generated from these fields, so every default
lives in exactly one place. Field metadata understood by :func:`add_dataclass_arguments` and the run:

- ``help``: the flag's help text;
- ``flag``: the flag when it is not ``--<name-with-dashes>`` (e.g. ``--no-stop-word-guard``);
- ``type`` / ``choices`` / ``metavar`` / ``required``: passed to argparse (``choices`` may be a function, called when
  the parser is built, e.g. the registered methods);
- ``cli``: ``False`` for a field that has no flag of its own;
- ``report_only``: the setting changes only scoring or reporting, never a trained artifact (a resumed run may change it);
- ``stages``: the only stages that read the setting (a resumed run may change it until one of them has finished).

A settings dataclass with a ``namespace`` class attribute nests: its fields keep their own names (RoRA's
``lambda_irm``, not ``rora_lambda_irm``) and are spelled ``<namespace>.<name>`` wherever the run's settings share one
namespace (:func:`setting_key`): the flag ``--rora.lambda-irm``, the key ``rora.lambda_irm`` of ``run_config.json``.

This module sits in the methods layer because each method's own settings dataclass (LAREV's λs, RoRA's threshold)
is declared next to the method; :mod:`larev_hf.config` composes them into the run's configuration.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any


def help_field(default: Any, help: str, **metadata: Any) -> Any:  # noqa: A002 - argparse's name
    """A dataclass field with a default and CLI metadata (a list default is copied per instance)."""
    if isinstance(default, list | dict):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help, **metadata})
    return dataclasses.field(default=default, metadata={"help": help, **metadata})


def comma_list(text: str) -> list[str]:
    """argparse type of list settings: ``"q,v"`` → ``["q", "v"]``; ``""`` → ``[]``."""
    return [item.strip() for item in text.split(",") if item.strip()]


def seed_values(seeds: typing.Sequence[Any]) -> list[int]:
    """``--seeds`` (a run's evaluator seeds, FRAME's seeds) as integers: the one check of both, naming the flag."""
    try:
        values = [int(seed) for seed in seeds]
    except ValueError:
        raise ValueError(f"--seeds: expected integers, got {list(seeds)}") from None
    if len(set(values)) != len(values):
        raise ValueError(f"--seeds names a seed twice: {list(seeds)}")
    return values


def setting_key(cls: type, name: str) -> str:
    """Field ``name`` of the settings dataclass ``cls`` in a namespace shared with other sections (the flags of a
    command, ``run_config.json``): ``<namespace>.<name>`` when ``cls`` nests (its ``namespace`` class attribute, e.g.
    ``rora.lambda_irm``), else ``name``."""
    namespace = getattr(cls, "namespace", None)
    return f"{namespace}.{name}" if namespace else name


def setting_flag(cls: type, field: dataclasses.Field) -> str:
    """The flag of ``cls``'s ``field``: its metadata's ``flag``, else ``--`` and :func:`setting_key` with dashes
    within each name (``--lambda-irm``, ``--rora.lambda-irm``)."""
    return field.metadata.get("flag", "--" + setting_key(cls, field.name).replace("_", "-"))


_SCALARS = {"int": int, "float": float, "str": str}


def _argparse_type(cls: type, field: dataclasses.Field) -> Any:
    """The argparse ``type`` of a field: its metadata's, else the scalar inside ``X | None``."""
    if "type" in field.metadata:
        return field.metadata["type"]
    hint = typing.get_type_hints(cls)[field.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    if len(args) == 1 and args[0] in (int, float, str):
        return args[0]
    raise TypeError(f"{cls.__name__}.{field.name}: give metadata 'type' for a field of type {hint}")


def add_dataclass_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type) -> None:
    """Add one flag per field of the settings dataclass ``cls`` (see the module docstring for the metadata)."""
    for field in dataclasses.fields(cls):
        meta = field.metadata
        if meta.get("cli", True) is False:
            continue
        flag = setting_flag(cls, field)
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
        kwargs: dict[str, Any] = {"dest": setting_key(cls, field.name), "default": default, "help": meta.get("help")}
        if isinstance(default, bool) and "type" not in meta:
            kwargs["action"] = "store_false" if default else "store_true"
        else:
            kwargs["type"] = _argparse_type(cls, field)
            for key in ("choices", "metavar"):
                if key in meta:
                    kwargs[key] = meta[key]() if callable(meta[key]) else meta[key]
        if meta.get("required"):
            kwargs["required"] = True
        if not flag.startswith("-"):  # a positional argument: argparse names it by the flag itself
            kwargs.pop("dest")
            kwargs.update({key: meta[key] for key in ("nargs",) if key in meta})
        parser.add_argument(flag, **kwargs)


def field_values(cls: type, namespace: argparse.Namespace) -> dict[str, Any]:
    """The values of ``cls``'s CLI fields in a parsed ``namespace``, by :func:`setting_key` (``rora.threshold``)."""
    keys = [setting_key(cls, f.name) for f in dataclasses.fields(cls) if f.metadata.get("cli", True) is not False]
    return {key: getattr(namespace, key) for key in keys if hasattr(namespace, key)}
