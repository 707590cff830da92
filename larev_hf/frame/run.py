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

Stages (each with a marker; a rerun resumes, :class:`~larev_hf.runner.StageRunner`):

1. ``data``: the train and test records (``data/{train,test}.jsonl``);
2. per seed s, per variant v of F (``base`` = the default F; axiom 3 adds ``train<pct>``, ``noise<pct>`` and
   ``size-<backbone>``): ``F-<v>-s<s>``: F trained (``models/F/<v>-s<s>``) and its labels ŷ on the train and test
   splits, its rationales r̂ on the test split for ``base`` (``task_model/<v>-s<s>/``);
3. per seed, metric and variant: ``GH-<metric>-<v>-s<s>``: G and H (``models/GH/<metric>/<v>-s<s>/{G,H}``); GH-GOLD
   does not depend on F and is trained once per seed (variant ``base``); F-GOLD has none;
4. ``axioms-s<s>``: every simulator's predictions for every rationale (``evaluations/s<s>/<metric>-<v>.jsonl``,
   each file written once, so an interrupted stage resumes by file).

The report (``results/seed<s>.json``, ``frame_report.json``, ``frame_report.md``, ``frame_axioms.png``) is rebuilt
from the evaluations on every call (seconds).

**Where FRAME is silent** (docs/frame.md lists these too): H is trained on x ⊕ ṙ, the *gold* rationale (Fig. 4 leaves
it open among r̂, ẏ, ṙ, ŷ); G and H start from the same initial weights (one seed); the training subsets of axiom 3
(A) are nested prefixes of one seeded shuffle of the training split; the noisy labels of (B) flip exactly
``round(share · n)`` labels (:func:`~larev_hf.frame.meta_metrics.noisy_labels`); the 100% / 0% / default-size settings of
(A)-(C) are the one default F; SCV divides by |μ| where μ < 0 (``--scv-denominator``; F-GOLD's Φ(ŷ) is never
positive, yet the paper prints positive SCVs for it) and is 0 where every setting gives the same Φ(ŷ) ≤ 0 (σ = 0);
F's labels on the train split (the targets of GH-PRED and NP-GH-PRED) and F-GOLD's labels are generated up to
:data:`LABEL_TOKENS` tokens (the label precedes the rationale, so greedy decoding gives the same label as a full
generation); the std over seeds is the population one; the NRG column is
computed from the seed means (as the paper's printed tables 1 and 2 reproduce), the per-seed NRG's mean ± std is
reported beside it; a meta-metric undefined for some metric (a SCV with μ = 0 or a single setting, a MAR with a zero
accuracy, an empty subpopulation) is left out of that axiom's NRG, and the report says so.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.explain.run_dir import MetaRunDirectory
from larev_hf.frame.meta_metrics import (
    AXIOM_META_METRICS,
    FACTORS,
    METRIC_NAMES,
    NON_REFERENCE,
    RATIONALE_NAMES,
    RATIONALES,
    TABLE_COLUMNS,
    accuracy,
    asd,
    cell_note,
    contrastive_perturbation,
    defined_nrg,
    equivalent_perturbation,
    mar,
    noisy_labels,
    phi,
    scv_value,
    seed_summary,
)
from larev_hf.frame.report import fmt, paper_comparison, plot_axioms, render_frame_markdown
from larev_hf.frame.settings import FRAME_METRICS, FrameSettings
from larev_hf.io import file_sha256, read_json, read_jsonl, write_json, write_jsonl, write_text

logger = logging.getLogger(__name__)

#: FRAME's four RLC metrics (§3.3), in table order, and their display names.
RLC_METRICS: tuple[str, ...] = FRAME_METRICS
#: Tokens F may generate for a label alone (its label comes before the separator; the rationale is not needed).
LABEL_TOKENS = 24
#: The variant of F every axiom but 3 (A)-(C) uses.
BASE = "base"


# ---------------------------------------------------------------------- simulators
def generate_labels(model: Any, tokenizer: Any, inputs: Sequence[str], records: Sequence[Mapping[str, Any]],
                    batch_size: int = 64, max_new_tokens: int = LABEL_TOKENS,
                    label_decoding: str = "generate") -> tuple[list[str], list[bool]]:
    """The label a self-rationalizing F gives each input and whether it was repaired: generated (greedy, batched as
    :meth:`~larev_hf.explain.task_model.SelfRationalizer.predict`), parsed and repaired to the nearest of the record's
    choices, or (``label_decoding="score"``) ranked over the choices
    (:meth:`~larev_hf.explain.task_model.SelfRationalizer.score_labels`, never repaired)."""
    from larev_hf.explain.task_model import SelfRationalizer, check_label_decoding, parse_outputs
    from larev_hf.modeling.generation import generate_texts

    check_label_decoding(label_decoding)
    if label_decoding == "score":
        return SelfRationalizer(model, tokenizer).score_labels(inputs, records, batch_size), [False] * len(inputs)
    outputs = generate_texts(model, tokenizer, inputs, batch_size=batch_size, max_new_tokens=max_new_tokens)
    predictions, repaired = parse_outputs(outputs, records)
    return [p["label"] for p in predictions], repaired


#: What H may read in training (``--h-rationales``): the gold rationale ṙ, or the label H is trained to predict
#: stated alone (ẏ for GH-GOLD, ŷ for GH-PRED and NP-GH-PRED).
H_RATIONALES: tuple[str, ...] = ("gold", "label")


def check_h_rationales(kinds: Sequence[str]) -> None:
    """Refuse an empty ``--h-rationales`` or a kind that is not in :data:`H_RATIONALES`, naming the flag."""
    unknown = [kind for kind in kinds if kind not in H_RATIONALES]
    if unknown or not kinds:
        raise ValueError(f"--h-rationales: {unknown or 'none given'}; expected some of {', '.join(H_RATIONALES)}")


def h_training_rationales(records: Sequence[Mapping[str, Any]], targets: Sequence[str], kinds: Sequence[str],
                          seed: int) -> list[str]:
    """H's training rationale per record: one of ``kinds`` (:data:`H_RATIONALES`) drawn uniformly by a generator
    seeded by (seed, example id), so the mix is the same for every metric and variant of one seed. FRAME's Fig. 4
    leaves H's rationale open among r̂, ẏ, ṙ, ŷ; an H that never reads a stated label sees r = ŷ out of distribution
    (measured in docs/frame.md), one that only reads labels learns nothing about rationales."""
    from larev_hf.meta.suite import example_rng

    check_h_rationales(kinds)
    texts = []
    for record, target in zip(records, targets, strict=True):
        kind = kinds[int(example_rng(seed, record["id"], "frame-h").integers(len(kinds)))] if len(kinds) > 1 else kinds[0]
        texts.append(record["rationale"] if kind == "gold" else target)
    return texts


class SimulatorPair:
    """G (control: x → label) and H (treatment: x ⊕ r → label) of one RLC metric.

    Trained pairs (GH-GOLD, GH-PRED, NP-GH-PRED) predict the most probable of the record's choices
    (:func:`~larev_hf.explain.choices.choice_log_probs`); F-GOLD's pair is F itself (``generative``), predicting the label
    it generates. H is trained on x ⊕ ṙ, the gold rationale: FRAME's Fig. 4 says only that H reads "some rationale
    (one of r̂, ẏ, ṙ, ŷ)"; ṙ is the rationale every metric has without F, so GH-GOLD's H does not depend on F either.
    """

    def __init__(self, metric: str, control: Any, treatment: Any, tokenizer: Any, generative: bool = False,
                 batch_size: int = 64, label_decoding: str = "generate") -> None:
        self.metric = metric
        self.label_decoding = label_decoding
        self.control = control
        self.treatment = treatment
        self.tokenizer = tokenizer
        self.generative = generative
        self.batch_size = batch_size
        #: Per call of :meth:`predict` on a generative pair: whether each generated label was repaired.
        self.last_repaired: list[bool] = []

    @classmethod
    def of_task_model(cls, task_model: Any, metric: str = "f_gold", label_decoding: str = "generate") -> SimulatorPair:
        """F-GOLD's pair: G = F(x), H = F(x ⊕ r) (a :class:`~larev_hf.explain.task_model.SelfRationalizer`), reading
        labels as F's predictions are read (``label_decoding``)."""
        return cls(metric, task_model.model, task_model.model, task_model.tokenizer, generative=True,
                   label_decoding=label_decoding)

    @classmethod
    def train(cls, metric: str, records: Sequence[Mapping[str, Any]], directory: str | os.PathLike,
              targets: Sequence[str], backbone: str, settings: Any = None, seed: int = 0,
              h_rationales: Sequence[str] = ("gold",)) -> SimulatorPair:
        """Train G on x → target and H on x ⊕ r → target into ``directory/{G,H}`` (one tokenizer,
        ``directory/tokenizer``; both from the same initial weights); a finished model is kept. H's r per record is
        drawn from ``h_rationales`` (:func:`h_training_rationales`): the gold ṙ, the target label, or both."""
        from larev_hf.explain.choices import augmented_input
        from larev_hf.modeling import build_model, build_tokenizer
        from larev_hf.modeling.templates import task_text
        from larev_hf.training import TrainSettings, train_seq2seq

        targets = list(targets)
        if len(targets) != len(records):
            raise ValueError(f"got {len(targets)} targets for {len(records)} records")
        directory = Path(directory)
        settings = settings or TrainSettings(seed=seed, progress=False)
        tokenizer_dir = directory / "tokenizer"
        if (tokenizer_dir / "tokenizer_config.json").is_file():
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        else:
            texts = [task_text(r) for r in records] + [r["rationale"] for r in records]
            texts += [choice for r in records for choice in r["choices"]]
            tokenizer = build_tokenizer(backbone, texts)
            tokenizer.save_pretrained(tokenizer_dir)
        rationales = h_training_rationales(records, targets, h_rationales, seed)
        sources = {"G": [task_text(r) for r in records],
                   "H": [augmented_input(r, text) for r, text in zip(records, rationales, strict=True)]}
        for name, texts in sources.items():
            if not (directory / name / "config.json").is_file():
                train_seq2seq(build_model(backbone, tokenizer, seed=seed), tokenizer, texts, targets,
                              directory / name, settings)
        return cls.load(metric, directory)

    @classmethod
    def load(cls, metric: str, directory: str | os.PathLike, device: str | None = None) -> SimulatorPair:
        """A trained pair saved by :meth:`train`."""
        from larev_hf.modeling import load_evaluator

        control, tokenizer = load_evaluator(Path(directory) / "G", device=device)
        treatment, _ = load_evaluator(Path(directory) / "H", device=device)
        return cls(metric, control, treatment, tokenizer)

    def predict(self, model: Any, inputs: Sequence[str], records: Sequence[Mapping[str, Any]],
                targets: Sequence[str] | None = None) -> list[str]:
        """One of the record's choices per input."""
        if self.generative:
            labels, self.last_repaired = generate_labels(model, self.tokenizer, inputs, records, self.batch_size,
                                                         label_decoding=self.label_decoding)
            return labels
        from larev_hf.explain.choices import choice_log_probs

        return choice_log_probs(model, self.tokenizer, inputs, records, targets, self.batch_size)[1]

    def control_predictions(self, records: Sequence[Mapping[str, Any]],
                            targets: Sequence[str] | None = None) -> list[str]:
        """G's label for each x."""
        from larev_hf.modeling.templates import task_text

        return self.predict(self.control, [task_text(r) for r in records], records, targets)

    def treatment_predictions(self, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                              targets: Sequence[str] | None = None) -> list[str]:
        """H's label for each x ⊕ r."""
        from larev_hf.explain.choices import augmented_input

        inputs = [augmented_input(r, t) for r, t in zip(records, rationales, strict=True)]
        return self.predict(self.treatment, inputs, records, targets)

    def control_accuracy(self, records: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> float:
        """𝟙_G(ŷ|x) in percent, ``targets`` = ŷ."""
        return accuracy(self.control_predictions(records, targets), list(targets))

    def treatment_accuracy(self, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                           targets: Sequence[str]) -> float:
        """𝟙_H(ŷ|x,r) in percent, ``targets`` = ŷ."""
        return accuracy(self.treatment_predictions(records, rationales, targets), list(targets))

    def phi_scores(self, records: Sequence[Mapping[str, Any]], rationales: Mapping[str, Sequence[str]],
                   targets: Sequence[str]) -> dict[str, float]:
        """Φ(r) = 𝟙_H(ŷ|x,r) − 𝟙_G(ŷ|x) per rationale type (``{type: [r_i]}``)."""
        control = self.control_accuracy(records, targets)
        return {kind: phi(self.treatment_accuracy(records, texts, targets), control)
                for kind, texts in rationales.items()}


class Simulators:
    """The simulator pairs of the RLC metrics for one task model F (metric → :class:`SimulatorPair`)."""

    def __init__(self, pairs: Mapping[str, SimulatorPair]) -> None:
        self.pairs = dict(pairs)

    def __getitem__(self, metric: str) -> SimulatorPair:
        return self.pairs[metric]

    def __contains__(self, metric: object) -> bool:
        return metric in self.pairs

    def control_accuracy(self, metric: str, records: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> float:
        """𝟙_G(ŷ|x) of ``metric``."""
        return self.pairs[metric].control_accuracy(records, targets)

    def treatment_accuracy(self, metric: str, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                           targets: Sequence[str]) -> float:
        """𝟙_H(ŷ|x,r) of ``metric``."""
        return self.pairs[metric].treatment_accuracy(records, rationales, targets)

    def phi_scores(self, metric: str, records: Sequence[Mapping[str, Any]], rationales: Mapping[str, Sequence[str]],
                   targets: Sequence[str]) -> dict[str, float]:
        """Φ per rationale type of ``metric``."""
        return self.pairs[metric].phi_scores(records, rationales, targets)


# ---------------------------------------------------------------------- variants and rationales
@dataclass(frozen=True)
class Variant:
    """One task model F of the run: the default (``base``) or one setting of axiom 3's factors (A)-(C)."""

    name: str
    backbone: str
    train_share: float = 1.0
    noise_share: float = 0.0


def share_name(prefix: str, share: float) -> str:
    """``("train", 0.5)`` → ``"train50"``, ``("noise", 0.125)`` → ``"noise12.5"``."""
    percent = share * 100
    return f"{prefix}{round(percent)}" if abs(percent - round(percent)) < 1e-9 else f"{prefix}{percent:g}"


def backbone_slug(backbone: str) -> str:
    """A file-name-safe name of a backbone (a preset, a Hub name or a path)."""
    return re.sub(r"[^\w.-]", "-", Path(backbone.rstrip("/")).name)


def variant_plan(settings: FrameSettings) -> tuple[list[Variant], dict[str, list[str]]]:
    """F's variants (``base`` first) and, when axiom 3 is measured, the variants of each factor (A)-(C): the 100%,
    0% and ``task_backbone`` settings are ``base`` itself."""
    base = Variant(BASE, settings.task_backbone)
    variants: dict[str, Variant] = {BASE: base}
    factors: dict[str, list[str]] = {}
    if "3" in settings.axioms:
        plan = {
            "train_size": [base if share == 1.0 else Variant(share_name("train", share), base.backbone, train_share=share)
                           for share in settings.share_values("train_shares")],
            "label_noise": [base if share == 0.0 else Variant(share_name("noise", share), base.backbone,
                                                               noise_share=share)
                            for share in settings.share_values("noise_shares")],
            "capacity": [base if backbone == base.backbone else Variant(f"size-{backbone_slug(backbone)}", backbone)
                         for backbone in settings.capacity_backbones],
        }
        for factor, members in plan.items():
            factors[factor] = list(dict.fromkeys(v.name for v in members))
            for variant in members:
                variants.setdefault(variant.name, variant)
    return list(variants.values()), factors


def rationale_types(axioms: Sequence[str], base: bool) -> list[str]:
    """The rationales Φ is measured for: every one the axioms need for ``base``, ŷ alone for the other variants."""
    if not base:
        return ["y_hat"]
    kinds = ["y_hat"]
    if "1" in axioms:
        kinds += list(NON_REFERENCE)
    if "2" in axioms:
        kinds += ["psi_e", "psi_c"]
    return kinds


def rationale_texts(records: Sequence[Mapping[str, Any]], predictions: Sequence[Mapping[str, str]], seed: int,
                    kinds: Sequence[str] = RATIONALES) -> dict[str, list[str]]:
    """The text of each rationale type per record: ŷ, F's r̂, the gold ṙ and ẏ, Ψe(ŷ) and Ψc(ŷ) (appendix A.1), the
    perturbations drawn from a generator seeded by (seed, example id) (:func:`~larev_hf.meta.suite.example_rng`)."""
    from larev_hf.meta.suite import example_rng

    out: dict[str, list[str]] = {}
    for kind in kinds:
        texts = []
        for record, prediction in zip(records, predictions, strict=True):
            label = prediction["label"]
            if kind == "y_hat":
                texts.append(label)
            elif kind == "r_hat":
                texts.append(prediction.get("rationale", ""))
            elif kind == "r_dot":
                texts.append(record["rationale"])
            elif kind == "y_dot":
                texts.append(record["label"])
            elif kind == "psi_e":
                texts.append(equivalent_perturbation(label, record["task"], example_rng(seed, record["id"], "frame-psi-e")))
            elif kind == "psi_c":
                texts.append(contrastive_perturbation(label, record["choices"],
                                                      example_rng(seed, record["id"], "frame-psi-c")))
            else:
                raise ValueError(f"unknown rationale type {kind!r}; expected one of {RATIONALES}")
        out[kind] = texts
    return out


def train_subset(records: Sequence[Mapping[str, Any]], share: float, seed: int) -> list[Mapping[str, Any]]:
    """Axiom 3 (A): the first ``round(share · n)`` records of one seeded shuffle (so smaller shares are subsets of
    larger ones); the whole split, in file order, for share 1."""
    if share >= 1.0:
        return list(records)
    from larev_hf.meta.suite import example_rng

    order = example_rng(seed, "train-order", "frame").permutation(len(records))
    n = max(1, int(round(share * len(records))))
    return [records[i] for i in order[:n]]


# ---------------------------------------------------------------------- per-seed results (numpy only)
def axiom_nrg(meta: Mapping[str, Mapping[str, Any]], axiom: str, columns: Sequence[str] | None = None) -> dict[str, Any]:
    """The NRG of ``axiom`` across the metrics of ``meta`` (metric → {meta-metric: value}); a meta-metric undefined
    for some metric is left out (``dropped``); ``values`` is None when fewer than two metrics or no meta-metric is
    left. ``columns``: only these meta-metrics."""
    return defined_nrg(meta, {name: d for name, d in AXIOM_META_METRICS[axiom].items()
                              if columns is None or name in columns})


def seed_results(evaluations: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
                 factors: Mapping[str, Sequence[str]], axioms: Sequence[str], scv_denominator: str = "abs",
                 n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """One seed's accuracies, Φ and meta-metrics per metric, and each axiom's NRG, from the evaluation rows
    (metric → variant → rows ``{id, gold, target, control, treatment: {type: label}}``)."""
    from larev_hf.scores.stats import bootstrap_ci

    metrics: dict[str, Any] = {}
    for metric, by_variant in evaluations.items():
        accuracies: dict[str, Any] = {}
        phis: dict[str, dict[str, float]] = {}
        for variant, rows in by_variant.items():
            targets = [row["target"] for row in rows]
            control = accuracy([row["control"] for row in rows], targets)
            treatment = {kind: accuracy([row["treatment"][kind] for row in rows], targets) for kind in rows[0]["treatment"]}
            accuracies[variant] = {"control": control, "treatment": treatment}
            phis[variant] = {kind: phi(value, control) for kind, value in treatment.items()}
        base_rows, base = by_variant[BASE], accuracies[BASE]
        meta: dict[str, Any] = {}
        notes: dict[str, dict[str, str]] = {}
        extra: dict[str, Any] = {}
        per_example = np.array([100.0 * ((row["treatment"]["y_hat"] == row["target"]) - (row["control"] == row["target"]))
                                for row in base_rows])
        extra["phi_reference_ci95"] = bootstrap_ci(per_example, n_boot=n_boot, seed=seed)
        if "1" in axioms:
            meta["phi_reference"] = phis[BASE]["y_hat"]
            value = mar(base["treatment"]["y_hat"], {kind: base["treatment"][kind] for kind in NON_REFERENCE})
            meta["mar"] = value if math.isfinite(value) else None
            if not math.isfinite(value):
                zero = [RATIONALE_NAMES[k] for k in NON_REFERENCE if base["treatment"][k] == 0]
                notes["mar"] = cell_note("undefined", f"𝟙_H(ŷ|x,r) = 0 for r = {', '.join(zero)}: the ratio is infinite")
        if "2" in axioms:
            meta["asd_equivalent"] = asd(phis[BASE]["y_hat"], phis[BASE]["psi_e"])
            meta["asd_contrastive"] = asd(phis[BASE]["y_hat"], phis[BASE]["psi_c"])
        if "3" in axioms:
            extra["phi_by_variant"] = {variant: phis[variant]["y_hat"] for variant in phis}
            for factor in FACTORS:
                members = list(factors.get(factor, []))
                value, note = scv_value([phis[v]["y_hat"] for v in members], scv_denominator)
                meta[f"scv_{factor}"] = value
                if note:
                    notes[f"scv_{factor}"] = note
            groups = {}
            for name, keep in (("correct", True), ("incorrect", False)):
                rows = [row for row in base_rows if (row["target"] == row["gold"]) is keep]
                if rows:
                    targets = [row["target"] for row in rows]
                    control = accuracy([row["control"] for row in rows], targets)
                    treatment = accuracy([row["treatment"]["y_hat"] for row in rows], targets)
                    groups[name] = {"n": len(rows), "control": control, "treatment": treatment,
                                    "phi": phi(treatment, control)}
                else:
                    groups[name] = {"n": 0, "control": None, "treatment": None, "phi": None}
            extra["subpopulation"] = groups
            if groups["correct"]["n"] and groups["incorrect"]["n"]:
                meta["asd_subpopulation"] = asd(groups["correct"]["phi"], groups["incorrect"]["phi"])
            else:
                empty = "correct" if not groups["correct"]["n"] else "incorrect"
                meta["asd_subpopulation"] = None
                notes["asd_subpopulation"] = cell_note("undefined", f"F made no {empty} test prediction: Φ of that "
                                                   "subpopulation is undefined")
        metrics[metric] = {"accuracy": accuracies, "phi": phis, "meta": meta, "notes": notes, **extra}
    results: dict[str, Any] = {"metrics": metrics, "nrg": {}}
    for axiom in (f"axiom{a}" for a in sorted(axioms)):
        results["nrg"][axiom] = axiom_nrg({m: metrics[m]["meta"] for m in metrics}, axiom)
    if "3" in axioms:  # the paper's printed "All" column of table 3 is the NRG of (A) and (B) alone (docs/frame.md)
        results["nrg"]["axiom3_ab"] = axiom_nrg({m: metrics[m]["meta"] for m in metrics}, "axiom3",
                                                ["scv_train_size", "scv_label_noise"])
    return results


def aggregate_seeds(per_seed: Mapping[int, Mapping[str, Any]], metrics: Sequence[str],
                    axioms: Sequence[str]) -> dict[str, Any]:
    """Every meta-metric's mean ± std over the seeds, each table's NRG from the means (and the per-seed NRG's
    mean ± std), the notes of undefined or |μ| cells."""
    seeds = list(per_seed)
    tables: dict[str, Any] = {}
    nrg_out: dict[str, Any] = {}
    notes = []
    for seed in seeds:
        for metric in metrics:
            for name, note in per_seed[seed]["metrics"][metric]["notes"].items():
                notes.append({"seed": seed, "metric": metric, "meta_metric": name, **note})
    keys = [f"axiom{a}" for a in sorted(axioms)] + (["axiom3_ab"] if "3" in axioms else [])
    for key in keys:
        axiom = "axiom3" if key == "axiom3_ab" else key
        columns = [name for name, _ in TABLE_COLUMNS[axiom]]
        if key == "axiom3_ab":
            columns = ["scv_train_size", "scv_label_noise"]
        cells = {metric: {name: seed_summary([per_seed[s]["metrics"][metric]["meta"].get(name) for s in seeds])
                          for name in columns} for metric in metrics}
        from_means = axiom_nrg({m: {name: cells[m][name]["mean"] for name in columns} for m in metrics}, axiom, columns)
        per_seed_nrg = {metric: seed_summary([(per_seed[s]["nrg"][key]["values"] or {}).get(metric) for s in seeds])
                        for metric in metrics}
        nrg_out[key] = {**from_means, "per_seed": per_seed_nrg}
        if key != "axiom3_ab":
            tables[key] = cells
    return {"tables": tables, "nrg": nrg_out, "notes": notes}


# ---------------------------------------------------------------------- the run
class FrameRun(MetaRunDirectory):
    """One FRAME meta-evaluation (see the module docstring)."""

    settings: FrameSettings

    # ------------------------------------------------------------------ inputs
    def check(self) -> None:
        """Refuse bad settings before anything is written."""
        from larev_hf.modeling import check_backbone

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
        self.library_methods()  # a missing run or an unfinished method raises naming --library-run/--library-methods
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
        from larev_hf.modeling import training_defaults
        from larev_hf.modeling.presets import is_pretrained
        from larev_hf.training import TrainSettings

        defaults = training_defaults(backbone)
        learning_rate = self.settings.learning_rate if self.settings.learning_rate and is_pretrained(backbone) else \
            defaults["learning_rate"]
        return TrainSettings(learning_rate=learning_rate,
                             num_train_epochs=self.settings.num_train_epochs or defaults["num_train_epochs"],
                             batch_size=int(defaults["batch_size"]), seed=seed, progress=self.progress)

    def label_decoding(self) -> str:
        """How F's labels are read (``--f-label-decoding``; ``auto``: ranked over the choices for QA, whose answers
        are open phrases F rarely reproduces exactly, generated for NLI's three label words)."""
        value = self.settings.f_label_decoding
        if value == "auto":
            return "score" if self.records("test") and self.records("test")[0]["task"] == "qa" else "generate"
        return value

    def simulator_backbone(self, metric: str) -> str:
        return self.settings.scratch_simulator if metric == "np_gh_pred" else self.settings.pretrained_simulator

    def library_run(self) -> Any:
        """The trained ``larev-hf run`` of ``--library-run`` (loaded once), or None."""
        if self.settings.library_run is None:
            return None
        if "library_run" not in self._cache:
            from larev_hf.pipeline import Run

            self._cache["library_run"] = Run.load(self.settings.library_run, progress=False)
        return self._cache["library_run"]

    def library_methods(self) -> list[str]:
        """The library metrics put through the axioms: ``--library-methods`` or every method the run has trained
        that has a pointwise score (none without ``--library-run``)."""
        if "library_methods" in self._cache:
            return self._cache["library_methods"]
        from larev_hf.methods import get_method

        run = self.library_run()
        if run is None:
            if self.settings.library_methods:
                raise ValueError("--library-methods needs --library-run (a trained `larev-hf run` directory)")
            return []
        if run.config.dataset != self.settings.dataset:
            raise ValueError(f"--library-run: {run.dir} is a {run.config.dataset!r} run; expected {self.settings.dataset!r}")
        names = list(self.settings.library_methods) or [m for m in run.config.methods if not run.missing_stages(m)]
        for name in names:
            get_method(name)  # an unknown name raises, listing the known ones
            if missing := run.missing_stages(name):
                raise ValueError(f"--library-methods: {name!r}'s stages {missing} have not finished in {run.dir}")
        self._cache["library_methods"] = names
        return names

    # ------------------------------------------------------------------ paths
    def task_dir(self, variant: str, seed: int) -> Path:
        """F's labels, rationales and training record of one variant and seed."""
        return self.dir / "task_model" / f"{variant}-s{seed}"

    def task_model_dir(self, variant: str, seed: int) -> Path:
        return self.dir / "models" / "F" / f"{variant}-s{seed}"

    def simulator_dir(self, metric: str, variant: str, seed: int) -> Path:
        """G and H of ``metric`` for F's ``variant`` (GH-GOLD's: always ``base``)."""
        return self.dir / "models" / "GH" / metric / f"{BASE if metric == 'gh_gold' else variant}-s{seed}"

    def evaluation_path(self, metric: str, variant: str, seed: int) -> Path:
        return self.dir / "evaluations" / f"s{seed}" / f"{metric}-{variant}.jsonl"

    def library_path(self, method: str, variant: str, seed: int) -> Path:
        return self.dir / "library" / f"s{seed}" / f"{method}-{variant}.jsonl"

    def task_predictions(self, variant: str, seed: int, split: str = "test") -> list[dict[str, Any]]:
        return [row for _, row in read_jsonl(self.task_dir(variant, seed) / f"{split}.jsonl")]

    # ------------------------------------------------------------------ stages
    def stage_task_model(self, variant: Variant, seed: int) -> None:
        """F of one variant: trained (on a share of the split, or on noisy labels, or at another size), then its
        labels on the train and test splits (and, for ``base``, its test rationales r̂)."""
        from larev_hf.explain.task_model import SelfRationalizer
        from larev_hf.meta.suite import example_rng
        from larev_hf.modeling.templates import task_text

        train, test = self.records("train"), self.records("test")
        subset = train_subset(train, variant.train_share, seed)
        labels = [r["label"] for r in subset]
        flipped: list[int] = []
        if variant.noise_share > 0:
            labels, flipped = noisy_labels(labels, [r["choices"] for r in subset], variant.noise_share,
                                           example_rng(seed, variant.name, "frame-noise"))
        model = SelfRationalizer.train(subset, self.task_model_dir(variant.name, seed), backbone=variant.backbone,
                                       settings=self.train_settings(variant.backbone, seed), labels=labels, seed=seed)
        decoding = self.label_decoding()
        train_labels, train_repaired = generate_labels(model.model, model.tokenizer, [task_text(r) for r in train], train,
                                                       label_decoding=decoding)
        if variant.name == BASE:
            predictions = model.predict(test, label_decoding=decoding)
            test_repaired = model.repaired
        else:
            test_labels, repaired = generate_labels(model.model, model.tokenizer, [task_text(r) for r in test], test,
                                                    label_decoding=decoding)
            predictions = [{"label": label, "rationale": ""} for label in test_labels]
            test_repaired = sum(repaired)
        out = self.task_dir(variant.name, seed)
        write_jsonl(out / "train.jsonl", [{"id": r["id"], "label": y, "gold": r["label"]}
                                          for r, y in zip(train, train_labels, strict=True)])
        write_jsonl(out / "test.jsonl", [{"id": r["id"], "label": p["label"], "rationale": p["rationale"],
                                          "gold": r["label"]} for r, p in zip(test, predictions, strict=True)])
        write_json(out / "training.json", {
            **asdict(variant), "seed": seed, "n_trained": len(subset), "trained_ids": [r["id"] for r in subset],
            "trained_labels": labels, "flipped_ids": [subset[i]["id"] for i in flipped],
            "train_accuracy": accuracy(train_labels, [r["label"] for r in train]),
            "test_accuracy": accuracy([p["label"] for p in predictions], [r["label"] for r in test]),
            "repaired": {"train": int(sum(train_repaired)), "test": int(test_repaired)},
        })

    def stage_simulators(self, metric: str, variant: str, seed: int) -> None:
        """G and H of a trained RLC metric: targets ẏ (GH-GOLD) or the variant's ŷ on the train split."""
        train = self.records("train")
        if metric == "gh_gold":
            targets = [r["label"] for r in train]
        else:
            rows = self.task_predictions(variant, seed, "train")
            if [row["id"] for row in rows] != [r["id"] for r in train]:
                raise RuntimeError(f"{self.task_dir(variant, seed)}/train.jsonl does not match data/train.jsonl")
            targets = [row["label"] for row in rows]
        backbone = self.simulator_backbone(metric)
        SimulatorPair.train(metric, train, self.simulator_dir(metric, variant, seed), targets, backbone,
                            self.train_settings(backbone, seed), seed, self.settings.h_rationales)

    def simulator_pair(self, metric: str, variant: str, seed: int) -> SimulatorPair:
        if metric == "f_gold":
            from larev_hf.explain.task_model import SelfRationalizer

            return SimulatorPair.of_task_model(SelfRationalizer.load(self.task_model_dir(variant, seed)),
                                               label_decoding=self.label_decoding())
        return SimulatorPair.load(metric, self.simulator_dir(metric, variant, seed))

    def base_rationales(self, seed: int) -> dict[str, list[str]]:
        """Every rationale the axioms need for the default F of ``seed``, per type (the simulators' and the library
        metrics' stages score the same texts: the perturbations are seeded by (seed, example id))."""
        kinds = rationale_types(self.settings.axioms, base=True)
        return rationale_texts(self.records("test"), self.task_predictions(BASE, seed), seed, kinds)

    def stage_axioms(self, seed: int) -> None:
        """Every metric's G and H predictions for every variant of F and every rationale the axioms need."""
        test = self.records("test")
        variants, _ = self.plan()
        rationales = self.base_rationales(seed)
        write_jsonl(self.dir / "evaluations" / f"s{seed}" / "rationales.jsonl",
                    [{"id": r["id"], **{kind: texts[i] for kind, texts in rationales.items()}} for i, r in enumerate(test)])
        for variant in variants:
            predictions = self.task_predictions(variant.name, seed)
            if [p["id"] for p in predictions] != [r["id"] for r in test]:
                raise RuntimeError(f"{self.task_dir(variant.name, seed)}/test.jsonl does not match data/test.jsonl")
            targets = [p["label"] for p in predictions]
            texts = rationales if variant.name == BASE else {"y_hat": targets}
            for metric in self.settings.metrics:
                path = self.evaluation_path(metric, variant.name, seed)
                if path.is_file():
                    continue
                pair = self.simulator_pair(metric, variant.name, seed)
                control = pair.control_predictions(test, targets)
                repaired = {"control": pair.last_repaired}
                treatment = {}
                for kind, values in texts.items():
                    treatment[kind] = pair.treatment_predictions(test, values, targets)
                    repaired[kind] = pair.last_repaired
                rows = []
                for i, record in enumerate(test):
                    row = {"id": record["id"], "gold": record["label"], "target": targets[i], "control": control[i],
                           "treatment": {kind: treatment[kind][i] for kind in texts}}
                    if pair.generative:
                        row["repaired"] = {kind: bool(flags[i]) for kind, flags in repaired.items()}
                    rows.append(row)
                write_jsonl(path, rows)

    def stage_library(self, seed: int) -> None:
        """The library metrics' pointwise scores of every rationale the axioms need, with F's labels ŷ of each
        variant as the labels scored (:mod:`larev_hf.frame.library`)."""
        from larev_hf.frame.library import library_records, score_library_variant
        from larev_hf.pipeline import baseline_builder_from_spec

        run, methods = self.library_run(), self.library_methods()
        builder = baseline_builder_from_spec(run.config.baseline_builder, run.config.seed)
        test, run_records = self.records("test"), run.split_records("test")
        ids = [r["id"] for r in test]
        variants, _ = self.plan()
        rationales = self.base_rationales(seed)
        for variant in variants:
            targets = [p["label"] for p in self.task_predictions(variant.name, seed)]
            records = library_records(run_records, ids, targets, builder)
            score_library_variant(run, methods, records, rationales if variant.name == BASE else {"y_hat": targets},
                                  {m: self.library_path(m, variant.name, seed) for m in methods})

    def stages(self) -> list[tuple[str, Any]]:
        variants, _ = self.plan()
        stages: list[tuple[str, Any]] = [("data", self.stage_data)]
        self._outputs: dict[str, list[Path]] = {"data": [self.dir / "data"]}
        for seed in self.settings.seed_values():
            for variant in variants:
                name = f"F-{variant.name}-s{seed}"
                stages.append((name, lambda v=variant, s=seed: self.stage_task_model(v, s)))
                self._outputs[name] = [self.task_model_dir(variant.name, seed), self.task_dir(variant.name, seed)]
            for metric in self.settings.metrics:
                if metric == "f_gold":
                    continue
                for variant in variants if metric != "gh_gold" else variants[:1]:
                    name = f"GH-{metric}-{variant.name}-s{seed}"
                    stages.append((name, lambda m=metric, v=variant.name, s=seed: self.stage_simulators(m, v, s)))
                    self._outputs[name] = [self.simulator_dir(metric, variant.name, seed)]
            stages.append((f"axioms-s{seed}", lambda s=seed: self.stage_axioms(s)))
            self._outputs[f"axioms-s{seed}"] = [self.dir / "evaluations" / f"s{seed}",
                                                self.dir / "results" / f"seed{seed}.json"]
            if self.settings.library_run is not None:
                stages.append((f"library-s{seed}", lambda s=seed: self.stage_library(s)))
                self._outputs[f"library-s{seed}"] = [self.dir / "library" / f"s{seed}"]
        return stages

    def library_stage_names(self) -> list[str]:
        return [f"library-s{seed}" for seed in self.settings.seed_values()] if self.settings.library_run else []

    def drop_outputs(self, stale: Sequence[str]) -> None:
        """Delete what invalidated stages wrote (models, predictions, evaluations), so they really rerun."""
        for name in stale:
            for path in getattr(self, "_outputs", {}).get(name, []):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    def inputs(self) -> dict[str, Any]:
        from larev_hf.data.loaders import source_files

        s = self.settings
        files = source_files(s.dataset, s.data_dir, ("train", "test"))
        out: dict[str, Any] = {"data": {split: file_sha256(p) if p else None for split, p in files.items()}}
        if (run := self.library_run()) is not None:  # the library run's trained models: retraining one rescores
            from larev_hf.methods import get_method

            methods = self.library_methods()
            markers = {m: [read_json(run.runner.marker(stage.name)) for stage in get_method(m).stages(run.config)]
                       for m in methods}
            for name in self.library_stage_names():
                out[name] = {"run": str(run.dir.resolve()), "methods": methods, "markers": markers}
        return out

    def execute(self) -> dict[str, Any]:
        """Run (or resume) every stage and write the report; returns ``frame_report.json``'s content."""
        self.check()
        with self.runner.lock():
            metadata = {f.name: dict(f.metadata) for f in fields(FrameSettings)}
            self.runner.check_settings(asdict(self.settings), asdict(FrameSettings()), metadata, name="frame_config.json")
            self.runner.run(self.stages(), inputs=self.inputs(), on_invalidate=self.drop_outputs,
                            independent=self.library_stage_names())
            return self.write_report()

    # ------------------------------------------------------------------ report
    def seed_results(self, seed: int) -> dict[str, Any]:
        """One finished seed's results (also written to ``results/seed<s>.json``)."""
        variants, factors = self.plan()
        s = self.settings
        evaluations = {metric: {v.name: [row for _, row in read_jsonl(self.evaluation_path(metric, v.name, seed))]
                                for v in variants} for metric in s.metrics}
        results = seed_results(evaluations, factors, s.axioms, s.scv_denominator, s.n_boot, seed)
        results["seed"] = seed
        results["task_model"] = {}
        for v in variants:
            training = read_json(self.task_dir(v.name, seed) / "training.json")
            results["task_model"][v.name] = {key: training[key] for key in (
                "backbone", "train_share", "noise_share", "n_trained", "train_accuracy", "test_accuracy", "repaired")}
            results["task_model"][v.name]["n_flipped"] = len(training["flipped_ids"])
        for metric in s.metrics:
            if metric == "f_gold":
                rows = evaluations[metric][BASE]
                results["metrics"][metric]["repaired"] = {kind: int(sum(row["repaired"][kind] for row in rows))
                                                         for kind in rows[0]["repaired"]}
        write_json(self.dir / "results" / f"seed{seed}.json", results)
        return results

    def library_report(self, seeds: Sequence[int]) -> dict[str, Any]:
        """The library metrics' rows of tables 1-3 over the seeds whose ``library`` stage has finished."""
        from larev_hf.frame.library import aggregate_library, library_seed_results
        from larev_hf.methods import get_method

        s = self.settings
        variants, factors = self.plan()
        methods = self.library_methods()
        units = {m: get_method(m).unit for m in methods}
        per_seed = {}
        for seed in seeds:
            rows = {m: {v.name: [row for _, row in read_jsonl(self.library_path(m, v.name, seed))] for v in variants}
                    for m in methods}
            per_seed[seed] = library_seed_results(rows, units, factors, s.axioms, s.scv_denominator, s.n_boot, seed)
            write_json(self.dir / "results" / f"library_seed{seed}.json", per_seed[seed])
        report = aggregate_library(per_seed, {m: get_method(m).title for m in methods}, units, s.axioms)
        report["run"] = str(self.library_run().dir)
        report["backbone"] = self.library_run().config.backbone
        return report

    def write_report(self) -> dict[str, Any]:
        s = self.settings
        variants, factors = self.plan()
        seeds = [seed for seed in s.seed_values() if self.runner.is_done(f"axioms-s{seed}")]
        per_seed = {seed: self.seed_results(seed) for seed in seeds}
        report: dict[str, Any] = {
            "dataset": s.dataset, "settings": asdict(s), "seeds": seeds,
            "n_train": len(self.records("train")), "n_test": len(self.records("test")),
            "metrics": {m: METRIC_NAMES[m] for m in s.metrics},
            "stand_ins": {
                "F (T5-Base)": s.task_backbone,
                "pretrained G, H (T5-Base; GH-GOLD, GH-PRED)": s.pretrained_simulator,
                "non-pretrained G, H (NP-GH-PRED)": s.scratch_simulator,
                "capacity (T5-Small / Base / Large)": list(s.capacity_backbones) if "3" in s.axioms else None,
            },
            "variants": {v.name: {**asdict(v), "factors": [f for f, names in factors.items() if v.name in names]}
                         for v in variants},
            "factors": factors,
        }
        if per_seed:
            report.update(aggregate_seeds(per_seed, s.metrics, s.axioms))
            report["task_model"] = {v.name: {key: seed_summary([per_seed[x]["task_model"][v.name][key] for x in seeds])
                                             for key in ("test_accuracy", "train_accuracy")} for v in variants}
            base_rationales = [k for k in RATIONALES if k in rationale_types(s.axioms, True)]
            report["accuracy"] = {m: {"control": seed_summary([per_seed[x]["metrics"][m]["accuracy"][BASE]["control"]
                                                           for x in seeds]),
                                      "treatment": {k: seed_summary([per_seed[x]["metrics"][m]["accuracy"][BASE]["treatment"][k]
                                                                 for x in seeds]) for k in base_rationales}}
                                  for m in s.metrics}
            if "3" in s.axioms:
                report["phi_by_variant"] = {m: {v.name: seed_summary([per_seed[x]["metrics"][m]["phi_by_variant"][v.name]
                                                                  for x in seeds]) for v in variants}
                                            for m in s.metrics}
            report["phi_reference_ci95"] = {m: {str(x): per_seed[x]["metrics"][m]["phi_reference_ci95"] for x in seeds}
                                            for m in s.metrics}
        if per_seed:
            report["paper"] = paper_comparison(report)
        library_seeds = [seed for seed in seeds if self.runner.is_done(f"library-s{seed}")]
        if self.settings.library_run is not None and library_seeds:
            report["library"] = self.library_report(library_seeds)
        markers = self.runner.markers()
        report["stage_seconds"] = {name: markers[name]["seconds"] for name, _ in self.stages() if name in markers}
        write_json(self.dir / "frame_report.json", report)
        write_text(self.dir / "frame_report.md", render_frame_markdown(report))
        if per_seed:
            plot_axioms(report, self.dir / "frame_axioms.png")
        return report


# ---------------------------------------------------------------------- CLI entry
def frame_main(args: Any, progress: bool) -> int:
    """``larev-hf frame``: run (or resume) FRAME on one dataset and print the NRG row of each table."""
    from larev_hf.methods.settings import field_values

    run = FrameRun(FrameSettings(**field_values(FrameSettings, args)), args.output_dir, progress)
    report = run.execute()
    for axiom in report.get("tables", {}):
        values = report["nrg"][axiom]["values"] or {}
        print(f"  table {axiom[-1]} NRG: " + "  ".join(f"{METRIC_NAMES[m]} {fmt(values.get(m))}"
                                                      for m in run.settings.metrics))
    print(f"frame report: {run.dir}/frame_report.md")
    return 0
