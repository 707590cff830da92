"""Shared fixtures: tiny seq2seq models built from configs (no downloads) and the shared datasets."""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Under pytest-xdist (`-n auto`, the default addopts) the workers share the cores: one torch thread each, or the
    # tiny models train far slower than serially. Subprocesses the tests start inherit it.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)

CORPUS = [
    "a man is walking his dog in the park implies a person is outside .",
    "two kids play soccer contradicts the children are asleep .",
    "a woman reads a book is not related to she is a teacher .",
    "the answer is entailment . the answer is neutral . the answer is contradiction .",
    "where is the blorvex kept ? a blorvex is a kind of spice . kitchen garage garden bathroom",
] * 20


def shared_data_dir() -> Path | None:
    """``../shared/data`` beside the checkout, or ``$LAREV_SHARED_DATA``."""
    candidates = [os.environ.get("LAREV_SHARED_DATA"), Path(__file__).resolve().parents[2] / "shared" / "data"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = shared_data_dir()
    if path is None:
        pytest.skip("shared datasets not found (set LAREV_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def tiny_tokenizer():
    from larev_hf.modeling import build_tokenizer

    return build_tokenizer("t5-tiny", CORPUS)


@pytest.fixture(scope="session")
def _tiny_models(tiny_tokenizer):
    from larev_hf.modeling import build_model

    return {arch: build_model(f"{arch}-tiny", tiny_tokenizer, seed=0).eval() for arch in ("t5", "bart")}


@pytest.fixture(params=["t5", "bart"])
def tiny_model(request, _tiny_models):
    """A fresh copy of a tiny T5 or BART (random init, built from a config)."""
    return copy.deepcopy(_tiny_models[request.param])


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """A directory that ``build(path)`` fills, built once per test session and copied to each xdist worker.

    pytest-xdist gives every worker its own session fixtures, so a trained run would be trained once per worker.
    The first worker to ask builds it where all workers can see it (beside their own temporary directories, under a
    file lock the others wait on); each worker then gets its own copy, since a run directory is locked while it is
    evaluated or exported and two workers must not share one. Without xdist it is built in place."""
    own = tmp_path_factory.mktemp(name)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        build(own)
        return own
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent  # the session's directory, shared by its workers
    shared, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            shutil.rmtree(shared, ignore_errors=True)
            build(shared)
            done.touch()
    shutil.copytree(shared, own, dirs_exist_ok=True)
    return own


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """One finished tiny run (every method on 64 synthetic examples, ~30 s) shared by the bundle and metric tests
    (trained once per session, whatever the number of workers)."""
    from larev_hf.pipeline import Run, RunConfig

    config = RunConfig(method="all", dataset="synthetic", max_train_examples=64, max_eval_examples=16,
                       num_train_epochs=1.0, n_boot=50)
    return built_once(tmp_path_factory, "tiny-run", lambda output: Run(config, output, progress=False).execute())


@pytest.fixture(scope="session")
def nli_run(data_dir: Path, tmp_path_factory) -> Path:
    """A small LAREV run on e-SNLI (NLI, so the baseline's surface frame varies per instance); too small to trust.
    Built once per session and shared by the tests that score NLI explanations."""
    from larev_hf.pipeline import Run, RunConfig

    config = RunConfig(method="larev", dataset="esnli", data_dir=str(data_dir / "esnli"), max_train_examples=48,
                       max_eval_examples=12, num_train_epochs=1.0, n_boot=50)
    return built_once(tmp_path_factory, "nli-run", lambda output: Run(config, output, progress=False).execute())


@pytest.fixture(scope="session")
def nli_bundle(nli_run: Path, tmp_path_factory) -> Path:
    """The small e-SNLI run's LAREV bundle (``save_pretrained``)."""
    from larev_hf.hub import EvaluatorBundle

    return EvaluatorBundle.from_run(nli_run, "larev").save_pretrained(tmp_path_factory.mktemp("nli-bundle") / "b")


@pytest.fixture(scope="session")
def explanation_judge(tmp_path_factory) -> Path:
    """A MiniLM NLI judge trained on premises followed by their explanation (``read_explanations``) on 90 records
    whose label only the explanation tells (a few seconds; once per session)."""
    from larev_hf.training.nli_judge import train_nli_judge
    from tests.explained_nli import explained_records

    def build(output: Path) -> None:
        train_nli_judge(explained_records(90, "judge"), output / "judge", eval_records=explained_records(30, "eval"),
                        epochs=4.0, batch_size=16, seed=0, read_explanations=True, progress=False)

    return built_once(tmp_path_factory, "explanation-judge", build) / "judge"


@pytest.fixture(scope="session")
def tiny_bundles(tiny_run, tmp_path_factory) -> dict[str, Path]:
    """The tiny run's REV and LAREV evaluator bundles, saved with ``save_pretrained`` (method → directory)."""
    from larev_hf.hub import EvaluatorBundle

    root = tmp_path_factory.mktemp("bundles")
    return {method: EvaluatorBundle.from_run(tiny_run, method).save_pretrained(root / method) for method in ("rev", "larev")}


@pytest.fixture(scope="session")
def judged_file(tiny_run: Path, tmp_path_factory) -> Path:
    """The tiny (QA) run's test questions with three explanations each, 5 answer choices, and made-up judgments:
    the gold rationale acceptable, a leak half, an unrelated sentence not; ``nll`` = −acceptable + noise."""
    import numpy as np

    from larev_hf.io import write_jsonl
    from larev_hf.pipeline import Run

    out = tmp_path_factory.mktemp("judged") / "judged.jsonl"
    rng = np.random.default_rng(0)
    lines = []
    for r in Run.load(tiny_run, progress=False).split_records("test"):
        for rationale, acceptable in ((r["rationale"], 1.0), (f"The answer is {r['label']}.", 0.5),
                                      ("Birds can fly.", 0.0)):
            lines.append({"id": r["id"], "question": r["question"], "choices": [*r["choices"], "attic", "porch"],
                          "answer": r["label"], "rationale": rationale, "acceptable": acceptable,
                          "nll": -acceptable + 0.01 * rng.random()})
    write_jsonl(out, lines)
    return out


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """One line per skip reason at the end of the run, even under ``-q`` (a clone without ``../shared`` skips the
    tests that read the shared datasets, and should say so)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{count} skipped: {reason}")
