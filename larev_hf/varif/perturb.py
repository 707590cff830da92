"""The perturbations P(x) of VARIF's robustness axis (``papers/varif-proposal.md`` §3.1): K = 3 per example.

1. ``paraphrase-1`` and 2. ``paraphrase-2``: the *query part* (the hypothesis for NLI, the question for QA and
   yes/no) replaced by a paraphrase, kept only if the NLI judge finds it equivalent to the original
   (:func:`~larev_hf.varif.measures.keep_equivalent`: p_ent > threshold in both directions). The proposal's paraphraser
   is ``Vamsi/T5_Paraphrase_Paws`` (:func:`hf_paraphraser`); offline, :func:`rule_paraphrases` is the fallback.
3. ``format``: whitespace/punctuation noise in the query part plus a shuffle of the evidence order (the premise's
   sentences for NLI, the answer choices for QA; yes/no has none) (:func:`format_perturbation`). It is kept without
   the NLI check: spacing, final punctuation and the order of evidence pieces do not change what the input says.

Randomness comes from :func:`~larev_hf.meta.suite.example_rng` (SHA-256 of seed, kind and id), so the perturbed
set is identical across processes for a seed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from larev_hf.data.schema import TASKS
from larev_hf.io import DataError, where
from larev_hf.meta.family_registry import example_rng
from larev_hf.modeling.backbones import resolve_device
from larev_hf.varif.measures import EntailmentFn, keep_equivalent

#: ``paraphrase(query_texts) -> paraphrases per text`` (e.g. :func:`hf_paraphraser`'s result).
ParaphraseFn = Callable[[list[str]], list[list[str]]]

# --------------------------------------------------------------------------- rule tables

#: Pairs that mean the same in either direction, in e-SNLI / CommonsenseQA wording: each is used both ways.
SYMMETRIC_SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    ("children", "kids"), ("child", "kid"), ("people", "persons"), ("sofa", "couch"), ("sofas", "couches"),
    ("photo", "photograph"), ("photos", "photographs"), ("someone", "somebody"), ("anyone", "anybody"),
    ("everyone", "everybody"), ("no one", "nobody"), ("toward", "towards"), ("a lot of", "lots of"),
    ("often", "frequently"), ("usually", "typically"),
    ("is not", "isn't"), ("are not", "aren't"), ("was not", "wasn't"), ("were not", "weren't"),
    ("does not", "doesn't"), ("do not", "don't"), ("did not", "didn't"), ("has not", "hasn't"),
    ("have not", "haven't"), ("could not", "couldn't"), ("would not", "wouldn't"), ("should not", "shouldn't"),
    ("will not", "won't"), ("cannot", "can not"),
)

#: One-way rewrites, safe only in the direction given: the reverse would be wrong in some context ("big sister" is
#: not a "large sister", "a little tired" not "a small tired", "started the car" not "began the car").
ONE_WAY_SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    ("large", "big"), ("small", "little"), ("near", "close to"), ("automobile", "car"), ("automobiles", "cars"),
    ("bicycle", "bike"), ("bicycles", "bikes"), ("begins", "starts"), ("begin", "start"), ("mom", "mother"),
    ("dad", "father"), ("outdoors", "outside"), ("indoors", "inside"), ("attempting", "trying"),
    ("attempts to", "tries to"), ("purchasing", "buying"), ("purchased", "bought"), ("in order to", "to"),
    ("can't", "cannot"),
    # e-SNLI's tokenized negations ("is n't", "ca n't") spelled out
    ("is n't", "is not"), ("are n't", "are not"), ("was n't", "was not"), ("were n't", "were not"),
    ("does n't", "does not"), ("do n't", "do not"), ("did n't", "did not"), ("has n't", "has not"),
    ("have n't", "have not"), ("could n't", "could not"), ("would n't", "would not"), ("should n't", "should not"),
    ("ca n't", "can not"), ("wo n't", "will not"),
)

#: Every substitution, source → target (lower case; matched case-insensitively on word boundaries).
SUBSTITUTIONS: dict[str, str] = {
    **{a: b for a, b in SYMMETRIC_SUBSTITUTIONS}, **{b: a for a, b in SYMMETRIC_SUBSTITUTIONS},
    **dict(ONE_WAY_SUBSTITUTIONS),
}

#: Meaning-preserving frames for statements (NLI hypotheses); ``{text}`` starts lower-case where safe.
STATEMENT_FRAMES: tuple[str, ...] = ("It is the case that {text}", "It is true that {text}")
#: Meaning-preserving frames for questions (QA, yes/no).
QUESTION_FRAMES: tuple[str, ...] = ("Question: {text}", "Tell me, {text}", "Answer this question: {text}")

#: First words lower-cased inside a frame ("A man sleeps." → "It is the case that a man sleeps."); any other first
#: word (a name, "I", an acronym) keeps its case.
LOWERCASE_FIRST_WORDS = frozenset(
    "a an the this that these those there here it he she they we you his her their its our my some any many "
    "several most all each every no one two three four five six seven eight nine ten people men women children "
    "kids man woman boy girl person persons child kid dog dogs someone somebody nobody everyone everybody if when "
    "while after before what where who whom whose why which how is are was were do does did can could would should "
    "will may might has have had".split()
)

_QUESTION_STARTS = frozenset(
    "what where who whom whose why which how when is are was were do does did can could would should will may "
    "might has have had".split()
)
_SOURCE = re.compile(
    r"(?<![\w'])(" + "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in sorted(SUBSTITUTIONS, key=len, reverse=True))
    + r")(?![\w'])",
    re.IGNORECASE,
)
_ABBREVIATIONS = frozenset("mr mrs ms dr st jr sr vs etc prof mt no inc co ltd".split())
_SENTENCE_END = re.compile(r"([.!?]+['\"”’)]*)(\s+)(?=['\"“‘(]?[A-Z0-9])")


def _match_case(source: str, target: str) -> str:
    """``target`` in the case of the matched ``source``: UPPER, Capitalized or as written."""
    if len(source) > 1 and source.isupper():
        return target.upper()
    if source[:1].isupper():
        return target[:1].upper() + target[1:]
    return target


def _lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased when its first word is in :data:`LOWERCASE_FIRST_WORDS`."""
    words = text.split(maxsplit=1)
    first = words[0] if words else ""
    head = re.match(r"[A-Za-z]+", first)  # "There's" → "There"
    if head and head.group().lower() in LOWERCASE_FIRST_WORDS and not (len(head.group()) > 1 and head.group().isupper()):
        return text[:1].lower() + text[1:]
    return text


