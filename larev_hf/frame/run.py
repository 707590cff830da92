"""``larev-hf frame``: FRAME's axioms 1-3 for four RLC metrics on one dataset (``papers/frame.txt`` §2.2-§4, A.1).

``FrameRun(settings, output_dir).execute()`` trains the task model F (a self-rationalizing seq2seq,
:mod:`larev_hf.explain.task_model`) and, per RLC metric, the control simulator G (x → label) and the treatment simulator
H (x ⊕ r → label), then measures Φ(r) = 𝟙_H(ŷ|x,r) − 𝟙_G(ŷ|x) (§2.2) for the rationales each axiom needs and
FRAME's meta-metrics (:mod:`larev_hf.frame.meta_metrics`):

- axiom 1: Φ(ŷ) and MAR over r ∈ {r̂, ṙ, ẏ};
- axiom 2: ASD(Φ(ŷ), Φ(Ψe(ŷ))) and ASD(Φ(ŷ), Φ(Ψc(ŷ)));
- axiom 3: the SCV of Φ(ŷ) across F trained on (A) less data, (B) noisier labels, (C) at other sizes, and (D) the ASD
  between Φ(ŷ) on F's correct and on its incorrect test predictions;

and each axiom's NRG across the metrics (§4), every cell a mean ± std over the seeds.

The four RLC metrics (§3.3, :data:`RLC_METRICS`):

- **F-GOLD**: G = F reading x, H = F reading x ⊕ r (:func:`~larev_hf.explain.choices.augmented_input`); their label is
  the one F generates (parsed and, if it is none of the choices, repaired to the nearest, as F's own predictions are),
  so 𝟙_G(ŷ|x) = 100 by construction;
- **GH-GOLD**: G and H start from the pretrained simulator and are fine-tuned on the gold labels ẏ;
- **GH-PRED**: the same, fine-tuned on F's predicted labels ŷ on the training split;
- **NP-GH-PRED**: the same architecture with random weights, trained on ŷ.

Stages (each with a marker; a rerun resumes, :class:`~larev_hf.runner.StageRunner`; each a function of the run in
:mod:`larev_hf.frame.stages`, the simulators in :mod:`larev_hf.frame.simulators`, F's variants and the rationale
texts in :mod:`larev_hf.frame.variants`, where each is written in :class:`FramePaths` (below), the library metrics of
``--library-run`` in :mod:`larev_hf.frame.library`):

1. ``data``: the train and test records (``data/{train,test}.jsonl``);
2. per seed s, per variant v of F (``base`` = the default F; axiom 3 adds ``train<pct>``, ``noise<pct>`` and
   ``size-<backbone>``): ``F-<v>-s<s>``: F trained (``models/F/<v>-s<s>``) and its labels ŷ on the train and test
   splits, its rationales r̂ on the test split for ``base`` (``task_model/<v>-s<s>/``);
3. per seed, metric and variant: ``GH-<metric>-<v>-s<s>``: G and H (``models/GH/<metric>/<v>-s<s>/{G,H}``); GH-GOLD
   does not depend on F and is trained once per seed (variant ``base``); F-GOLD has none;
4. ``axioms-s<s>``: every simulator's predictions for every rationale (``evaluations/s<s>/<metric>-<v>.jsonl``,
   each file written once, so an interrupted stage resumes by file).

The report (``results/seed<s>.json``, ``frame_report.json``, ``frame_report.md``, ``frame_axioms.png``) is rebuilt
from the evaluations on every call (seconds; :func:`~larev_hf.frame.report.write_frame_report`, the per-seed
arithmetic in :mod:`larev_hf.frame.seeds`).

**Where FRAME is silent** (docs/frame.md lists these too): H is trained on x ⊕ ṙ, the *gold* rationale (Fig. 4 leaves
it open among r̂, ẏ, ṙ, ŷ); G and H start from the same initial weights (one seed); the training subsets of axiom 3
(A) are nested prefixes of one seeded shuffle of the training split; the noisy labels of (B) flip exactly
``round(share · n)`` labels (:func:`~larev_hf.frame.meta_metrics.noisy_labels`); the 100% / 0% / default-size settings of
(A)-(C) are the one default F; SCV divides by |μ| where μ < 0 (``--scv-denominator``; F-GOLD's Φ(ŷ) is never
positive, yet the paper prints positive SCVs for it) and is 0 where every setting gives the same Φ(ŷ) ≤ 0 (σ = 0);
F's labels on the train split (the targets of GH-PRED and NP-GH-PRED) and F-GOLD's labels are generated up to
:data:`~larev_hf.frame.simulators.LABEL_TOKENS` tokens (the label precedes the rationale, so greedy decoding gives the same label as a full
generation); the std over seeds is the population one; the NRG column is
computed from the seed means (as the paper's printed tables 1 and 2 reproduce), the per-seed NRG's mean ± std is
reported beside it; a meta-metric undefined for some metric (a SCV with μ = 0 or a single setting, a MAR with a zero
accuracy, an empty subpopulation) is left out of that axiom's NRG, and the report says so.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from larev_hf.data.sources import source_files
from larev_hf.explain.run_dir import DatasetRunDirectory
from larev_hf.explain.task_model import SelfRationalizer
from larev_hf.frame.library import LibraryRun
from larev_hf.frame.meta_metrics import METRIC_NAMES
from larev_hf.frame.report import fmt, write_frame_report
from larev_hf.frame.settings import FRAME_METRICS, FrameSettings
from larev_hf.frame.simulators import SimulatorPair, check_h_rationales
from larev_hf.frame.stages import frame_stages
from larev_hf.frame.variants import BASE, Variant, rationale_texts, rationale_types, variant_plan
from larev_hf.io import file_sha256, read_jsonl
from larev_hf.methods.settings import field_values
from larev_hf.modeling import check_backbone
from larev_hf.modeling.presets import is_pretrained
from larev_hf.training import TrainSettings


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


logger = logging.getLogger(__name__)

#: FRAME's four RLC metrics (§3.3), in table order, and their display names.
RLC_METRICS: tuple[str, ...] = FRAME_METRICS


class FrameRun(DatasetRunDirectory):
    """One FRAME meta-evaluation (see the module docstring): its settings and checks, what its stages read and its
    stage list; where it keeps things is :attr:`paths` (:class:`~larev_hf.frame.run.FramePaths`), the library
    metrics of ``--library-run`` :attr:`library` (:class:`~larev_hf.frame.library.LibraryRun`)."""

    settings: FrameSettings
    config_name = "frame_config.json"

    def __init__(self, settings: FrameSettings, output_dir: str | os.PathLike, progress: bool = True) -> None:
        super().__init__(settings, output_dir, progress)
        self.paths = FramePaths(self.dir)
        self.library = LibraryRun(settings)

    # ------------------------------------------------------------------ inputs
    def check(self) -> None:
        """Refuse bad settings before anything is written."""

        s = self.settings
        self.check_data_dir()
        unknown = [m for m in s.metrics if m not in RLC_METRICS]
        if unknown or not s.metrics:
            raise ValueError(f"--metrics: {unknown or 'none given'}; expected some of {', '.join(RLC_METRICS)}")
        if len(set(s.metrics)) != len(s.metrics):
            raise ValueError(f"--metrics: a metric is listed twice ({s.metrics})")
        if not s.axioms or any(a not in ("1", "2", "3") for a in s.axioms):
            raise ValueError(f"--axioms: expected some of 1, 2, 3, got {s.axioms}")
        check_h_rationales(s.h_rationales)
        s.seed_values()
        if not s.seeds or len(set(s.seed_values())) != len(s.seeds):
            raise ValueError(f"--seeds: expected distinct integers, got {s.seeds}")
        if "3" in s.axioms:
            for name, low_open in (("train_shares", True), ("noise_shares", False)):
                values = s.share_values(name)
                if not values or len(set(values)) != len(values):
                    raise ValueError(f"--{name.replace('_', '-')}: expected distinct shares, got {getattr(s, name)}")
                if any(v > 1 or v < 0 or (low_open and v == 0) for v in values):
                    raise ValueError(f"--{name.replace('_', '-')}: shares must lie in {'(0' if low_open else '[0'}, 1],"
                                     f" got {getattr(s, name)}")
            if not s.capacity_backbones or len(set(s.capacity_backbones)) != len(s.capacity_backbones):
                raise ValueError(f"--capacity-backbones: expected distinct backbones, got {s.capacity_backbones}")
        self.library.methods()  # a missing run or an unfinished method raises naming --library-run/--library-methods
        backbones = {s.task_backbone, *(s.capacity_backbones if "3" in s.axioms else [])}
        if {"gh_gold", "gh_pred"} & set(s.metrics):
            backbones.add(s.pretrained_simulator)
        if "np_gh_pred" in s.metrics:
            backbones.add(s.scratch_simulator)
        for backbone in sorted(backbones):
            check_backbone(backbone)

    def plan(self) -> tuple[list[Variant], dict[str, list[str]]]:
        if "plan" not in self._cache:
            self._cache["plan"] = variant_plan(self.settings)
        return self._cache["plan"]

    def train_settings(self, backbone: str, seed: int) -> Any:
        # --learning-rate is for the pretrained simulators; a random-init one keeps its preset's (FrameSettings)
        return TrainSettings.for_backbone(backbone, learning_rate=self.settings.learning_rate if is_pretrained(
            backbone) else None, num_train_epochs=self.settings.num_train_epochs, seed=seed, progress=self.progress)

    def label_decoding(self) -> str:
        """How F's labels are read (``--f-label-decoding``; ``auto``: ranked over the choices for QA, whose answers
        are open phrases F rarely reproduces exactly, generated for NLI's three label words)."""
        value = self.settings.f_label_decoding
        if value == "auto":
            return "score" if self.records("test") and self.records("test")[0]["task"] == "qa" else "generate"
        return value

    def simulator_backbone(self, metric: str) -> str:
        return self.settings.scratch_simulator if metric == "np_gh_pred" else self.settings.pretrained_simulator

    # ------------------------------------------------------------------ what the stages read
    def task_predictions(self, variant: str, seed: int, split: str = "test") -> list[dict[str, Any]]:
        return [row for _, row in read_jsonl(self.paths.task_dir(variant, seed) / f"{split}.jsonl")]

    def simulator_pair(self, metric: str, variant: str, seed: int) -> SimulatorPair:
        if metric == "f_gold":
            return SimulatorPair.of_task_model(SelfRationalizer.load(self.paths.task_model_dir(variant, seed)),
                                               label_decoding=self.label_decoding())
        return SimulatorPair.load(metric, self.paths.simulator_dir(metric, variant, seed))

    def base_rationales(self, seed: int) -> dict[str, list[str]]:
        """Every rationale the axioms need for the default F of ``seed``, per type (the simulators' and the library
        metrics' stages score the same texts: the perturbations are seeded by (seed, example id))."""
        kinds = rationale_types(self.settings.axioms, base=True)
        return rationale_texts(self.records("test"), self.task_predictions(BASE, seed), seed, kinds)

    def stages(self) -> list[tuple[str, Any]]:
        """The stages in order, as the stage runner takes them (:func:`~larev_hf.frame.stages.frame_stages`)."""
        return [(stage.name, partial(stage.run, self)) for stage in frame_stages(self)]

    def independent_stages(self) -> list[str]:
        """The ``library-s<seed>`` stages: adding ``--library-run`` to a finished run scores only them."""
        return [f"library-s{seed}" for seed in self.settings.seed_values()] if self.settings.library_run else []

    def drop_outputs(self, stale: Sequence[str]) -> None:
        """Delete what invalidated stages wrote (models, predictions, evaluations), so they really rerun."""
        outputs = {stage.name: stage.outputs for stage in frame_stages(self)}
        for name in stale:
            for path in outputs.get(name, ()):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    def inputs(self) -> dict[str, Any]:
        s = self.settings
        files = source_files(s.dataset, s.data_dir, ("train", "test"))
        out: dict[str, Any] = {"data": {split: file_sha256(p) if p else None for split, p in files.items()}}
        if (library := self.library.inputs()) is not None:  # the library run's trained models: retraining one rescores
            for name in self.independent_stages():
                out[name] = library
        return out

    def write_report(self) -> dict[str, Any]:
        """The report over the finished seeds (:func:`~larev_hf.frame.report.write_frame_report`)."""
        return write_frame_report(self)


# ---------------------------------------------------------------------- CLI entry
def frame_main(args: Any, progress: bool) -> int:
    """``larev-hf frame``: run (or resume) FRAME on one dataset and print the NRG row of each table."""

    run = FrameRun(FrameSettings(**field_values(FrameSettings, args)), args.output_dir, progress)
    report = run.execute()
    for axiom in report.get("tables", {}):
        values = report["nrg"][axiom]["values"] or {}
        print(f"  table {axiom[-1]} NRG: " + "  ".join(f"{METRIC_NAMES[m]} {fmt(values.get(m))}"
                                                      for m in run.settings.metrics))
    print(f"frame report: {run.dir}/frame_report.md")
    return 0
