"""Why the robust calibration gives agreement back: every candidate's held-half agreement and test-split
robustness, the chosen fit per gold label and per source, and the text features tried and dropped.

Reads what ``larev-hf human --calibrate FEATURES`` left in ``--human-dir`` (judged.jsonl, scores/, attacks/{validation,
test}/ and human_report.json) and prints, for analysis only (the fit is chosen on the select half and the validation
split; this reads the held half and the test split):

- every candidate of the report's table refitted: its check-half verdict, held-half Spearman / pairwise, and the
  families it fails on the test split;
- the chosen calibration's and the method's AUC against each family per gold label, and both scores' held-half
  Spearman per source of the explanation;
- the same choice with one more text feature: ``novelty`` (share of the rationale's content words not in x),
  ``copied_span`` (the longest run of x's tokens in r over r's length), ``coverage`` (share of x's content words in r),
  and, with ``--nli-model``, ``entailed`` (the NLI judge's p(x ⊨ r)), on ``--nli-examples`` examples of each split.

    python benchmarks/calibration_frontier.py --human-dir runs/g/esnli-full/human/robust-larev-grounding \\
        --nli-model runs/nli-minilm-esnli --json benchmarks/results/calibration_frontier_t5tiny.json

Internals: ``larev_hf.meta.robust_calibration``'s ``_caps``: it re-fits the robust calibration's candidates, which
needs the same feature caps the library's fit chose.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from larev_hf.io import read_json, read_jsonl, write_json
from larev_hf.meta import (
    REFERENCE,
    AttackScores,
    instance_half,
    point_statistics,
    robustness_shortfalls,
)
from larev_hf.meta.robust_calibration import _caps, robust_calibration
from larev_hf.methods import content_tokens, input_text, longest_copied_run
from larev_hf.scores import fit_calibration


def novelty(record: dict) -> float:
    words, seen = content_tokens(record["rationale"]), set(content_tokens(input_text(record)))
    return sum(w not in seen for w in words) / len(words) if words else 0.0


def coverage(record: dict) -> float:
    seen, words = set(content_tokens(input_text(record))), set(content_tokens(record["rationale"]))
    return len(seen & words) / max(len(seen), 1)


def copied_span(record: dict) -> float:
    return longest_copied_run(record["rationale"], input_text(record))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--human-dir", required=True)
    parser.add_argument("--nli-model", default=None, help="a judge of `larev-hf nli-train` (adds the entailed feature)")
    parser.add_argument("--nli-examples", type=int, default=1000, help="examples of each split the NLI feature scores")
    parser.add_argument("--json", required=True)
    args = parser.parse_args(argv)
    directory = Path(args.human_dir)
    report = read_json(directory / "human_report.json")
    section, human_column = report["calibration"], next(iter(report["human"]))
    features, method = section["features"], section["method"]
    seed = read_json(Path(report["run_dir"]) / "run_config.json")["seed"]
    records = [row for _, row in read_jsonl(directory / "judged.jsonl")]
    columns = {}
    for name in features:
        by_id = {row["id"]: row["score"] for _, row in read_jsonl(directory / "scores" / f"{name}.jsonl")}
        columns[name] = np.array([by_id[r["id"]] for r in records])
    human = np.array([r["numbers"][human_column] for r in records])
    instances = np.array([r["instance"] for r in records])
    halves = instance_half(instances.tolist(), report["settings"]["split_seed"])
    select = np.array([halves[i] == "select" for i in instances])
    held = ~select

    def suite(split: str, limit: int | None = None) -> tuple[list[dict], AttackScores]:
        rows = [row for _, row in read_jsonl(directory / "attacks" / split / "suite.jsonl")]
        if limit is not None:
            keep = set(sorted({row["id"] for row in rows})[:limit])
            rows = [row for row in rows if row["id"] in keep]
        keys = {(row["id"], row["family"]) for row in rows}
        scores = {name: [row for _, row in read_jsonl(directory / "attacks" / split / "scores" / f"{name}.jsonl")
                         if (row["id"], row["family"]) in keys] for name in features}
        return rows, AttackScores.from_rows(scores)

    (_, validation), (test_rows, test) = suite("validation"), suite("test")
    method_aucs = test.family_aucs(test.columns[method])
    fit_half, _ = validation.halves()
    unacceptable = fit_half.subset(fit_half.families != REFERENCE).columns
    sel = {name: values[select] for name, values in columns.items()}
    out: dict = {"human_dir": str(directory), "features": features, "method": method, "candidates": []}
    print(f"{'caps':>5s} {'w':>3s} {'shrink':>6s} check  held ρ  held pw  fails on test")
    for row in section["candidates"]:
        calibration, _ = fit_calibration(
            sel, human[select], instances[select].tolist(), features,
            caps=_caps(sel, human[select] >= 0.5, features, method, row["cap_quantile"]),
            unacceptable={f: unacceptable[f] for f in features}, unacceptable_weight=row["unacceptable_weight"],
            shrink={f: row["shrink"] for f in features if f != method}, seed=seed)
        stats = point_statistics(calibration({f: columns[f][held] for f in features}), human[held],
                                 instances[held].tolist())
        fails = sorted(robustness_shortfalls(test.family_aucs(calibration(test.columns)), method_aucs))
        entry = {k: row[k] for k in ("cap_quantile", "unacceptable_weight", "shrink", "chosen")}
        entry.update(check_passes=not row["shortfalls"], held_spearman=stats["spearman"],
                     held_pairwise=stats["pairwise"], test_fails=fails)
        out["candidates"].append(entry)
        print(f"{row['cap_quantile']!s:>5s} {row['unacceptable_weight']:3.0f} {row['shrink']:6.2f} "
              f"{'pass' if entry['check_passes'] else 'fail':5s} {stats['spearman']:7.3f} {stats['pairwise']:8.3f}  "
              f"{fails}{'  (chosen)' if row['chosen'] else ''}", flush=True)

    # the chosen fit, per gold label (test split) and per source (held half)
    calibration, _ = robust_calibration(sel, human[select], instances[select].tolist(), features, method, validation,
                                        seed=seed)[:2]
    labels = {row["id"]: row["gold_label"] for row in test_rows}
    scored = calibration(test.columns)
    out["by_label"] = {}
    for label in sorted(set(labels.values())):
        rows = np.array([labels[i] == label for i in test.ids])
        part = test.subset(rows)
        out["by_label"][label] = {
            "method": part.family_aucs(part.columns[method]), "calibrated": part.family_aucs(scored[rows])}
        worst = min(out["by_label"][label]["calibrated"], key=out["by_label"][label]["calibrated"].get)
        print(f"label {label:14s} worst family {worst} calibrated {out['by_label'][label]['calibrated'][worst]:.3f} "
              f"(method {out['by_label'][label]['method'][worst]:.3f}); input copy "
              f"{out['by_label'][label]['calibrated'].get('input_copy', float('nan')):.3f}", flush=True)
    sources = np.array([r.get("source", "all") for r in records])
    calibrated_held = calibration({f: columns[f] for f in features})
    out["by_source"] = {}
    for source in sorted(set(sources[held])):
        rows = held & (sources == source)
        out["by_source"][source] = {name: point_statistics(values[rows], human[rows], instances[rows].tolist())
                                    for name, values in (("method", columns[method]),
                                                         ("calibrated", calibrated_held))}
        print(f"source {source:14s} Spearman method {out['by_source'][source]['method']['spearman']:.3f}, "
              f"calibrated {out['by_source'][source]['calibrated']['spearman']:.3f}", flush=True)

    # one more text feature
    extra = {"novelty": novelty, "copied_span": copied_span, "coverage": coverage}
    judge = None
    if args.nli_model:
        from larev_hf.explain import NLIJudge

        judge = NLIJudge.from_pretrained(args.nli_model)
    out["extra_features"] = {}
    for name in [n for n in [*extra, *(["entailed"] if judge else [])] if n not in features]:
        limit = args.nli_examples if name == "entailed" else None
        (v_rows, v_scores), (t_rows, t_scores) = suite("validation", limit), suite("test", limit)

        def feature(rows: list[dict], name: str = name) -> np.ndarray:
            if name == "entailed":
                return judge.entail([input_text(r) for r in rows], [r["rationale"] or "." for r in rows])
            return np.array([extra[name](r) for r in rows])

        for rows, scores in ((v_rows, v_scores), (t_rows, t_scores)):
            value = dict(zip(((r["id"], r["family"]) for r in rows), feature(rows), strict=True))
            scores.columns[name] = np.array([value[k] for k in zip(scores.ids.tolist(), scores.families.tolist(),
                                                                   strict=True)])
        judged = feature(records)
        alone = point_statistics(judged[select], human[select], instances[select].tolist())
        names = [*features, name]
        fit_columns = {**sel, name: judged[select]}
        chosen, _, _ = robust_calibration(fit_columns, human[select], instances[select].tolist(), names, method,
                                          v_scores, seed=seed)
        stats = point_statistics(chosen({**{f: columns[f][held] for f in features}, name: judged[held]}), human[held],
                                 instances[held].tolist())
        t_method = t_scores.family_aucs(t_scores.columns[method])
        aucs = t_scores.family_aucs(chosen(t_scores.columns))
        out["extra_features"][name] = {
            "select_spearman_alone": alone["spearman"], "as_score_aucs": t_scores.family_aucs(t_scores.columns[name]),
            "chosen": chosen.fitted_on["robust"]["chosen"], "coef": chosen.coef, "held_spearman": stats["spearman"],
            "held_pairwise": stats["pairwise"], "test_fails": sorted(robustness_shortfalls(aucs, t_method))}
        entry = out["extra_features"][name]
        print(f"+{name:12s} alone ρ {alone['spearman']:+.3f}; as a score, AUC vs input copy "
              f"{entry['as_score_aucs'].get('input_copy', float('nan')):.3f}; robust fit {entry['chosen']} "
              f"coef {np.round(chosen.coef, 2).tolist()}: held ρ {stats['spearman']:.3f} pw {stats['pairwise']:.3f}, "
              f"fails {entry['test_fails']}", flush=True)
    out["command"] = "python benchmarks/calibration_frontier.py " + " ".join(argv if argv is not None else sys.argv[1:])
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
