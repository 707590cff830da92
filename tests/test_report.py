"""report.md explains itself: the verdict follows the intervals; stage times come in pipeline order with a total."""

from __future__ import annotations

from larev_hf.report import accuracy_warnings, majority_class, render_markdown, verdict


def entry(absolute: dict, ci95: dict) -> dict:
    return {"absolute": absolute, "separations": {k: sum(v) / 2 for k, v in ci95.items()}, "ci95": ci95,
            "win_rate": {}}


def test_the_verdict_follows_the_intervals() -> None:
    report = {"dataset": "d", "split": "test", "n_examples": 3, "methods": {
        "larev": entry({"gold": -0.4, "vacuous": -2.0}, {"gold_minus_leaky": [1.5, 1.7], "gold_minus_vacuous": [-0.1, 0.2],
                                                         "gold_minus_gold_leaky": [-0.01, 0.01], "sum": [1.4, 1.9]}),
        "rev": entry({"gold": -0.02, "leaky": -0.001}, {"gold_minus_leaky": [-0.04, -0.004],
                                                        "gold_minus_gold_leaky": [-0.03, -0.01], "sum": [-0.07, -0.01]}),
    }}
    larev, rev = verdict(report)
    assert larev == ("**LAREV** separates Gold from Leaky; does not separate Gold from Vacuous (the interval includes 0 or lies within ±0.01 nats); "
                     "scores Gold-Leaky like Gold (right: it holds all of gold's content).")
    assert rev.startswith("**REV** scores Leaky above Gold; rewards the appended label (Gold-Leaky above Gold).")
    assert "near 0 nats" in rev and "near 0 nats" not in larev  # REV's scores are all within 0.05 nats of 0
    markdown = render_markdown({**report, "timings": {"data": 1.0, "phi_base": 2.5, "score-rev": 0.5}})
    assert markdown.index("## Verdict") < markdown.index("## Absolute scores")
    assert "| data | 1.0 |\n| phi_base | 2.5 |\n| score-rev | 0.5 |\n| **total** | 4.0 |" in markdown


def test_an_evaluator_at_the_majority_class_is_called_noise() -> None:
    labels = ["no"] * 58 + ["yes"] * 42
    majority = majority_class(labels)
    assert majority == {"label": "no", "accuracy": 0.58}
    report = {"dataset": "strategyqa", "split": "test", "n_examples": 100, "methods": {}, "majority_class": majority,
              "accuracy": {"phi_base": {"baseline": 0.57}, "phi_la": {"gold": 0.60, "vacuous": 0.58},
                           "phi": {"gold": 0.64}}}
    warnings = accuracy_warnings(report)
    assert len(warnings) == 1 and warnings[0].startswith("`phi_la` is right on 60.0% of test examples")
    assert "always answering 'no' is right on 58.0%" in warnings[0]
    markdown = render_markdown(report)
    assert markdown.index("## Warning: evaluators that do not read the rationale") < markdown.index("## Verdict")
    assert "Always answering the majority class ('no'): 58.00%." in markdown
    # a learned evaluator: no warning
    assert "## Warning" not in render_markdown({**report, "accuracy": {"phi_la": {"gold": 0.9}}})
    # an evaluator that reads the answer from the vacuous baseline: right as often without the rationale
    reads_b = accuracy_warnings({**report, "accuracy": {"phi_la": {"gold": 0.934, "vacuous": 0.969},
                                                        "rora_phi": {"gold": 0.90, "vacuous": 0.60}}})
    assert reads_b == ["`phi_la` is right on 96.9% of test examples with the vacuous baseline alone and 93.4% with "
                       "the gold rationales: it reads the answer from the baseline or the input, not from the "
                       "rationale, so its per-example scores say little about the rationale"]
