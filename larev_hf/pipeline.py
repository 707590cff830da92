"""The run pipeline: data → evaluators → scores → report, one resumable stage at a time.

Each stage writes its artifacts into the run directory and then a marker
``stages/<name>.done``; a rerun skips every stage whose marker exists, so an interrupted run
resumes where it stopped (training stages also resume from their last epoch checkpoint).
REV needs the stages ``data``, ``tokenizer``, ``phi_base``, ``phi``, ``score`` and ``report``
(REV §2-3; thesis algorithm A.1 steps 1-5 and 10); LAREV adds ``ig``, ``environments``,
``probe`` and ``phi_la`` (A.1 steps 6-9) and, on request, the ablation models of table 5.6.
RoRA (Jiang et al., 2024, §3) adds ``rora_detector``, ``rora_masked``, ``rora_infiller``,
``rora_counterfactuals``, ``rora_phi`` and ``rora_theta``; LAS and RQ share one ``simulators`` stage.
A run without REV or LAREV skips ``phi_base`` and ``phi``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from larev_hf.data import add_baselines, add_variants, load_examples, load_schema_jsonl, make_baseline_builder
from larev_hf.data.variants import build_variants
from larev_hf.io import read_json, read_jsonl, write_json, write_jsonl
from larev_hf.modeling import (
    build_model,
    build_tokenizer,
    get_input_format,
    is_preset,
    load_evaluator,
    predict_choices,
    training_defaults,
)
from larev_hf.modeling.lora import LoraSettings
from larev_hf.report import write_report
from larev_hf.scores import VARIANTS, ConditionalVScorer, summarize_variants
from larev_hf.training import TrainSettings, train_on_records

if TYPE_CHECKING:
    from larev_hf.rora import MaskedRationale, RoRASettings

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
METHODS = ("rev", "larev", "rora", "las", "rq")
#: The rationale-augmented model each method scores with (Φ_base is shared by REV and LAREV; RoRA pairs its Φ with
#: Θ, ``rora_theta``; LAS and RQ read one simulator's accuracies).
METHOD_MODELS = {"rev": "phi", "larev": "phi_la", "rora": "rora_phi", "las": "simulator", "rq": "simulator"}
#: The training stages whose models each method scores with.
METHOD_STAGES = {"rev": ("phi_base", "phi"), "larev": ("phi_base", "phi_la"), "rora": ("rora_theta", "rora_phi"),
                 "las": ("simulators",), "rq": ("simulators",)}
#: Ablations of the LAREV objective (thesis table 5.6): model name → which penalties are switched off.
ABLATIONS = {
    "phi_la_no_irm": {"lambda_irm": 0.0},
    "phi_la_no_probe": {"lambda_probe": 0.0},
    "phi_la_env_only": {"lambda_irm": 0.0, "lambda_probe": 0.0},
}
#: Modules a preset trains in full under ``--lora``: its random input embeddings. Measured on e-SNLI 2k/1k
#: (benchmarks/bench_lora.py): adapters alone reached about half the full fine-tune's SUM, with embed_tokens 94-108%.
PRESET_LORA_MODULES_TO_SAVE = ["embed_tokens"]
#: Where Φ_LA's weights start: the backbone as built (the thesis: a fresh pretrained checkpoint), or the run's
#: trained Φ — for a random-init preset, the stand-in for a checkpoint that can already read its input.
PHI_LA_INITS = ("fresh", "phi")
#: Where a run with ``rora_classifier`` keeps the classifier encoder's tokenizer (Θ and Φ share it).
CLASSIFIER_TOKENIZER = "classifier_tokenizer"
#: Settings that change only scoring or reporting, never a trained artifact: a resumed run may change them.
REPORT_ONLY_SETTINGS = ("method", "ablations", "n_boot", "eval_batch_size", "extra")
#: Settings read only by the Φ_LA stages.
PHI_LA_SETTINGS = ("lambda_irm", "lambda_probe", "penalty_warmup_ratio", "groups_per_batch", "probe_max_loss",
                   "probe_every_n_steps", "phi_la_init")
#: LAREV penalty defaults per backbone kind. Presets: measured by benchmarks/larev_sweep.py on e-SNLI
#: (t5-tiny; λ_IRM 0.1 gave the largest separations, every λ_probe > 0 lowered them; docs/method.md).
#: Pretrained checkpoints: the thesis's ECQA values (§5.3.3), not measured here (no GPU in CI).
LAREV_DEFAULTS = {
    "preset": {"lambda_irm": 0.1, "lambda_probe": 0.0, "groups_per_batch": 8},
    "pretrained": {"lambda_irm": 5.0, "lambda_probe": 5e-4, "groups_per_batch": 1},
}


@dataclass
class RunConfig:
    """Everything that defines a run; saved as ``run_config.json`` and checked on resume."""

    dataset: str = "synthetic"
    data_dir: str | None = None
    method: str = "rev"
    backbone: str = "t5-tiny"
    baseline_builder: str = "template"
    input_format: str = "larev"
    reduction: str = "sum"
    max_train_examples: int | None = None
    max_eval_examples: int | None = None
    seed: int = 0
    learning_rate: float | None = None
    num_train_epochs: float | None = None
    batch_size: int | None = None
    eval_batch_size: int = 64
    n_boot: int = 1000
    lambda_irm: float | None = None
    lambda_probe: float | None = None
    penalty_warmup_ratio: float = 1 / 3
    groups_per_batch: int | None = None
    probe_max_loss: float | None = None
    probe_every_n_steps: int = 1
    ig_steps: int = 20
    ig_top_k: int = 1
    stop_word_guard: bool = True
    ablations: bool = False
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: list[str] | None = None
    lora_modules_to_save: list[str] | None = None
    select_on_validation: bool = False
    rora_threshold: float | str = 0.001
    rora_top_k: int = 2
    rora_lambda_irm: float | None = None
    rora_classifier: str | None = None
    train_rationale: str = "gold"
    phi_la_init: str = "fresh"
    loader_options: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [m for m in self.method.split(",") if m not in METHODS] if self.method != "all" else []
        if unknown or not self.method:
            raise ValueError(f"method {self.method!r} is not available; expected 'all' or a comma-separated list "
                             f"of {METHODS} (e.g. 'rev,larev')")
        if self.reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {self.reduction!r}")
        get_input_format(self.input_format)
        if self.train_rationale not in VARIANTS:
            raise ValueError(f"train_rationale must be one of {VARIANTS}, got {self.train_rationale!r}")
        if self.phi_la_init not in PHI_LA_INITS:
            raise ValueError(f"phi_la_init must be one of {PHI_LA_INITS}, got {self.phi_la_init!r}")
        if self.rora_classifier and "rora" not in self.methods:
            raise ValueError(f"--rora-classifier {self.rora_classifier!r} applies to RoRA; add rora to --method {self.method!r}")
        if self.rora_classifier and self.lora:
            raise ValueError("--rora-classifier trains its encoder in full; LoRA (--lora) applies to the seq2seq models only")
        if self.loader_options and self.dataset != "jsonl":
            raise ValueError(f"--column-mapping / --task / --label-set apply to --dataset jsonl, not {self.dataset!r}")
        if self.data_dir is not None and Path(self.data_dir).is_file():
            raise ValueError(
                f"--data-dir {self.data_dir} is a file; expected a directory with train/validation/test files "
                "(score a single file with `larev-hf evaluate --data-file`)"
            )

    @property
    def methods(self) -> tuple[str, ...]:
        if self.method == "all":
            return METHODS
        return tuple(m for m in METHODS if m in self.method.split(","))  # canonical order: stage tags do not depend on it

    def train_settings(self, progress: bool = True) -> TrainSettings:
        defaults = training_defaults(self.backbone)
        return TrainSettings(
            learning_rate=self.learning_rate or defaults["learning_rate"],
            num_train_epochs=self.num_train_epochs or defaults["num_train_epochs"],
            batch_size=self.batch_size or int(defaults["batch_size"]),
            seed=self.seed,
            progress=progress,
            lora=self.lora_settings(),
        )

    def classifier_train_settings(self, progress: bool = True) -> TrainSettings:
        """Training settings of RoRA's classifier variant. The encoder is pretrained, so its learning rate is the
        pretrained-checkpoint default (3e-5, thesis §5.3.3) whatever the backbone's; epochs and batch size follow
        ``num_train_epochs`` / ``batch_size`` when set, else the same defaults."""
        defaults = training_defaults(self.rora_classifier or self.backbone)
        return TrainSettings(learning_rate=defaults["learning_rate"],
                             num_train_epochs=self.num_train_epochs or defaults["num_train_epochs"],
                             batch_size=self.batch_size or int(defaults["batch_size"]), seed=self.seed, progress=progress)

    def lora_settings(self) -> LoraSettings | None:
        """The run's LoRA settings, or ``None`` for full fine-tuning. ``lora_modules_to_save=None`` means the
        backbone's default (:data:`PRESET_LORA_MODULES_TO_SAVE` for presets, none for checkpoints); ``[]`` means none."""
        if not self.lora:
            return None
        modules_to_save = self.lora_modules_to_save
        if modules_to_save is None:
            modules_to_save = PRESET_LORA_MODULES_TO_SAVE if is_preset(self.backbone) else None
        return LoraSettings(r=self.lora_r, alpha=self.lora_alpha, dropout=self.lora_dropout,
                            target_modules=self.lora_target_modules, modules_to_save=modules_to_save or None)

    def larev_setting(self, name: str) -> float:
        """``lambda_irm`` / ``lambda_probe`` / ``groups_per_batch``: the configured value or the backbone's default."""
        value = getattr(self, name)
        return value if value is not None else LAREV_DEFAULTS["preset" if is_preset(self.backbone) else "pretrained"][name]

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


