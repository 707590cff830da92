"""Whether a run's evaluators are trained enough for per-explanation scores (issue 33), checked by ``larev-hf export``
and stated on every bundle's card.

Two conditions, both read from the run's report:

- the rationale model's accuracy with gold rationales is at least :data:`MIN_ACCURACY_MARGIN` above chance (1 / the
  number of answer choices): an evaluator at chance gives every explanation with the same label the same score;
- Gold − Vacuous is positive with its 95% interval above 0: gold explanations add something over the vacuous baseline
  on the test split (thesis §5.2's first sanity check of a metric).

A bundle that fails either still exports with ``--force``; its card says which check failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

#: Gold-rationale accuracy must exceed chance by this much (absolute) for per-explanation scores to mean anything.
MIN_ACCURACY_MARGIN = 0.10
#: The training rows below which the measured curve in docs/hub.md says per-explanation scores should not be used.
MIN_TRAIN_ROWS_ADVICE = "docs/hub.md, \"How much training a bundle needs\""


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
           margin: float = MIN_ACCURACY_MARGIN) -> Trust:
    """The trust checks of ``method``'s evaluators from a run's ``report`` (``report.json``)."""
    entry = report.get("methods", {}).get(method, {})
    accuracy = (report.get("accuracy") or {}).get(rationale_model, {}).get("gold")
    separation = (entry.get("separations") or {}).get("gold_minus_vacuous")
    ci = (entry.get("ci95") or {}).get("gold_minus_vacuous")
    problems = []
    if accuracy is not None and chance is not None and accuracy < chance + margin:
        problems.append(f"{rationale_model}'s accuracy with gold rationales ({100 * accuracy:.1f}%) is within "
                        f"{100 * margin:.0f} points of chance ({100 * chance:.1f}%)")
    if separation is not None and (ci is None or ci[0] is None or ci[0] <= 0):
        problems.append("Gold − Vacuous is not above 0 (its 95% interval includes or lies below 0)")
    return Trust(accuracy, chance, separation, list(ci) if ci else None, problems)
