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

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from difflib import SequenceMatcher
from typing import Any

import numpy as np

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
    """Where each finding fires: one field per threshold. The defaults of ``copy_*``, ``grounding``,
    ``explanation_lm`` and ``label_margin`` were chosen by ``benchmarks/finding_thresholds.py`` for the ``esnli``
    evaluator; ``other_script`` and ``baseline_ceiling`` are declared, not fitted (docs/findings.md, "How the
    thresholds were chosen").

    Parameters that control the text findings:
        copy_share (`float`): *copies the input* when at least this share of the explanation's words lie in runs of
            at least ``copy_run`` words copied from one input field.
        copy_run (`int`): the shortest run of words that counts as copied.
        grounding (`float`): *not about this input* when at most this share of the explanation's content words are
            found in the input (the calibration's ``grounding`` feature).
        explanation_lm (`float`): *does not read as an explanation* when the explanation language model of the
            training explanations gives at most this mean log-probability per word (nats; the calibration's
            ``explanation_lm`` feature; bundles whose calibration has no such model skip it).
        other_script (`float`): *not in the evaluator's script* when at least this share of the letters are outside
            the scripts of the evaluator's training text (Latin for e-SNLI).

    Parameters that read the evaluator:
        label_margin (`float`): *contradicts the label* when the evaluator's log-probability of the given label from
            the explanation is at least this far below that of another label (nats, each label with its own vacuous
            baseline): the explanation argues for another label.
        baseline_ceiling (`float`): the raw score is *uninformative* for a row whose baseline log-probability of its
            label is at least this (nats): the evaluator is already certain from the vacuous baseline, so no
            explanation can add label information (REV eq. 6 is bounded by −log p(y | b)).
    """

    copy_share: float = 0.79
    copy_run: int = 5
    grounding: float = 0.285
    explanation_lm: float = -4.64
    other_script: float = 0.5
    label_margin: float = 1.83
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
            "contradicts": lambda: f"reads {e['reads']}, {e['margin']:+.2f} nats",
            "states_label": lambda: ", ".join(repr(w) for w in e["words"]),
            "copies_input": lambda: f"the whole {e['restates']}" if e.get("restates")
            else f"{e['share']:.0%} from the {e['field']}",
            "off_topic": lambda: f"{e['grounding']:.0%} of words in the input",
            "not_explanation": lambda: f"{e['per_word']:.2f} nats/word",
        }.get(self.name)
        return self.title if detail is None else f"{self.title} ({detail()})"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, **self.evidence}


def _value(columns: Mapping[str, Any] | None, name: str, i: int) -> float | None:
    if not columns or name not in columns:
        return None
    return float(np.asarray(columns[name])[i])


def find(records: Sequence[Mapping[str, Any]], thresholds: FindingThresholds, *,
         label_set: Sequence[str] | None = None, features: Mapping[str, Any] | None = None,
         label_margin: Sequence[float] | None = None, read_label: Sequence[str | None] | None = None,
         tokens: Sequence[int] | None = None, max_tokens: int | None = None) -> list[list[Finding]]:
    """The findings of each record's explanation, strongest first (:data:`FINDINGS`' order).

    Args:
        records: validated schema records (``rationale`` and the input fields).
        thresholds: where each finding fires.
        label_set: the evaluator's labels (for *states the label*).
        features: the calibration's inputs per feature (``grounding``, ``explanation_lm``), as
            :class:`~larev_hf.hub.scoring.BundleScores` carries them; a finding whose feature is absent is skipped.
        label_margin, read_label: per row, log p(given label) − the best other label's, and that label
            (:meth:`~larev_hf.hub.scoring.BundleScoring.label_margins`); ``None`` skips *contradicts the label*.
        tokens, max_tokens: per row, the evaluator input's length in tokens, and how many it keeps.
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
        if label_margin is not None and label_margin[i] is not None and np.isfinite(label_margin[i]) \
                and label_margin[i] < -thresholds.label_margin:
            found.append(Finding("contradicts", {"reads": read_label[i] if read_label else None,
                                                 "margin": float(label_margin[i])}))
        named = label_words(rationale, record, label_set)
        if named:
            found.append(Finding("states_label", {"words": named,
                                                  "verbalization": _verbalization(record)}))
        copy = copied_runs(rationale, record, thresholds.copy_run)
        if copy["share"] >= thresholds.copy_share or copy.get("restates"):
            found.append(Finding("copies_input", copy))
        grounding = _value(features, "grounding", i)
        if grounding is not None and grounding <= thresholds.grounding:
            found.append(Finding("off_topic", {"grounding": grounding}))
        per_word = _value(features, "explanation_lm", i)
        if per_word is not None and per_word <= thresholds.explanation_lm:
            found.append(Finding("not_explanation", {"per_word": per_word, "threshold": thresholds.explanation_lm}))
        out.append(sorted(found, key=lambda f: list(FINDINGS).index(f.name)))
    return out


def _verbalization(record: Mapping[str, Any]) -> str | None:
    try:
        return label_verbalization(record)
    except DataError:  # a label the template baseline does not verbalize: no leakage term to show
        return None


def counts(findings: Sequence[Sequence[Finding]]) -> dict[str, int]:
    """How many explanations carry each finding (every finding listed, 0 where none does)."""
    return {name: sum(any(f.name == name for f in row) for row in findings) for name in FINDINGS}
