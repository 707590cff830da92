"""The generic resumable stage runner: markers, recorded environments, config checks on resume, ``until``.

It knows nothing about methods. A stage is a name and a function; after the function returns, the runner writes
``stages/<name>.done`` (atomically) with the stage's wall time and the environment its floating-point results depend
on. A rerun skips every stage whose marker exists, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from larev_hf.io import read_json, write_json

logger = logging.getLogger(__name__)


def compute_environment() -> dict[str, Any]:
    """What a stage's floating-point results depend on beyond seed and data: library versions, device and torch's
    CPU thread count (a different count changes summation order, hence trained weights)."""
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__, "torch_threads": torch.get_num_threads(),
            "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


class StageRunner:
    """Runs named stages in a directory, once each.

    Args:
        directory: the run directory (markers go to ``<directory>/stages``).
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.dir = Path(directory)
        self.timings: dict[str, float] = {}

    def marker(self, stage: str) -> Path:
        return self.dir / "stages" / f"{stage}.done"

    def is_done(self, stage: str) -> bool:
        return self.marker(stage).is_file()

    def run_stage(self, stage: str, function: Callable[[], None]) -> None:
        """Run ``function`` unless the stage's marker exists; record its wall time and environment."""
        if self.is_done(stage):
            logger.info("stage %s: done earlier, skipped", stage)
            return
        logger.info("stage %s: running", stage)
        start = time.perf_counter()
        function()
        self.timings[stage] = time.perf_counter() - start
        write_json(self.marker(stage), {"seconds": self.timings[stage], **compute_environment()})

    @staticmethod
    def check_until(names: list[str], until: str | None) -> None:
        """Refuse an ``until`` that names no stage of ``names``."""
        if until is not None and until not in names:
            raise ValueError(f"--until {until!r} is not a stage of this run; its stages are {names}")

    def run(self, stages: Iterable[tuple[str, Callable[[], None]]], until: str | None = None) -> bool:
        """Run (or resume) ``stages`` in order, stopping after ``until``; returns whether every stage ran."""
        stages = list(stages)
        self.check_until([name for name, _ in stages], until)
        for name, function in stages:
            self.run_stage(name, function)
            if name == until:
                return False
        return True

    def markers(self) -> dict[str, dict[str, Any]]:
        """Every finished stage's marker content, by stage name."""
        return {path.stem: read_json(path) for path in sorted((self.dir / "stages").glob("*.done"))}

    def check_settings(self, current: Mapping[str, Any], defaults: Mapping[str, Any],
                       metadata: Mapping[str, Mapping[str, Any]], name: str = "run_config.json") -> None:
        """Refuse to resume with different settings (results would mix), then save ``current``.

        A setting whose metadata says ``report_only`` may always change; one that names its ``stages`` may change
        until one of those stages has finished; any other difference is refused.
        """
        saved_path = self.dir / name
        if saved_path.is_file():
            saved = read_json(saved_path)
            differing = []
            for key, value in current.items():
                meta = metadata.get(key, {})
                if meta.get("report_only") or saved.get(key, defaults.get(key)) == value:
                    continue
                if "stages" in meta and not any(self.is_done(stage) for stage in meta["stages"]):
                    continue
                differing.append(key)
            if differing:
                raise ValueError(f"{self.dir} holds a run with different settings ({', '.join(sorted(differing))}); "
                                 "use a new --output-dir or delete the old run")
        write_json(saved_path, dict(current))
