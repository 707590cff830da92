"""The import paths that left ``larev_hf.meta`` (issue 27: ``explain``, ``varif`` and ``frame`` packages) still work
for one release, each read with a DeprecationWarning naming the new path (``larev_hf.lazy.moved``)."""

from __future__ import annotations

import importlib
import re

import pytest

#: Old module → a name read through it and the module that defines the name now.
MOVED = {
    "larev_hf.meta.generators": ("build_generator", "larev_hf.explain.generators"),
    "larev_hf.meta.task_model": ("SelfRationalizer", "larev_hf.explain.task_model"),
    "larev_hf.meta.nli": ("NLIJudge", "larev_hf.explain.nli"),
    "larev_hf.meta.run_dir": ("MetaRunDirectory", "larev_hf.explain.run_dir"),
    "larev_hf.meta.varif": ("varif_scores", "larev_hf.varif.measures"),
    "larev_hf.meta.perturb": ("perturb_records", "larev_hf.varif.perturb"),
    "larev_hf.meta.lcig": ("LCIG", "larev_hf.varif.lcig"),
    "larev_hf.meta.specificity": ("specificity_scores", "larev_hf.varif.specificity"),
    "larev_hf.meta.varif_run": ("summarize_varif", "larev_hf.varif.report"),
    "larev_hf.meta.frame": ("nrg", "larev_hf.frame.meta_metrics"),
    "larev_hf.meta.frame_report": ("render_frame_markdown", "larev_hf.frame.report"),
    "larev_hf.meta.frame_library": ("aggregate_library", "larev_hf.frame.library"),
    "larev_hf.meta.frame_run": ("seed_results", "larev_hf.frame.seeds"),
    "larev_hf.meta.settings": ("FrameSettings", "larev_hf.frame.settings"),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_still_imports_and_warns(old: str) -> None:
    name, new = MOVED[old]
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=re.escape(f"{old}.{name} is deprecated") + ".*" + re.escape(new)):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_old_from_imports_and_the_lazy_names_of_larev_hf_meta_resolve_with_a_warning(monkeypatch) -> None:
    import larev_hf.meta as meta
    from larev_hf.frame.run import FrameRun
    from larev_hf.frame.simulators import SimulatorPair
    from larev_hf.varif.run import VarifRun

    with pytest.warns(DeprecationWarning, match=r"larev_hf\.frame\.(run|simulators)"):
        from larev_hf.meta.frame_run import FrameRun as old_frame_run
        from larev_hf.meta.frame_run import SimulatorPair as old_pair
    assert (old_frame_run, old_pair) == (FrameRun, SimulatorPair)
    for name, value in (("FrameRun", FrameRun), ("VarifRun", VarifRun)):
        monkeypatch.delattr(meta, name, raising=False)  # a name read before is cached on the package
        with pytest.warns(DeprecationWarning, match=re.escape(f"use {value.__module__}.{name}")):
            assert getattr(meta, name) is value
    with pytest.raises(AttributeError, match="no_such_name"):
        importlib.import_module("larev_hf.meta.frame_run").no_such_name  # noqa: B018