def is_question(text: str) -> bool:
    """A question: ends with "?" or starts with a wh-word or an auxiliary verb."""
    words = text.strip().split(maxsplit=1)
    return text.strip().endswith("?") or (bool(words) and words[0].lower() in _QUESTION_STARTS)


def rule_paraphrases(text: str, rng: np.random.Generator, n: int = 2) -> list[str]:
    """Up to ``n`` distinct rule-based paraphrases of ``text``, none equal to it (§3.1's offline fallback).

    Candidates, in this order (duplicates and ``text`` itself dropped, the first ``n`` returned):
    1. lexical substitution: a random non-empty subset of the :data:`SUBSTITUTIONS` that apply
       (:data:`SYMMETRIC_SUBSTITUTIONS` both ways, :data:`ONE_WAY_SUBSTITUTIONS` one way; case kept, one pass, so
       a rewritten phrase is never rewritten back);
    2. a frame (:data:`QUESTION_FRAMES` for a question, :data:`STATEMENT_FRAMES` otherwise) around ``text``, the
       frames in a random order, the first word lower-cased where safe (:data:`LOWERCASE_FIRST_WORDS`);
    3. the first frame around ``text`` with every applicable substitution.

    Deterministic given ``rng``'s state; an empty ``text`` gives ``[]``.
    """
    if n < 0:
        raise ValueError(f"n must be ≥ 0, got {n}")
    stripped = text.strip()
    if not stripped or n == 0:
        return []
    matches = list(_SOURCE.finditer(text))
    candidates: list[str] = []
    if matches:
        keep = rng.random(len(matches)) < 0.5
        keep[int(rng.integers(len(matches)))] = True
        candidates.append(_substitute(text, [m for m, k in zip(matches, keep, strict=True) if k]))
    frames = QUESTION_FRAMES if is_question(stripped) else STATEMENT_FRAMES
    order = [int(i) for i in rng.permutation(len(frames))]
    candidates += [frames[i].format(text=_lower_first(stripped)) for i in order]
    if matches:
        candidates.append(frames[order[0]].format(text=_lower_first(_substitute(text, matches).strip())))
    out: list[str] = []
    for candidate in candidates:
        if candidate.strip() != stripped and candidate not in out:
            out.append(candidate)
    return out[:n]


