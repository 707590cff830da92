"""Named default evaluators: ``evaluator="esnli"`` becomes a loaded bundle, found in the cache, downloaded from its
published Hub repo or built in this process.

``recipes`` (:class:`EvaluatorRecipe`, :data:`RECIPES`: the recipes, read from ``recipes.json``), ``loading``
(:func:`load`, the one place a name is resolved, for ``larev-hf evaluate`` and the ``evaluate`` modules alike:
:func:`find`, :func:`resolve`, :func:`build`, the names and the cache), ``published`` (a built evaluator pushed to a
Hub repo with its recipe, and downloaded back) and ``building`` (:func:`build_recipe`: the run, the NLI judge, the
calibration and the export in one process, with :class:`BuildProgress`'s line per stage).

Names load on first use (:mod:`larev_hf.lazy`): a name is checked and a file validated against its task without
torch; the build imports the pipeline when it starts.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.evaluators.building import BuildProgress, build_recipe
    from larev_hf.evaluators.loading import build, find, load, resolve
    from larev_hf.evaluators.recipes import RECIPES, EvaluatorRecipe

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "building": ("BuildProgress", "build_recipe"),
    "loading": ("build", "find", "load", "resolve"),
    "recipes": ("RECIPES", "EvaluatorRecipe"),
})
