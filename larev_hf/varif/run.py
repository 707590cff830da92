"""``larev-hf varif``: VARIF's frontier of explanation methods on one dataset (``papers/varif-proposal.md`` §3, §6).

``VarifRun(settings, output_dir).execute()`` compares explanation generators (:mod:`larev_hf.explain.generators`) on
robustness R (§3.1), leakage-controlled informativeness I (§3.2, :mod:`larev_hf.varif.lcig`) and specificity S
(§3.3, :mod:`larev_hf.varif.specificity`), and reports the (R, Ĩ) Pareto frontier, its hypervolume, the scalar
VARIF = S·H per method and the proposal's hypotheses H1, H2 and H5 checked with numbers. Stages (each with a marker;
a rerun resumes, :class:`~larev_hf.runner.StageRunner`):

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
import math
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import load_examples
from larev_hf.data.sources import source_files
from larev_hf.explain.generators import build_generator, raw_input_text
from larev_hf.explain.nli import NLIJudge, train_nli_judge
from larev_hf.explain.run_dir import DatasetRunDirectory
from larev_hf.explain.task_model import SelfRationalizer
from larev_hf.io import file_sha256, read_json, read_jsonl, write_json, write_jsonl, write_text
from larev_hf.training import TrainSettings
from larev_hf.varif.lcig import LCIG, MaskSettings
from larev_hf.varif.measures import identity_aware, robustness
from larev_hf.varif.perturb import hf_paraphraser, perturb_records
from larev_hf.varif.report import plot_frontier, render_varif_markdown, summarize_varif
from larev_hf.varif.settings import VarifSettings
from larev_hf.varif.specificity import SentenceEmbedder, input_text, other_inputs, specificity_scores

logger = logging.getLogger(__name__)

def generator_name(spec: str) -> str:
    """The stage/file name of a generator spec: ``NAME=...`` → NAME, ``hf:org/model`` → ``hf-model``,
    ``tfidf:3`` → ``tfidf3``, else the spec."""
    name, sep, rest = spec.partition("=")
    if sep:
        return name.strip()
    if spec.startswith("hf:"):
        return "hf-" + Path(spec[3:].rstrip("/")).name
    if spec.startswith("jsonl:"):
        return Path(spec[6:]).stem
    return re.sub(r"[^\w-]", "", spec.replace(":", ""))


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


class VarifRun(DatasetRunDirectory):
    """One VARIF comparison (see the module docstring)."""

    settings: VarifSettings
    config_name = "varif_config.json"

    # ------------------------------------------------------------------ inputs
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
        s = self.settings
        return s.nli_data_dir or (s.data_dir if s.dataset == "esnli" else None)

    def train_settings(self) -> Any:
        return TrainSettings.for_backbone(self.settings.backbone, num_train_epochs=self.settings.num_train_epochs,
                                          seed=self.settings.seed, progress=self.progress)

    # ------------------------------------------------------------------ stages
    def stage_nli(self) -> None:
        source = self.nli_data_dir()
        train = list(load_examples("esnli", source, "train", max_examples=self.settings.nli_train_examples))
        test = list(load_examples("esnli", source, "test", max_examples=self.settings.nli_eval_examples))
        train_nli_judge(train, self.dir / "models" / "nli", eval_records=test, seed=self.settings.seed,
                        progress=self.progress)

    def judge(self) -> Any:
        if "judge" not in self._cache:
            self._cache["judge"] = NLIJudge.from_pretrained(self.settings.nli_model or str(self.dir / "models" / "nli"))
        return self._cache["judge"]

    def stage_self_rationalizer(self) -> None:
        SelfRationalizer.train(self.records("train"), self.dir / "models" / "self_rationalizer",
                               backbone=self.settings.backbone, settings=self.train_settings(), seed=self.settings.seed)

    def stage_perturb(self) -> None:
        s = self.settings
        paraphrase = None if s.paraphraser == "rules" else hf_paraphraser(s.paraphraser, seed=s.seed,
                                                                          num_return_sequences=s.k_paraphrases)
        rows, stats = perturb_records(self.records("test"), paraphrase, self.judge().entail,
                                      k_paraphrases=s.k_paraphrases, threshold=s.nli_threshold, seed=s.seed)
        write_jsonl(self.dir / "perturbed.jsonl", rows)
        write_json(self.dir / "perturb_stats.json", {"paraphraser": s.paraphraser, **stats})

    def mask_settings(self) -> Any:
        s = self.settings
        return MaskSettings(mask_share=s.mask_share, max_masked=s.max_masked, ig_labels=s.ig_labels,
                            ig_steps=s.ig_steps)

    def stage_lcig(self) -> None:
        lcig = LCIG.train(self.records("train"), self.dir / "models" / "lcig", backbone=self.settings.backbone,
                          settings=self.train_settings(), mask_settings=self.mask_settings(), progress=self.progress,
                          null_rationales=self.settings.h1_null_rationales)
        test = self.records("test")
        base, correct = lcig.base_log_probs(test, self.progress)
        write_jsonl(self.dir / "base.jsonl", [{"id": r["id"], "log_p0": float(v), "h0_correct": bool(c)}
                                              for r, v, c in zip(test, base, correct, strict=True)])

    def lcig(self) -> Any:
        if "lcig" not in self._cache:
            self._cache["lcig"] = LCIG(self.dir / "models" / "lcig", self.mask_settings())
        return self._cache["lcig"]

    def generator(self, spec: str) -> Any:
        model = None
        if spec.startswith("self_rationalizer"):
            model = SelfRationalizer.load(self.dir / "models" / "self_rationalizer")
        return build_generator(spec, seed=self.settings.seed, fit_texts=[raw_input_text(r) for r in self.records("train")],
                               self_rationalizer=model)

    def embeddings(self) -> tuple[Any, np.ndarray, np.ndarray]:
        """The embedder, the test inputs' embeddings and the M other inputs of each example (one draw per run)."""
        if "embeddings" not in self._cache:
            embedder = SentenceEmbedder()
            test = self.records("test")
            self._cache["embeddings"] = (embedder, embedder.encode([input_text(r) for r in test]),
                                         other_inputs(len(test), self.settings.other_inputs, self.settings.seed))
        return self._cache["embeddings"]

    def stage_generator(self, spec: str) -> None:
        """One method: explanations, R, LC-IG and S per test example."""

        name, test = generator_name(spec), self.records("test")
        generator = self.generator(spec)
        explanations = generator.explain(test)
        rows = [{"id": r["id"], "perturbation": None, "rationale": e} for r, e in zip(test, explanations, strict=True)]
        robust = np.full(len(test), np.nan)
        n_kept = np.zeros(len(test), dtype=int)
        if generator.regenerable:
            perturbed = [row for _, row in read_jsonl(self.dir / "perturbed.jsonl")]
            perturbed_explanations = generator.explain(perturbed) if perturbed else []
            index = {r["id"]: i for i, r in enumerate(test)}
            grouped: list[list[str]] = [[] for _ in test]
            for row, text in zip(perturbed, perturbed_explanations, strict=True):
                grouped[index[row["original_id"]]].append(text)
                rows.append({"id": row["original_id"], "perturbation": row["perturbation"], "rationale": text})
            n_kept = np.array([len(g) for g in grouped])
            robust = robustness(identity_aware(self.judge().entail), explanations, grouped)
        write_jsonl(self.dir / "explanations" / f"{name}.jsonl", rows)
        base = np.array([row["log_p0"] for _, row in read_jsonl(self.dir / "base.jsonl")])
        lc = self.lcig().score(test, explanations, base=base, progress=self.progress)
        embedder, inputs, others = self.embeddings()
        spec_scores = specificity_scores(embedder.encode(explanations), inputs, others)
        out = []
        for i, record in enumerate(test):
            out.append({
                "id": record["id"], "rationale": explanations[i], "R": _finite(robust[i]), "n_perturbations": int(n_kept[i]),
                "I": float(lc["I"][i]), "I_unmasked": float(lc["I_unmasked"][i]), "S": float(spec_scores[i]),
                "log_pd": float(lc["log_pd"][i]), "log_pd_masked": float(lc["log_pd_masked"][i]),
                "d_correct": bool(lc["d_correct"][i]), "d_masked_correct": bool(lc["d_masked_correct"][i]),
                "h1_correct": bool(lc["h1_correct"][i]), "masked": lc["masked"][i],
            })
        write_jsonl(self.dir / "scores" / f"{name}.jsonl", out)

    def stages(self) -> list[tuple[str, Any]]:
        stages: list[tuple[str, Any]] = [("data", self.stage_data)]
        if self.settings.nli_model is None:
            stages.append(("nli", self.stage_nli))
        if any(spec.startswith("self_rationalizer") for spec in self.settings.generators):
            stages.append(("self_rationalizer", self.stage_self_rationalizer))
        stages += [("perturb", self.stage_perturb), ("lcig", self.stage_lcig)]
        stages += [(f"generator-{generator_name(spec)}", lambda spec=spec: self.stage_generator(spec))
                   for spec in self.settings.generators]
        return stages

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

    # ------------------------------------------------------------------ report
    def write_report(self) -> dict[str, Any]:
        report = summarize_varif(
            {generator_name(spec): [row for _, row in read_jsonl(self.dir / "scores" / f"{generator_name(spec)}.jsonl")]
             for spec in self.settings.generators},
            [row for _, row in read_jsonl(self.dir / "base.jsonl")], self.settings)
        report["dataset"] = self.settings.dataset
        report["settings"] = asdict(self.settings)
        report["perturbations"] = read_json(self.dir / "perturb_stats.json")
        nli_metrics = self.dir / "models" / "nli" / "nli_metrics.json"
        report["nli_judge"] = {"model": self.settings.nli_model or "MiniLM-L6 cross-encoder trained in the run",
                               **(read_json(nli_metrics) if nli_metrics.is_file() else {})}
        markers = self.runner.markers()
        report["stage_seconds"] = {name: markers[name]["seconds"] for name, _ in self.stages() if name in markers}
        write_json(self.dir / "varif_report.json", report)
        write_text(self.dir / "varif_report.md", render_varif_markdown(report))
        plot_frontier(report, self.dir / "frontier.png")
        return report
