"""Why a score: findings about each explanation, each with its evidence (docs/findings.md).

A score is a number; a finding says what the explanation *is* — a copy of the input, a statement of the label, text
about another input, words that do not read as an explanation, an explanation the evaluator reads as another label, an
empty or truncated one — with the evidence a person can check (the copied span and its share, the label's words, the
share of words found in the input, the per-word likelihood, the label the evaluator reads, tokens kept of how many).

Each finding's threshold is declared once, in :class:`FindingThresholds`, whose defaults were chosen on shared data
(VARSuite's families of e-SNLI's test split and the SNLI acceptability judgments, ``benchmarks/finding_thresholds.py``;
docs/findings.md has the measurements). ``larev-hf export`` writes them into the bundle's config, so a bundle on the Hub
reports the findings it was published with; a bundle without them gets the library defaults.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from difflib import SequenceMatcher
from typing import Any

import numpy as np

from larev_hf.data.negation import negation_edits
from larev_hf.data.vacuous import label_verbalization
from larev_hf.io import DataError

#: Every finding, strongest first (the console's ``why`` column shows the first that fires), with its title.
FINDINGS: dict[str, str] = {
    "empty": "empty",
    "whitespace": "whitespace only",
    "truncated": "truncated",
    "other_script": "not in the evaluator's script",
    "contradicts": "contradicts the label",
    "states_label": "states the label",
    "copies_input": "copies the input",
    "off_topic": "not about this input",
    "not_explanation": "does not read as an explanation",
}

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class FindingThresholds:
    """Where each finding fires: one field per threshold. The defaults of ``copy_*``, ``restate_share``,
    ``grounding``, ``sentence_grounding``, ``explanation_lm``, ``word_order``, ``label_margin``, ``negation_gain`` and
    ``judge_log_prob`` were chosen by ``benchmarks/finding_thresholds.py`` for the ``esnli`` evaluator; ``sentence_words``,
    ``other_script`` and ``baseline_ceiling`` are declared, not fitted (docs/findings.md, "How the
    thresholds were chosen").

    Parameters that control the text findings:
        copy_share (`float`): *copies the input* when at least this share of the explanation's words lie in runs of
            at least ``copy_run`` words copied from one input field.
        copy_run (`int`): the shortest run of words that counts as copied.
        restate_share (`float`): *copies the input* also fires on an explanation that restates the whole input (the
            premise and hypothesis, or the hypothesis and no premise word; any template) where at least this share
            of its words are copied: an explanation that names the whole claim inside an argument of its own ("we
            have no idea if the woman is asian or not, she could be anyone") copies less of itself than a template
            around the input does.
        grounding (`float`): *not about this input* when at most this share of the explanation's content words are
            found in the input (the calibration's ``grounding`` feature).
        sentence_grounding (`float`): *not about this input* also when, of an explanation of two sentences or more,
            one sentence has at most this share of its content stems in the input (0: it names nothing of the input):
            padding after an explanation, which the explanation's share as a whole dilutes.
        sentence_words (`int`): the fewest content stems a sentence needs to be judged apart by
            ``sentence_grounding`` (declared, not fitted).
        explanation_lm (`float`): *does not read as an explanation* when the explanation language model of the
            training explanations gives at most this mean log-probability per word (nats; the calibration's
            ``explanation_lm`` feature; bundles whose calibration has no such model skip it).
        word_order (`float`): *does not read as an explanation* also when the same model prefers the explanation's
            own word order to the likeliest of random orders of its content words by at most this many nats per word
            (:func:`word_order_margins`; below 0: a shuffled order is likelier): shuffled words, judged against the
            explanation's own words, so the spread of likelihood among good explanations does not hide it.
        other_script (`float`): *not in the evaluator's script* when at least this share of the letters are outside
            the scripts of the evaluator's training text (Latin for e-SNLI).

    Parameters that read the evaluator:
        label_margin (`float`): *contradicts the label* when the evaluator's log-probability of the given label from
            the explanation is at least this far below that of another label (nats, each label with its own vacuous
            baseline): the explanation argues for another label.
        negation_gain (`float`): *contradicts the label* also when the explanation with one negation toggled (a
            "not" inserted or removed) gives the given label's margin at least this many nats more than the
            explanation as written: its polarity argues against the label (a flipped negation).
        judge_log_prob (`float`): *contradicts the label* also when the bundle's NLI judge, reading the premise
            followed by the explanation and the hypothesis, gives the given label at most this log-probability (nats):
            the explanation and the input argue for another label (bundles without a judge skip it).
        baseline_ceiling (`float`): the raw score is *uninformative* for a row whose baseline log-probability of its
            label is at least this (nats): the evaluator is already certain from the vacuous baseline, so no
            explanation can add label information (REV eq. 6 is bounded by −log p(y | b)).
    """

    copy_share: float = 0.79
    copy_run: int = 5
    restate_share: float = 0.41
    grounding: float = 0.285
    sentence_grounding: float = 0.25
    sentence_words: int = 3
    explanation_lm: float = -4.64
    word_order: float = -0.285
    other_script: float = 0.5
    label_margin: float = 4.62
    negation_gain: float = 9.75
    judge_log_prob: float = -2.59
    baseline_ceiling: float = -0.01

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> FindingThresholds:
        """Thresholds from a bundle's config; keys it lacks keep the library defaults, unknown keys raise."""
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(values or {}) - known):
            raise ValueError(f"findings: unknown thresholds {unknown}; expected some of {sorted(known)}")
        return cls(**dict(values or {}))


def words(text: str) -> list[str]:
    """Lower-cased words (letters and digits) of ``text``."""
    return [w.lower() for w in _WORD.findall(text)]


def input_fields(record: Mapping[str, Any]) -> dict[str, str]:
    """The fields of x an explanation may copy: premise and hypothesis (NLI), the question (QA, yes/no)."""
    if record.get("task") == "nli":
        return {"premise": str(record["premise"]), "hypothesis": str(record["hypothesis"])}
    return {"question": str(record["question"])}


def copied_runs(rationale: str, record: Mapping[str, Any], min_run: int) -> dict[str, Any]:
    """The explanation's words inside runs of at least ``min_run`` words copied from one field of x (or the whole
    field, when shorter): the share of its words so covered (``share``), per field, the longest run with its field,
    and (NLI) ``restates``: ``"input"`` where it holds the whole premise and hypothesis, ``"hypothesis"`` where it
    holds the whole hypothesis and no premise word, else ``None`` (a copy in a template of any length)."""
    tokens = words(rationale)
    covered = np.zeros(len(tokens), dtype=bool)
    per_field: dict[str, float] = {}
    longest = ("", "")
    for name, text in input_fields(record).items():
        source = words(text)
        mask = np.zeros(len(tokens), dtype=bool)
        blocks = SequenceMatcher(None, tokens, source, autojunk=False).get_matching_blocks()
        for block in blocks:  # a run of min_run words, or a whole field of at least two (a short hypothesis)
            if block.size >= min_run or (block.size == len(source) >= 2):
                mask[block.a:block.a + block.size] = True
                if block.size > len(longest[1].split()):
                    longest = (name, " ".join(tokens[block.a:block.a + block.size]))
        per_field[name] = float(mask.mean()) if len(tokens) else 0.0
        covered |= mask
    out = {"share": float(covered.mean()) if len(tokens) else 0.0, "per_field": per_field,
           "field": longest[0], "span": longest[1]}
    if record.get("task") == "nli":
        whole = {name: holds_whole(tokens, words(text)) for name, text in input_fields(record).items()}
        out["restates"] = "input" if all(whole.values()) else "hypothesis" if whole["hypothesis"] and \
            not premise_words(rationale, record) else None
    return out


def holds_whole(tokens: Sequence[str], field: Sequence[str]) -> bool:
    """Whether ``tokens`` hold every word of ``field`` but at most one, in runs of two or more."""
    blocks = SequenceMatcher(None, list(field), list(tokens), autojunk=False).get_matching_blocks()
    return len(field) >= 2 and sum(block.size for block in blocks if block.size >= 2) >= len(field) - 1


def premise_words(rationale: str, record: Mapping[str, Any]) -> set[str]:
    """The explanation's content words from the premise that the hypothesis lacks (stemmed, as the calibration's
    ``premise_link``): none for the claim restated, linked to nothing given (docs/human.md)."""
    from larev_hf.methods.heuristics import content_tokens

    premise_only = set(content_tokens(str(record["premise"]))) - set(content_tokens(str(record["hypothesis"])))
    return premise_only & set(content_tokens(rationale))


def label_words(rationale: str, record: Mapping[str, Any], label_set: Sequence[str] | None) -> list[str]:
    """The labels (or answer choices) the explanation names as whole words (case-insensitive): the label cue a
    learned evaluator reads (VARIF §4 B; the leakage term LAREV removes from b is the label's verbalization, shown
    beside them as evidence)."""
    names = list(dict.fromkeys([*(label_set or []), *record.get("choices", [])]))
    found = [name for name in names if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", rationale, re.IGNORECASE)]
    return found


def least_grounded_sentence(rationale: str, record: Mapping[str, Any], min_words: int = 3) -> tuple[str, float] | None:
    """Of an explanation of two sentences or more (each with a content word), the sentence of at least ``min_words``
    content stems with the smallest share of them found in the input
    (:func:`~larev_hf.leakage.rationale_leakage.content_stems`), and that share; ``None`` for one sentence, which the
    explanation's own grounding already judges, or where no sentence is long enough to judge apart (a short clause
    such as "they can not be both places at once" often argues from common sense without naming the input)."""
    from larev_hf.leakage.rationale_leakage import content_stems, input_content_stems, sentences

    stems = input_content_stems(record)
    judged = [(sentence.strip(), own) for sentence in sentences(rationale) if (own := content_stems(sentence))]
    shares = [(sentence, len(own & stems) / len(own)) for sentence, own in judged if len(own) >= min_words]
    return min(shares, key=lambda pair: pair[1]) if len(judged) >= 2 and shares else None


def content_word_permutations(text: str, count: int, seed: int = 0) -> list[str]:
    """``count`` seeded permutations of ``text``'s content words among their positions (words of three letters or
    more that are not stop words, :data:`~larev_hf.leakage.attribution.STOP_WORDS`; the rest stays in place); none
    where fewer than two distinct content words could trade places."""
    from larev_hf.leakage.attribution import STOP_WORDS

    spans = [m.span() for m in _WORD.finditer(text) if len(m.group()) > 2 and m.group().lower() not in STOP_WORDS]
    found = [text[a:b] for a, b in spans]
    if len({w.lower() for w in found}) < 2:
        return []
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        order = rng.permutation(len(found))
        pieces, last = [], 0
        for (start, end), k in zip(spans, order, strict=True):
            pieces += [text[last:start], found[k]]
            last = end
        out.append("".join(pieces) + text[last:])
    return out


def word_order_margins(records: Sequence[Mapping[str, Any]], state: Mapping[str, Any], permutations: int = 32,
                       seed: int = 0) -> np.ndarray:
    """Per record, how much more likely the explanation language model (``state``: the calibration's
    ``explanation_lm`` text model) finds the explanation as written than in the likeliest of ``permutations`` seeded
    orders of its content words (:func:`content_word_permutations`): EL(r, x) − max EL(π(r), x), in nats per word;
    NaN where r has fewer than two distinct content words. Good explanations differ by a nat or more per word in EL
    itself, but each is likelier in its own order than in most others; shuffled words are one random order among
    them, so some other order is about as likely (the margin is near or below 0)."""
    from larev_hf.methods.explanation_lm import fitted_language_model
    from larev_hf.methods.heuristics import input_text

    model, copy = fitted_language_model(tuple(state["explanations"]), int(state["order"])), float(state["copy"])
    out = np.full(len(records), np.nan)
    for i, record in enumerate(records):
        text, source = str(record["rationale"]), input_text(record)
        if shuffled := content_word_permutations(text, permutations, seed):
            out[i] = model.mean_log_probability(text, source, copy) - max(
                model.mean_log_probability(t, source, copy) for t in shuffled)
    return out


def negation_toggles(rationale: str, limit: int = 4) -> list[str]:
    """The explanation with one negation inserted or removed (:func:`~larev_hf.data.negation.negation_edits`),
    at most ``limit`` edits in text order: what *contradicts the label* compares the explanation with."""
    return [text for _, text in negation_edits(rationale)[:limit]]


def other_script_share(rationale: str, script: str = "LATIN") -> float:
    """The share of the explanation's letters whose Unicode name is not of ``script`` (0 for no letters)."""
    letters = [c for c in rationale if c.isalpha()]
    if not letters:
        return 0.0
    return sum(not unicodedata.name(c, "").startswith(script) for c in letters) / len(letters)


@dataclass
class Finding:
    """One finding about one explanation: its name (:data:`FINDINGS`), a short evidence line and the evidence."""

    name: str
    evidence: dict[str, Any]

    @property
    def title(self) -> str:
        return FINDINGS[self.name]

    def short(self) -> str:
        """The console's ``why`` cell: the title and its evidence in a few words."""
        e = self.evidence
        detail = {
            "truncated": lambda: f"{e.get('tokens_kept')} of {e.get('tokens')} tokens kept",
            "other_script": lambda: f"{e['share']:.0%} of letters",
            "contradicts": lambda: f"a negation toggled reads the label {e['negation_gain']:+.2f} nats better"
            if "negation_gain" in e else f"the NLI judge reads {e['judge_reads']}, p(label) {math.exp(e['judge_log_prob']):.2f}"
            if "judge_log_prob" in e else f"reads {e['reads']}, {e['margin']:+.2f} nats",
            "states_label": lambda: ", ".join(repr(w) for w in e["words"]),
            "copies_input": lambda: f"the whole {e['restates']}" if e.get("restates")
            else f"{e['share']:.0%} from the {e['field']}",
            "off_topic": lambda: f"{e['grounding']:.0%} of words in the input" if "sentence" not in e
            else f"{_clip(e['sentence'])!r}: {e['sentence_grounding']:.0%} of its words in the input",
            "not_explanation": lambda: f"{e['per_word']:.2f} nats/word" if "word_order" not in e
            else f"its word order {e['word_order']:+.2f} nats/word over shuffled",
        }.get(self.name)
        return self.title if detail is None else f"{self.title} ({detail()})"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, **self.evidence}


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else f"{text[:width - 1]}…"


def _value(columns: Mapping[str, Any] | None, name: str, i: int) -> float | None:
    if not columns or name not in columns:
        return None
    return float(np.asarray(columns[name])[i])


def find(records: Sequence[Mapping[str, Any]], thresholds: FindingThresholds, *,
         label_set: Sequence[str] | None = None, features: Mapping[str, Any] | None = None,
         label_margin: Sequence[float] | None = None, read_label: Sequence[str | None] | None = None,
         negation_gain: Sequence[float] | None = None, negation_text: Sequence[str | None] | None = None,
         word_order: Sequence[float] | None = None, tokens: Sequence[int] | None = None,
         max_tokens: int | None = None, judge_log_prob: Sequence[float] | None = None,
         judge_read: Sequence[str] | None = None) -> list[list[Finding]]:
    """The findings of each record's explanation, strongest first (:data:`FINDINGS`' order).

    Args:
        records: validated schema records (``rationale`` and the input fields).
        thresholds: where each finding fires.
        label_set: the evaluator's labels (for *states the label*).
        features: the calibration's inputs per feature (``grounding``, ``explanation_lm``), as
            :class:`~larev_hf.hub.scoring.BundleScores` carries them; a finding whose feature is absent is skipped.
        label_margin, read_label: per row, log p(given label) − the best other label's, and that label
            (:meth:`~larev_hf.hub.scoring.BundleScoring.label_margins`); ``None`` skips *contradicts the label*.
        negation_gain, negation_text: per row, the most the given label's margin rises when one negation of the
            explanation is toggled (:func:`negation_toggles`), and that text (NaN, ``None``: no negation to toggle);
            ``None`` skips that half of *contradicts the label*.
        word_order: per row, :func:`word_order_margins` (NaN: too few words); ``None`` skips that half of *does not
            read as an explanation*.
        tokens, max_tokens: per row, the evaluator input's length in tokens, and how many it keeps.
        judge_log_prob, judge_read: per row, the NLI judge's log-probability of the given label and the label it
            reads (:meth:`~larev_hf.hub.scoring.BundleScoring.judge_reads`); ``None`` skips that part of
            *contradicts the label*.
    """
    out: list[list[Finding]] = []
    for i, record in enumerate(records):
        rationale = str(record["rationale"])
        found: list[Finding] = []
        if not rationale:
            found.append(Finding("empty", {}))
        elif not rationale.strip():
            found.append(Finding("whitespace", {"characters": len(rationale)}))
        if tokens is not None and max_tokens is not None and tokens[i] > max_tokens:
            found.append(Finding("truncated", {"tokens": int(tokens[i]), "tokens_kept": int(max_tokens)}))
        if not rationale.strip():
            out.append(found)
            continue
        script = other_script_share(rationale)
        if script >= thresholds.other_script:
            found.append(Finding("other_script", {"share": script}))
        margin, gain, judged = _finite(label_margin, i), _finite(negation_gain, i), _finite(judge_log_prob, i)
        flipped = gain is not None and gain >= thresholds.negation_gain
        judge_disagrees = judged is not None and judged <= thresholds.judge_log_prob
        if margin is not None and (margin < -thresholds.label_margin or flipped) or judge_disagrees:
            evidence = {} if margin is None else {"reads": read_label[i] if read_label else None, "margin": margin}
            if flipped:
                evidence.update(negation_gain=gain, negation_toggled=negation_text[i] if negation_text else None)
            if judge_disagrees:
                evidence.update(judge_log_prob=judged, judge_reads=judge_read[i] if judge_read else None)
            found.append(Finding("contradicts", evidence))
        named = label_words(rationale, record, label_set)
        if named:
            found.append(Finding("states_label", {"words": named,
                                                  "verbalization": _verbalization(record)}))
        copy = copied_runs(rationale, record, thresholds.copy_run)
        if copy["share"] >= thresholds.copy_share or copy.get("restates") and copy["share"] >= thresholds.restate_share:
            found.append(Finding("copies_input", copy))
        grounding = _value(features, "grounding", i)
        sentence = least_grounded_sentence(rationale, record, thresholds.sentence_words)
        padded = sentence is not None and sentence[1] <= thresholds.sentence_grounding
        if (grounding is not None and grounding <= thresholds.grounding) or padded:
            evidence = {} if grounding is None else {"grounding": grounding}
            if padded:
                evidence.update(sentence=sentence[0], sentence_grounding=sentence[1])
            found.append(Finding("off_topic", evidence))
        per_word, order = _value(features, "explanation_lm", i), _finite(word_order, i)
        shuffled = order is not None and order <= thresholds.word_order
        if (per_word is not None and per_word <= thresholds.explanation_lm) or shuffled:
            evidence = {"per_word": per_word, "threshold": thresholds.explanation_lm}
            if shuffled:
                evidence.update(word_order=order, word_order_threshold=thresholds.word_order)
            found.append(Finding("not_explanation", evidence))
        out.append(sorted(found, key=lambda f: list(FINDINGS).index(f.name)))
    return out


def _finite(values: Sequence[float] | None, i: int) -> float | None:
    if values is None or values[i] is None or not np.isfinite(values[i]):
        return None
    return float(values[i])


def _verbalization(record: Mapping[str, Any]) -> str | None:
    try:
        return label_verbalization(record)
    except DataError:  # a label the template baseline does not verbalize: no leakage term to show
        return None


def counts(findings: Sequence[Sequence[Finding]]) -> dict[str, int]:
    """How many explanations carry each finding (every finding listed, 0 where none does)."""
    return {name: sum(any(f.name == name for f in row) for row in findings) for name in FINDINGS}
