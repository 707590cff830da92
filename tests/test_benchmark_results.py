"""``benchmarks/results/`` keeps only the summaries behind the figures the docs quote now: each file is cited by the
docs, each citation exists.

A file of ``benchmarks/results/`` is cited when the docs (README.md, docs/**/*.md) name it by its path under
``benchmarks/results/`` -- ``{a,b}`` alternatives, ``*`` and ``<placeholder>`` wildcards allowed -- or by its bare file
name (``cose_3ep_answer_in_rationale.json`` in a sentence that cites its sibling by path). A benchmark script's
default output path, a test or the CHANGELOG does not keep a file: the CHANGELOG records what was measured when, and
may name a result removed since (git keeps it).

A path under ``benchmarks/results/`` in the docs, or a backticked pattern in the first column of the table of a
README.md inside ``benchmarks/results/`` (its folder's index, relative to that folder), must name at least one file
that exists (the scripts' default output paths may name files a run has not written yet). A report of
``larev-hf run``, ``meta`` or ``human`` kept here holds its score sections under a ``what`` / ``command`` header, not
the run's settings, stage environments or run directory.
"""

from __future__ import annotations

import fnmatch
import json
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOC_GLOBS = ("README.md", "docs/**/*.md")
CITED_PATH = re.compile(r"benchmarks/results/([\w.*{},<>/-]*)")
TABLE_ROW = re.compile(r"^\|([^|]*)\|", re.MULTILINE)
BACKTICKED = re.compile(r"`([^`]+)`")
# the top-level keys that mark a report of `larev-hf run`, `larev-hf meta` and `larev-hf human`
REPORT_SHAPES = ({"methods", "accuracy", "split"}, {"families", "expected_order"}, {"human", "metrics"})
RUN_ONLY_KEYS = {"settings", "stage_environments", "run_dir"}


def expand(pattern: str) -> list[str]:
    """Spell out ``{a,b}`` alternatives (nested or several) and turn ``<placeholder>`` into ``*``."""
    pattern = re.sub(r"<[^<>]*>", "*", pattern)
    group = re.search(r"\{([^{}]*)\}", pattern)
    if group is None:
        return [pattern]
    return [spelled for alternative in group.group(1).split(",")
            for spelled in expand(pattern[:group.start()] + alternative + pattern[group.end():])]


def cited_patterns(text: str) -> list[str]:
    """The patterns of the ``benchmarks/results/...`` paths in a text (a bare ``benchmarks/results/`` names none)."""
    patterns = []
    for match in CITED_PATH.finditer(text):
        path = match.group(1).rstrip(".,/")
        patterns += [pattern for pattern in expand(path) if pattern]
    return patterns


def index_patterns(readme: Path) -> list[str]:
    """The patterns a results README's table names in its first column, as paths under ``benchmarks/results/``."""
    folder = readme.parent.relative_to(RESULTS).as_posix()
    prefix = "" if folder == "." else folder + "/"
    return [prefix + pattern for cell in TABLE_ROW.findall(readme.read_text(encoding="utf-8"))
            for span in BACKTICKED.findall(cell) for pattern in expand(span)]


def texts(globs: tuple[str, ...]) -> dict[str, str]:
    """The citing texts matched by ``globs``, by path (this file left out: its docstring shows the syntax)."""
    paths = sorted({path for pattern in globs for path in ROOT.glob(pattern) if path.is_file()})
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
            for path in paths if path != Path(__file__).resolve() and RESULTS not in path.parents}


@cache
def result_files() -> tuple[str, ...]:
    """Every file of ``benchmarks/results/``, as a path under it, README indexes left out."""
    return tuple(sorted(path.relative_to(RESULTS).as_posix() for path in RESULTS.rglob("*")
                        if path.is_file() and path.name != "README.md"))


def readmes() -> list[Path]:
    """The README indexes of ``benchmarks/results/`` and its folders."""
    return sorted(RESULTS.rglob("README.md"))


def names(pattern: str) -> list[str]:
    """The results files a pattern names."""
    return [path for path in result_files() if fnmatch.fnmatchcase(path, pattern)]


def is_named(path: str, citing: dict[str, str], patterns: list[str]) -> bool:
    """Whether a results file is named by a cited pattern or by its bare file name in a citing text."""
    if any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns):
        return True
    bare = re.compile(r"(?<![\w.-])" + re.escape(path.rsplit("/", 1)[-1]) + r"(?![\w-]|\.\w)")
    return any(bare.search(text) for text in citing.values())


def test_every_results_file_is_cited():
    citing = texts(DOC_GLOBS)
    patterns = [pattern for text in citing.values() for pattern in cited_patterns(text)]
    uncited = [path for path in result_files() if not is_named(path, citing, patterns)]
    assert not uncited, f"files of benchmarks/results/ that no doc names (remove them): {uncited}"


def test_every_cited_results_file_exists():
    missing = [f"{source}: benchmarks/results/{pattern}" for source, text in texts(DOC_GLOBS).items()
               for pattern in cited_patterns(text) if not names(pattern)]
    missing += [f"{readme.relative_to(ROOT)}: {pattern}" for readme in readmes()
                for pattern in index_patterns(readme) if not names(pattern)]
    assert not missing, f"results files the docs cite but benchmarks/results/ lacks: {missing}"


def test_kept_run_reports_hold_only_their_score_sections():
    untrimmed = []
    for path in sorted(RESULTS.rglob("*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(report, dict) and any(shape <= report.keys() for shape in REPORT_SHAPES):
            if list(report)[:2] != ["what", "command"] or RUN_ONLY_KEYS & report.keys():
                untrimmed.append(path.relative_to(RESULTS).as_posix())
    assert not untrimmed, f"whole run reports (keep the score sections under a what/command header): {untrimmed}"


def test_citation_syntax():
    text = "see `benchmarks/results/grounded/{a,b}_x{,_s1}.json`, benchmarks/results/m_<name>.json and benchmarks/results/."
    assert cited_patterns(text) == ["grounded/a_x.json", "grounded/a_x_s1.json", "grounded/b_x.json",
                                    "grounded/b_x_s1.json", "m_*.json"]
    citing = {"doc.md": "the shares are in `cose_3ep.json`; not in cose_3ep.jsonl or cose_3ep.json.gz"}
    assert is_named("cose_3ep.json", citing, [])
    assert not is_named("ep.json", citing, [])
    assert not is_named("cose_3ep.jsonl.gz", {"doc.md": "cose_3ep.jsonl"}, [])


def test_results_name_no_machine_paths():
    """A results file names the command that made it, not the scratch directory of the machine that ran it."""
    local = re.compile(r"(?<![\w.])/(?:tmp|work|home|root)/")
    named = [path for path in result_files() if local.search((RESULTS / path).read_text(errors="replace"))]
    assert not named, f"results that name a machine's own paths (write CACHE/RUN placeholders instead): {named}"
