"""The explanation generators VARIF compares (``papers/varif-proposal.md`` §2, §5 and §6), behind one protocol.

VARIF scores *explanation methods*: each method E writes e_i = E(x_i, y_i) for a record and a label (label-conditional,
§"Key definitions"), and R (§3.1) needs E again on perturbed inputs x̃. Every generator here implements
:class:`ExplanationGenerator`: ``explain(records, labels=None) -> list[str]``, with ``labels`` defaulting to each
record's gold ``label``; ``regenerable`` is False for fixed rationales (the gold ones, a user's JSONL), which cannot
explain a perturbed input they have not seen, so R is omitted for them.

- :class:`GoldGenerator` — the human rationale (§5 baseline 1).
- :class:`TemplateGenerator` — the VARSuite template families A–D (§2.3, §4): vacuous, leak, circular, pseudo-specific.
- :class:`TfidfTopKGenerator`, :class:`RandomKGenerator` — the extractive heuristics of §2.2 at word level.
- :class:`SelfRationalizerGenerator` — the trained task model F (:mod:`larev_hf.explain.task_model`) with its decoder
  forced to start with ``"{label} explanation:"``, or unconditional (§"Key definitions": the sensitivity variant).
- :class:`Text2TextGenerator` — any HF text2text checkpoint with a prompt (the proposal's LLM generator, §2.1).
- :class:`JsonlGenerator` — a user's pre-generated rationales.

:func:`build_generator` maps the CLI's spec strings to generators. torch and transformers load only inside the
methods that need them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from larev_hf.explain.task_model import parse_self_rationalization
from larev_hf.io import DataError, read_jsonl, where
from larev_hf.meta.family_registry import example_rng
from larev_hf.meta.suite import FAMILIES, TEMPLATES
from larev_hf.modeling import resolve_device
from larev_hf.modeling.generation import generate_texts
from larev_hf.modeling.input_formats import task_text

__all__ = ["ExplanationGenerator", "GoldGenerator", "JsonlGenerator", "RandomKGenerator",
           "SelfRationalizerGenerator", "TemplateGenerator", "Text2TextGenerator", "TfidfTopKGenerator",
           "build_generator"]

if TYPE_CHECKING:
    from larev_hf.explain.task_model import SelfRationalizer

#: The VARSuite families :class:`TemplateGenerator` can run (VARIF §4 A–D, and gold + "The answer is {label}.").
TEMPLATE_FAMILIES: tuple[str, ...] = ("vacuous", "leak", "circular", "pseudo_specific", "gold_leaky")
#: Template families built on the gold rationale: fixed text like gold, so not regenerable.
_GOLD_BASED = ("gold_leaky",)
#: The spec forms :func:`build_generator` accepts (shown in its error message).
SPEC_FORMS: tuple[str, ...] = ("gold", *TEMPLATE_FAMILIES, "tfidf", "tfidf:K", "random", "random:K",
                               "self_rationalizer", "self_rationalizer:unconditional", "hf:NAME_OR_PATH",
                               "NAME=hf:NAME_OR_PATH", "jsonl:PATH", "NAME=jsonl:PATH")
#: The default prompt of :class:`Text2TextGenerator` (``{input}`` = task_text(record), ``{label}`` = the label).
DEFAULT_PROMPT = "Explain why the answer is {label}. {input}"

_PROMPT_FIELD = re.compile(r"\{(input|label)\}")
_NAMED_SPEC = re.compile(r"([A-Za-z_][\w.-]*)=((?:jsonl|hf):.+)")
_FIRST_WORD = re.compile(r"\w+")


@runtime_checkable
class ExplanationGenerator(Protocol):
    """An explanation method E of VARIF (§"Key definitions"): e_i = E(x_i, y_i) for each record and label."""

    name: str
    #: False when it cannot explain a perturbed input it has not seen (gold, a user's JSONL): R is omitted for it.
    regenerable: bool

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        """One explanation per record, for ``labels[i]`` (default: each record's gold ``label``)."""
        ...


# --------------------------------------------------------------------------- shared helpers


def resolve_labels(records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
    """``labels`` (default: each record's ``label``), checked: one per record, each among the record's ``choices``."""
    if labels is None:
        out = []
        for record in records:
            if not isinstance(record.get("label"), str):
                raise DataError(f"{where(example_id=record.get('id'))}: field 'label' is {record.get('label')!r}; "
                                "expected the gold label as a string (or pass labels=)")
            out.append(record["label"])
        labels = out
    labels = list(labels)
    if len(labels) != len(records):
        raise ValueError(f"got {len(labels)} labels for {len(records)} records; expected one label per record")
    for record, label in zip(records, labels, strict=True):
        choices = list(record.get("choices") or [])
        if label not in choices:
            raise DataError(f"{where(example_id=record.get('id'))}: requested label {label!r} is not one of the "
                            f"record's choices {choices}")
    return labels


def raw_input_text(record: Mapping[str, Any]) -> str:
    """The input x as plain text for the extractive heuristics (§2.2): premise + hypothesis (NLI), else the question.

    Unlike :func:`~larev_hf.modeling.input_formats.task_text` there are no field markers ("premise:") and no answer
    choices, so no extracted word is a format word or states an answer option.
    """
    task = record.get("task")
    if task == "nli":
        return f"{record['premise'].strip()} {record['hypothesis'].strip()}".strip()
    if task in ("qa", "yesno"):
        return record["question"].strip()
    raise DataError(f"{where(example_id=record.get('id'))}: field 'task' is {task!r}; expected 'nli', 'qa' or 'yesno'")


def _first_word(record: Mapping[str, Any], text: str) -> str:
    """The fallback of the extractive heuristics: the first word of x (a DataError naming the id when x is empty)."""
    match = _FIRST_WORD.search(text)
    if match:
        return match.group()
    if text.split():
        return text.split()[0]
    field = "premise and hypothesis" if record.get("task") == "nli" else "question"
    raise DataError(f"{where(example_id=record.get('id'))}: field {field} is empty; expected input text to extract from")


class _WordTokenizer:
    """The words a TF-IDF vectorizer sees (lowercased, its token pattern, English stop words removed), each with its
    first position and its surface form as written in x."""

    def __init__(self, vectorizer: Any) -> None:
        self.pattern = re.compile(vectorizer.token_pattern)
        self.stop_words = vectorizer.get_stop_words() or frozenset()

    def candidates(self, text: str) -> tuple[dict[str, str], dict[str, int]]:
        """``(surface, counts)``: term → its first surface form in ``text`` (text order), term → its count."""
        surface: dict[str, str] = {}
        counts: dict[str, int] = {}
        for match in self.pattern.finditer(text):
            term = match.group().lower()
            if term in self.stop_words:
                continue
            surface.setdefault(term, match.group())
            counts[term] = counts.get(term, 0) + 1
        return surface, counts


def _vectorizer() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, stop_words="english")


# --------------------------------------------------------------------------- fixed rationales


class GoldGenerator:
    """The gold (human) rationale of each record (VARIF §5 baseline 1). Fixed text, so not regenerable: R is omitted.

    The gold rationale justifies the gold label only, so requesting another label is a :class:`DataError`.
    """

    name = "gold"
    regenerable = False

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        out = []
        for record, label in zip(records, labels, strict=True):
            loc = where(example_id=record.get("id"))
            rationale = record.get("rationale")
            if not isinstance(rationale, str) or not rationale.strip():
                raise DataError(f"{loc}: field 'rationale' is {rationale!r}; the gold generator needs a non-empty "
                                "gold rationale")
            if label != record["label"]:
                raise DataError(f"{loc}: requested label {label!r} but the gold rationale explains the gold label "
                                f"{record['label']!r}; gold rationales cannot be regenerated for another label")
            out.append(rationale)
        return out


class JsonlGenerator:
    """A user's pre-generated rationales: a JSON Lines file of ``{"id", "rationale", "label"?}`` rows, looked up by id.

    The rationales are fixed text, so the generator cannot explain a perturbed input it has not seen
    (``regenerable`` is False) and VARIF omits R for it. A row's optional ``label`` says which label its rationale
    explains; requesting another label is a :class:`DataError`, as is an id the file lacks.
    """

    regenerable = False

    def __init__(self, path: str | os.PathLike, name: str | None = None) -> None:
        self.path = str(path)
        self.name = name or f"jsonl:{Path(path).stem}"
        self.rows: dict[str, tuple[int, str, str | None]] = {}
        for line, row in read_jsonl(path):
            for field in ("id", "rationale"):
                if field not in row:
                    raise DataError(f"{where(self.path, line, row.get('id'))}: missing field {field!r}; expected "
                                    "rows with 'id' and 'rationale' (and optionally 'label')")
            example_id, rationale, label = row["id"], row["rationale"], row.get("label")
            loc = where(self.path, line, str(example_id))
            if not isinstance(example_id, (str, int)) or isinstance(example_id, bool) or not str(example_id).strip():
                raise DataError(f"{loc}: field 'id' is {example_id!r}; expected a non-empty example id")
            if not isinstance(rationale, str) or not rationale.strip():
                raise DataError(f"{loc}: field 'rationale' is {rationale!r}; expected a non-empty string")
            if label is not None and not isinstance(label, str):
                raise DataError(f"{loc}: field 'label' is {label!r}; expected a label string")
            if str(example_id) in self.rows:
                raise DataError(f"{loc}: duplicate id (first on line {self.rows[str(example_id)][0]})")
            self.rows[str(example_id)] = (line, rationale, label)

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        out = []
        for record, label in zip(records, labels, strict=True):
            example_id = str(record.get("id"))
            if example_id not in self.rows:
                raise DataError(f"{where(example_id=example_id)}: no row with this id in {self.path} "
                                f"({len(self.rows)} rows); expected a rationale for every evaluated example")
            line, rationale, row_label = self.rows[example_id]
            if row_label is not None and row_label != label:
                raise DataError(f"{where(self.path, line, example_id)}: the rationale explains label {row_label!r} but "
                                f"label {label!r} was requested; pre-generated rationales are fixed")
            out.append(rationale)
        return out


# --------------------------------------------------------------------------- VARSuite templates (A-D)


class TemplateGenerator:
    """A VARSuite template family as an explanation method (VARIF §2.3, §4 A–D): ``vacuous``, ``leak``, ``circular``,
    ``pseudo_specific``; and ``gold_leaky`` (the gold rationale + "The answer is {label}.", fixed text like gold, so
    not regenerable), the leaky method of hypothesis H2.

    Each record is passed to ``FAMILIES[family]`` with its ``label`` replaced by the requested one and the rng
    ``example_rng(seed, id, family)``, so the template drawn depends only on (seed, id, family): a perturbed record
    keeps its id, hence its template, while pseudo-specific's word may change with the paraphrased text. When the
    family skips an example (pseudo-specific with no content word in x), the vacuous family's rationale for that
    example is used instead and counted in :attr:`fallbacks` (cumulative over calls).
    """

    regenerable = True

    def __init__(self, family: str, seed: int = 0) -> None:
        if family not in TEMPLATE_FAMILIES:
            raise ValueError(f"template family {family!r}: expected one of {list(TEMPLATE_FAMILIES)}")
        self.name, self.family, self.seed = family, family, seed
        self.regenerable = family not in _GOLD_BASED
        self.fallbacks = 0

    def _draw(self, family: str, record: Mapping[str, Any]) -> dict[str, Any] | None:
        templates = TEMPLATES.get(family, {}).get(record["task"], ())
        return FAMILIES[family](record, example_rng(self.seed, record["id"], family), templates)

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        labels = resolve_labels(records, labels)
        out = []
        for record, label in zip(records, labels, strict=True):
            conditioned = {**record, "label": label}
            fields = self._draw(self.family, conditioned)
            if fields is None:
                self.fallbacks += 1
                fields = self._draw("vacuous", conditioned)
            if fields is None or not isinstance(fields.get("rationale"), str) or not fields["rationale"].strip():
                raise DataError(f"{where(example_id=record.get('id'))}: family {self.family!r} gave no rationale")
            out.append(fields["rationale"])
        return out


# --------------------------------------------------------------------------- extractive heuristics (§2.2)


class TfidfTopKGenerator:
    """The extractive TF-IDF heuristic of VARIF §2.2 at word level: the ``k`` words of x with the highest TF-IDF weight.

    x is the raw input (:func:`raw_input_text`: premise + hypothesis, or the question). Words are what sklearn's
    ``TfidfVectorizer`` (lowercase, English stop words removed) sees; the weight of a word is its count in x times its
    smoothed idf from the vectorizer fit on ``fit_texts`` (e.g. the training inputs), which ranks words exactly as the
    vectorizer's l2-normalised row does. A word the fit corpus lacks gets the idf of document frequency 0 (the rarest).
    Without ``fit_texts`` the vectorizer is fit on the records of the first :meth:`explain` call and kept, so perturbed
    inputs explained later are weighted by the same idf. The chosen words are returned in their order in x, each once
    and as first written there, joined by spaces; ties are broken by position. With fewer than ``k`` candidate words
    all are used; with none, the first word of x. Label-independent; deterministic.
    """

    regenerable = True

    def __init__(self, k: int = 5, fit_texts: Sequence[str] | None = None) -> None:
        if k < 1:
            raise ValueError(f"k must be a positive integer, got {k}")
        self.k, self.name = k, f"tfidf_top{k}"
        self.vectorizer: Any = None
        if fit_texts is not None:
            self.fit(fit_texts)

    def fit(self, texts: Sequence[str]) -> TfidfTopKGenerator:
        """Fit the idf on ``texts`` (raw inputs, one per document)."""
        texts = [str(text) for text in texts]
        if not texts:
            raise ValueError("fit_texts is empty; expected the input texts to compute idf from")
        vectorizer = _vectorizer()
        try:
            vectorizer.fit(texts)
            self._vocabulary, self._idf = dict(vectorizer.vocabulary_), [float(v) for v in vectorizer.idf_]
        except ValueError:  # every text is stop words only: no vocabulary, every word gets the df = 0 idf
            self._vocabulary, self._idf = {}, []
        self.vectorizer, self.n_documents = vectorizer, len(texts)
        self._unseen_idf = math.log((1 + len(texts)) / 1) + 1.0  # sklearn's smoothed idf at df = 0
        self._tokenizer = _WordTokenizer(vectorizer)
        return self

    def weights(self, text: str) -> dict[str, float]:
        """TF-IDF weight (count × idf) of each candidate word of ``text``, keyed by the lowercased term."""
        if self.vectorizer is None:
            raise RuntimeError("TfidfTopKGenerator is not fit; pass fit_texts or call explain/fit first")
        _, counts = self._tokenizer.candidates(text)
        return {term: count * (self._idf[self._vocabulary[term]] if term in self._vocabulary else self._unseen_idf)
                for term, count in counts.items()}

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        resolve_labels(records, labels)
        texts = [raw_input_text(record) for record in records]
        if self.vectorizer is None:
            self.fit(texts)
        out = []
        for record, text in zip(records, texts, strict=True):
            surface, _ = self._tokenizer.candidates(text)
            weights = self.weights(text)
            position = {term: i for i, term in enumerate(surface)}
            chosen = sorted(surface, key=lambda term: (-weights[term], position[term]))[: self.k]
            words = [surface[term] for term in sorted(chosen, key=position.__getitem__)]
            out.append(" ".join(words) if words else _first_word(record, text))
        return out


class RandomKGenerator:
    """The random-k extractive baseline of VARIF §2.2 at word level: ``k`` random candidate words of x, in text order.

    Candidates are the same words :class:`TfidfTopKGenerator` ranks (sklearn's token pattern, English stop words
    removed, each once, as first written in x), so the two differ only in the selection rule. The draw uses
    ``example_rng(seed, id, "random_k")`` (SHA-256 of seed and id): stable across processes, and a perturbed record
    keeps its id. Fewer than ``k`` candidates: all of them; none: the first word of x. Label-independent.
    """

    regenerable = True

    def __init__(self, k: int = 5, seed: int = 0) -> None:
        if k < 1:
            raise ValueError(f"k must be a positive integer, got {k}")
        self.k, self.seed, self.name = k, seed, f"random_k{k}"
        self._tokenizer = _WordTokenizer(_vectorizer())

    def explain(self, records: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> list[str]:
        resolve_labels(records, labels)
        out = []
        for record in records:
            text = raw_input_text(record)
            words = list(self._tokenizer.candidates(text)[0].values())
            if not words:
                out.append(_first_word(record, text))
                continue
            rng = example_rng(self.seed, str(record["id"]), "random_k")
            picked = sorted(rng.choice(len(words), size=min(self.k, len(words)), replace=False).tolist())
            out.append(" ".join(words[i] for i in picked))
        return out


# --------------------------------------------------------------------------- the self-rationalizer F


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


# --------------------------------------------------------------------------- any HF text2text checkpoint


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


# --------------------------------------------------------------------------- CLI specs


def _positive_k(spec: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"generator spec {spec!r}: K must be a positive integer, got {value!r}")
    return int(value)


def build_generator(spec: str, *, seed: int = 0, fit_texts: Sequence[str] | None = None,
                    self_rationalizer: SelfRationalizer | None = None) -> ExplanationGenerator:
    """The generator a CLI spec names (forms in :data:`SPEC_FORMS`).

    ``"gold"``; a template family (``"vacuous"``, ``"leak"``, ``"circular"``, ``"pseudo_specific"``, drawn with
    ``seed``); ``"tfidf"`` / ``"tfidf:K"`` (idf fit on ``fit_texts``, e.g. the training inputs; K defaults to 5);
    ``"random"`` / ``"random:K"`` (with ``seed``); ``"self_rationalizer"`` (label-conditional) or
    ``"self_rationalizer:unconditional"``, both needing the trained ``self_rationalizer``; ``"hf:NAME_OR_PATH"``;
    ``"jsonl:PATH"``. ``"NAME=hf:…"`` and ``"NAME=jsonl:…"`` give the generator the name NAME.
    """
    text = spec.strip()
    spec, name = text, None
    if match := _NAMED_SPEC.fullmatch(text):
        name, spec = match.group(1), match.group(2)
    kind, _, argument = spec.partition(":")
    if spec == "gold":
        return GoldGenerator()
    if spec in TEMPLATE_FAMILIES:
        return TemplateGenerator(spec, seed=seed)
    if kind == "tfidf" and (spec == "tfidf" or argument):
        return TfidfTopKGenerator(k=_positive_k(text, argument) if argument else 5, fit_texts=fit_texts)
    if kind == "random" and (spec == "random" or argument):
        return RandomKGenerator(k=_positive_k(text, argument) if argument else 5, seed=seed)
    if spec in ("self_rationalizer", "self_rationalizer:unconditional"):
        if self_rationalizer is None:
            raise ValueError(f"generator spec {text!r}: the self-rationalizer must be trained first; pass the "
                             "trained SelfRationalizer as self_rationalizer=")
        return SelfRationalizerGenerator(self_rationalizer, unconditional=spec.endswith(":unconditional"))
    if kind == "hf" and argument.strip():
        return Text2TextGenerator(argument.strip(), name=name)
    if kind == "jsonl" and argument.strip():
        return JsonlGenerator(argument.strip(), name=name)
    raise ValueError(f"unknown generator spec {text!r}; expected one of: {', '.join(SPEC_FORMS)}")
