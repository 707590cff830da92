"""What an evaluator bundle loads to score: its evaluators (each seed's, for an ensemble), their shared tokenizer and
the builder of the vacuous baselines b, each loaded on first use and kept.

:class:`BundleModels` is the bundle's ``models`` (:class:`~larev_hf.hub.EvaluatorBundle`); exporting, saving and
pushing a bundle never touch it, so they never load weights.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer

from larev_hf.data.baseline_builders import baseline_builder_from_config
from larev_hf.hub.config import BundleConfig
from larev_hf.modeling import load_evaluator
from larev_hf.training.nli_judge import NLIJudge


class BundleModels:
    """A bundle's evaluators, tokenizer and baseline builder, loaded from its directories on first use.

    Args:
        config (`BundleConfig`): the bundle's config: its roles, model directories (per seed), tokenizer directory
            and baseline builder settings.
        sources (`Mapping[str, path]`): bundle sub-directory name → where its files are now.
        device (`str`, *optional*): where to put the models (defaults to CUDA when available).
    """

    def __init__(self, config: BundleConfig, sources: Mapping[str, str | os.PathLike], device: str | None = None) -> None:
        self.config = config
        self.sources = {name: Path(path) for name, path in sources.items()}
        self.device = device
        self._models: dict[str, Any] = {}
        self._tokenizer: Any = None
        self._builder: Any = None
        self._judge: Any = None

    @property
    def tokenizer(self) -> Any:
        """The tokenizer the evaluators share."""
        if self._tokenizer is None:
            self._tokenizer = AutoTokenizer.from_pretrained(self.sources[self.config.tokenizer])
        return self._tokenizer

    def model(self, role: str, seed: int | None = None) -> Any:
        """The evaluator of ``role`` (``"baseline"`` or ``"rationale"``) — of evaluator ``seed`` in an ensemble bundle
        (default: the first) — loaded with :func:`larev_hf.modeling.load_evaluator` (full checkpoints and LoRA
        adapters alike)."""
        if role not in self.config.models:
            raise KeyError(f"role {role!r}: a {self.config.method} bundle has the roles {sorted(self.config.models)}")
        directory = self.config.model_dirs_of(seed)[role]
        if directory not in self._models:
            self._models[directory], _ = load_evaluator(self.sources[directory], device=self.device)
        return self._models[directory]

    def of_seed(self, seed: int | None = None) -> dict[str, Any]:
        """Role → evaluator of evaluator ``seed`` (default: the first): what a method's bundle scorer takes."""
        return {role: self.model(role, seed) for role in self.config.models}

    def nli_judge(self, directory: str) -> Any:
        """The bundle's NLI judge (:class:`~larev_hf.training.nli_judge.NLIJudge`) from its ``directory``, loaded
        on first use."""
        if self._judge is None:
            self._judge = NLIJudge.from_pretrained(self.sources[directory], device=self.device, max_length=256)
        return self._judge

    @property
    def baseline_builder(self) -> Any:
        """The builder of the vacuous baselines, rebuilt from the bundle's settings."""
        if self._builder is None:
            self._builder = baseline_builder_from_config(self.config.baseline_builder)
        return self._builder
