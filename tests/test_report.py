"""report.md explains itself: the verdict follows the intervals; stage times come in pipeline order with a total."""

from __future__ import annotations

from larev_hf.report import render_markdown, verdict


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
