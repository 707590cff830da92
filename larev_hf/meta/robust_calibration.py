"""A calibration that cannot be gamed: chosen by agreement with people *and* robustness to VARSuite.

A calibrated score fitted to human acceptability alone (:mod:`larev_hf.scores.calibration`) can be gamed. People
reward explanations that reuse the input's words, so the fit gives ROUGE-L(r, x) a large positive weight and a copy of
the input, whose overlap is the highest possible, outscores the gold on almost every row (measured: docs/human.md, "A
calibration that cannot be gamed"). Here the fit knows what must never win:

- **caps** (:class:`~larev_hf.scores.calibration.Calibration`): every text feature (every feature but the method's own
  score) is bounded at a quantile of its values among the *acceptable* judged explanations, so inflating it past where
  acceptable explanations sit earns nothing;
- **attack rows**: VARSuite's families (all but the gold) built from the run's validation split and scored with the
  same features, added to the fit as unacceptable explanations with a total weight relative to the judged rows;
- **shrinkage** of the text features' coefficients (1 = the fit's, 0 = the method alone), the log-odds re-fitted.

Every combination of :data:`CAP_QUANTILES`, :data:`UNACCEPTABLE_WEIGHTS` and :data:`SHRINKS` is fitted on the judged
explanations of the select half; each is scored on agreement (the mean of Spearman ρ and pairwise agreement of its
out-of-fold scores) and on robustness: its AUC against the gold for every family, on validation examples *not* used
in the fit (alternate examples), must pass :func:`robustness_shortfalls`'s rule with the floor raised by :data:`SELECTION_MARGIN`:
≥ :data:`ROBUST_FLOOR`, or, where the method alone is below it, no more than :data:`ROBUST_SLACK` below the method alone.
The chosen calibration is the most agreeable passing one (shrink 0, the method alone, always passes); ties go to the
larger shrink, then fewer caps. The families are built and scored by ``larev-hf meta`` on a split
(:meth:`~larev_hf.meta.evaluation.MetaDirectory.suite_scores`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from larev_hf.meta.human_stats import point_statistics
from larev_hf.meta.settings import REFERENCE, ROBUSTNESS_STATISTICS
from larev_hf.meta.stats import auc
from larev_hf.report import markdown_table
from larev_hf.scores.calibration import Calibration, feature_matrix, fit_calibration

#: A family passes when the calibrated score's AUC against the gold is at least this (a metric that ranks the gold
#: above an attack four times in five) ...
ROBUST_FLOOR = 0.80
#: ... or, where the method alone is below the floor, when it is no more than this below the method alone.
ROBUST_SLACK = 0.02
#: How far above the floor a candidate must be on the check half: its AUC is an estimate from a sample, and a candidate
#: chosen at the floor there fell below it on the test split (measured: docs/human.md, "A calibration that cannot be
#: gamed"). The slack below the method alone is not tightened: a family at chance for both would fail on noise.
SELECTION_MARGIN = 0.01
#: Fewer check examples than this and the report says the choice may not hold on the test split (measured with a
#: 300-row validation split: docs/human.md, "A calibration that cannot be gamed").
FEW_CHECK_EXAMPLES = 500
#: Where the text features are capped: a quantile of their values among the acceptable judged explanations (None:
#: uncapped).
CAP_QUANTILES: tuple[float | None, ...] = (None, 0.5, 0.25, 0.1, 0.05)
#: How the report names each of :data:`~larev_hf.meta.settings.ROBUSTNESS_STATISTICS`.
ROBUSTNESS_STATISTIC_TITLES = {"auc": "AUC of the gold against each family",
                    "paired": "Share of each family's rows whose own gold scores higher (paired win rate)"}
#: Total weight of the attack rows (unacceptable) relative to the judged explanations.
UNACCEPTABLE_WEIGHTS: tuple[float, ...] = (0.0, 1.0)
#: Factors on the text features' coefficients (0: the method's score alone, re-scaled to log-odds).
SHRINKS: tuple[float, ...] = (1.0, 0.75, 0.5, 0.25, 0.0)


@dataclass
class AttackScores:
    """Feature scores of VARSuite rows (one array per feature, aligned with ``families`` and ``ids``)."""

    columns: dict[str, np.ndarray]
    families: np.ndarray
    ids: np.ndarray

    @classmethod
    def from_rows(cls, rows_by_feature: Mapping[str, Sequence[Mapping[str, Any]]]) -> AttackScores:
        """From each feature's scored suite rows (``larev-hf meta``'s ``scores/<method>.jsonl``: id, family, score),
        aligned on (id, family); rows one feature lacks are dropped."""
        keyed = {name: {(row["id"], row["family"]): float(row["score"]) for row in rows}
                 for name, rows in rows_by_feature.items()}
        keys = sorted(set.intersection(*(set(scores) for scores in keyed.values())))
        return cls({name: np.array([scores[k] for k in keys]) for name, scores in keyed.items()},
                   np.array([k[1] for k in keys]), np.array([k[0] for k in keys]))

    def subset(self, keep: np.ndarray) -> AttackScores:
        return AttackScores({name: values[keep] for name, values in self.columns.items()}, self.families[keep],
                            self.ids[keep])

    def halves(self) -> tuple[AttackScores, AttackScores]:
        """(fit, check): alternate examples by sorted id, so the robustness check never sees a fitted example."""
        order = {example: k for k, example in enumerate(sorted(set(self.ids.tolist())))}
        fit = np.array([order[i] % 2 == 0 for i in self.ids])
        return self.subset(fit), self.subset(~fit)

    def family_aucs(self, scores: np.ndarray) -> dict[str, float]:
        """Per family, the AUC of the gold rows' scores against the family's (``larev-hf meta``'s statistic)."""
        gold = scores[self.families == REFERENCE]
        if not len(gold):
            raise ValueError("these VARSuite rows have no gold rows to compare the families with")
        return {family: auc(gold, scores[self.families == family])
                for family in dict.fromkeys(self.families.tolist()) if family != REFERENCE}

    def paired_with_gold(self, scores: np.ndarray, family: str) -> tuple[np.ndarray, np.ndarray]:
        """(gold, attack): the scores of ``family``'s rows and of each one's own example's gold row, aligned (rows of
        an example without a gold row are left out)."""
        gold = {example: score for example, score, name in zip(self.ids, scores, self.families, strict=True)
                if name == REFERENCE}
        if not gold:
            raise ValueError("these VARSuite rows have no gold rows to compare the families with")
        keep = self.families == family
        pairs = [(gold[example], score) for example, score in zip(self.ids[keep], scores[keep], strict=True)
                 if example in gold]
        return np.array([g for g, _ in pairs], dtype=float), np.array([a for _, a in pairs], dtype=float)

    def family_win_rates(self, scores: np.ndarray) -> dict[str, float]:
        """Per family, the share of its rows whose own example's gold row scores strictly higher (the paired
        statistic: an attack is a change of one example's gold, so each gold is compared with its own attacks only;
        rows of an example without a gold row are left out)."""
        out = {}
        for family in dict.fromkeys(self.families.tolist()):
            if family == REFERENCE:
                continue
            gold, attack = self.paired_with_gold(scores, family)
            out[family] = float(np.mean(gold > attack)) if len(gold) else float("nan")
        return out

    def family_statistics(self, scores: np.ndarray, statistic: str) -> dict[str, float]:
        """:meth:`family_aucs` (``"auc"``) or :meth:`family_win_rates` (``"paired"``)."""
        if statistic not in ROBUSTNESS_STATISTICS:
            raise ValueError(f"robustness statistic must be one of {ROBUSTNESS_STATISTICS}, got {statistic!r}")
        return self.family_aucs(scores) if statistic == "auc" else self.family_win_rates(scores)


def robustness_shortfalls(calibrated: Mapping[str, float], method: Mapping[str, float], floor: float = ROBUST_FLOOR,
                          slack: float = ROBUST_SLACK) -> dict[str, dict[str, float]]:
    """The families where ``calibrated``'s AUC fails the robustness rule (≥ ``floor``, or, where the method alone is below
    ``floor``, ≥ the method's − ``slack``), with both AUCs."""
    return {family: {"calibrated": value, "method": method[family]} for family, value in calibrated.items()
            if not (value >= floor or (method[family] < floor and value >= method[family] - slack))}


def _caps(columns: Mapping[str, np.ndarray], acceptable: np.ndarray, features: Sequence[str], method: str,
          quantile: float | None) -> list[float | None] | None:
    """Every feature but ``method`` capped at its ``quantile`` among the acceptable explanations, on the scale the
    calibration reads it (:func:`~larev_hf.scores.calibration.feature_matrix`)."""
    if quantile is None:
        return None
    x = feature_matrix({name: columns[name][acceptable] for name in features}, features)
    return [None if name == method else float(np.quantile(x[:, j], quantile)) for j, name in enumerate(features)]


def robust_calibration(columns: Mapping[str, np.ndarray], human: Any, instance_ids: Sequence[Any],
                       features: Sequence[str], method: str, attacks: AttackScores, threshold: float = 0.5,
                       seed: int = 0, fit_attacks: AttackScores | None = None, statistic: str = "auc"
                       ) -> tuple[Calibration, np.ndarray, list[dict[str, Any]]]:
    """Choose and fit the calibration (see the module docstring). Returns it, its out-of-fold scores on the judged rows
    and the table of every candidate (caps quantile, attack weight, shrink, agreement, check-half AUCs, shortfalls).
    With ``fit_attacks`` (VARSuite on another split, e.g. the training split) those rows enter the fit and all of
    ``attacks`` checks the choice, instead of alternate halves of ``attacks``. ``statistic`` is what the rule reads
    per family (:data:`ROBUSTNESS_STATISTICS`; the table's ``aucs`` then hold that statistic)."""
    features = list(features)
    if method not in features:
        raise ValueError(f"a robust calibration needs the method's own score among its features; {method!r} is not "
                         f"in {features}")
    human = np.asarray(human, dtype=float)
    acceptable = human >= threshold
    fit_half, check_half = attacks.halves() if fit_attacks is None else (fit_attacks, attacks)
    unacceptable = fit_half.subset(fit_half.families != REFERENCE).columns
    method_aucs = check_half.family_statistics(check_half.columns[method], statistic)
    text = [name for name in features if name != method]
    table, fitted = [], []
    for quantile in CAP_QUANTILES:
        caps = _caps(columns, acceptable, features, method, quantile)
        for weight in UNACCEPTABLE_WEIGHTS:
            for shrink in SHRINKS:
                if shrink == 0.0 and (quantile, weight) != (None, 0.0):
                    continue  # the method alone: caps and attack rows change nothing
                calibration, out_of_fold = fit_calibration(
                    columns, human, instance_ids, features, threshold=threshold, seed=seed, caps=caps,
                    unacceptable={f: unacceptable[f] for f in features}, unacceptable_weight=weight,
                    shrink={name: shrink for name in text})
                stats = point_statistics(out_of_fold, human, instance_ids)
                aucs = check_half.family_statistics(calibration(check_half.columns), statistic)
                fitted.append((calibration, out_of_fold))
                table.append({"cap_quantile": quantile, "unacceptable_weight": weight, "shrink": shrink,
                              "spearman": stats["spearman"], "pairwise": stats["pairwise"],
                              "agreement": (stats["spearman"] + stats["pairwise"]) / 2, "aucs": aucs,
                              "shortfalls": robustness_shortfalls(aucs, method_aucs, ROBUST_FLOOR + SELECTION_MARGIN)})
    passing = [k for k, row in enumerate(table) if not row["shortfalls"]]
    best = max(passing, key=lambda k: (round(table[k]["agreement"], 6), table[k]["shrink"],
                                       -(table[k]["cap_quantile"] is not None), -table[k]["unacceptable_weight"]))
    calibration, out_of_fold = fitted[best]
    calibration.fitted_on["robust"] = {
        "chosen": {k: table[best][k] for k in ("cap_quantile", "unacceptable_weight", "shrink")},
        "floor": ROBUST_FLOOR, "slack": ROBUST_SLACK, "margin": SELECTION_MARGIN, "statistic": statistic,
        "n_candidates": len(table),
        "n_attack_rows": {"fit": int(len(fit_half.ids)), "check": int(len(check_half.ids))},
        "n_check_examples": int(len(set(check_half.ids.tolist())))}
    for k, row in enumerate(table):
        row["chosen"] = k == best
    return calibration, out_of_fold, table


def worst_family(report: Mapping[str, Any], metric: str) -> str:
    """``"0.812 (input_copy)"``: a metric's lowest AUC against a VARSuite family on the test split, from a human
    report's ``calibration`` section ("" where that metric was not scored on the suite)."""
    robustness = report.get("calibration", {}).get("robustness", {})
    aucs = robustness["method"] if metric == report.get("calibration", {}).get("method") else \
        robustness.get(metric, {}).get("aucs")
    if not aucs:
        return ""
    family = min(aucs, key=aucs.get)
    return f"{aucs[family]:.3f} ({family})"


def render_robustness(report: Mapping[str, Any]) -> list[str]:
    """Markdown lines: the chosen candidate and every calibrated score's AUC against each family on the test split
    beside the method's, ✗ where it fails the rule (empty when the report has no robustness section)."""
    section = report.get("calibration", {})
    if "robustness" not in section:
        return []
    robustness, chosen = section["robustness"], next(row for row in section["candidates"] if row["chosen"])
    names = [name for name in robustness if name != "method"]
    cap = "uncapped" if chosen["cap_quantile"] is None else f"capped at the {chosen['cap_quantile']:g} quantile of " \
        "the acceptable explanations"
    out = ["", "## Robustness of the calibrated score (VARSuite, the run's test split)", "",
           f"Chosen among {len(section['candidates'])} candidate fits on the select half and the validation split's "
           f"VARSuite: text features {cap}, attack rows weighted {chosen['unacceptable_weight']:g}, text coefficients "
           f"× {chosen['shrink']:g}. {ROBUSTNESS_STATISTIC_TITLES[section.get('statistic', 'auc')]}; ✗ = below {ROBUST_FLOOR} where "
           f"{section['method']} alone is not, or more than {ROBUST_SLACK} below {section['method']} alone "
           "(docs/human.md).", ""]
    if (check := section.get("check_examples", FEW_CHECK_EXAMPLES)) < FEW_CHECK_EXAMPLES:
        out += [f"**The choice was checked on {check} validation examples**, fewer than {FEW_CHECK_EXAMPLES}: an AUC "
                "there has a standard error near 0.03, and with 150 the chosen fit failed one family on the test split "
                "in two of three evaluator seeds (docs/human.md). Give the run a larger validation split "
                "(`--max-eval-examples`) and `--robustness-examples` 1,000 or more"
                + ("." if section.get("fit_split") == "train" else ", or take the fit's attack rows from the training "
                   "split (`--robustness-fit-split train`) so that every validation example checks it."), ""]
    rows = [[family, f"{value:.3f}", *(f"{robustness[n]['aucs'][family]:.3f}"
                                       + (" ✗" if family in robustness[n]["shortfalls"] else "") for n in names)]
            for family, value in robustness["method"].items()]
    out.append(markdown_table(["Family", f"{section['method']} alone", *names], rows))
    return out
