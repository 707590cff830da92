"""LAREV-G, the grounded LAREV (our extension, not the thesis's):
LAREV-G(r) = log p_ΦG(y | r ⊕ b) − log p_Φbase(y | b).

LAREV credits label evidence wherever it comes from: every training pair has the gold label as target and a rationale
written for that input, so Φ_LA never meets a rationale that is not about its input and never learns to check (the
thesis's environments vary only b). Φ_G is Φ_LA's objective (eq. 4.10) over larger IRM groups: beside E1-E3 (the
gold r with b, b masked, b rewritten), each instance's group holds the grounding environments of
:data:`~larev_hf.leakage.GROUNDING_ENVIRONMENTS` — another training instance's gold rationale (any label) and this
gold's words shuffled, each with E2's masked baseline b̃ (``--grounding-baseline``; the original b is the
alternative) and this instance's label as the target. A rationale's label cues predict the target in E1-E3 but not in
those environments, where nothing does: a Φ that reads the cues whatever the rationale is about is confidently wrong
there, so the risk and the IRM penalty (equal risk gradients across an instance's environments) push towards reading
r where it is an explanation of this input and staying unsure where it is not.

The thesis's LAREV is unchanged (``--method larev``); ``--method larev_grounded`` trains Φ_G beside it from the same
Φ_base, Φ, IG and environments (docs/method.md, "Grounded LAREV").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from larev_hf.methods.base import MethodResult, RunContext, RunSettings, Stage
from larev_hf.methods.larev import (
    ENVIRONMENTS_STAGE,
    IG,
    LAREV,
    PROBE,
    AddedEnvironments,
    needs_probe,
    train_phi_la,
)
from larev_hf.methods.rev import PHI, PHI_BASE, ConditionalVMethod
from larev_hf.methods.settings import comma_list, help_field

#: Φ_G's model directory (``models/phi_grounded``).
PHI_GROUNDED = "phi_grounded"


@dataclass
class GroundedSettings:
    """LAREV-G's own settings: which grounding environments, their baseline and their target; the penalty weights,
    groups per batch, warm-up and Φ_LA init are LAREV's (:class:`~larev_hf.methods.larev.LarevSettings`)."""

    grounding_environments: list[str] = help_field(
        ["other_instance", "word_shuffle"], "LAREV-G's grounding environments, added to every IRM group (comma list "
        "of other_instance, word_shuffle)", stages=(PHI_GROUNDED,), type=comma_list)
    grounding_baseline: str = help_field(
        "mask", "the baseline paired with a grounding environment's rationale: E2's masked b̃ (the label is then "
        "not predictable from b, so a rationale that is not about the input earns nothing) or the original b",
        choices=("mask", "original"), stages=(PHI_GROUNDED,))
    grounding_target: str = help_field(
        "label", "the target of the grounding environments: the instance's own label, every label equally "
        "('uniform': Φ_G is trained to stay unsure on a rationale that is not an explanation of this input, "
        "outlier exposure; the label target rewards reading shuffled words as a bag), or 'mixed': the label for "
        "other_instance, uniform for word_shuffle",
        choices=("label", "uniform", "mixed"), stages=(PHI_GROUNDED,))

    def validate(self, config: RunSettings) -> None:
        from larev_hf.leakage import GROUNDING_ENVIRONMENTS

        unknown = [name for name in self.grounding_environments if name not in GROUNDING_ENVIRONMENTS]
        if unknown or not self.grounding_environments:
            raise ValueError(f"--grounding-environments {','.join(self.grounding_environments)}: expected a "
                             f"non-empty comma list of {', '.join(GROUNDING_ENVIRONMENTS)}")


def grounding_environments(settings: GroundedSettings, seed: int) -> AddedEnvironments:
    """The grounding environments ``settings`` add to every IRM group of Φ_G: each instance's rationales drawn with
    ``seed`` (:func:`~larev_hf.leakage.grounding_rationales`), paired with E2's masked b̃ or the original b
    (``grounding_baseline``), with the instance's label as their target or every label equally where
    :data:`~larev_hf.leakage.GROUNDING_TARGETS` says so (``grounding_target``: Φ_G is trained to stay unsure there)."""
    from larev_hf.leakage import GROUNDING_TARGETS, grounding_rationales

    names = tuple(settings.grounding_environments)

    def add(train: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
        for row, rationales in zip(rows, grounding_rationales(train, seed=seed), strict=True):
            row["rationales"] = {**row.get("rationales", {}), **rationales}
            row.update({env: row[settings.grounding_baseline] for env in names})

    return AddedEnvironments(
        names, add, unsure=tuple(env for env in GROUNDING_TARGETS[settings.grounding_target] if env in names),
        recorded={"grounding_baseline": settings.grounding_baseline, "grounding_target": settings.grounding_target})


def train_phi_grounded(context: RunContext) -> None:
    """Φ_G: Φ_LA's objective with the grounding environments in every IRM group."""
    added = grounding_environments(context.config.method_settings(GroundedSettings), context.config.training.seed)
    train_phi_la(PHI_GROUNDED, context, added)


class GroundedLAREV(LAREV):
    """LAREV-G (see the module docstring)."""

    name = "larev_grounded"
    title = "LAREV-G"
    formula = "LAREV-G(r) = log p_ΦG(y | r ⊕ b) − log p_Φbase(y | b)"
    roles = {"baseline": "phi_base", "rationale": PHI_GROUNDED}
    model_titles = {"baseline": "Φ_base (b → y)", "rationale": "Φ_G (r ⊕ b → y, leakage-aware and grounded)"}
    settings_class = GroundedSettings
    in_all = False  # an extension under measurement: asked by name (`--method larev,larev_grounded`)

    def stages(self, config: RunSettings) -> list[Stage]:
        return [PHI_BASE, PHI, IG, ENVIRONMENTS_STAGE, *([PROBE] if needs_probe(config) else []),
                Stage(PHI_GROUNDED, train_phi_grounded)]

    def score(self, context, records, variants, shared) -> MethodResult:
        return ConditionalVMethod.score(self, context, records, variants, shared)  # no ablation table of its own
