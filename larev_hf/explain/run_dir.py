"""What VARIF's and FRAME's runs share: settings, a run directory with its stage runner, and the data split files.

Both ``larev-hf varif`` (:class:`~larev_hf.varif.run.VarifRun`) and ``larev-hf frame``
(:class:`~larev_hf.frame.run.FrameRun`) read one dataset's train and test splits into ``data/{split}.jsonl``
(their ``data`` stage), then train and score models in resumable stages (:class:`~larev_hf.runner.StageRunner`):
:meth:`DatasetRunDirectory.execute` checks the settings against a resumed run's, runs the stages and writes the report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from larev_hf.data import load_examples
from larev_hf.io import read_jsonl, write_jsonl
from larev_hf.runner import StageRunner


class DatasetRunDirectory:
    """A resumable run over one dataset's splits (VARIF's and FRAME's): ``settings`` (a dataclass) must have
    ``dataset``, ``data_dir``, ``max_train_examples`` and ``max_eval_examples``. A subclass defines ``check()``, ``stages()``, ``inputs()`` and
    ``write_report()`` and names the file its settings are saved to (:attr:`config_name`)."""

    #: The file the settings are saved to, and checked against when a run resumes.
    config_name = "config.json"

    def __init__(self, settings: Any, output_dir: str | os.PathLike, progress: bool = True) -> None:
        self.settings = settings
        self.dir = Path(output_dir)
        self.progress = progress
        self.runner = StageRunner(self.dir)
        self._cache: dict[str, Any] = {}

    def check_data_dir(self) -> None:
        """Refuse a run without data before anything is written."""
        if self.settings.data_dir is None:
            raise ValueError("--data-dir is required: a local directory in the shared layout, or a dataset repository name")

    def stage_data(self) -> None:
        """The ``data`` stage: the train split's and the test split's first N records, in the schema."""
        s = self.settings
        for split, limit in (("train", s.max_train_examples), ("test", s.max_eval_examples)):
            write_jsonl(self.dir / "data" / f"{split}.jsonl",
                        list(load_examples(s.dataset, s.data_dir, split, max_examples=limit)))

    def independent_stages(self) -> list[str]:
        """Stages whose external inputs affect only themselves (:meth:`~larev_hf.runner.StageRunner.fingerprints`)."""
        return []

    def drop_outputs(self, stale: Sequence[str]) -> None:
        """Delete what invalidated stages wrote, so they really rerun (nothing by default)."""

    def execute(self) -> dict[str, Any]:
        """Run (or resume) every stage and write the report; returns the report's content."""
        self.check()
        with self.runner.lock():
            settings_class = type(self.settings)
            metadata = {f.name: dict(f.metadata) for f in fields(settings_class)}
            self.runner.check_settings(asdict(self.settings), asdict(settings_class()), metadata, name=self.config_name)
            self.runner.run(self.stages(), inputs=self.inputs(), on_invalidate=self.drop_outputs,
                            independent=self.independent_stages())
            return self.write_report()

    def records(self, split: str) -> list[dict[str, Any]]:
        """The records the ``data`` stage wrote for ``split`` (read once)."""
        if split not in self._cache:
            self._cache[split] = [row for _, row in read_jsonl(self.dir / "data" / f"{split}.jsonl")]
        return self._cache[split]
