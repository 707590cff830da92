"""Validation of what users pass to ``score`` / ``compute``: one schema record per example, or an error that names the
argument, the example's position, the field and what was expected."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from larev_hf.data.schema import NLI_LABELS, TASKS, YESNO_LABELS, validate_example
from larev_hf.data.vacuous import instance_key
from larev_hf.io import DataError

Locate = Callable[[str, int, "str | None"], str]


_TASK_NAMES = {"nli": "an NLI", "qa": "a QA", "yesno": "a yes/no"}


def parse_choices(value: Any) -> Any:
    """The answer choices of a row of a person's file: a CSV cell's JSON list or ``|``-separated string as a list
    (anything else as it is, for :func:`build_records` to check)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return [part.strip() for part in text.split("|")] if text else value


def _default_locate(kind: str, index: int, key: str | None = None) -> str:
    return f"{kind}[{index}]" + (f"[{key!r}]" if key else "")


#: The optional key (and file column) that groups the explanations of one instance: they share it, while each row's
#: ``id`` stays unique. Ranks within an instance read it; no score does.
INSTANCE_ID = "instance_id"


def _optional_text(value: Any) -> bool:
    """Whether an optional id is absent or a usable one (a non-empty string or an integer)."""
    return value is None or (not isinstance(value, bool) and isinstance(value, str | int) and bool(str(value).strip()))


def check_instances(records: Sequence[Mapping[str, Any]], name: Callable[[int], str]) -> None:
    """One id rule for every way in: row ids are unique, and the rows that share an ``instance_id`` share the
    instance's input (:func:`~larev_hf.data.vacuous.instance_key`). ``name(i)`` says where row ``i`` came from.

    Raises:
        DataError: naming both rows, the id and what was expected.
    """
    first_row: dict[str, int] = {}
    first_instance: dict[str, int] = {}
    for i, record in enumerate(records):
        row_id = str(record["id"])
        if row_id in first_row:
            raise DataError(f"{name(i)}: duplicate id {row_id!r} (first at {name(first_row[row_id])}); expected a "
                            f"unique id per row; explanations of one instance share an {INSTANCE_ID!r} instead")
        first_row[row_id] = i
        instance = record.get(INSTANCE_ID)
        if instance is None:
            continue
        if instance in first_instance and instance_key(records[first_instance[instance]]) != instance_key(record):
            raise DataError(f"{name(i)}: {INSTANCE_ID} {instance!r} is shared with {name(first_instance[instance])}, "
                            "whose input differs; expected the explanations of one instance to share its input")
        first_instance.setdefault(instance, i)