def _substitute(text: str, matches: Sequence[re.Match[str]]) -> str:
    """``text`` with each match replaced by its :data:`SUBSTITUTIONS` target (case kept)."""
    pieces, last = [], 0
    for match in matches:
        source = match.group(1)
        pieces += [text[last : match.start()], _match_case(source, SUBSTITUTIONS[" ".join(source.lower().split())])]
        last = match.end()
    return "".join(pieces) + text[last:]


# --------------------------------------------------------------------------- format perturbation


def query_field(record: Mapping[str, Any]) -> str:
    """The field holding the query part: ``hypothesis`` for NLI, ``question`` for QA and yes/no."""
    task = record.get("task")
    if task not in TASKS:
        raise DataError(f"{where(example_id=str(record.get('id')))}: field 'task' is {task!r}; expected one of {TASKS}")
    return "hypothesis" if task == "nli" else "question"


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``: a break after ``.``/``!``/``?`` (and closing quotes) followed by space and a capital
    or digit, except after an abbreviation (:data:`_ABBREVIATIONS`) or a single-letter initial. Handles e-SNLI's
    tokenized "… outdoors . A man …"."""
    sentences, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].split()
        last_word = before[-1].lower() if before else ""
        if match.group(1) == "." and (last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha())):
            continue
        sentences.append(text[start : match.end(1)].strip())
        start = match.end()
    sentences.append(text[start:].strip())
    return [sentence for sentence in sentences if sentence]


def evidence_pieces(record: Mapping[str, Any]) -> list[str]:
    """The evidence whose order the format perturbation shuffles: the premise's sentences (NLI), the answer choices
    (QA), none (yes/no)."""
    field = query_field(record)
    if field == "hypothesis":
        return split_sentences(record["premise"])
    return list(record["choices"]) if record["task"] == "qa" else []


def _noisy_query(text: str, rng: np.random.Generator) -> str:
    """``text`` with one space between two words doubled (when it has two words) and its final punctuation removed
    (when it ends in ``.``, ``!`` or ``?``) or added (``?`` for a question, ``.`` otherwise)."""
    stripped = text.strip()
    gaps = [m.start() for m in re.finditer(r"(?<=\S) (?=\S)", stripped)]
    if gaps:
        at = gaps[int(rng.integers(len(gaps)))]
        stripped = stripped[:at] + "  " + stripped[at + 1 :]
    if re.search(r"[.!?]$", stripped):
        return re.sub(r"\s*[.!?]+$", "", stripped)
    return stripped + ("?" if is_question(stripped) else ".")


def _shuffled(pieces: list[str], rng: np.random.Generator) -> list[str]:
    """``pieces`` in a random order that differs from the given one (when any order does)."""
    if len(set(pieces)) < 2:
        return list(pieces)
    while True:
        order = [pieces[int(i)] for i in rng.permutation(len(pieces))]
        if order != pieces:
            return order


def format_perturbation(record: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A copy of ``record`` with whitespace/punctuation noise in the query part and the evidence order shuffled
    (§3.1, perturbation 3): premise sentences re-joined in a new order (NLI), ``choices`` permuted (QA; the label is
    the answer text, so it stays one of them). The label never changes."""
    out = dict(record)
    field = query_field(record)
    out[field] = _noisy_query(str(record[field]), rng)
    pieces = evidence_pieces(record)
    if len(pieces) > 1:
        shuffled = _shuffled(pieces, rng)
        if record["task"] == "nli":
            out["premise"] = " ".join(shuffled)
        else:
            out["choices"] = shuffled
    elif "choices" in record:
        out["choices"] = list(record["choices"])
    return out


