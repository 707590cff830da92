"""Vacuous baselines ``b``: the input and the label restated, with no new information.

REV (§3.2) measures a rationale ``r`` by how much more it tells an evaluator about the label ``y``
than a *vacuous* rationale ``b`` that only combines the input ``x`` and ``y`` (a template for
e-SNLI, a question→declarative conversion for QA); the LAREV thesis (§4.4, table 4.1) keeps that
baseline and adds a leakage correction. A baseline is therefore built from ``(x, y)`` only — never
from the rationale — and always contains the label's verbalization (:func:`label_verbalization`).

Builders:

- :class:`TemplateBaselineBuilder`: rule-based, dependency-free, deterministic (the default).
- :class:`HFBaselineBuilder`: any Hub/local text2text model, as a paraphraser of the template
  (REV's choice for e-SNLI) or as a question→declarative (QA2D) converter (REV/RoRA for QA).
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import datasets

from larev_hf.io import DataError, where

logger = logging.getLogger(__name__)

#: REV's label verbalizers for the e-SNLI template baseline (REV §3.2).
NLI_VERBALIZERS: dict[str, str] = {
    "entailment": "implies",
    "contradiction": "contradicts",
    "neutral": "is not related to",
}

#: Surface frames for NLI; the first is REV's ``"{premise} {verbalizer} {hypothesis}"``.
NLI_FRAMES: tuple[str, ...] = (
    "{p} {v} {h}.",
    "{p}. This {v} the claim that {h}.",
    "The statement that {p} {v} the statement that {h}.",
)

_RATIONALE_COLUMNS = re.compile(r"^(rationale(_\w+)?|baseline)$")
_TRAILING_PUNCT = re.compile(r"[\s.!?,;:]+$")
_BLANK = re.compile(r"_+")
_CLAUSE_BREAK = re.compile(r"(?:[.!?]\s+|,\s*(?=(?:what|where|which|who|whom|whose|when|why|how)\b))", re.IGNORECASE)
_GAP_WH = {"what", "where", "which", "who", "whom", "whose", "when"}
_FRONT_WH = _GAP_WH | {"why", "how"}
_BE = {"is", "are", "was", "were"}
_AUX = _BE | {"do", "does", "did", "can", "could", "would", "will", "should", "might", "may", "must", "shall", "has", "have", "had"}
_SUBJECTS = {"you", "i", "we", "they", "he", "she", "it", "one", "someone", "somebody", "people", "humans"}
_PARTICIPLE = re.compile(r"^(\w+ed|\w+en|kept|found|put|held|built|sold|bought|made|worn|seen)$", re.IGNORECASE)
_LOWERABLE = {"a", "an", "the", "two", "three", "four", "some", "several", "many", "this", "these", "those",
              "there", "people", "men", "women", "one", "he", "she", "it", "we", "they", "his", "her", "its",
              "their"}


def instance_key(example: Mapping[str, Any]) -> str:
    """What identifies an instance by its content: the task and its inputs (premise and hypothesis; the question and
    its choices), never a row id. Every per-example draw of the baselines is seeded from it, so an explanation scores
    the same whatever its id or its line, and the explanations of one instance share one baseline."""
    fields = (example.get("premise", ""), example.get("hypothesis", "")) if example.get("task") == "nli" else \
        (example.get("question", ""), *sorted(example.get("choices") or ()))
    return "\x1f".join([str(example.get("task", "")), *map(str, fields)])


def label_verbalization(example: Mapping[str, Any]) -> str:
    """The text by which a baseline states the label: REV's NLI verbalizer, the answer text, or yes/no."""
    if example["task"] == "nli":
        if example["label"] not in NLI_VERBALIZERS:
            raise DataError(f"{where(example_id=example.get('id'))}: field 'label' is {example['label']!r}; "
                            f"expected one of {list(NLI_VERBALIZERS)}")
        return NLI_VERBALIZERS[example["label"]]
    return str(example["label"])


def _strip_end(text: str) -> str:
    return _TRAILING_PUNCT.sub("", " ".join(str(text).split()))


def _sentence(text: str) -> str:
    """Capitalise and end with a full stop, keeping a final "." or "!" (it may end the answer text)."""
    text = " ".join(text.split()).rstrip("?,;: ")
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!")) else ".")


def _embedded(text: str) -> str:
    """Lower-case a sentence-initial determiner so the text reads naturally inside a frame."""
    first, _, rest = text.partition(" ")
    return (first.lower() + (" " + rest if rest else "")) if first.lower() in _LOWERABLE else text


def nli_baseline(premise: str, hypothesis: str, label: str, frame: int = 0) -> str:
    """REV's template baseline for NLI: premise, verbalizer, hypothesis (trailing punctuation stripped)."""
    template = NLI_FRAMES[frame]
    p, h = _strip_end(premise), _embedded(_strip_end(hypothesis))
    if not template.startswith("{p}"):
        p = _embedded(p)
    return _sentence(template.format(p=p, v=NLI_VERBALIZERS[label], h=h))


