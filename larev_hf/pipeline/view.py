"""Where a run keeps things, as one evaluator seed sees it, and what a method's stages read there.

:class:`RunView` is the :class:`~larev_hf.methods.RunContext` every method's stages and scoring see: the settings,
the paths of the run directory, the records of a split (or of another file, prepared like them), the tokenizer and
the trained models. The evaluator seeds of a multi-seed run (``--seeds``) share the data and the tokenizer
(:data:`SHARED_PARTS`); everything else a seeded stage writes lives in the seed's own directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from larev_hf.config import RunConfig
from larev_hf.data import add_baselines, add_variants, baseline_builder_from_spec, load_explanations
from larev_hf.io import read_jsonl
from larev_hf.methods import get_method
from larev_hf.modeling import load_evaluator
from larev_hf.modeling.backbones import fresh_model
from larev_hf.runner import StageRunner
from larev_hf.training import train_on_records

SPLITS = ("train", "validation", "test")
#: What every evaluator seed of a multi-seed run shares: the data (with its baselines) and the tokenizer; everything
#: else a seeded stage writes (models/, leakage/, rora/, scores/) lives in the seed's own directory.
SHARED_PARTS = ("data", "tokenizer")


class RunView:
    """A run directory as one evaluator seed sees it: its paths, its records, its tokenizer and models (cached)."""

    def __init__(self, config: RunConfig, output_dir: str | os.PathLike, progress: bool = True,
                 runner: StageRunner | None = None, root: Path | None = None) -> None:
        self.config = config
        self.dir = Path(output_dir)
        self.progress = progress
        self.runner = runner if runner is not None else StageRunner(self.dir)
        self._models: dict[str, Any] = {}
        #: where this view's seeded artifacts live: the run directory for ``--seed``, ``seeds/seed-<k>`` for another
        #: evaluator seed (:meth:`for_seed`)
        self.root = root if root is not None else self.dir

    # ----------------------------------------------------------------- evaluator seeds and paths
    def for_seed(self, seed: int) -> RunView:
        """This run as evaluator seed ``seed`` sees it: the same data and tokenizer, its own models and scores under
        ``seeds/seed-<seed>/`` and its stages' markers named ``<stage>@seed<seed>``; ``--seed`` itself is the run."""
        if seed == self.config.training.seed and self.root == self.dir:
            return self
        view = RunView(self.config.replace(seed=seed), self.dir, self.progress, self.runner,
                       root=self.dir / "seeds" / f"seed-{seed}")
        view._models = {k: v for k, v in self._models.items() if k == "tokenizer"}
        return view

    def seed_views(self) -> list[RunView]:
        """One view per evaluator seed (``--seeds``, or ``--seed`` alone), in order."""
        return [self.for_seed(seed) for seed in self.config.evaluator_seeds]

    def stage_name(self, name: str) -> str:
        """The marker name of stage ``name`` in this view (shared stages keep theirs)."""
        return name if self.root == self.dir or name in SHARED_PARTS else f"{name}@seed{self.config.training.seed}"

    def path(self, *parts: str) -> Path:
        """``parts`` under the run directory (the data and the tokenizer) or under this seed's directory."""
        return (self.dir if parts and parts[0] in SHARED_PARTS else self.root).joinpath(*parts)

    def is_done(self, stage: str) -> bool:
        """Whether stage ``stage`` has finished in this view."""
        return self.runner.is_done(self.stage_name(stage))

    def missing_stages(self, method: str) -> list[str]:
        """The stages ``method``'s scores need (its models and the tokenizer) that have not finished in this view."""
        needed = [stage.name for stage in get_method(method).stages(self.config)]
        return [stage for stage in (["tokenizer", *needed] if needed else []) if not self.is_done(stage)]

    # ----------------------------------------------------------------- what the stages read
    def task(self) -> str:
        """The run's task kind (``nli``, ``qa`` or ``yesno``), read from the first record of its test split."""
        return next(read_jsonl(self.path("data", "test.jsonl")))[1]["task"]

    def split_records(self, split: str) -> list[dict[str, Any]]:
        """The records of ``split``; on the training split, ``rationale`` is the ``train_rationale`` variant
        (every evaluator trains on ``record["rationale"]``)."""
        records = [record for _, record in read_jsonl(self.path("data", f"{split}.jsonl"))]
        if split == "train" and self.config.data.train_rationale != "gold":
            for record in records:
                record["rationale"] = record[f"rationale_{self.config.data.train_rationale}"]
        return records

    def read_data_file(self, data_file: str | os.PathLike, column_mapping: dict[str, str] | None = None,
                       ) -> list[dict[str, Any]]:
        """A file to score as schema records with this run's baselines and rationale variants: the "my explanations"
        format or the run's data set format (:func:`~larev_hf.data.load_explanations`)."""
        cfg = self.config
        builder = baseline_builder_from_spec(cfg.data.baseline_builder, cfg.training.seed)
        dataset = load_explanations(Path(data_file), cfg.data.dataset, self.task(), column_mapping,
                                    cfg.data.loader_options)
        return add_variants(add_baselines(dataset, builder)).to_list()

    def tokenizer(self):
        """The run's tokenizer, loaded from ``tokenizer/`` (cached)."""
        from transformers import AutoTokenizer

        if "tokenizer" not in self._models:
            self._models["tokenizer"] = AutoTokenizer.from_pretrained(self.path("tokenizer"))
        return self._models["tokenizer"]

    def model(self, name: str):
        """A trained model of this run, loaded from ``models/<name>`` (cached)."""
        if name not in self._models:
            self._models[name], _ = load_evaluator(self.path("models", name))
        return self._models[name]

    def train_evaluator(self, name: str, make_source: Callable[[dict[str, Any]], str]) -> None:
        """A fresh model trained on ``make_source(record) → label`` over the training split; with
        ``select_on_validation``, the epoch with the lowest validation loss is kept."""
        model = fresh_model(self)
        validation = self.split_records("validation") if self.config.training.select_on_validation else None
        train_on_records(model, self.tokenizer(), self.split_records("train"), make_source, self.path("models", name),
                         self.config.train_settings(self.progress), eval_records=validation)