class Run:
    """A run directory and its stages. ``Run(config, output_dir).execute()`` does the whole job."""

    def __init__(self, config: RunConfig, output_dir: str | os.PathLike, progress: bool = True) -> None:
        self.config = config
        self.dir = Path(output_dir)
        self.progress = progress
        self.timings: dict[str, float] = {}
        self._models: dict[str, Any] = {}

    # ----------------------------------------------------------------- bookkeeping
    def path(self, *parts: str) -> Path:
        return self.dir.joinpath(*parts)

    def is_done(self, stage: str) -> bool:
        return self.path("stages", f"{stage}.done").is_file()

    def run_stage(self, stage: str, function: Callable[[], None]) -> None:
        """Run ``function`` unless the stage's marker exists; record its wall time."""
        if self.is_done(stage):
            logger.info("stage %s: done earlier, skipped", stage)
            return
        logger.info("stage %s: running", stage)
        start = time.perf_counter()
        function()
        self.timings[stage] = time.perf_counter() - start
        write_json(self.path("stages", f"{stage}.done"), {"seconds": self.timings[stage], **compute_environment()})

    def check_config(self) -> None:
        """Refuse to resume a run directory made with different settings (results would mix)."""
        saved_path = self.path("run_config.json")
        current = asdict(self.config)
        if saved_path.is_file():
            saved = read_json(saved_path)
            defaults = asdict(RunConfig())  # a key missing from an older run_config.json had its default value
            differing = sorted(
                k for k in current
                if k not in REPORT_ONLY_SETTINGS and saved.get(k, defaults[k]) != current[k]
            )
            if not any(self.is_done(name) for name in ("phi_la", *ABLATIONS)):
                # Φ_LA's own settings affect no earlier stage: they may change until a Φ_LA exists.
                differing = [k for k in differing if k not in PHI_LA_SETTINGS]
            if differing:
                raise ValueError(
                    f"{self.dir} holds a run with different settings ({', '.join(differing)}); "
                    "use a new --output-dir or delete the old run"
                )
        write_json(saved_path, current)

    # ----------------------------------------------------------------- data
    def split_records(self, split: str) -> list[dict[str, Any]]:
        """The records of ``split``; on the training split, ``rationale`` is the ``train_rationale`` variant
        (every evaluator trains on ``record["rationale"]``)."""
        records = [record for _, record in read_jsonl(self.path("data", f"{split}.jsonl"))]
        if split == "train" and self.config.train_rationale != "gold":
            for record in records:
                record["rationale"] = record[f"rationale_{self.config.train_rationale}"]
        return records

    def stage_data(self) -> None:
        """Load the splits, build baselines b everywhere and the rationale variants (thesis A.1 steps 1-3)."""
        cfg = self.config
        builder = baseline_builder_from_spec(cfg.baseline_builder, cfg.seed)
        splits = {}  # every split is loaded and validated before anything is written
        for split in SPLITS:
            limit = cfg.max_train_examples if split == "train" else cfg.max_eval_examples
            dataset = load_examples(cfg.dataset, cfg.data_dir, split, max_examples=limit, seed=cfg.seed, **cfg.loader_options)
            splits[split] = add_variants(add_baselines(dataset, builder)).to_list()
        for split, records in splits.items():
            write_jsonl(self.path("data", f"{split}.jsonl"), records)
        write_json(self.path("data", "baseline_builder.json"), builder.to_config())

    def stage_tokenizer(self) -> None:
        """Train the preset's tokenizer on the training text (or save the checkpoint's own)."""
        texts = None
        if is_preset(self.config.backbone):
            texts = []
            for record in self.split_records("train"):
                texts += [record["baseline"], record["rationale"], *record["choices"], *build_variants(record).values()]
        build_tokenizer(self.config.backbone, texts).save_pretrained(self.path("tokenizer"))

    # ----------------------------------------------------------------- models
    def tokenizer(self):
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
        model = build_model(self.config.backbone, self.tokenizer(), seed=self.config.seed)
        validation = self.split_records("validation") if self.config.select_on_validation else None
        train_on_records(model, self.tokenizer(), self.split_records("train"), make_source, self.path("models", name),
                         self.config.train_settings(self.progress), eval_records=validation)

    def stage_phi_base(self) -> None:
        """Φ_base on b → y (REV's g′; thesis A.1 step 4)."""
        fmt = get_input_format(self.config.input_format)
        self.train_evaluator("phi_base", lambda r: fmt.baseline_input(r["baseline"]))

    def stage_phi(self) -> None:
        """Φ on r ⊕ b → y with the gold rationale (REV's g; thesis A.1 step 5)."""
        fmt = get_input_format(self.config.input_format)
        self.train_evaluator("phi", lambda r: fmt.rationale_input(r["rationale"], r["baseline"]))

    # ----------------------------------------------------------------- LAREV
    def stage_ig(self) -> None:
        """t_leak per training baseline by Integrated Gradients on Φ_base (thesis §4.5.2; A.1 step 6)."""
        from collections import Counter

        from larev_hf.leakage import IGSettings, integrated_gradients_terms

        cfg, fmt, train = self.config, get_input_format(self.config.input_format), self.split_records("train")
        settings = IGSettings(n_steps=cfg.ig_steps, top_k=cfg.ig_top_k, stop_word_guard=cfg.stop_word_guard)
        offset = fmt.baseline_offset
        terms = integrated_gradients_terms(self.model("phi_base"), self.tokenizer(),
                                           [fmt.baseline_input(r["baseline"]) for r in train], [r["label"] for r in train],
                                           settings, progress=self.progress, regions=[(offset, offset + len(r["baseline"]))
                                                                                     for r in train])
        rows = []
        for record, term in zip(train, terms, strict=True):
            row = {"id": record["id"], **term.to_dict()}
            row["start"], row["end"] = term.start - offset, term.end - offset  # character span within b itself
            rows.append(row)
        write_jsonl(self.path("leakage", "train_terms.jsonl"), rows)
        counts = Counter(row["text"].lower() for row in rows)
        write_json(self.path("leakage", "summary.json"), {
            "n_examples": len(rows),
            "stop_word_guard_fired": sum(row["guard_fired"] for row in rows),
            "most_common_terms": counts.most_common(25),
            "ig_settings": vars(settings),
        })

    def stage_environments(self) -> None:
        """E1 original, E2 masked, E3 counter-label baselines per training example (table 4.2; A.1 step 7)."""
        from larev_hf.leakage import CounterLabelRewriter, LeakageTerm, make_environments, mask_token_of

        rewriter, mask = CounterLabelRewriter(seed=self.config.seed), mask_token_of(self.tokenizer())
        terms = {row["id"]: row for _, row in read_jsonl(self.path("leakage", "train_terms.jsonl"))}
        rows = []
        for record in self.split_records("train"):
            t = terms[record["id"]]
            term = LeakageTerm(t["start"], t["end"], t["text"], t["score"], t["guard_fired"])
            rows.append({"id": record["id"], **make_environments(record, term, mask, rewriter)})
        write_jsonl(self.path("leakage", "train_environments.jsonl"), rows)
        write_json(self.path("leakage", "rewriter.json"), {**rewriter.to_config(), "mask_token": mask})

    def environments(self) -> list[dict[str, Any]]:
        return [row for _, row in read_jsonl(self.path("leakage", "train_environments.jsonl"))]

    def stage_probe(self) -> None:
        """ψ from Φ, encoder frozen, decoder trained on b̃ → y (§4.5.3-4.5.4; A.1 step 8)."""
        from larev_hf.training.leakage_aware import train_probe

        fmt, train = get_input_format(self.config.input_format), self.split_records("train")
        phi, _ = load_evaluator(self.path("models", "phi"))
        train_probe(phi, self.tokenizer(), [fmt.baseline_input(env["mask"]) for env in self.environments()],
                    [r["label"] for r in train], self.path("models", "probe"), self.config.train_settings(self.progress))

    def needs_probe(self) -> bool:
        """ψ is trained only if some Φ_LA uses it (λ_probe > 0, or the ablations, whose λ_IRM = 0 model keeps it)."""
        return self.config.larev_setting("lambda_probe") > 0 or self.config.ablations

    def stage_leakage_aware(self, name: str, **overrides: Any) -> None:
        """Φ_LA (or an ablation of it): a fresh model trained with IRMProbeTrainer (eq. 4.10; A.1 step 9).

        With ``phi_la_init="phi"`` it starts from the run's Φ instead (a deviation from the thesis for from-scratch
        presets, which otherwise must learn to read b and r while E3 contradicts b).

        ``overrides`` replace the run's IRMProbeConfig settings (``lambda_irm``, ``lambda_probe``,
        ``probe_max_loss``, ``token_reduction``, ...); all of them are saved to ``larev_weights.json``.
        """
        from larev_hf.training.leakage_aware import environment_dataset, train_leakage_aware

        cfg = self.config
        dataset = environment_dataset(self.split_records("train"), self.environments(), self.tokenizer(),
                                      get_input_format(cfg.input_format))
        weights = {
            "lambda_irm": cfg.larev_setting("lambda_irm"),
            "lambda_probe": cfg.larev_setting("lambda_probe"),
            "penalty_warmup_ratio": cfg.penalty_warmup_ratio,
            "probe_max_loss": cfg.probe_max_loss,
            "probe_every_n_steps": cfg.probe_every_n_steps,
            **overrides,
        }
        probe = self.model("probe") if weights["lambda_probe"] > 0 else None
        if cfg.phi_la_init == "phi":  # a copy of Φ's weights (LoRA-trained ones merged), trained on from there
            model = load_evaluator(self.path("models", "phi"), device="cpu")[0]
        else:
            model = build_model(cfg.backbone, self.tokenizer(), seed=cfg.seed)
        train_leakage_aware(model, self.tokenizer(), dataset, self.path("models", name), cfg.train_settings(self.progress),
                            probe, groups_per_batch=int(cfg.larev_setting("groups_per_batch")), **weights)
        write_json(self.path("models", name, "larev_weights.json"), weights)

    # ----------------------------------------------------------------- RoRA (Jiang et al., 2024, §3)
    def rora_settings(self) -> RoRASettings:
        """The run's :class:`~larev_hf.rora.RoRASettings` (threshold and λ from the config, the rest RoRA's defaults)."""
        from larev_hf.rora import DetectorSettings, RoRASettings

        cfg = self.config
        return RoRASettings(detector=DetectorSettings(threshold=cfg.rora_threshold, top_k=cfg.rora_top_k, seed=cfg.seed),
                            lambda_irm=cfg.rora_lambda_irm).resolved(cfg.rora_classifier or cfg.backbone)

    def stage_rora_detector(self) -> None:
        """Φ_small on r → y and its IG attributions averaged per n-gram over the training split (RoRA §3.1)."""
        from larev_hf.rora import LeakageDetector

        detector = LeakageDetector.fit(self.split_records("train"), self.rora_settings().detector, progress=self.progress)
        detector.save(self.path("rora", "detector"))
        write_json(self.path("rora", "detector_summary.json"), {**detector.history, "top_ngrams": detector.top_ngrams(25)})

    def stage_rora_masked(self) -> None:
        """The training rationales with their leaking spans marked for sentinels (RoRA §3.1-3.2)."""
        from larev_hf.rora import LeakageDetector, mask_rationales, save_masked

        train = self.split_records("train")
        masked = mask_rationales(LeakageDetector.load(self.path("rora", "detector")), train)
        save_masked(self.path("rora", "masked_train.jsonl"), [r["id"] for r in train], masked)
        spans = [len(m.spans) for m in masked]
        write_json(self.path("rora", "masked_summary.json"), {
            "n_examples": len(masked), "mean_spans": float(np.mean(spans)) if spans else 0.0,
            "masked_char_share": float(np.mean([sum(e - s for s, e in m.spans) / max(len(m.text), 1) for m in masked]))
            if masked else 0.0,
        })

    def rora_masked(self) -> list[MaskedRationale]:
        """The training rationales' masks, in training-split order."""
        from larev_hf.rora import load_masked

        by_id = load_masked(self.path("rora", "masked_train.jsonl"))
        return [by_id[r["id"]] for r in self.split_records("train")]

    def stage_rora_infiller(self) -> None:
        """The label-conditioned infiller, trained MICE-style on the masked spans (RoRA §3.2)."""
        from dataclasses import replace

        from transformers import AutoTokenizer

        from larev_hf.rora import build_infiller, train_infiller

        cfg = self.config
        tokenizer = AutoTokenizer.from_pretrained(self.path("tokenizer"))  # a copy: the sentinels are the infiller's own
        model = build_infiller(cfg.backbone, tokenizer, seed=cfg.seed)
        settings = replace(cfg.train_settings(self.progress), max_label_length=self.rora_settings().infiller_max_length)
        train_infiller(model, tokenizer, self.split_records("train"), self.rora_masked(),
                       self.path("models", "rora_infiller"), settings)

    def stage_rora_counterfactuals(self) -> None:
        """D^e for every candidate label e: greedy infilling of each training rationale's masked spans (RoRA §3.2)."""
        from larev_hf.rora import generate_counterfactuals, save_counterfactuals

        settings = self.rora_settings()
        model, tokenizer = load_evaluator(self.path("models", "rora_infiller"))
        counterfactuals, stats = generate_counterfactuals(
            model, tokenizer, self.split_records("train"), self.rora_masked(), batch_size=settings.generation_batch_size,
            max_new_tokens=settings.max_new_tokens, progress=self.progress)
        save_counterfactuals(self.path("rora", "counterfactuals_train.jsonl"), counterfactuals)
        write_json(self.path("rora", "counterfactuals_summary.json"), stats)

    def stage_rora_phi(self) -> None:
        """Φ on the union of the D^e with the per-environment IRMv1 penalty (RoRA eq. 7; the classifier variant: eq. 6)."""
        from larev_hf.rora import counterfactual_dataset, load_counterfactuals, train_phi

        cfg, settings = self.config, self.rora_settings()
        counterfactuals = load_counterfactuals(self.path("rora", "counterfactuals_train.jsonl"))
        if cfg.rora_classifier:
            self.train_rora_classifier("rora_phi", counterfactuals, settings.lambda_irm, settings.groups_per_batch)
        else:
            train_settings = cfg.train_settings(self.progress)
            dataset = counterfactual_dataset(self.split_records("train"), counterfactuals, self.tokenizer(),
                                             train_settings.max_input_length, train_settings.max_label_length)
            train_phi(build_model(cfg.backbone, self.tokenizer(), seed=cfg.seed), self.tokenizer(), dataset,
                      self.path("models", "rora_phi"), train_settings, settings.lambda_irm, settings.groups_per_batch,
                      settings.normalization, settings.penalty_warmup_ratio)
        write_json(self.path("models", "rora_phi", "rora_weights.json"), {
            "lambda_irm": settings.lambda_irm, "groups_per_batch": settings.groups_per_batch,
            "normalization": settings.normalization, "penalty_warmup_ratio": settings.penalty_warmup_ratio,
            "classifier": cfg.rora_classifier,
        })

    def stage_rora_theta(self) -> None:
        """Θ on x with an empty rationale (RoRA eq. 8)."""
        from larev_hf.rora import train_theta

        cfg = self.config
        if cfg.rora_classifier:
            self.train_rora_classifier("rora_theta")
            return
        train_theta(build_model(cfg.backbone, self.tokenizer(), seed=cfg.seed), self.tokenizer(),
                    self.split_records("train"), self.path("models", "rora_theta"), cfg.train_settings(self.progress))

    def train_rora_classifier(self, name: str, counterfactuals=None, lambda_irm: float = 0.0,
                              groups_per_batch: int | None = None) -> None:
        """RoRA's classifier variant (§4.1): Φ on the D^e with λ · IRMv1 (``counterfactuals`` given) or Θ on x alone,
        a fresh head on the ``rora_classifier`` encoder over the training split's one label set."""
        from larev_hf.rora import build_classifier, classifier_dataset, shared_label_set, train_classifier

        cfg, train = self.config, self.split_records("train")
        labels = shared_label_set(train)
        model, tokenizer = build_classifier(cfg.rora_classifier, labels, seed=cfg.seed)
        settings = cfg.classifier_train_settings(self.progress)
        train_classifier(model, tokenizer, classifier_dataset(train, tokenizer, labels, counterfactuals),
                         self.path("models", name), settings, lambda_irm=lambda_irm,
                         groups_per_batch=groups_per_batch or settings.batch_size)
        tokenizer.save_pretrained(self.path("rora", CLASSIFIER_TOKENIZER))  # the encoder's, shared by Θ and Φ

    # ----------------------------------------------------------------- LAS / RQ
    def stage_simulators(self) -> None:
        """One simulator on (x, r), x alone and r alone → the gold label (Hase et al., 2020; Wiegreffe et al., 2021)."""
        from larev_hf.scores.simulatability import train_simulator

        cfg = self.config
        train_simulator(build_model(cfg.backbone, self.tokenizer(), seed=cfg.seed), self.tokenizer(),
                        self.split_records("train"), self.path("models", "simulator"), cfg.train_settings(self.progress))

    # ----------------------------------------------------------------- scoring
    def scorer(self, model_name: str) -> ConditionalVScorer:
        """A scorer pairing Φ_base with the rationale model ``models/<model_name>``."""
        cfg = self.config
        return ConditionalVScorer(self.model("phi_base"), self.model(model_name), self.tokenizer(),
                                  get_input_format(cfg.input_format), cfg.reduction, cfg.eval_batch_size)

    def variant_scores(
        self,
        model_name: str,
        records: list[dict[str, Any]],
        base_log_probs: np.ndarray,
        rows: list[dict[str, Any]] | None = None,
        column: str | None = None,
    ) -> dict[str, np.ndarray]:
        """Pointwise scores of every rationale variant with ``models/<model_name>``; also written to
        ``rows[i]["<column>/<variant>"]`` when ``rows`` is given."""
        scorer = self.scorer(model_name)
        labels, baselines = [r["label"] for r in records], [r["baseline"] for r in records]
        scores = {}
        for variant in VARIANTS:
            rationales = [r[f"rationale_{variant}"] for r in records]
            scores[variant] = scorer.score(rationales, baselines, labels, base_log_probs, self.progress).scores
            if rows is not None:
                for row, value in zip(rows, scores[variant], strict=True):
                    row[f"{column or model_name}/{variant}"] = float(value)
        return scores

    def score_records(self, records: list[dict[str, Any]], methods: tuple[str, ...]) -> tuple[dict, list[dict]]:
        """Pointwise scores of every variant under every method, plus evaluator accuracies."""
        cfg = self.config
        rows = [{"id": r["id"], "label": r["label"]} for r in records]
        summary: dict[str, Any] = {}
        accuracy: dict[str, dict[str, float]] = {}
        cvi_methods = tuple(m for m in methods if m in ("rev", "larev"))
        base_log_probs = self.score_cvi(records, cvi_methods, rows, summary, accuracy) if cvi_methods else None
        if "rora" in methods:
            self.score_rora(records, rows, summary, accuracy)
        simulatability_methods = tuple(m for m in methods if m in ("las", "rq"))
        if simulatability_methods:
            self.score_simulatability(records, simulatability_methods, rows, summary, accuracy)
        result: dict[str, Any] = {"methods": summary, "accuracy": accuracy}
        if "larev" in methods and cfg.ablations:
            result["ablations"] = self.ablation_table(records, summary, base_log_probs, rows)
        return result, rows

    def score_cvi(self, records, methods, rows, summary, accuracy) -> np.ndarray:
        """REV / LAREV: every variant scored against Φ_base (REV eq. 5; thesis eq. 4.4); returns log p_Φbase(y | b)."""
        cfg, fmt = self.config, get_input_format(self.config.input_format)
        labels = [r["label"] for r in records]
        baselines = [r["baseline"] for r in records]
        choices = [r["choices"] for r in records]
        kwargs = {"batch_size": cfg.eval_batch_size, "reduction": cfg.reduction}
        base_log_probs = self.scorer(METHOD_MODELS[methods[0]]).baseline_log_probs(baselines, labels, self.progress)
        for row, value in zip(rows, base_log_probs, strict=True):
            row["log_p_baseline"] = float(value)
        base_predictions = predict_choices(self.model("phi_base"), self.tokenizer(),
                                           [fmt.baseline_input(b) for b in baselines], choices, **kwargs)
        accuracy["phi_base"] = {"baseline": _accuracy(base_predictions, choices, labels)}
        for method in methods:
            model_name = METHOD_MODELS[method]
            scores = self.variant_scores(model_name, records, base_log_probs, rows, column=method)
            summary[method] = summarize_variants(scores, n_boot=cfg.n_boot, seed=cfg.seed)
            accuracy[model_name] = {}
            for variant in VARIANTS:
                inputs = [fmt.rationale_input(r[f"rationale_{variant}"], r["baseline"]) for r in records]
                predictions = predict_choices(self.model(model_name), self.tokenizer(), inputs, choices, **kwargs)
                accuracy[model_name][variant] = _accuracy(predictions, choices, labels)
        return base_log_probs

    def score_rora(self, records, rows, summary, accuracy) -> None:
        """RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅) for every variant (RoRA eq. 9), and Θ's and Φ's accuracies."""
        from larev_hf.rora import RoRAClassifierScorer, RoRAScorer, baseline_input, evaluator_input

        cfg = self.config
        labels, choices = [r["label"] for r in records], [r["choices"] for r in records]
        theta_model, phi_model = self.model("rora_theta"), self.model("rora_phi")
        if cfg.rora_classifier:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(self.path("rora", CLASSIFIER_TOKENIZER))
            scorer = RoRAClassifierScorer(theta_model, phi_model, tokenizer, batch_size=cfg.eval_batch_size)

            def accuracy_of(model, inputs: list[str]) -> float:
                return float(np.mean([p == y for p, y in zip(scorer.predict(model, inputs), labels, strict=True)]))
        else:
            scorer = RoRAScorer(theta_model, phi_model, self.tokenizer(), cfg.reduction, cfg.eval_batch_size)

            def accuracy_of(model, inputs: list[str]) -> float:
                predictions = predict_choices(model, self.tokenizer(), inputs, choices, batch_size=cfg.eval_batch_size,
                                              reduction=cfg.reduction)
                return _accuracy(predictions, choices, labels)
        theta = scorer.theta_log_probs(records, self.progress)
        for row, value in zip(rows, theta, strict=True):
            row["log_p_theta"] = float(value)
        accuracy["rora_theta"] = {"baseline": accuracy_of(theta_model, [baseline_input(r) for r in records])}
        accuracy["rora_phi"], scores = {}, {}
        for variant in VARIANTS:
            rationales = [r[f"rationale_{variant}"] for r in records]
            scores[variant] = scorer.score_records(records, rationales, theta, self.progress).scores
            for row, value in zip(rows, scores[variant], strict=True):
                row[f"rora/{variant}"] = float(value)
            inputs = [evaluator_input(r, text) for r, text in zip(records, rationales, strict=True)]
            accuracy["rora_phi"][variant] = accuracy_of(phi_model, inputs)
        summary["rora"] = summarize_variants(scores, n_boot=cfg.n_boot, seed=cfg.seed)

    def score_simulatability(self, records, methods, rows, summary, accuracy) -> None:
        """LAS (Hase et al., 2020) and RQ (Wiegreffe et al., 2021) of every variant from the simulator's accuracies."""
        from larev_hf.scores.simulatability import simulate, summarize_simulatability

        cfg = self.config
        kwargs = {"batch_size": cfg.eval_batch_size, "reduction": cfg.reduction}
        model, tokenizer = self.model("simulator"), self.tokenizer()
        without = simulate(model, tokenizer, records, [r["rationale"] for r in records], views=("x",), **kwargs)["x"]
        correct = {}
        for variant in VARIANTS:
            rationales = [r[f"rationale_{variant}"] for r in records]
            correct[variant] = {"x": without, **simulate(model, tokenizer, records, rationales, views=("x_r", "r"), **kwargs)}
            for view in ("x_r", "r"):
                for row, value in zip(rows, correct[variant][view], strict=True):
                    row[f"simulator/{variant}/{view}"] = bool(value)
        for row, value in zip(rows, without, strict=True):
            row["simulator/x"] = bool(value)
        for method in methods:
            summary[method] = summarize_simulatability(correct, method, n_boot=cfg.n_boot, seed=cfg.seed)
        accuracy["simulator"] = {"baseline": float(np.mean(without)),
                                 **{variant: float(np.mean(correct[variant]["x_r"])) for variant in VARIANTS}}
        accuracy["simulator_rationale_only"] = {variant: float(np.mean(correct[variant]["r"])) for variant in VARIANTS}

    def ablation_table(self, records, summary, base_log_probs, rows) -> dict[str, dict]:
        """Separations of REV, full LAREV and each ablated Φ_LA (thesis table 5.6)."""
        cfg = self.config
        full = read_json(self.path("models", "phi_la", "larev_weights.json"))
        table = {"REV": {"lambda_irm": "n/a", "lambda_probe": "n/a", "separations": summary["rev"]["separations"]}}
        for name in ABLATIONS:
            entry = summarize_variants(self.variant_scores(name, records, base_log_probs, rows), n_boot=cfg.n_boot, seed=cfg.seed)
            weights = read_json(self.path("models", name, "larev_weights.json"))
            table[f"LAREV {name.removeprefix('phi_la_')}"] = {**weights, "separations": entry["separations"], "ci95": entry["ci95"]}
        table["LAREV (full)"] = {**full, "separations": summary["larev"]["separations"], "ci95": summary["larev"]["ci95"]}
        return table

    def stage_score(self) -> None:
        summary, rows = self.score_records(self.split_records("test"), self.config.methods)
        write_jsonl(self.path("scores", "test_scores.jsonl"), rows)
        write_json(self.path("scores", "test_summary.json"), summary)

    def stage_report(self) -> None:
        summary = read_json(self.path("scores", "test_summary.json"))
        self.write_report(summary, "test", len(self.split_records("test")), self.dir)

    def write_report(self, summary: dict, split: str, n_examples: int, output_dir: Path) -> dict:
        timings, environments = {}, {}
        for marker in sorted(self.path("stages").glob("*.done")):
            content = read_json(marker)
            timings[marker.stem] = content["seconds"]
            environments[marker.stem] = {key: value for key, value in content.items() if key != "seconds"}
        report = {
            "dataset": self.config.dataset,
            "split": split,
            "n_examples": n_examples,
            **summary,
            "settings": asdict(self.config),
            "timings": timings,
            # trained weights are bitwise reproducible only with the same versions, device and thread count
            "stage_environments": environments,
        }
        write_report(report, output_dir)
        return report

    # ----------------------------------------------------------------- entry points
    def stages(self) -> list[tuple[str, Callable[[], None]]]:
        methods = set(self.config.methods)
        stages = [("data", self.stage_data), ("tokenizer", self.stage_tokenizer)]
        if methods & {"rev", "larev"}:
            stages += [("phi_base", self.stage_phi_base), ("phi", self.stage_phi)]
        if "larev" in self.config.methods:
            stages += [
                ("ig", self.stage_ig),
                ("environments", self.stage_environments),
                *([("probe", self.stage_probe)] if self.needs_probe() else []),
                ("phi_la", lambda: self.stage_leakage_aware("phi_la")),
            ]
            if self.config.ablations:
                stages += [(name, partial(self.stage_leakage_aware, name, **overrides)) for name, overrides in ABLATIONS.items()]
        if "rora" in methods:
            stages += [
                ("rora_detector", self.stage_rora_detector),
                ("rora_masked", self.stage_rora_masked),
                ("rora_infiller", self.stage_rora_infiller),
                ("rora_counterfactuals", self.stage_rora_counterfactuals),
                ("rora_phi", self.stage_rora_phi),
                ("rora_theta", self.stage_rora_theta),
            ]
        if methods & {"las", "rq"}:
            stages.append(("simulators", self.stage_simulators))
        # Scoring and reporting depend on which methods are asked for: their markers are named after them.
        tag = "+".join(self.config.methods) + ("+ablations" if self.config.ablations else "")
        return stages + [(f"score-{tag}", self.stage_score), (f"report-{tag}", self.stage_report)]

    def execute(self, until: str | None = None) -> dict:
        """Run (or resume) every stage — or the stages up to and including ``until`` — and return the report."""
        names = [name for name, _ in self.stages()]
        if until is not None and until not in names:
            raise ValueError(f"--until {until!r} is not a stage of this run; its stages are {names}")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.check_config()
        for name, function in self.stages():
            self.run_stage(name, function)
            if name == until:
                return {"dataset": self.config.dataset, "split": "test", "n_examples": 0, "methods": {}, "until": until}
        return read_json(self.path("report.json"))

    def evaluate_file(self, data_file: str | os.PathLike, output_dir: str | os.PathLike) -> dict:
        """Score another file of the same dataset kind with this run's trained models (no retraining)."""
        data_file = Path(data_file)
        needed = list(dict.fromkeys(["tokenizer", *(stage for m in self.config.methods for stage in METHOD_STAGES[m])]))
        if "larev" in self.config.methods and self.config.ablations:
            needed += list(ABLATIONS)
        missing = [stage for stage in needed if not self.is_done(stage)]
        if missing:
            raise FileNotFoundError(f"{self.dir}: stages {missing} have not finished; run `larev-hf run` first")
        cfg = self.config
        source, split = (str(data_file.parent), data_file.stem) if data_file.is_file() else (str(data_file), "test")
        builder = baseline_builder_from_spec(cfg.baseline_builder, cfg.seed)
        if cfg.dataset == "synthetic":  # generated data has no source format: a file of it is in the schema
            dataset = load_schema_jsonl(data_file)
        else:
            dataset = load_examples(cfg.dataset, source, split, seed=cfg.seed, **cfg.loader_options)
        dataset = add_variants(add_baselines(dataset, builder))
        records = dataset.to_list()
        summary, rows = self.score_records(records, cfg.methods)
        output_dir = Path(output_dir)
        write_jsonl(output_dir / "scores.jsonl", rows)
        return self.write_report(summary, split, len(records), output_dir)

    @classmethod
    def load(cls, run_dir: str | os.PathLike, progress: bool = True) -> Run:
        """Open an existing run directory."""
        config_path = Path(run_dir) / "run_config.json"
        if not config_path.is_file():
            raise FileNotFoundError(f"{run_dir}: no run_config.json; expected a directory made by `larev-hf run`")
        return cls(RunConfig.from_dict(read_json(config_path)), run_dir, progress)