def _fronted_wh(words: list[str], answer: str) -> str | None:
    """Un-invert a fronted wh-question; ``None`` when no rule applies.

    ``Where would you put X`` → ``you would put X: answer`` (a ``do`` auxiliary is kept, which keeps
    the tense: ``Where did he go`` → ``he did go: answer``); ``What is X`` → ``X is answer``;
    ``Where is the X kept`` → ``the X is kept: answer``.
    """
    wh, rest = words[0].lower(), words[1:]
    if len(rest) >= 2 and rest[0].lower() in _AUX and rest[1].lower() in _SUBJECTS:
        aux, subject, tail = rest[0], rest[1], rest[2:]
        return " ".join([subject, aux, *tail]) + f": {answer}"
    if len(rest) >= 2 and rest[0].lower() in _BE:
        if wh in {"what", "which", "who"}:
            return " ".join([*rest[1:], rest[0], answer])
        if len(rest) >= 3 and _PARTICIPLE.match(rest[-1]):
            return " ".join([*rest[1:-1], rest[0], rest[-1]]) + f": {answer}"
    return None


def qa_baseline(question: str, answer: str) -> str:
    """Rule-based question→declarative conversion that always contains ``answer`` verbatim.

    Heuristic (a dependency-free stand-in for REV/RoRA's QA2D model), tried in order on the
    question's last clause (after the last sentence break, or a comma followed by a wh-word):

    1. A blank (``_`` or ``___``) is replaced by the answer.
    2. A gap wh-word (what/where/which/who/whom/whose/when) as the last word is replaced by the
       answer: "... no surprise sight at the what?" → "... no surprise sight at the bus depot."
    3. A fronted wh-question with an auxiliary and a pronoun subject drops the wh-word and un-inverts:
       "Where would you put a light?" → "You would put a light: desk."; "What is X?" → "X is answer.";
       "Where is the X kept?" → "The X is kept: garage." (a be-question ending in a participle).
    4. An in-situ "what" inside the clause is replaced: "works up a what playing" → "works up a sweat playing".
    5. Otherwise the question is kept and the answer appended: "Where would a bald eagle land: tree."
    """
    question = " ".join(str(question).split())
    answer = " ".join(str(answer).split())
    if _BLANK.search(question):
        return _sentence(_BLANK.sub(lambda _: answer, question, count=1))
    body = _strip_end(question)
    breaks = list(_CLAUSE_BREAK.finditer(body))
    cut = breaks[-1].end() if breaks else 0
    prefix, words = body[:cut], body[cut:].split()
    lowered = [word.lower() for word in words]
    if lowered and lowered[-1] in _GAP_WH:
        clause = " ".join([*words[:-1], answer])
    elif lowered and lowered[0] in _FRONT_WH and (fronted := _fronted_wh(words, answer)) is not None:
        clause = fronted[:1].upper() + fronted[1:] if prefix.rstrip().endswith((".", "!", "?")) else fronted
    elif "what" in lowered[1:]:
        at = len(lowered) - 1 - lowered[::-1].index("what")
        clause = " ".join([*words[:at], answer, *words[at + 1 :]])
    else:
        clause = " ".join(words) + f": {answer}"
    return _sentence(prefix + clause)


def yesno_baseline(question: str, label: str) -> str:
    """Yes/no baseline: the question followed by the answer word, e.g. ``"Is X a Y? no."``.

    Kept deliberately simple (no polarity rewriting, which would need a parser) so the label word
    ``yes``/``no`` is always present verbatim.
    """
    return f"{_strip_end(question)}? {label}."


@runtime_checkable
class BaselineBuilder(Protocol):
    """Maps examples (schema records without rationale columns) to one baseline string each."""

    def __call__(self, examples: list[dict[str, Any]]) -> list[str]: ...

    def to_config(self) -> dict[str, Any]: ...


class TemplateBaselineBuilder:
    """Rule-based vacuous baselines (REV §3.2; LAREV thesis §4.4, table 4.1).

    NLI uses REV's template with the verbalizers "implies" / "contradicts" / "is not related to";
    with ``variants=True`` one of :data:`NLI_FRAMES` is chosen per instance from ``seed`` and the instance's content
    (:func:`instance_key`: premise and hypothesis, never the row id), so an evaluator cannot key on one fixed surface
    form (the verbalizer is always present verbatim) and a score never depends on what a row is called.
    QA uses :func:`qa_baseline`, yes/no :func:`yesno_baseline`.

    Args:
        seed (`int`, defaults to 0): seeds the per-example frame choice.
        variants (`bool`, defaults to `True`): vary the NLI frame; `False` gives REV's single template.
    """

    def __init__(self, seed: int = 0, variants: bool = True) -> None:
        self.seed = seed
        self.variants = variants

    def build(self, example: Mapping[str, Any]) -> str:
        """Baseline for one example; reads ``task``, the inputs and ``label`` only (``id`` names it in errors)."""
        task, label = example["task"], example["label"]
        if task == "nli":
            label_verbalization(example)  # validates the label
            frame = random.Random(f"{self.seed}:{instance_key(example)}").randrange(len(NLI_FRAMES)) \
                if self.variants else 0
            return nli_baseline(example["premise"], example["hypothesis"], label, frame)
        if task == "qa":
            return qa_baseline(example["question"], label)
        if task == "yesno":
            return yesno_baseline(example["question"], label)
        raise DataError(f"{where(example_id=example.get('id'))}: field 'task' is {task!r}; expected nli, qa or yesno")

    def __call__(self, examples: list[dict[str, Any]]) -> list[str]:
        return [self.build(example) for example in examples]

    def to_config(self) -> dict[str, Any]:
        return {"name": "template", "seed": self.seed, "variants": self.variants}


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
    hidden = [column for column in dataset.column_names if _RATIONALE_COLUMNS.match(column)]
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
