"""larev-hf: leakage-aware evaluation of free-text rationales (LAREV, REV, RoRA, LAS, RQ) in the HuggingFace ecosystem.

The layers, bottom-up; no module imports one above it (``docs/architecture.md``):

``data`` (loaders, baselines, variants) → ``modeling`` (backbones, batched label scoring, input formats) →
``scores`` (CVI scores, summaries, LAS/RQ arithmetic) → ``leakage`` / ``training`` / ``rora`` (attributions,
environments, trainers, the simulator, RoRA's machinery) → ``methods`` (one module per metric and the registry) →
``report`` (tables and plots of a report dict) → ``config`` / ``runner`` / ``pipeline`` (settings per concern, the
generic stage runner, the run) → ``hub`` (bundles) → ``meta`` (VARSuite and agreement with people) →
``evaluators`` / ``metric`` (a named evaluator found or built, the ``evaluate`` modules' code) → ``explain`` (what
VARIF and FRAME share) → ``varif`` / ``frame`` → ``cli`` (the ``larev-hf`` command).
"""

from __future__ import annotations

from larev_hf.lazy import lazy_exports

__version__ = "0.1.0"

# ``larev_hf.trainer_metrics`` (a ready ``compute_metrics`` for ``Seq2SeqTrainer``; docs/hub.md) is
# :func:`larev_hf.explain.generated.trainer_metrics`, exported lazily like every lazy package's names: the start-up
# hook (larev_hf.evaluate_names) imports this package in every interpreter, and the name loads explain (the top of
# the graph, with torch) only when it is first read
__getattr__, __dir__, _lazy_names = lazy_exports(__name__, {"explain.generated": ("trainer_metrics",)})
__all__ = ["__version__", "metric_path", *_lazy_names]


def metric_path(name: str = "larev") -> str:
    """The directory of a shipped ``evaluate`` module, for ``evaluate.load(larev_hf.metric_path("larev"), evaluator=...)``
    from any working directory: ``larev``, ``rev``, ``rora`` or ``bundle`` (any registered method's bundle).
    ``evaluate.load("larev", evaluator=...)`` loads the same module by name (:mod:`larev_hf.evaluate_names`)."""
    # imported here, not at the top: the start-up hook (larev_hf.evaluate_names) imports this package in every
    # interpreter of the environment, and pathlib would add milliseconds to each start
    from pathlib import Path

    path = Path(__file__).with_name("metric_modules") / name
    if not (path / f"{name}.py").is_file():
        known = sorted(p.name for p in path.parent.iterdir() if (p / f"{p.name}.py").is_file())
        raise ValueError(f"no shipped evaluate module {name!r}; expected one of {known}")
    return str(path)