# --------------------------------------------------------------------------- HF paraphraser


def hf_paraphraser(model_name_or_path: str, prompt: str = "paraphrase: {text} </s>", num_return_sequences: int = 2,
                   max_new_tokens: int = 64, seed: int = 0, top_p: float = 0.95, top_k: int = 120,
                   batch_size: int = 16, device: str | None = None) -> ParaphraseFn:
    """A :data:`ParaphraseFn` from an HF text2text model, by Hub name (the proposal's ``Vamsi/T5_Paraphrase_Paws``,
    §3.1) or local path: ``num_return_sequences`` nucleus samples (``top_p``, ``top_k``: the model card's values)
    per text, stripped, without empty outputs, repeats, or the input itself (so a text may get fewer).

    Sampling is seeded with ``seed`` at every call (on a forked torch RNG, so the global state is left alone): the
    same texts in the same order give the same paraphrases.
    """
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


    tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path).eval().to(resolve_device(device))

    def paraphrase(texts: list[str]) -> list[list[str]]:
        texts = list(texts)
        out: list[list[str]] = []
        devices = [model.device] if model.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.inference_mode():
            torch.manual_seed(seed)
            for start in range(0, len(texts), batch_size):
                batch = texts[start : start + batch_size]
                encoded = tokenizer([prompt.format(text=text) for text in batch], padding=True, truncation=True,
                                    return_tensors="pt").to(model.device)
                generated = model.generate(**encoded, do_sample=True, top_p=top_p, top_k=top_k,
                                           num_return_sequences=num_return_sequences, max_new_tokens=max_new_tokens)
                decoded = tokenizer.batch_decode(generated, skip_special_tokens=True)
                for i, text in enumerate(batch):
                    samples = decoded[i * num_return_sequences : (i + 1) * num_return_sequences]
                    kept = [s.strip() for s in samples if s.strip() and s.strip() != text.strip()]
                    out.append(list(dict.fromkeys(kept)))
        return out

    return paraphrase


# --------------------------------------------------------------------------- the perturbed set


