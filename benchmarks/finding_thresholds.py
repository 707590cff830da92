"""Where each finding fires: thresholds chosen on one half of shared data, detection reported on the other.

The findings (:mod:`larev_hf.hub.findings`) are scored with an evaluator bundle on two kinds of shared rows:

- VARSuite (every family) of the recipe's e-SNLI test split: each family should be named by its finding (an input
  copy by *copies the input*, a label statement by *states the label*, ...) and the gold explanation by none;
- the SNLI acceptability judgments (``human/snli_accept_train.jsonl``): the share of explanations that most
  annotators accept, with and without each finding (a finding people do not mind is said to be so).

Rows are split into halves by instance (:func:`larev_hf.meta.judgments.instance_half`). On the ``select`` half each
threshold is set to the most permissive value that fires on at most a budget of the gold explanations, the largest
budget (from ``--gold-budget`` down) whose thresholds leave ``--gold-clean`` of the select half's gold without any
finding (so that the held half's gold keeps at least 0.90); ``restate_share`` is instead the largest floor that keeps
*copies the input* naming :data:`COPIES_KEPT` of the select half's copies. The ``held``
half reports the detection rate per family, the gold's no-finding rate and the human shares with 95% bootstrap
intervals (``scipy.stats.bootstrap``). It prints a table and writes the JSON that docs/findings.md cites.

    python benchmarks/finding_thresholds.py --evaluator esnli --data-dir ../shared/data --max-rows 300 \\
        --json benchmarks/results/finding_thresholds_esnli.json
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import bootstrap

import larev_hf.meta.surface_families  # noqa: F401 - registers the surface families and padding
from larev_hf import evaluators
from larev_hf.data import load_examples
from larev_hf.hub import findings as F
from larev_hf.io import write_json
from larev_hf.meta.judgments import instance_half, load_judgments
from larev_hf.meta.suite import build_suite

#: family → the findings that name it (the acceptance's table); "any" = at least one finding
EXPECTED: dict[str, tuple[str, ...]] = {
    "input_copy": ("copies_input",), "hypothesis_copy": ("copies_input",),
    "label_only": ("states_label",), "leak": ("states_label",), "gold_leaky": ("states_label",),
    "off_topic": ("off_topic",), "padding": ("off_topic",), "shuffled": ("not_explanation",),
    "drift": ("contradicts",), "label_swap": ("contradicts",),
    "vacuous": ("any",), "circular": ("any",), "pseudo_specific": ("any",),
}
#: threshold field → (the evidence it reads, fires when the value is ≥ ("high") or ≤ ("low") the threshold)
CHOSEN = {"copy_share": ("copy_share", "high"), "grounding": ("grounding", "low"),
          "sentence_grounding": ("sentence_grounding", "low"), "explanation_lm": ("explanation_lm", "low"),
          "word_order": ("word_order", "low"), "label_margin": ("label_margin", "low"),
          "negation_gain": ("negation_gain", "high"), "judge_log_prob": ("judge_log_prob", "low")}
#: the inputs computed by the scoring itself (BundleScores), not the calibration's features
SCORED = ("sentence_grounding", "word_order", "negation_gain", "judge_log_prob")


#: per-finding shares of the gold a threshold may fire on, tried from the largest down
BUDGETS = (0.02, 0.015, 0.01, 0.0075, 0.005, 0.0025)
#: the shortest copied runs tried (the one that names most copies on the select half within the gold budget is kept)
COPY_RUNS = (2, 3, 4, 5)
#: the share of the select half's copies that *copies the input* must keep naming: ``restate_share`` is the largest
#: floor that does (an explanation restating the whole claim is a copy only where it copies this much of itself)
COPIES_KEPT = 0.98


def score(bundle: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every input a finding reads, for ``rows`` (schema records), scored once with ``bundle``."""
    records = bundle.scoring.records([r["rationale"] for r in rows], [r["label"] for r in rows],
                                     [{k: r[k] for k in ("premise", "hypothesis")} for r in rows])
    result = bundle.scoring.score(records, check_labels=True, batch_size=64)
    sentences = [F.least_grounded_sentence(r["rationale"], r, F.FindingThresholds().sentence_words) for r in records]
    return {"records": records, "features": result.features or {}, "label_margin": result.label_margin,
            "read_label": result.read_label, "tokens": result.input_tokens, "max_tokens": result.max_input_tokens,
            "negation_gain": result.negation_gain, "negation_text": result.negation_text,
            "word_order": result.word_order, "judge_log_prob": result.judge_log_prob, "judge_read": result.judge_read,
            "sentence_grounding": np.array([np.nan if s is None else s[1] for s in sentences]),
            "copy_shares": {run: np.array([F.copied_runs(r["rationale"], r, run)["share"] for r in records])
                            for run in COPY_RUNS},
            "restates": np.array([bool(F.copied_runs(r["rationale"], r, 2).get("restates")) for r in records])}


