"""Explanation methods that generate with a model: the self-rationalizing task model F and any HF text2text checkpoint.

:class:`SelfRationalizerGenerator` decodes F (:mod:`larev_hf.explain.task_model`) with its decoder forced to start with
``"{label} explanation:"`` (or unconditionally, the proposal's sensitivity variant); :class:`Text2TextGenerator` is the
proposal's LLM generator (§2.1) with a seq2seq model and a prompt. torch and transformers load only when a model is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from larev_hf.explain.generators.base import resolve_labels
from larev_hf.explain.task_model import parse_self_rationalization
from larev_hf.modeling import resolve_device
from larev_hf.modeling.input_formats import task_text
from larev_hf.modeling.scoring import generate_texts

if TYPE_CHECKING:
    from larev_hf.explain.task_model import SelfRationalizer

#: The default prompt of :class:`Text2TextGenerator` (``{input}`` = task_text(record), ``{label}`` = the label).
DEFAULT_PROMPT = "Explain why the answer is {label}. {input}"

_PROMPT_FIELD = re.compile(r"\{(input|label)\}")


class SelfRationalizerGenerator:
    """The self-rationalizing task model F (:class:`~larev_hf.explain.task_model.SelfRationalizer`) as a label-conditional
    explanation method (VARIF §"Key definitions", §5): greedy decoding of F with the decoder forced to start with
    ``"{label} explanation:"`` (:func:`~larev_hf.explain.task_model.decoder_prefix_ids`), the rationale read after the separator.

    Records are batched by prefix length (so the forced decoder prefixes need no padding) and by input length.
    ``unconditional=True`` ignores the requested labels and returns the rationale of F's own prediction
    (:meth:`SelfRationalizer.predict`), the proposal's label-unconditional sensitivity variant.
    """

    regenerable = True

    def __init__(self, model: SelfRationalizer, batch_size: int = 64, max_new_tokens: int = 64,
                 unconditional: bool = False) -> None:
        self.model, self.batch_size, self.max_new_tokens = model, batch_size, max_new_tokens
        self.unconditional = unconditional
        self.name = "self_rationalizer_unconditional" if unconditional else "self_rationalizer"

    def generate_texts(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        """F's decoded outputs (``"{label} explanation: {rationale}"``) with the label prefix forced."""
        return self.model.generate_for_labels(records, resolve_labels(records, labels), batch_size=self.batch_size,
                                              max_new_tokens=self.max_new_tokens)

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        if self.unconditional:
            resolve_labels(records, labels)
            predictions = self.model.predict(records, batch_size=self.batch_size, max_new_tokens=self.max_new_tokens)
            return [prediction["rationale"] for prediction in predictions]
        texts = self.generate_texts(records, labels)
        return [parse_self_rationalization(text, list(record["choices"]))[1]
                for text, record in zip(texts, records, strict=True)]


def build_prompt(prompt: str, record: Mapping[str, Any], label: str) -> str:
    """``prompt`` with ``{input}`` = task_text(record) and ``{label}`` = ``label`` filled in one pass (other braces,
    and braces inside the input, are left as they are)."""

    values = {"input": task_text(record), "label": label}
    return _PROMPT_FIELD.sub(lambda match: values[match.group(1)], prompt)


class Text2TextGenerator:
    """Any HF text2text checkpoint (``AutoModelForSeq2SeqLM``) by Hub name or local path as an explanation method — the
    proposal's LLM generator (§2.1) with a seq2seq model: greedy decoding of ``prompt`` with ``{input}`` (the task
    input, :func:`~larev_hf.modeling.input_formats.task_text`) and ``{label}`` filled in (:func:`build_prompt`).

    The model loads on the first :meth:`explain` call. ``name`` defaults to ``"hf:"`` + the last path component.
    """

    regenerable = True

    def __init__(self, model_name_or_path: str | os.PathLike, prompt: str = DEFAULT_PROMPT, name: str | None = None,
                 batch_size: int = 16, max_new_tokens: int = 64, device: str | None = None) -> None:
        if "{input}" not in prompt:
            raise ValueError(f"prompt {prompt!r} has no '{{input}}' field; the model would not see the input")
        self.model_name_or_path, self.prompt = str(model_name_or_path), prompt
        self.name = name or "hf:" + Path(self.model_name_or_path.rstrip("/\\")).name
        self.batch_size, self.max_new_tokens, self.device = batch_size, max_new_tokens, device
        self.model: Any = None
        self.tokenizer: Any = None

    def _load(self) -> None:
        if self.model is not None:
            return
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_name_or_path)
            model = AutoModelForSeq2SeqLM.from_pretrained(self.model_name_or_path)
        except OSError as error:
            raise ValueError(f"generator {self.name!r}: cannot load {self.model_name_or_path!r} as a text2text "
                             f"checkpoint (a Hub name in the cache or a directory saved with save_pretrained): "
                             f"{error}") from error
        self.model = model.to(resolve_device(self.device)).eval()

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        self._load()
        prompts = [build_prompt(self.prompt, record, label) for record, label in zip(records, labels, strict=True)]
        return [text.strip() for text in generate_texts(self.model, self.tokenizer, prompts, batch_size=self.batch_size,
                                                        max_new_tokens=self.max_new_tokens)]
