"""``larev-hf varif``: VARIF's frontier of explanation methods on one dataset (``papers/varif-proposal.md`` §3, §6).

``VarifRun(settings, output_dir).execute()`` compares explanation generators (:mod:`larev_hf.explain.generators`) on
robustness R (§3.1), leakage-controlled informativeness I (§3.2, :mod:`larev_hf.varif.lcig`) and specificity S
(§3.3, :mod:`larev_hf.varif.specificity`), and reports the (R, Ĩ) Pareto frontier, its hypervolume, the scalar
VARIF = S·H per method and the proposal's hypotheses H1, H2 and H5 checked with numbers. Stages (each with a marker;
a rerun resumes, :class:`~larev_hf.runner.StageRunner`; each a function of the run in :mod:`larev_hf.varif.stages`):

1. ``data``: the train and test records (``data/{train,test}.jsonl``);
2. ``nli``: the NLI judge — a given checkpoint, or a MiniLM cross-encoder trained on e-SNLI (``models/nli``);
3. ``self_rationalizer`` (when compared): F trained on the gold rationales (``models/self_rationalizer``);
4. ``perturb``: K perturbations per test input, paraphrases kept when the judge finds entailment both ways
   (``perturbed.jsonl``, ``perturb_stats.json``);
5. ``lcig``: LC-IG's predictors h₀, d, h₁, h₁ᵘ (``models/lcig``) and log p₀(y | x) on the test split (``base.jsonl``);
6. ``generator-<name>``, one per method, independent of each other (adding a method later measures only it):
   its explanations of the test inputs and of their perturbations (``explanations/<name>.jsonl``) and its
   per-example R, I, I unmasked, S, the detector's log p_d(y | r) and log p_d(y | r⁻) (``scores/<name>.jsonl``).

The report (``varif_report.json``, ``varif_report.md``, ``frontier.png``) is rebuilt on every call (seconds;
:mod:`larev_hf.varif.report`).
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data.sources import source_files
from larev_hf.explain.generators import build_generator
from larev_hf.explain.nli import NLIJudge
from larev_hf.explain.run_dir import DatasetRunDirectory
from larev_hf.io import file_sha256
from larev_hf.training import TrainSettings
from larev_hf.varif.lcig import LCIG, MaskSettings
from larev_hf.varif.report import write_varif_report
from larev_hf.varif.settings import VarifSettings, generator_name
from larev_hf.varif.specificity import SentenceEmbedder, input_text, other_inputs
from larev_hf.varif.stages import varif_stages

logger = logging.getLogger(__name__)


class VarifRun(DatasetRunDirectory):
    """One VARIF comparison (see the module docstring): its settings and checks, the models its stages share (the
    judge, LC-IG's predictors, the sentence embeddings; loaded once) and its stage list; the stages are functions in
    :mod:`larev_hf.varif.stages`, the report is built in :mod:`larev_hf.varif.report`."""

    settings: VarifSettings
    config_name = "varif_config.json"

    def check(self) -> None:
        """Refuse bad settings before anything is written."""
        s = self.settings
        self.check_data_dir()
        names = [generator_name(spec) for spec in s.generators]
        if len(set(names)) != len(names):
            raise ValueError(f"--generators: two generators share a name ({names}); name them NAME=...")
        if not s.generators:
            raise ValueError("--generators: nothing to compare")
        if s.nli_model is None and self.nli_data_dir() is None:
            raise ValueError("the NLI judge: give --nli-model (an HF NLI classifier) or --nli-data-dir (e-SNLI, to "
                             "train the offline MiniLM cross-encoder on)")
        if len(s.reference_point) != 2:
            raise ValueError(f"--reference-point: expected two numbers R,Ĩ, got {s.reference_point}")
        for spec in s.generators:
            if "jsonl:" in spec and not Path(spec.split("jsonl:", 1)[1]).is_file():
                raise FileNotFoundError(f"--generators {spec}: no such file")

        for spec in s.generators:  # an unknown spec raises listing the accepted forms
            if not spec.startswith("self_rationalizer"):
                build_generator(spec, seed=s.seed)

    def nli_data_dir(self) -> str | None:
        """Where the NLI judge's e-SNLI training data is (``--nli-data-dir``, or the run's own e-SNLI data)."""
        s = self.settings
        return s.nli_data_dir or (s.data_dir if s.dataset == "esnli" else None)

    def train_settings(self) -> Any:
        return TrainSettings.for_backbone(self.settings.backbone, num_train_epochs=self.settings.num_train_epochs,
                                          seed=self.settings.seed, progress=self.progress)

    def judge(self) -> Any:
        """The NLI judge: ``--nli-model``, or the one the ``nli`` stage trained (loaded once)."""
        if "judge" not in self._cache:
            self._cache["judge"] = NLIJudge.from_pretrained(self.settings.nli_model or str(self.dir / "models" / "nli"))
        return self._cache["judge"]

    def mask_settings(self) -> Any:
        """LC-IG's masking of the rationales, from the run's settings."""
        s = self.settings
        return MaskSettings(mask_share=s.mask_share, max_masked=s.max_masked, ig_labels=s.ig_labels,
                            ig_steps=s.ig_steps)

    def lcig(self) -> Any:
        """LC-IG's predictors the ``lcig`` stage trained (loaded once)."""
        if "lcig" not in self._cache:
            self._cache["lcig"] = LCIG(self.dir / "models" / "lcig", self.mask_settings())
        return self._cache["lcig"]

    def embeddings(self) -> tuple[Any, np.ndarray, np.ndarray]:
        """The embedder, the test inputs' embeddings and the M other inputs of each example (one draw per run)."""
        if "embeddings" not in self._cache:
            embedder = SentenceEmbedder()
            test = self.records("test")
            self._cache["embeddings"] = (embedder, embedder.encode([input_text(r) for r in test]),
                                         other_inputs(len(test), self.settings.other_inputs, self.settings.seed))
        return self._cache["embeddings"]

    def stages(self) -> list[tuple[str, Any]]:
        """The stages in order, as the stage runner takes them (:func:`~larev_hf.varif.stages.varif_stages`)."""
        return [(name, partial(stage, self)) for name, stage in varif_stages(self)]

    def inputs(self) -> dict[str, Any]:
        """External inputs per stage: the data files (``data``) and a user's JSONL rationales (its generator)."""

        s = self.settings
        files = source_files(s.dataset, s.data_dir, ("train", "test"))
        out: dict[str, Any] = {"data": {split: file_sha256(p) if p else None for split, p in files.items()}}
        for spec in s.generators:
            if "jsonl:" in spec:
                out[f"generator-{generator_name(spec)}"] = file_sha256(spec.split("jsonl:", 1)[1])
        return out

    def independent_stages(self) -> list[str]:
        """The ``generator-<name>`` stages: adding a generator to a finished run measures only it."""
        return [f"generator-{generator_name(spec)}" for spec in self.settings.generators]

    def write_report(self) -> dict[str, Any]:
        """The report over every generator (:func:`~larev_hf.varif.report.write_varif_report`)."""
        return write_varif_report(self)