def findings_of(scored: Mapping[str, Any], thresholds: F.FindingThresholds, label_set: Sequence[str]) -> list[set]:
    rows = F.find(scored["records"], thresholds, label_set=label_set, features=scored["features"],
                  label_margin=scored["label_margin"], read_label=scored["read_label"],
                  negation_gain=scored["negation_gain"], negation_text=scored["negation_text"],
                  word_order=scored["word_order"], tokens=scored["tokens"], max_tokens=scored["max_tokens"],
                  judge_log_prob=scored["judge_log_prob"], judge_read=scored["judge_read"])
    return [{f.name for f in row} for row in rows]


def value(scored: Mapping[str, Any], name: str, copy_run: int = 4) -> np.ndarray:
    if name == "copy_share":
        return scored["copy_shares"][copy_run]
    if name == "label_margin":
        return -np.asarray(scored["label_margin"])  # fires when the margin is below −threshold
    if name in SCORED:
        return np.asarray(scored[name], dtype=float)
    return np.asarray(scored["features"][name])


def choose(scored: Mapping[str, Any], gold: np.ndarray, copies: np.ndarray, budget: float) -> dict[str, float]:
    """Per threshold, the most permissive value firing on at most ``budget`` of the gold rows; the copied run's
    length, the one whose threshold so chosen names most of the ``copies`` rows."""
    best_run = max(COPY_RUNS, key=lambda run: np.mean(
        value(scored, "copy_share", run)[copies] >= np.quantile(value(scored, "copy_share", run)[gold], 1 - budget)))
    chosen: dict[str, float] = {"copy_run": best_run}
    for field, (name, side) in CHOSEN.items():
        if name in SCORED and scored[name] is None or name in ("grounding", "explanation_lm") \
                and name not in scored["features"]:
            continue
        values = value(scored, name, best_run)[gold]
        # a row the rule cannot read (NaN: one sentence, too few words, no negation) never fires; it counts among
        # the gold rows the budget is a share of
        finite = values[np.isfinite(values)]
        values = np.where(np.isnan(values), np.inf if side == "low" else -np.inf, values)
        if name in SCORED:  # a gold value, never an interpolation into the rows that cannot fire
            at = np.quantile(values, budget if side == "low" else 1 - budget, method="lower" if side == "low"
                             else "higher")
            at = at if np.isfinite(at) else (finite.max() if side == "low" else finite.min()) if len(finite) else 0.0
            chosen[field] = float(at - 1e-9 if side == "low" else at + 1e-9)
        elif field == "label_margin":  # fires when −margin > t, i.e. t = the (1 − budget) quantile of −margin
            chosen[field] = float(max(0.0, np.quantile(values, 1 - budget)))
        elif side == "high":
            chosen[field] = float(np.quantile(values, 1 - budget) + 1e-9)
        else:
            chosen[field] = float(np.quantile(values, budget) - 1e-9)
    shares = value(scored, "copy_share", best_run)[copies]
    named_anyway = shares >= chosen["copy_share"]
    chosen["restate_share"] = float(max(floor for floor in np.arange(0.0, 1.0, 0.01).round(2) if np.mean(
        named_anyway | (scored["restates"][copies] & (shares >= floor))) >= COPIES_KEPT))
    return chosen


def share_interval(flags: np.ndarray) -> dict[str, Any]:
    """The mean of 0/1 ``flags`` with a 95% bootstrap (percentile) interval."""
    if len(flags) < 2:
        return {"n": int(len(flags)), "share": float(np.mean(flags)) if len(flags) else None, "ci95": None}
    ci = bootstrap((flags.astype(float),), np.mean, n_resamples=2000, method="percentile",
                   random_state=0).confidence_interval
    return {"n": int(len(flags)), "share": round(float(np.mean(flags)), 3),
            "ci95": [round(float(ci.low), 3), round(float(ci.high), 3)]}


def detection(found: list[set], families: np.ndarray, held: np.ndarray) -> dict[str, Any]:
    table = {}
    for family, expected in EXPECTED.items():
        rows = np.where((families == family) & held)[0]
        named = np.array([bool(found[i]) if expected == ("any",) else bool(found[i] & set(expected)) for i in rows])
        table[family] = {"expected": list(expected), **share_interval(named)}
    gold = np.where((families == "gold") & held)[0]
    table["gold (no finding)"] = {"expected": [], **share_interval(np.array([not found[i] for i in gold]))}
    table["gold (none but copies_input)"] = {"expected": [], **share_interval(np.array(
        [not found[i] - {"copies_input"} for i in gold]))}
    return table


