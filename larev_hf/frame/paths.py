"""Where a FRAME run (:class:`~larev_hf.frame.run.FrameRun`) keeps what each stage writes, under its directory."""

from __future__ import annotations

from pathlib import Path

from larev_hf.frame.variants import BASE


class FramePaths:
    """The paths of one FRAME run directory: F's models and outputs, G and H, the axioms' and the library's rows."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def task_dir(self, variant: str, seed: int) -> Path:
        """F's labels, rationales and training record of one variant and seed."""
        return self.dir / "task_model" / f"{variant}-s{seed}"

    def task_model_dir(self, variant: str, seed: int) -> Path:
        """F of one variant and seed (a :class:`~larev_hf.explain.task_model.SelfRationalizer`)."""
        return self.dir / "models" / "F" / f"{variant}-s{seed}"

    def simulator_dir(self, metric: str, variant: str, seed: int) -> Path:
        """G and H of ``metric`` for F's ``variant`` (GH-GOLD's: always ``base``)."""
        return self.dir / "models" / "GH" / metric / f"{BASE if metric == 'gh_gold' else variant}-s{seed}"

    def evaluation_path(self, metric: str, variant: str, seed: int) -> Path:
        """``metric``'s G and H predictions for F's ``variant`` of ``seed`` (one row per test example)."""
        return self.dir / "evaluations" / f"s{seed}" / f"{metric}-{variant}.jsonl"

    def library_path(self, method: str, variant: str, seed: int) -> Path:
        """A library metric's pointwise scores for F's ``variant`` of ``seed``."""
        return self.dir / "library" / f"s{seed}" / f"{method}-{variant}.jsonl"
