"""VARIF's arithmetic: robustness R, the informativeness transform Ĩ, specificity S, the vacuity-aware scalar,
and the (R, Ĩ) Pareto frontier with its hypervolume (``papers/varif-proposal.md`` §3; META-EVALUATION.md).

The models behind the numbers (the NLI judge of Sim_NLI, LC-IG's predictors, the explanation generators) are
passed in as functions, so this module imports numpy only and every formula is testable on hand-made inputs.
Where the proposal leaves a quantity undefined the choice is a keyword argument, documented in ``docs/varif.md``:

- Ĩ (``informativeness_transform``): ``"exp"`` (default) maps I ≥ 0 nats to 1 − e^(−I) = (p₁ − p₀)/p₁, the share
  of the rationale-augmented probability the input alone does not explain (I ≤ 0 → 0, one bit → ½); ``"minmax"``
  rescales the methods' I to [0, 1] (depends on which methods are compared).
- ε of H (``eps``, 1e-8), M of S (the other inputs' columns given), the hypervolume's reference point ((0, 0)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: ``entail(premises, hypotheses) -> p(entailment)`` per pair, e.g. an NLI cross-encoder.
EntailmentFn = Callable[[Sequence[str], Sequence[str]], np.ndarray]


def sim_nli(entail: EntailmentFn, first: Sequence[str], second: Sequence[str]) -> np.ndarray:
    """Sim_NLI(e, e′) = ½[p_ent(e ⇒ e′) + p_ent(e′ ⇒ e)] per pair (§3.1); symmetric whatever ``entail`` is."""
    if len(first) != len(second):
        raise ValueError(f"got {len(first)} and {len(second)} texts; expected pairs")
    forward = np.asarray(entail(list(first), list(second)), dtype=float)
    backward = np.asarray(entail(list(second), list(first)), dtype=float)
    return 0.5 * (forward + backward)


def identity_aware(entail: EntailmentFn) -> EntailmentFn:
    """``entail`` with p_ent = 1 for a pair of identical texts (after stripping), without asking the judge: a text
    entails itself by definition, and a judge's p_ent(e ⇒ e) < 1 would otherwise count as instability (docs/varif.md)."""

    def judged(premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        out = np.ones(len(premises))
        differ = [i for i, (a, b) in enumerate(zip(premises, hypotheses, strict=True)) if a.strip() != b.strip()]
        if differ:
            out[differ] = np.asarray(entail([premises[i] for i in differ], [hypotheses[i] for i in differ]), dtype=float)
        return out

    return judged


def keep_equivalent(entail: EntailmentFn, originals: Sequence[str], perturbed: Sequence[str],
                    threshold: float = 0.5) -> list[bool]:
    """Which perturbed inputs to keep (§3.1): those the NLI judge finds entailed by the original *and* entailing it
    (p_ent > ``threshold`` both ways)."""
    forward = np.asarray(entail(list(originals), list(perturbed)), dtype=float)
    backward = np.asarray(entail(list(perturbed), list(originals)), dtype=float)
    return [bool(a > threshold and b > threshold) for a, b in zip(forward, backward, strict=True)]


def robustness(entail: EntailmentFn, explanations: Sequence[str],
               perturbed_explanations: Sequence[Sequence[str]]) -> np.ndarray:
    """R_i = mean over example i's kept perturbations of Sim_NLI(e_i, e_i^(j)) (§3.1); NaN where none was kept."""
    pairs = [(i, other) for i, others in enumerate(perturbed_explanations) for other in others]
    if not pairs:
        return np.full(len(explanations), np.nan)
    similarity = sim_nli(entail, [explanations[i] for i, _ in pairs], [other for _, other in pairs])
    owners = np.array([i for i, _ in pairs])
    counts = np.bincount(owners, minlength=len(explanations))
    totals = np.bincount(owners, weights=similarity, minlength=len(explanations))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / counts, np.nan)


def transform_informativeness(values: Sequence[float], informativeness_transform: str = "exp") -> np.ndarray:
    """Ĩ ∈ [0, 1] from LC-IG's I in nats (the proposal leaves Ĩ undefined; see the module docstring)."""
    array = np.asarray(values, dtype=float)
    if informativeness_transform == "exp":
        return 1.0 - np.exp(-np.clip(array, 0.0, None))
    if informativeness_transform == "minmax":
        low, high = np.nanmin(array), np.nanmax(array)
        return np.ones_like(array) if high == low else (array - low) / (high - low)
    raise ValueError(f"informativeness_transform must be 'exp' or 'minmax', got {informativeness_transform!r}")


def specificity(own_similarity: Sequence[float], other_similarities: Sequence[Sequence[float]]) -> np.ndarray:
    """S_i = (1/M) Σ_j 𝟙[s⁺_i > s⁻_ij] (§3.3): the share of M other inputs the explanation matches worse than its own
    (``own_similarity[i]`` = s⁺, ``other_similarities[i]`` = the M values s⁻). Ties count as not specific."""
    own = np.asarray(own_similarity, dtype=float)
    others = np.asarray(other_similarities, dtype=float)
    if others.ndim != 2 or others.shape[0] != own.shape[0] or others.shape[1] == 0:
        raise ValueError(f"other_similarities must be (n, M ≥ 1) for n = {own.shape[0]}, got shape {others.shape}")
    return (own[:, None] > others).mean(axis=1)


def harmonic(robust: Sequence[float], informative: Sequence[float], eps: float = 1e-8) -> np.ndarray:
    """H_i = 2 R_i Ĩ_i / (R_i + Ĩ_i + ε) (§3.3): high only when both axes are."""
    r, i = np.asarray(robust, dtype=float), np.asarray(informative, dtype=float)
    return 2.0 * r * i / (r + i + eps)


def varif_scores(spec: Sequence[float], robust: Sequence[float], informative: Sequence[float],
                 eps: float = 1e-8) -> np.ndarray:
    """VARIF_i = S_i · H_i (§3.3): the harmonic score, gated by specificity."""
    return np.asarray(spec, dtype=float) * harmonic(robust, informative, eps)


def pareto_front(points: dict[str, tuple[float, float]]) -> list[str]:
    """The names whose (R, Ĩ) no other point dominates (≥ on both axes, > on one), by decreasing R."""
    front = [name for name, (r, i) in points.items()
             if not any((r2 >= r and i2 >= i) and (r2 > r or i2 > i) for r2, i2 in points.values())]
    return sorted(front, key=lambda name: (-points[name][0], -points[name][1]))


def hypervolume_2d(points: Sequence[tuple[float, float]], reference: tuple[float, float] = (0.0, 0.0)) -> float:
    """Area of the region dominated by ``points`` (both axes maximised) and dominating ``reference``; points not
    above the reference on both axes add nothing."""
    kept = sorted(((x, y) for x, y in points if x > reference[0] and y > reference[1]), key=lambda p: -p[0])
    area, best_y = 0.0, reference[1]
    for index, (x, y) in enumerate(kept):
        next_x = kept[index + 1][0] if index + 1 < len(kept) else reference[0]
        best_y = max(best_y, y)
        area += (x - next_x) * (best_y - reference[1])
    return float(area)
