"""Whether a run's evaluators are trained enough for per-explanation scores, checked by ``larev-hf export`` and
stated on every bundle's card: an undertrained evaluator gives every explanation of a label nearly the same score,
which a corpus mean hides and a per-explanation ranking does not.

Two conditions, both read from the run's report:

- the rationale model's accuracy with gold rationales is at least :data:`MIN_GOLD_ACCURACY` (and above chance, 1 / the
  number of answer choices): below it, per-explanation rankings are near chance although corpus means may already
  separate (measured against training rows: docs/hub.md, "How much training a bundle needs");
- Gold − Vacuous is positive with its 95% interval above 0: gold explanations add something over the vacuous baseline
  on the test split (thesis §5.2's first sanity check of a metric).

A bundle that fails either still exports with ``--force``; its card says which check failed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from larev_hf.io import read_jsonl


class UntrustedEvaluatorError(ValueError):
    """The evaluators fail the trust check and ``force`` was not given (``larev-hf export``, ``larev-hf evaluate``)."""


#: The gold-rationale accuracy below which per-explanation scores are refused (docs/hub.md, "How much training a bundle
#: needs").
MIN_GOLD_ACCURACY = 0.80
#: What the refusal tells the user about training.
MIN_TRAIN_ROWS_ADVICE = ("about 2,000 training rows or more (how the rows bought accuracy and agreement with people: the "
                         "larev-hf docs, hub.md, \"How much training a bundle needs\")")


@dataclass
class Trust:
    """The two checks' figures and the problems found (empty: per-explanation scores can be used)."""

    gold_accuracy: float | None
    chance: float | None
    gold_minus_vacuous: float | None
    gold_minus_vacuous_ci95: list[float] | None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sentence(self) -> str:
        """One line for a model card or an error message."""
        accuracy = ("n/a" if self.gold_accuracy is None else f"{100 * self.gold_accuracy:.1f}%"
                    + ("" if self.chance is None else f" (chance {100 * self.chance:.1f}%)"))
        ci = self.gold_minus_vacuous_ci95
        separation = ("n/a" if self.gold_minus_vacuous is None else f"{self.gold_minus_vacuous:+.3f} nats"
                      + ("" if ci is None else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]"))
        verdict = "per-explanation scores can be used" if self.ok else "per-explanation scores are not trustworthy: " \
            + "; ".join(self.problems)
        return f"accuracy with gold rationales {accuracy}; Gold − Vacuous {separation}: {verdict}"


def chance_level(choice_sets: Sequence[Sequence[str]]) -> float | None:
    """The accuracy of a uniform guess: the mean of 1 / the number of choices over the examples."""
    sizes = [len(choices) for choices in choice_sets if len(choices)]
    return sum(1 / size for size in sizes) / len(sizes) if sizes else None


def assess(report: Mapping[str, Any], method: str, rationale_model: str, chance: float | None,
           min_accuracy: float = MIN_GOLD_ACCURACY) -> Trust:
    """The trust checks of ``method``'s evaluators from a run's ``report`` (``report.json``)."""
    entry = report.get("methods", {}).get(method, {})
    accuracy = (report.get("accuracy") or {}).get(rationale_model, {}).get("gold")
    separation = (entry.get("separations") or {}).get("gold_minus_vacuous")
    ci = (entry.get("ci95") or {}).get("gold_minus_vacuous")
    problems = []
    if accuracy is not None and (accuracy < min_accuracy or (chance is not None and accuracy <= chance)):
        problems.append(f"{rationale_model}'s accuracy with gold rationales ({100 * accuracy:.1f}%"
                        + ("" if chance is None else f"; chance {100 * chance:.1f}%")
                        + f") is below {100 * min_accuracy:.0f}%")
    if separation is not None and (ci is None or ci[0] is None or ci[0] <= 0):
        problems.append("Gold − Vacuous is not above 0 (its 95% interval includes or lies below 0)")
    return Trust(accuracy, chance, separation, list(ci) if ci else None, problems)


def label_offsets(score_files: Sequence[str | os.PathLike], method: str) -> dict[str, float] | None:
    """The mean gold score of each label on the run's own test split (over every evaluator seed's
    ``scores/test_scores.jsonl``): the per-label offset a label-centred score removes, so scores of explanations of
    different labels can be ranked together (computed on the evaluator's held-out data, never on a user's
    explanations). ``None`` when no file holds ``<method>/gold``."""

    by_label: dict[str, list[float]] = {}
    for path in score_files:
        if not os.path.isfile(path):
            return None
        for _, row in read_jsonl(path):
            if f"{method}/gold" not in row:
                return None
            by_label.setdefault(row["label"], []).append(float(row[f"{method}/gold"]))
    return {label: sum(values) / len(values) for label, values in by_label.items()} or None
