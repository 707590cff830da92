"""The run of ``larev-hf run``: data → evaluators → scores → report, one resumable stage at a time.

- :mod:`~larev_hf.pipeline.run`: :class:`~larev_hf.pipeline.run.Run` — ``Run(config, output_dir).execute()``,
  ``Run.load(run_dir)``, its stages in order, scoring another file, which methods are trained;
- :mod:`~larev_hf.pipeline.view`: paths — :class:`~larev_hf.pipeline.view.RunView`, the run as one evaluator seed
  sees it (the :class:`~larev_hf.methods.RunContext` of every method's stages and scoring);
- :mod:`~larev_hf.pipeline.stages`: the run's own stages (``data``, ``tokenizer``), every method's stages, the data
  inputs a resume checks;
- :mod:`~larev_hf.pipeline.scoring`: scoring records per method and evaluator seed, combining the seeds, and the
  report of a scoring.

Every name loads on first use (:mod:`larev_hf.lazy`).
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.pipeline.run import Run, RunConfig
    from larev_hf.pipeline.view import SHARED_PARTS, SPLITS, RunView


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "run": ("Run", "RunConfig"),
    "view": ("RunView", "SHARED_PARTS", "SPLITS"),
})