def compute_environment() -> dict[str, Any]:
    """What a stage's floating-point results depend on beyond seed and data: library versions, device and torch's
    CPU thread count (a different count changes summation order, hence trained weights)."""
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__, "torch_threads": torch.get_num_threads(),
            "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def baseline_builder_from_spec(spec: str, seed: int = 0):
    """``"template"``, ``"paraphrase:<model>"`` (REV's e-SNLI paraphraser) or ``"qa2d:<model>"`` (a QA→declarative model)."""
    if spec == "template":
        return make_baseline_builder("template", seed=seed)
    mode, _, model = spec.partition(":")
    if mode not in ("paraphrase", "qa2d") or not model:
        raise ValueError(f"baseline builder {spec!r}: expected 'template', 'paraphrase:<model>' or 'qa2d:<model>'")
    return make_baseline_builder("hf", model_name_or_path=model, mode=mode, seed=seed)


def _accuracy(predictions: list[int], choices: list[list[str]], labels: list[str]) -> float:
    return float(np.mean([options[p] == label for p, options, label in zip(predictions, choices, labels, strict=True)]))


def run_pipeline(config: RunConfig, output_dir: str | os.PathLike, progress: bool = True) -> dict:
    """Train and report one run; see :class:`Run`."""
    return Run(config, output_dir, progress).execute()


def dumps_summary(report: dict) -> str:
    """A one-screen text summary of a report for the console."""
    lines = [f"{report['dataset']} / {report['split']} (n = {report['n_examples']})"]
    def number(value: float | None) -> str:  # LAS is None where a leakage group is empty
        return "   n/a" if value is None else f"{value:+.3f}"

    for method, entry in report["methods"].items():
        seps = entry["separations"]
        lines.append(
            f"  {method.upper():6s} gold {number(entry['absolute']['gold'])} | Gold−Leaky {number(seps['gold_minus_leaky'])} "
            f"Gold−GoldLeaky {number(seps['gold_minus_gold_leaky'])} Gold−Vacuous {number(seps['gold_minus_vacuous'])} "
            f"SUM {number(seps['sum'])}" + (" (accuracy)" if entry.get("unit") == "accuracy" else "")
        )
    return "\n".join(lines) + "\n" + json.dumps(report.get("accuracy", {}))