def _as_list(value: Any, name: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise DataError(f"{name}: expected a list with one entry per example, got {type(value).__name__}")
    return list(value)


def build_records(
    rationales: Sequence[str],
    labels: Sequence[str],
    inputs: Sequence[Mapping[str, Any]],
    *,
    task: str,
    label_set: Sequence[str] | None = None,
    baselines: Sequence[str] | None = None,
    require_choices: bool = False,
    offset: int = 0,
    locate: Locate | None = None,
    check_ids: bool = True,
    allow_empty: bool = True,
) -> list[dict[str, Any]]:
    """Validate what a user passes to ``score``/``compute`` and build one schema record per example.

    What ``inputs`` holds, per example (a dict; other keys, e.g. a whole schema record's, are ignored):

    - ``task="nli"``: ``premise`` and ``hypothesis`` (non-empty strings).
    - ``task="qa"``: ``question``; optionally ``choices`` (the answer options; the label must be one of them;
      required with ``require_choices``, as RoRA's evaluators read the options).
    - ``task="yesno"``: ``question``.
    - any task: optionally ``id`` (a unique name for the row, echoed in outputs; without it the row's position),
      ``instance_id`` (shared by the explanations of one instance, for ranks within it) and ``task`` (checked
      against the evaluator's). Neither id changes a score: the baseline is a function of the instance's content.

    Args:
        rationales (`Sequence[str]`): one rationale per example (an empty string is allowed: b alone).
        labels (`Sequence[str]`): one label per example, in ``label_set`` when there is one.
        inputs (`Sequence[Mapping]`): one input dict per example, as above.
        task (`str`): the evaluator's task.
        label_set (`Sequence[str]`, *optional*): the evaluator's labels; ``None`` = open (QA answer texts).
        baselines (`Sequence[str]`, *optional*): user-given baselines b, checked to be non-empty strings; each
            becomes its record's ``baseline``.
        require_choices (`bool`, *optional*, defaults to `False`): QA inputs must list their ``choices``.
        offset (`int`, *optional*, defaults to 0): added to positions in error messages (for batches).
        locate (`Callable`, *optional*): ``locate(kind, index, key)`` → where, for error messages;
            defaults to ``inputs[3]['hypothesis']`` style.
        check_ids (`bool`, *optional*, defaults to `True`): check the id rule across these rows
            (:func:`check_instances`); the ``evaluate`` glue checks it once over every batch added instead.
        allow_empty (`bool`, *optional*, defaults to `True`): score an empty or whitespace-only rationale (b alone;
            it carries the finding ``empty``, :mod:`larev_hf.hub.findings`); ``False`` refuses them, naming every
            such row (``larev-hf evaluate`` without ``--score-empty``).

    Returns:
        `list[dict]`: schema records (``id, task, premise, hypothesis, question, choices, label, rationale``, and
        ``instance_id`` and ``baseline`` where given).

    Raises:
        DataError: naming the argument, the example's position and the field, and what was expected.
    """
    if task not in TASKS:
        raise ValueError(f"task {task!r}: expected one of {TASKS}")
    locate = locate or _default_locate
    columns = {"rationales": _as_list(rationales, "rationales"), "labels": _as_list(labels, "labels"),
               "inputs": _as_list(inputs, "inputs")}
    if baselines is not None:
        columns["baselines"] = _as_list(baselines, "baselines")
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise DataError(f"{', '.join(f'{n} {name}' for name, n in lengths.items())}: expected one of each per example")
    if label_set is None and task == "nli":
        label_set = NLI_LABELS
    if label_set is None and task == "yesno":
        label_set = YESNO_LABELS
    needed = ("premise", "hypothesis") if task == "nli" else ("question",)
    if task == "qa":
        needed_choices = ", 'choices': [str, ...]" + ("" if require_choices else " (optional)")
    shape = "{" + ", ".join(f"{key!r}: str" for key in needed) + (needed_choices if task == "qa" else "") + "}"
    records, empty = [], []
    for i, (rationale, label, example) in enumerate(zip(columns["rationales"], columns["labels"], columns["inputs"], strict=True)):
        at = offset + i
        if not isinstance(example, Mapping):
            raise DataError(f"{locate('inputs', at, None)}: expected a dict {shape} for {_TASK_NAMES[task]} evaluator, "
                            f"got {type(example).__name__}")
        if example.get("task") not in (None, task):
            raise DataError(f"{locate('inputs', at, 'task')}: {example['task']!r}, but this evaluator was trained on "
                            f"{task!r} examples")
        values = {}
        for key in needed:
            value = example.get(key)
            if not isinstance(value, str) or not value.strip():
                problem = "missing" if value is None else f"{value!r} ({type(value).__name__})"
                raise DataError(f"{locate('inputs', at, key)}: {problem}; expected a non-empty string "
                                f"({_TASK_NAMES[task]} evaluator reads {shape})")
            values[key] = value
        choices = example.get("choices") if task == "qa" else None
        if choices is None and task == "qa" and require_choices:
            raise DataError(f"{locate('inputs', at, 'choices')}: missing; expected the answer options (this evaluator "
                            f"reads them: {shape})")
        if choices is not None:
            if isinstance(choices, str) or not isinstance(choices, Sequence) or not choices \
                    or not all(isinstance(c, str) and c.strip() for c in choices):
                raise DataError(f"{locate('inputs', at, 'choices')}: {choices!r}; expected a non-empty list of "
                                "non-empty strings (the answer options) or no 'choices' key")
            choices = list(choices)
        if not isinstance(label, str) or not label.strip():
            raise DataError(f"{locate('labels', at, None)}: {label!r} ({type(label).__name__}); expected a label string"
                            + (f", one of {list(label_set)}" if label_set else ""))
        if choices is not None and label not in choices:
            raise DataError(f"{locate('labels', at, None)}: {label!r} is not one of this example's choices {choices}")
        if label_set is not None and label not in label_set:
            raise DataError(f"{locate('labels', at, None)}: {label!r} is not in the evaluator's label set {list(label_set)}")
        if not isinstance(rationale, str):
            raise DataError(f"{locate('rationales', at, None)}: {rationale!r} ({type(rationale).__name__}); "
                            "expected a string (may be empty)")
        if not allow_empty and not rationale.strip():
            empty.append(f"{locate('rationales', at, None)} ({'empty' if not rationale else 'whitespace only'})")
        if baselines is not None:
            _check_baseline(columns["baselines"][i], locate("baselines", at, None))
        raw_id, raw_instance = example.get("id"), example.get(INSTANCE_ID) or None  # "" = none (evaluate's features)
        if not _optional_text(raw_id):
            raise DataError(f"{locate('inputs', at, 'id')}: {raw_id!r}; expected a non-empty string or no 'id' key")
        if not _optional_text(raw_instance):
            raise DataError(f"{locate('inputs', at, INSTANCE_ID)}: {raw_instance!r}; expected a non-empty string "
                            f"shared by the explanations of one instance, or no {INSTANCE_ID!r} key")
        premise, hypothesis, question = values.get("premise", ""), values.get("hypothesis", ""), values.get("question", "")
        record = {
            "id": str(raw_id) if raw_id is not None else f"row-{at}",
            "task": task, "premise": premise, "hypothesis": hypothesis, "question": question,
            "choices": choices if choices is not None else list(label_set or [label]),
            "label": label, "rationale": rationale,
        }
        # the schema's one rule for records (a scored rationale may be empty: b alone); the checks above name the
        # argument and position first, so this only fires on what they do not cover
        validate_example(record, require_rationale=False, location=f"inputs[{at}]")
        if raw_instance is not None:
            record[INSTANCE_ID] = str(raw_instance)
        if baselines is not None:
            record["baseline"] = columns["baselines"][i]
        records.append(record)
    if empty:
        shown = "; ".join(empty[:10]) + (f"; and {len(empty) - 10} more" if len(empty) > 10 else "")
        raise DataError(f"{len(empty)} rationale(s) with no words: {shown}. Expected an explanation to score; "
                        "score such rows anyway (as the vacuous baseline b alone, with the finding 'empty') with "
                        "--score-empty (allow_empty=True)")
    if check_ids:
        check_instances(records, lambda i: locate("inputs", offset + i, None))
    return records


def _check_baseline(baseline: Any, where: str) -> None:
    if not isinstance(baseline, str) or not baseline.strip():
        raise DataError(f"{where}: {baseline!r}; expected a non-empty baseline string")


def with_baselines(records: Sequence[Mapping[str, Any]], baselines: Sequence[str],
                   locate: Locate | None = None) -> list[dict[str, Any]]:
    """``records`` (already validated) with the user's vacuous baselines b as their ``baseline``: one non-empty string
    per record, checked here (for baselines that did not come through :func:`build_records`, as the ``evaluate``
    glue's ``compute(baselines=...)``).

    Raises:
        DataError: naming the argument and the position of a missing or empty baseline.
    """
    locate = locate or _default_locate
    baselines = _as_list(baselines, "baselines")
    if len(baselines) != len(records):
        raise DataError(f"{len(baselines)} baselines, {len(records)} inputs: expected one of each per example")
    for i, baseline in enumerate(baselines):
        _check_baseline(baseline, locate("baselines", i, None))
    return [{**record, "baseline": baseline} for record, baseline in zip(records, baselines, strict=True)]
