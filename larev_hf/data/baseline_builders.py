"""What is scored besides the gold rationale: baseline builders that run a model, how a builder is chosen and applied
to a data set, and the rationale variants built from the rationale and its baseline.

:class:`HFBaselineBuilder` produces the vacuous baseline ``b`` with any Hub/local text2text model, as a paraphraser of
the template (REV's choice for e-SNLI) or as a question→declarative (QA2D) converter (REV/RoRA for QA); the templates
themselves and :class:`~larev_hf.data.vacuous.TemplateBaselineBuilder` are in :mod:`larev_hf.data.vacuous`. A run
names its builder with a spec (``"template"``, ``"paraphrase:<model>"``, ``"qa2d:<model>"``,
:func:`baseline_builder_from_spec`); a bundle stores it as a config (:func:`baseline_builder_from_config`).

The rationale variants separate new information from label leakage (LAREV thesis §5.2.1, appendix C.1). For each
example with a gold rationale ``r`` and a vacuous baseline ``b`` (:func:`add_baselines`):

- ``gold``: ``r`` — the human rationale.
- ``gold_leaky``: ``r`` followed by ``"The answer is <label>."`` — same information plus the label.
- ``vacuous``: ``b`` — the input and the label, no new information (REV §3.2).
- ``leaky``: ``"The answer is <label>."`` — only the label.

A leakage-aware metric should rank ``gold``/``gold_leaky`` above ``vacuous``/``leaky`` and not
reward ``gold_leaky`` for the appended label; the leaky variants test exactly that (:func:`add_variants`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from larev_hf.data.vacuous import (
    RATIONALE_COLUMNS,
    BaselineBuilder,
    TemplateBaselineBuilder,
    instance_key,
    label_verbalization,
)
from larev_hf.io import DataError, where

logger = logging.getLogger(__name__)

class HFBaselineBuilder:
    """Vacuous baselines produced by a Hugging Face text2text model (REV §3.2).

    - ``mode="paraphrase"``: paraphrase the template baseline with the prompt ``"paraphrase: {text}"``
      and REV's decoding (diverse beam search, 5 beams in 5 groups, 5 returns, repetition penalty 10,
      diversity penalty 3); REV's model is ``"humarin/chatgpt_paraphraser_on_T5_base"``.
    - ``mode="qa2d"``: convert ``"{question} </s> {answer}"`` to a declarative with 5-beam search (REV
      and RoRA used a T5-3B QA2D model). NLI examples keep the template baseline in this mode.

    One return per example is picked with an RNG seeded by ``seed`` and the instance's content
    (:func:`instance_key`), among the returns that keep the label's verbalization verbatim (a baseline must state
    ``y``; ``require_label=False`` accepts any return); if none qualifies, the template baseline is kept and counted in ``fallbacks``. In
    ``qa2d`` mode a yes/no example accepts any return: its declarative states the answer by polarity.

    Since transformers 4.56 diverse (group) beam search lives in the Hub repo
    ``transformers-community/group-beam-search`` and runs only with ``trust_remote_code=True``;
    without it (or offline) decoding falls back to plain beam search with the same beams, returns
    and repetition penalty, and a warning is logged.

    Args:
        model_name_or_path (`str`): Hub id or local directory of a seq2seq model.
        mode (`str`, defaults to ``"paraphrase"``): ``"paraphrase"`` or ``"qa2d"``.
        seed (`int`, defaults to 0): seeds the choice among returns.
        num_return_sequences (`int`, defaults to 5): returns per example (beams = max(5, this)).
        batch_size (`int`, defaults to 16): generation batch size.
        device (`str`, *optional*): ``"cuda"``/``"cpu"``/...; defaults to CUDA when available.
        max_new_tokens (`int`, defaults to 64): generation length limit.
        require_label (`bool`, defaults to `True`): only accept returns containing the label verbalization.
        trust_remote_code (`bool`, defaults to `False`): allow the Hub's group-beam-search code.
    """

    MODES = ("paraphrase", "qa2d")

    def __init__(
        self,
        model_name_or_path: str,
        mode: str = "paraphrase",
        seed: int = 0,
        num_return_sequences: int = 5,
        batch_size: int = 16,
        device: str | None = None,
        max_new_tokens: int = 64,
        require_label: bool = True,
        trust_remote_code: bool = False,
    ) -> None:
        if mode not in self.MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {self.MODES}")
        self.model_name_or_path = str(model_name_or_path)
        self.mode = mode
        self.seed = seed
        self.num_return_sequences = num_return_sequences
        self.batch_size = batch_size
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.require_label = require_label
        self.trust_remote_code = trust_remote_code
        self.template = TemplateBaselineBuilder(seed=seed)
        self.fallbacks = 0
        self._model: Any = None
        self._tokenizer: Any = None
        self._diverse = mode == "paraphrase"

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._tokenizer = AutoTokenizer.from_pretrained(self.model_name_or_path)
        self._model = AutoModelForSeq2SeqLM.from_pretrained(self.model_name_or_path).to(device).eval()

    def _generate(self, texts: Sequence[str]) -> list[list[str]]:
        """Return ``num_return_sequences`` decoded outputs for each input text."""
        import torch

        self._load()
        returns = self.num_return_sequences
        beams = max(5, returns)
        kwargs: dict[str, Any] = {"num_beams": beams, "num_return_sequences": returns,
                                  "max_new_tokens": self.max_new_tokens, "do_sample": False}
        if self.mode == "paraphrase":
            kwargs["repetition_penalty"] = 10.0
        outputs: list[list[str]] = []
        for start in range(0, len(texts), self.batch_size):
            encoded = self._tokenizer(list(texts[start : start + self.batch_size]), return_tensors="pt",
                                      padding=True, truncation=True)
            batch = {key: encoded[key].to(self._model.device) for key in ("input_ids", "attention_mask")}
            with torch.no_grad():
                generated = self._generate_batch(batch, kwargs, beams)
            decoded = [text.strip() for text in self._tokenizer.batch_decode(generated, skip_special_tokens=True)]
            outputs.extend(decoded[i : i + returns] for i in range(0, len(decoded), returns))
        return outputs

    def _generate_batch(self, batch: Any, kwargs: dict[str, Any], beams: int) -> Any:
        if self._diverse:
            diverse = {"num_beam_groups": beams, "diversity_penalty": 3.0}
            if self.trust_remote_code:
                diverse["trust_remote_code"] = True
            try:
                return self._model.generate(**batch, **kwargs, **diverse)
            except Exception as error:  # noqa: BLE001 - any failure of the optional Hub code path
                logger.warning("diverse beam search unavailable (%s); using plain beam search", error)
                self._diverse = False
        return self._model.generate(**batch, **kwargs)

    def __call__(self, examples: list[dict[str, Any]]) -> list[str]:
        baselines = self.template(examples)
        todo = [i for i, example in enumerate(examples) if self.mode == "paraphrase" or example["task"] != "nli"]
        if self.mode == "paraphrase":
            inputs = [f"paraphrase: {baselines[i]}" for i in todo]
        else:
            inputs = [f"{examples[i]['question']} </s> {examples[i]['label']}" for i in todo]
        fallbacks = 0
        for i, candidates in zip(todo, self._generate(inputs), strict=True):
            usable = [c for c in candidates if c and self._states_label(examples[i], c)]
            if usable:
                baselines[i] = random.Random(f"{self.seed}:{instance_key(examples[i])}").choice(usable)
            else:
                fallbacks += 1
        if fallbacks:
            logger.info("%d of %d baselines kept the template (no usable model return)", fallbacks, len(todo))
        self.fallbacks += fallbacks
        return baselines

    def _states_label(self, example: Mapping[str, Any], text: str) -> bool:
        """Whether a model return may serve as ``example``'s baseline under ``require_label``.

        A QA→declarative rewrite of a yes/no question states the answer through polarity ("X can fly." /
        "X cannot fly."), never as the word yes/no, so it is accepted as it is (REV/RoRA's QA2D baselines).
        """
        if not self.require_label or (self.mode == "qa2d" and example["task"] == "yesno"):
            return True
        return label_verbalization(example) in text

    def to_config(self) -> dict[str, Any]:
        return {"name": "hf", "model_name_or_path": self.model_name_or_path, "mode": self.mode, "seed": self.seed,
                "num_return_sequences": self.num_return_sequences, "batch_size": self.batch_size,
                "max_new_tokens": self.max_new_tokens, "require_label": self.require_label,
                "trust_remote_code": self.trust_remote_code}


BUILDERS: dict[str, type] = {"template": TemplateBaselineBuilder, "hf": HFBaselineBuilder}


def make_baseline_builder(name: str = "template", **kwargs: Any) -> BaselineBuilder:
    """Build a baseline builder by name (``"template"`` or ``"hf"``); ``make_baseline_builder(**b.to_config())``
    rebuilds ``b``."""
    if name not in BUILDERS:
        raise ValueError(f"unknown baseline builder {name!r}; expected one of {tuple(BUILDERS)}")
    return BUILDERS[name](**kwargs)


def baseline_builder_from_config(config: Mapping[str, Any]) -> BaselineBuilder:
    """Rebuild a baseline builder from the dict its ``to_config()`` returned (e.g. a run's
    ``data/baseline_builder.json`` or an evaluator bundle's ``baseline_builder`` entry).

    Args:
        config (`Mapping[str, Any]`): ``{"name": "template" | "hf", **constructor arguments}``.

    Raises:
        ValueError: when ``config`` has no known ``name`` or holds an argument the builder does not take.
    """
    if not isinstance(config, Mapping) or "name" not in config:
        raise ValueError(f"baseline builder config {config!r}: expected a mapping with a 'name' key, "
                         f"one of {tuple(BUILDERS)}")
    name = config["name"]
    if name not in BUILDERS:
        raise ValueError(f"baseline builder config: unknown name {name!r}; expected one of {tuple(BUILDERS)}")
    kwargs = {key: value for key, value in config.items() if key != "name"}
    try:
        return BUILDERS[name](**kwargs)
    except TypeError as error:
        raise ValueError(f"baseline builder config {dict(config)}: {error}") from None


def add_baselines(dataset: datasets.Dataset, builder: BaselineBuilder) -> datasets.Dataset:
    """Return ``dataset`` with a ``baseline`` column; the builder never sees a rationale column."""
    hidden = [column for column in dataset.column_names if RATIONALE_COLUMNS.match(column)]
    examples = dataset.remove_columns(hidden).to_list()
    baselines = builder(examples)
    if len(baselines) != len(examples):
        raise DataError(f"baseline builder returned {len(baselines)} baselines for {len(examples)} examples")
    for example, baseline in zip(examples, baselines, strict=True):
        if not isinstance(baseline, str) or not baseline.strip():
            raise DataError(f"{where(example_id=example.get('id'))}: empty baseline; expected a non-empty string")
    if "baseline" in dataset.column_names:
        dataset = dataset.remove_columns("baseline")
    return dataset.add_column("baseline", baselines)


def baseline_builder_from_spec(spec: str, seed: int = 0):
    """``"template"``, ``"paraphrase:<model>"`` (REV's e-SNLI paraphraser) or ``"qa2d:<model>"`` (a QA→declarative model)."""
    if spec == "template":
        return make_baseline_builder("template", seed=seed)
    mode, _, model = spec.partition(":")
    if mode not in ("paraphrase", "qa2d") or not model:
        raise ValueError(f"baseline builder {spec!r}: expected 'template', 'paraphrase:<model>' or 'qa2d:<model>'")
    return make_baseline_builder("hf", model_name_or_path=model, mode=mode, seed=seed)


LEAKY_TEMPLATE = "The answer is {label}."
VARIANTS: tuple[str, ...] = ("gold", "gold_leaky", "vacuous", "leaky")


def build_variants(example: Mapping[str, Any]) -> dict[str, str]:
    """Return ``{variant: rationale}`` for one example that has ``rationale``, ``label`` and ``baseline``."""
    for field in ("rationale", "label", "baseline"):
        if field not in example:
            hint = "; run add_baselines first" if field == "baseline" else ""
            raise DataError(f"{where(example_id=example.get('id'))}: missing field {field!r}{hint}")
    rationale = example["rationale"]
    leaky = LEAKY_TEMPLATE.format(label=example["label"])
    return {"gold": rationale, "gold_leaky": f"{rationale} {leaky}", "vacuous": example["baseline"], "leaky": leaky}


def add_variants(dataset: datasets.Dataset) -> datasets.Dataset:
    """Return ``dataset`` with one column ``rationale_<variant>`` per entry of :data:`VARIANTS`."""
    built = [build_variants(example) for example in dataset]
    for variant in VARIANTS:
        column = f"rationale_{variant}"
        if column in dataset.column_names:
            dataset = dataset.remove_columns(column)
        dataset = dataset.add_column(column, [variants[variant] for variants in built])
    return dataset
