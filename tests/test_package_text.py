"""The package's text says what a thing does; how well it does it is measured in docs/, which the text links.

A "measured figure" here is operational: in a comment or a string (docstrings, constants, messages) of
``larev_hf/**/*.py``, once links to a doc section (``docs/hub.md, "Title"``) are set aside, any of

- a duration (``12 s``, ``1,344 s``, ``22 minutes``) or a machine (``2 CPU cores``, ``2-core``),
- a percentage other than the 95% of an interval and the 80% of the export trust check,
- a score in nats or log-odds, a signed figure (``+0.69``), a speed-up (``2.8×``), an interval (``[0.33, 0.40]``),
- a statistic with its value (``AUC 0.66``, ``Spearman 0.19``, ``win rate 0.87``).

:data:`DEFINITIONS` lists what matches and is a definition, not a measurement (a criterion, a setting's value).
Recipes' measured build times are data (``larev_hf/evaluators/recipes.json``), outside this check by design.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "larev_hf"
#: A link to a doc, with the title of its section: what a measurement note should be.
DOC_LINK = re.compile(r"docs/[\w/-]+\.md(?:#[\w-]+)?(?:,?\s*(?:\"[^\"]*\"|'[^']*'))?")
FIGURES = {
    "a machine": re.compile(r"\b\d+[- ](?:CPU[- ])?cores?\b", re.I),
    "a duration": re.compile(r"(?<![\w.:,])\d[\d,]*(?:\.\d+)?\s?(?:s|ms|min|minutes|seconds|hours)\b"),
    "a percentage": re.compile(r"(?<![\w.:])(?!95\s?%|80\s?%)\d+(?:\.\d+)?\s?%"),
    "nats": re.compile(r"[-+−]?\d*\.\d+\s?(?:nats|log-odds)"),
    "a signed figure": re.compile(r"(?<![\w.:])[+−]\d*\.\d+"),
    "a speed-up": re.compile(r"\d(?:\.\d+)?\s?×"),
    "an interval": re.compile(r"\[[-+−]?\d*\.\d+, [-+−]?\d*\.\d+\]"),
    "a statistic": re.compile(r"\b(?:AUC|ρ|Spearman|pairwise|select-1|accuracy|win rates?|Kendall)\s(?:of\s)?"
                              r"[-+−]?\d*\.\d+"),
}
#: ``(file, matched text)``: figures that define rather than report.
DEFINITIONS = {
    ("frame/run.py", "100%"), ("frame/run.py", "0%"),  # FRAME's axiom-3 settings: all and none of the data
    ("frame/variants.py", "100%"), ("frame/variants.py", "0%"),
    ("meta/stats.py", "win rate of 0.5"),  # a tie's win rate, by definition
    ("varif/lcig.py", "10%"), ("varif/settings.py", "10%"),  # the VARIF proposal's masked share (§3.2)
    ("varif/report.py", "0.05 nats"),  # hypothesis H5's criterion, docs/varif.md
}


def figures(path: Path) -> list[tuple[int, str, str]]:
    """``(line, kind, text)`` of every measured figure in the comments and strings of ``path``."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        for offset, line in enumerate(DOC_LINK.sub("<doc>", token.string).splitlines()):
            found += [(token.start[0] + offset, kind, match.group(0))
                      for kind, pattern in FIGURES.items() for match in pattern.finditer(line)]
    return found


def test_no_package_docstring_comment_or_constant_carries_a_measured_figure() -> None:
    found = [f"larev_hf/{path.relative_to(PACKAGE).as_posix()}:{line}: {kind} {text!r}"
             for path in sorted(PACKAGE.rglob("*.py")) for line, kind, text in figures(path)
             if (path.relative_to(PACKAGE).as_posix(), text) not in DEFINITIONS]
    assert found == [], "measured figures belong in docs/ (link the section instead):\n" + "\n".join(found)


def test_the_check_finds_the_figures_it_defines(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('#: built in 467 s on 2 CPU cores, 2.8× faster\n'
                      'ADVICE = "2,000 rows reached 87% and AUC 0.66; gold +0.69 [0.332, 0.400], within 0.01 nats"\n'
                      '"""95% intervals; docs/hub.md, "What a build costs on 2 cores" measures it."""\n'
                      'LINE = f"{value:+.3f} {name:14s} {share:.0%}"\n', encoding="utf-8")
    kinds = [kind for _, kind, _ in figures(sample)]
    assert sorted(set(kinds)) == sorted(FIGURES) and all(line < 3 for line, _, _ in figures(sample))
    assert sum(kind == "a percentage" for kind in kinds) == 1  # 87%, not the 95% of an interval
    unused = {entry for entry in DEFINITIONS if entry[1] not in {t for _, _, t in figures(PACKAGE / entry[0])}}
    assert unused == set(), f"allowed figures no longer in the package: {sorted(unused)}"