def perturb_records(
    records: Sequence[Mapping[str, Any]],
    paraphrase: ParaphraseFn | None = None,
    entail: EntailmentFn | None = None,
    *,
    k_paraphrases: int = 2,
    threshold: float = 0.5,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """P(x) for every record (§3.1): ``k_paraphrases`` paraphrases of the query part plus one format perturbation.

    Args:
        records: schema records (unique ids).
        paraphrase: ``paraphrase(query_texts) -> paraphrases per text``; the first ``k_paraphrases`` distinct ones
            that differ from the query are candidates. Default: :func:`rule_paraphrases` with a per-example
            generator (:func:`~larev_hf.meta.suite.example_rng` of ``seed``, ``"paraphrase"``, id).
        entail: the NLI judge's ``EntailmentFn``; a paraphrase is kept only if
            :func:`~larev_hf.varif.measures.keep_equivalent` accepts it (p_ent > ``threshold`` both ways; one batched
            ``entail`` call per direction for the whole set). ``None``: no filter (the stats say so).
        seed: the seed of the rule paraphraser and of the format perturbation.

    Returns:
        ``(rows, stats)``: each row is a full copy of its record (same ``id`` and ``label``) with the perturbed
        fields, plus ``perturbation`` (``"paraphrase-j"`` for the j-th candidate, ``"format"``), ``original_id`` and
        ``perturbed_id`` = ``f"{id}::{perturbation}"``; rows follow the records' order. ``stats`` holds per kind
        the ``candidates``, ``kept`` and ``rejected`` counts and ``kept_per_example`` (id → kept rows).
        The format perturbation is never filtered (whitespace, final punctuation and evidence order keep meaning).
    """
    if k_paraphrases < 0:
        raise ValueError(f"k_paraphrases must be ≥ 0, got {k_paraphrases}")
    records = list(records)
    seen: set[str] = set()
    queries = []
    for record in records:
        example_id = str(record.get("id", ""))
        if not example_id.strip():
            raise DataError(f"{where()}: a record has no 'id'; expected unique example ids")
        if example_id in seen:
            raise DataError(f"{where(example_id=example_id)}: duplicate id; perturbed ids need unique example ids")
        seen.add(example_id)
        field = query_field(record)
        query = str(record.get(field) or "")
        if not query.strip():
            raise DataError(f"{where(example_id=example_id)}: field {field!r} is empty; expected the query text")
        queries.append(query)

    if paraphrase is None:
        proposals = [rule_paraphrases(q, example_rng(seed, str(r["id"]), "paraphrase"), n=k_paraphrases)
                     for r, q in zip(records, queries, strict=True)]
    else:
        proposals = list(paraphrase(list(queries))) if queries else []
        if len(proposals) != len(queries):
            raise ValueError(f"paraphrase returned {len(proposals)} lists for {len(queries)} texts; expected one list "
                             "of paraphrases per text")
    candidates: list[tuple[int, str, str]] = []  # (record index, perturbation name, paraphrase)
    for i, (query, texts) in enumerate(zip(queries, proposals, strict=True)):
        if isinstance(texts, str):
            raise ValueError(f"{where(example_id=str(records[i]['id']))}: paraphrase returned a string; expected a "
                             "list of paraphrases per text")
        distinct = [t for t in dict.fromkeys(str(t).strip() for t in texts) if t and t != query.strip()]
        candidates += [(i, f"paraphrase-{j + 1}", text) for j, text in enumerate(distinct[:k_paraphrases])]

    if entail is not None and candidates:
        accepted = keep_equivalent(entail, [queries[i] for i, _, _ in candidates], [t for _, _, t in candidates],
                                   threshold)
    else:
        accepted = [True] * len(candidates)

    kinds = [f"paraphrase-{j + 1}" for j in range(k_paraphrases)] + ["format"]
    stats: dict[str, Any] = {
        "examples": len(records), "k_paraphrases": k_paraphrases, "seed": seed, "threshold": threshold,
        "filtered": entail is not None,
        "filter": ("paraphrases kept when the NLI judge's p_ent > threshold in both directions; format perturbations "
                   "are not checked" if entail is not None else
                   "none: entail=None, every paraphrase candidate is kept unchecked"),
        "candidates": dict.fromkeys(kinds, 0), "kept": dict.fromkeys(kinds, 0), "rejected": dict.fromkeys(kinds, 0),
        "kept_per_example": {str(r["id"]): 0 for r in records},
    }
    by_record: list[list[dict[str, Any]]] = [[] for _ in records]
    for (i, name, text), keep in zip(candidates, accepted, strict=True):
        stats["candidates"][name] += 1
        stats["kept" if keep else "rejected"][name] += 1
        if keep:
            row = dict(records[i])
            row[query_field(records[i])] = text
            by_record[i].append(_tag(row, records[i], name))
    rows: list[dict[str, Any]] = []
    for i, record in enumerate(records):
        formatted = format_perturbation(record, example_rng(seed, str(record["id"]), "format"))
        by_record[i].append(_tag(formatted, record, "format"))
        for name in ("candidates", "kept"):
            stats[name]["format"] += 1
        stats["kept_per_example"][str(record["id"])] = len(by_record[i])
        rows += by_record[i]
    return rows, stats


def _tag(row: dict[str, Any], record: Mapping[str, Any], perturbation: str) -> dict[str, Any]:
    """``row`` with its provenance: ``perturbation``, ``original_id``, ``perturbed_id``; id and label as the record's."""
    row["id"], row["label"] = record["id"], record["label"]
    if "choices" in row:
        row["choices"] = list(row["choices"])
    row.update(perturbation=perturbation, original_id=str(record["id"]),
               perturbed_id=f"{record['id']}::{perturbation}")
    return row
