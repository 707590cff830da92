"""Would another robustness rule choose a better calibrated score? The robust calibration's choice
(:func:`larev_hf.meta.robust_calibration.robust_calibration`) under four rules: its statistic the library's AUC of the
gold rows against a family's (unpaired) or the *paired* win rate (the share of examples whose gold scores strictly
above its own attack, the statistic the trust targets are stated in), applied to every VARSuite family pooled or
*within each gold label* of the validation split. For each: the chosen fit, its held-half agreement with people
(Spearman, pairwise, select-1) and its test-split statistics against every family, overall and per label; and how
many candidates meet the trust target itself on the validation split (every statistic the rule reads at least 0.85,
``gold_leaky`` left out), with the best candidate's lowest one.

Reads what ``larev-hf human --calibrate`` left in a human directory whose attacks were scored on the train, validation
and test splits (a named build with ``--robustness-report-split test``):

    python benchmarks/calibration_per_label_rule.py --human-dir CACHE/esnli-<fingerprint>/human \\
        --json benchmarks/results/calibration_per_label_rule.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from larev_hf.io import read_jsonl, write_json
from larev_hf.meta import (
    AttackScores,
    instance_half,
    mean_separation,
    point_statistics,
    select_one,
)
from larev_hf.meta.robust_calibration import robust_calibration

FEATURES = ("larev", "explanation_lm", "copied_span", "grounding", "copy_excess")


class LabelledAttacks(AttackScores):
    """VARSuite rows that also know their gold label; ``per_label`` adds each family's statistic within each gold
    label (``family@label``, the gold rows of that label against the family's) to every check."""

    labels: np.ndarray
    per_label: bool = False

    @classmethod
    def read(cls, directory: Path, features: tuple[str, ...], per_label: bool) -> LabelledAttacks:
        rows = AttackScores.from_rows({f: [row for _, row in read_jsonl(directory / "scores" / f"{f}.jsonl")]
                                       for f in features})
        gold = {row["id"]: row["gold_label"] for _, row in read_jsonl(directory / "suite.jsonl")}
        out = cls(rows.columns, rows.families, rows.ids)
        out.labels, out.per_label = np.array([gold[i] for i in rows.ids]), per_label
        return out

    def subset(self, keep: np.ndarray) -> LabelledAttacks:
        rows = AttackScores.subset(self, keep)
        out = type(self)(rows.columns, rows.families, rows.ids)
        out.labels, out.per_label = self.labels[keep], self.per_label
        return out

    def family_statistics(self, scores: np.ndarray, statistic: str) -> dict[str, float]:
        out = super().family_statistics(scores, statistic)
        if self.per_label:
            for label in sorted(set(self.labels.tolist())):
                keep = self.labels == label
                within = AttackScores.subset(self, keep).family_statistics(scores[keep], statistic)
                out.update({f"{family}@{label}": value for family, value in within.items()})
        return out


def evaluate_rule(human_dir: Path, per_label: bool, paired: bool, features: tuple[str, ...] = FEATURES) -> dict:
    """The robust fit of ``features`` (the method's score first) chosen under one rule, read on the held half and the
    test split."""
    records = [row for _, row in read_jsonl(human_dir / "judged.jsonl")]
    columns = {f: np.array([row["score"] for _, row in read_jsonl(human_dir / "scores" / f"{f}.jsonl")])
               for f in features}
    human = np.array([r["numbers"]["acceptable"] for r in records])
    instances = [r["instance"] for r in records]
    halves = instance_half(instances, 0)
    select = np.array([halves[i] == "select" for i in instances])
    attacks = {split: LabelledAttacks.read(human_dir / "attacks" / split, features, per_label)
               for split in ("train", "validation", "test")}
    statistic = "paired" if paired else "auc"
    calibration, _, table = robust_calibration({f: columns[f][select] for f in features}, human[select],
                                               [i for i, s in zip(instances, select, strict=True) if s], features,
                                               "larev", attacks["validation"], fit_attacks=attacks["train"],
                                               statistic=statistic)
    held = ~select
    held_ids = [i for i, h in zip(instances, held, strict=True) if h]
    scores = calibration({f: columns[f][held] for f in features})
    stats = point_statistics(scores, human[held], held_ids)
    test = attacks["test"]
    test.per_label = True
    calibrated = calibration(test.columns)
    aucs, method = test.family_statistics(calibrated, statistic), test.family_statistics(test.columns["larev"], statistic)
    wins = test.family_statistics(calibrated, "paired")
    leak = test.paired_with_gold(calibrated, "gold_leaky")  # the leak family
    chosen = next(row for row in table if row["chosen"])
    # the trust target itself on the validation split: each candidate's lowest statistic over the families (and,
    # per label, the family-label cells), gold_leaky left out, against 0.85
    lowest = [min(v for k, v in row["aucs"].items() if not k.startswith("gold_leaky")) for row in table]
    return {"rule": f"{'paired win rate' if paired else 'AUC'}, {'per label' if per_label else 'pooled'}",
            "chosen": {k: chosen[k] for k in ("cap_quantile", "unacceptable_weight", "shrink")},
            "n_passing": sum(not row["shortfalls"] for row in table), "n_candidates": len(table),
            "validation_target_0.85": {"n_meeting": sum(value >= 0.85 for value in lowest),
                                       "highest_lowest_cell": max(lowest),
                                       "chosen_lowest_cell": lowest[table.index(chosen)]},
            "held": {"spearman": stats["spearman"], "pairwise": stats["pairwise"],
                     "select_1": select_one(scores, human[held], held_ids)},
            "test_statistic": aucs, "test_statistic_larev_alone": method,
            "test_cells_below_0.85": sorted(k for k, v in aucs.items() if v < 0.85 and not k.startswith("gold_leaky")),
            "test_weaker_than_larev_alone": sorted(k for k, v in aucs.items() if v < method[k] - 0.02),
            "test_paired_win_rates": wins,
            # mean score(gold + "The answer is <label>.") − score(gold): what appending the label gains
            "test_leak_gain": -mean_separation(*leak) if len(leak[0]) else float("nan"),
            "test_win_rate_cells_below_0.85": {k: v for k, v in sorted(wins.items())
                                               if v < 0.85 and not k.startswith("gold_leaky")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", type=Path, required=True)
    parser.add_argument("--features", default=",".join(FEATURES), help="the calibration's features, comma-joined "
                        "(the method's score first; each scored in the directory)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    features = tuple(args.features.split(","))
    results = [evaluate_rule(args.human_dir, per_label, paired, features)
               for paired in (False, True) for per_label in (False, True)]
    for r in results:
        print(f"{r['rule']:>26}: chosen {r['chosen']} ({r['n_passing']}/{r['n_candidates']} pass); held ρ "
              f"{r['held']['spearman']:.3f} pairwise {r['held']['pairwise']:.3f} select-1 {r['held']['select_1']:.3f}; "
              f"validation: {r['validation_target_0.85']['n_meeting']} with every cell ≥ 0.85 (best lowest cell "
              f"{r['validation_target_0.85']['highest_lowest_cell']:.3f}); "
              f"test cells < 0.85: {len(r['test_cells_below_0.85'])}; weaker than LAREV alone: "
              f"{r['test_weaker_than_larev_alone']}; paired win rates < 0.85: "
              f"{ {k: round(v, 3) for k, v in r['test_win_rate_cells_below_0.85'].items()} }")
    if args.json:
        # the directory as HUMAN_DIR: the machine's own paths stay out of results
        write_json(args.json, {"command": "python benchmarks/calibration_per_label_rule.py --human-dir HUMAN_DIR"
                                          + (f" --features {args.features}" if features != FEATURES else ""),
                                "results": results})


if __name__ == "__main__":
    main()