def select(scored: Mapping[str, Any], families: np.ndarray, held: np.ndarray, label_set: Sequence[str],
           gold_budget: float, gold_clean: float) -> tuple[float, dict[str, float], F.FindingThresholds, float]:
    """The thresholds chosen on the select half (``~held``): ``(budget, chosen, thresholds, clean)``, for the largest
    per-finding gold budget (from ``gold_budget`` down) whose thresholds leave ``gold_clean`` of the select half's gold
    without any finding (``clean``: the share they leave; the smallest budget's when none does)."""
    gold = (families == "gold") & ~held
    copies = np.isin(families, ["input_copy", "hypothesis_copy"]) & ~held
    for budget in sorted({gold_budget, *BUDGETS}, reverse=True):
        chosen = choose(scored, gold, copies, budget)
        thresholds = dataclasses.replace(F.FindingThresholds(), **chosen)
        clean = float(np.mean([not found for found, g in zip(findings_of(scored, thresholds, label_set), gold,
                                                             strict=True) if g]))
        if clean >= gold_clean:
            break
    return budget, chosen, thresholds, clean


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evaluator", default="esnli")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--max-rows", type=int, default=300, help="e-SNLI test rows whose VARSuite is scored")
    parser.add_argument("--max-judged", type=int, default=None, help="judged explanations scored (default: all)")
    parser.add_argument("--gold-budget", type=float, default=0.02, help="the largest per-finding budget tried")
    parser.add_argument("--gold-clean", type=float, default=0.92,
                        help="the select half's gold rows without a finding that the chosen budget must leave")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    start = time.perf_counter()
    bundle = evaluators.load(args.evaluator, data_dir=args.data_dir, progress=True)
    label_set = bundle.config.label_set
    test = [dict(r) for r in load_examples("esnli", args.data_dir / "esnli", "test", max_examples=args.max_rows)]
    suite = build_suite(test, families=["gold", *EXPECTED], seed=0)
    rows = [{**row, "label": row.get("label_used") or row["label"]} for row in suite]
    families = np.array([row["family"] for row in rows])
    halves = instance_half([str(row["id"]) for row in rows])
    held = np.array([halves[str(row["id"])] == "held" for row in rows])
    scored = score(bundle, rows)
    budget, chosen, thresholds, clean = select(scored, families, held, label_set, args.gold_budget, args.gold_clean)
    args.gold_budget = budget
    defaults = F.FindingThresholds()
    result: dict[str, Any] = {"evaluator": args.evaluator, "hashcode": bundle.hashcode, "test_rows": len(test),
                              "suite_rows": len(rows), "gold_budget": args.gold_budget,
                              "gold_clean_select": float(clean), "chosen": chosen,
                              "detection_select": detection(findings_of(scored, thresholds, label_set), families,
                                                            ~held),
                              "detection_held": detection(findings_of(scored, thresholds, label_set), families, held),
                              "detection_held_library_defaults": detection(findings_of(scored, defaults, label_set),
                                                                           families, held)}
    judged = load_judgments(args.data_dir / "human" / "snli_accept_train.jsonl", "nli", ["acceptable"])
    judged = judged[:args.max_judged] if args.max_judged else judged
    judged_half = instance_half([r["instance"] for r in judged])
    judged = [r for r in judged if judged_half[r["instance"]] == "held"]
    human = score(bundle, judged)
    for name, found in (("chosen", findings_of(human, thresholds, label_set)),
                        ("library_defaults", findings_of(human, defaults, label_set))):
        majority = np.array([r["numbers"]["acceptable"] >= 0.5 for r in judged])
        labels = np.array([r["label"] for r in judged])
        shares = {}
        for finding in F.FINDINGS:
            has = np.array([finding in f for f in found])
            if not has.any():
                continue
            shares[finding] = {"with": share_interval(majority[has]), "without": share_interval(majority[~has]),
                               "by_label": {label: {"with": share_interval(majority[has & (labels == label)]),
                                                    "without": share_interval(majority[~has & (labels == label)])}
                                            for label in label_set}}
        none = np.array([not f for f in found])
        shares["no finding"] = {"with": share_interval(majority[none]), "without": share_interval(majority[~none])}
        result[f"human_held_{name}"] = {"n": len(judged), "acceptable_by_majority": shares}
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(f"chosen on the select half (gold budget {args.gold_budget}): {chosen}")
    print(f"{'family':<30}{'named by':<18}{'select':>8}{'held':>8}  held 95% CI")
    for family, entry in result["detection_held"].items():
        print(f"{family:<30}{'/'.join(entry['expected']) or '-':<18}{result['detection_select'][family]['share']:>8.3f}"
              f"{entry['share']:>8.3f}  {entry['ci95']}")
    print("acceptable by majority (held half of the judgments): with / without each finding")
    for finding, entry in result["human_held_chosen"]["acceptable_by_majority"].items():
        print(f"  {finding:<18} {entry['with']['share']} {entry['with']['ci95']} (n={entry['with']['n']}) / "
              f"{entry['without']['share']} {entry['without']['ci95']}")
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
