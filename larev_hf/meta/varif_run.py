"""``larev-hf varif``: VARIF's frontier of explanation methods on one dataset (``papers/varif-proposal.md`` §3, §6).

``VarifRun(settings, output_dir).execute()`` compares explanation generators (:mod:`larev_hf.explain.generators`) on
robustness R (§3.1), leakage-controlled informativeness I (§3.2, :mod:`larev_hf.meta.lcig`) and specificity S
(§3.3, :mod:`larev_hf.meta.specificity`), and reports the (R, Ĩ) Pareto frontier, its hypervolume, the scalar
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

The report (``varif_report.json``, ``varif_report.md``, ``frontier.png``) is rebuilt on every call (seconds).
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.explain.run_dir import MetaRunDirectory
from larev_hf.io import file_sha256, read_json, read_jsonl, write_json, write_jsonl, write_text
from larev_hf.meta.settings import VarifSettings

logger = logging.getLogger(__name__)

#: The methods VARIF §6 H5 orders, best first; the last group ties ({A, B, C}).
H5_ORDER = ("gold", "self_rationalizer", "pseudo_specific")
H5_WORST = ("vacuous", "leak", "circular")
#: Methods whose rationale states or restates the label (H2 is checked on them).
LEAKY_METHODS = ("leak", "circular", "gold_leaky")


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


class VarifRun(MetaRunDirectory):
    """One VARIF comparison (see the module docstring)."""

    settings: VarifSettings

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
        from larev_hf.explain.generators import build_generator

        for spec in s.generators:  # an unknown spec raises listing the accepted forms
            if not spec.startswith("self_rationalizer"):
                build_generator(spec, seed=s.seed)

    def nli_data_dir(self) -> str | None:
        s = self.settings
        return s.nli_data_dir or (s.data_dir if s.dataset == "esnli" else None)

    def train_settings(self) -> Any:
        from larev_hf.modeling import training_defaults
        from larev_hf.training import TrainSettings

        defaults = training_defaults(self.settings.backbone)
        return TrainSettings(learning_rate=defaults["learning_rate"],
                             num_train_epochs=self.settings.num_train_epochs or defaults["num_train_epochs"],
                             batch_size=int(defaults["batch_size"]), seed=self.settings.seed, progress=self.progress)

    # ------------------------------------------------------------------ stages
    def stage_nli(self) -> None:
        from larev_hf.data import load_examples
        from larev_hf.explain.nli import train_nli_judge

        source = self.nli_data_dir()
        train = list(load_examples("esnli", source, "train", max_examples=self.settings.nli_train_examples))
        test = list(load_examples("esnli", source, "test", max_examples=self.settings.nli_eval_examples))
        train_nli_judge(train, self.dir / "models" / "nli", eval_records=test, seed=self.settings.seed,
                        progress=self.progress)

    def judge(self) -> Any:
        if "judge" not in self._cache:
            from larev_hf.explain.nli import NLIJudge

            self._cache["judge"] = NLIJudge.from_pretrained(self.settings.nli_model or str(self.dir / "models" / "nli"))
        return self._cache["judge"]

    def stage_self_rationalizer(self) -> None:
        from larev_hf.explain.task_model import SelfRationalizer

        SelfRationalizer.train(self.records("train"), self.dir / "models" / "self_rationalizer",
                               backbone=self.settings.backbone, settings=self.train_settings(), seed=self.settings.seed)

    def stage_perturb(self) -> None:
        from larev_hf.meta.perturb import hf_paraphraser, perturb_records

        s = self.settings
        paraphrase = None if s.paraphraser == "rules" else hf_paraphraser(s.paraphraser, seed=s.seed,
                                                                          num_return_sequences=s.k_paraphrases)
        rows, stats = perturb_records(self.records("test"), paraphrase, self.judge().entail,
                                      k_paraphrases=s.k_paraphrases, threshold=s.nli_threshold, seed=s.seed)
        write_jsonl(self.dir / "perturbed.jsonl", rows)
        write_json(self.dir / "perturb_stats.json", {"paraphraser": s.paraphraser, **stats})

    def mask_settings(self) -> Any:
        from larev_hf.meta.lcig import MaskSettings

        s = self.settings
        return MaskSettings(mask_share=s.mask_share, max_masked=s.max_masked, ig_labels=s.ig_labels,
                            ig_steps=s.ig_steps)

    def stage_lcig(self) -> None:
        from larev_hf.meta.lcig import LCIG

        lcig = LCIG.train(self.records("train"), self.dir / "models" / "lcig", backbone=self.settings.backbone,
                          settings=self.train_settings(), mask_settings=self.mask_settings(), progress=self.progress,
                          null_rationales=self.settings.h1_null_rationales)
        test = self.records("test")
        base, correct = lcig.base_log_probs(test, self.progress)
        write_jsonl(self.dir / "base.jsonl", [{"id": r["id"], "log_p0": float(v), "h0_correct": bool(c)}
                                              for r, v, c in zip(test, base, correct, strict=True)])

    def lcig(self) -> Any:
        if "lcig" not in self._cache:
            from larev_hf.meta.lcig import LCIG

            self._cache["lcig"] = LCIG(self.dir / "models" / "lcig", self.mask_settings())
        return self._cache["lcig"]

    def generator(self, spec: str) -> Any:
        from larev_hf.explain.generators import build_generator, raw_input_text
        from larev_hf.explain.task_model import SelfRationalizer

        model = None
        if spec.startswith("self_rationalizer"):
            model = SelfRationalizer.load(self.dir / "models" / "self_rationalizer")
        return build_generator(spec, seed=self.settings.seed, fit_texts=[raw_input_text(r) for r in self.records("train")],
                               self_rationalizer=model)

    def embeddings(self) -> tuple[Any, np.ndarray, np.ndarray]:
        """The embedder, the test inputs' embeddings and the M other inputs of each example (one draw per run)."""
        if "embeddings" not in self._cache:
            from larev_hf.meta.specificity import SentenceEmbedder, input_text, other_inputs

            embedder = SentenceEmbedder()
            test = self.records("test")
            self._cache["embeddings"] = (embedder, embedder.encode([input_text(r) for r in test]),
                                         other_inputs(len(test), self.settings.other_inputs, self.settings.seed))
        return self._cache["embeddings"]

    def stage_generator(self, spec: str) -> None:
        """One method: explanations, R, LC-IG and S per test example."""
        from larev_hf.meta.specificity import specificity_scores
        from larev_hf.meta.varif import identity_aware, robustness

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
        from larev_hf.data.loaders import source_files

        s = self.settings
        files = source_files(s.dataset, s.data_dir, ("train", "test"))
        out: dict[str, Any] = {"data": {split: file_sha256(p) if p else None for split, p in files.items()}}
        for spec in s.generators:
            if "jsonl:" in spec:
                out[f"generator-{generator_name(spec)}"] = file_sha256(spec.split("jsonl:", 1)[1])
        return out

    def execute(self) -> dict[str, Any]:
        """Run (or resume) every stage and write the report; returns ``varif_report.json``'s content."""
        self.check()
        with self.runner.lock():
            metadata = {f.name: dict(f.metadata) for f in fields(VarifSettings)}
            self.runner.check_settings(asdict(self.settings), asdict(VarifSettings()), metadata, name="varif_config.json")
            generators = [f"generator-{generator_name(spec)}" for spec in self.settings.generators]
            self.runner.run(self.stages(), inputs=self.inputs(), independent=generators)
            return self.write_report()

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


# ---------------------------------------------------------------------- summaries (numpy only)
def summarize_varif(scores: Mapping[str, Sequence[Mapping[str, Any]]], base: Sequence[Mapping[str, Any]],
                    settings: VarifSettings) -> dict[str, Any]:
    """Per method the means (with bootstrap 95% intervals) of R, I, I unmasked, Ĩ, S, H and VARIF, the detector's
    accuracy on r and r⁻; the (R, Ĩ) frontier and its hypervolume; the hypotheses H1, H2, H5."""
    from larev_hf.meta.varif import hypervolume_2d, pareto_front, transform_informativeness, varif_scores
    from larev_hf.scores.stats import bootstrap_ci

    def mean_ci(values: np.ndarray) -> dict[str, Any]:
        kept = values[np.isfinite(values)]
        if len(kept) == 0:
            return {"mean": None, "ci95": [None, None], "n": 0}
        low, high = bootstrap_ci(kept, n_boot=settings.n_boot, seed=settings.seed)
        return {"mean": float(kept.mean()), "ci95": [low, high], "n": int(len(kept))}

    all_i = np.concatenate([[row["I"] for row in rows] for rows in scores.values()])
    methods: dict[str, Any] = {}
    for name, rows in scores.items():
        robust = np.array([np.nan if row["R"] is None else row["R"] for row in rows], dtype=float)
        info = np.array([row["I"] for row in rows], dtype=float)
        if settings.informativeness_transform == "minmax":  # rescaled over every method's examples together
            low, high = all_i.min(), all_i.max()
            tilde = np.ones_like(info) if high == low else (info - low) / (high - low)
        else:
            tilde = transform_informativeness(info, "exp")
        spec = np.array([row["S"] for row in rows], dtype=float)
        harmonic_scores = varif_scores(np.ones_like(spec), robust, tilde, settings.eps)
        scalar = varif_scores(spec, robust, tilde, settings.eps)
        methods[name] = {
            "regenerable": bool(np.isfinite(robust).any()),
            "R": mean_ci(robust), "I": mean_ci(info), "I_unmasked": mean_ci(np.array([r["I_unmasked"] for r in rows])),
            "masking_drop": mean_ci(np.array([r["I_unmasked"] - r["I"] for r in rows])),
            "I_tilde": mean_ci(tilde), "S": mean_ci(spec), "H": mean_ci(harmonic_scores), "VARIF": mean_ci(scalar),
            "detector_accuracy": float(np.mean([r["d_correct"] for r in rows])),
            "detector_accuracy_masked": float(np.mean([r["d_masked_correct"] for r in rows])),
            "h1_accuracy": float(np.mean([r["h1_correct"] for r in rows])),
            "mean_perturbations": float(np.mean([r["n_perturbations"] for r in rows])),
        }
    points = {name: (m["R"]["mean"], m["I_tilde"]["mean"]) for name, m in methods.items() if m["regenerable"]}
    reference = tuple(float(v) for v in settings.reference_point)
    front = pareto_front(points)
    return {
        "methods": methods,
        "frontier": front,
        "hypervolume": hypervolume_2d([points[n] for n in front], reference) if front else 0.0,
        "reference_point": list(reference),
        "h0_accuracy": float(np.mean([row["h0_correct"] for row in base])),
        "hypotheses": check_hypotheses(methods),
        "n_examples": len(base),
    }


def _mean(methods: Mapping[str, Any], name: str, key: str) -> float | None:
    return methods[name][key]["mean"] if name in methods else None


def check_hypotheses(methods: Mapping[str, Any]) -> dict[str, Any]:
    """H1, H2 and H5 of VARIF §6 on the measured means (criteria in docs/varif.md); a hypothesis whose methods were
    not compared is ``None``."""
    out: dict[str, Any] = {}
    if "vacuous" in methods:
        vacuous = methods["vacuous"]
        reference = "gold" if "gold" in methods else None
        checks = {"R >= 0.9": vacuous["R"]["mean"] is not None and vacuous["R"]["mean"] >= 0.9,
                  "|I| <= 0.05 nats": abs(vacuous["I"]["mean"]) <= 0.05,
                  "VARIF < H (S pulls it down)": vacuous["VARIF"]["mean"] < (vacuous["H"]["mean"] or 0.0)}
        if reference:
            checks["S below gold's"] = vacuous["S"]["mean"] < methods[reference]["S"]["mean"]
        out["H1"] = {"holds": all(checks.values()), "checks": checks,
                     "values": {"R": vacuous["R"]["mean"], "I": vacuous["I"]["mean"], "S": vacuous["S"]["mean"],
                                "H": vacuous["H"]["mean"], "VARIF": vacuous["VARIF"]["mean"]}}
    leaky = [name for name in LEAKY_METHODS if name in methods]
    if leaky:
        checks = {name: methods[name]["masking_drop"]["ci95"][0] is not None
                  and methods[name]["masking_drop"]["ci95"][0] > 0 for name in leaky}
        if "gold" in methods:
            for name in leaky:
                checks[f"{name} drops more than gold"] = (methods[name]["masking_drop"]["mean"]
                                                          > methods["gold"]["masking_drop"]["mean"])
        out["H2"] = {"holds": all(checks.values()), "checks": checks,
                     "values": {name: {"I_unmasked": _mean(methods, name, "I_unmasked"), "I": _mean(methods, name, "I")}
                                for name in [*leaky, "gold"] if name in methods}}
    order = [name for name in H5_ORDER if name in methods]
    worst = [name for name in H5_WORST if name in methods]
    if len(order) + bool(worst) >= 2:
        out["H5"] = {}
        for key in ("I_tilde", "VARIF"):
            ranked = [name for name in order if key == "I_tilde" or methods[name]["regenerable"]]
            pairs = {}
            for a, b in zip(ranked, ranked[1:], strict=False):
                pairs[f"{a} > {b}"] = _mean(methods, a, key) > _mean(methods, b, key)
            if ranked and worst:
                best_of_worst = max(worst, key=lambda n: _mean(methods, n, key))
                pairs[f"{ranked[-1]} > {{{', '.join(worst)}}}"] = (_mean(methods, ranked[-1], key)
                                                                  > _mean(methods, best_of_worst, key))
            out["H5"][key] = {"holds": all(pairs.values()), "pairs": pairs}
        out["H5"]["holds"] = all(v["holds"] for v in out["H5"].values())
    return out


def _cell(entry: Mapping[str, Any], digits: int = 3) -> str:
    if entry["mean"] is None:
        return "—"
    low, high = entry["ci95"]
    return f"{entry['mean']:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def render_varif_markdown(report: Mapping[str, Any]) -> str:
    """The VARIF report: the method table, the frontier, the hypotheses, the judge and the stage times."""
    from larev_hf.report import markdown_table

    methods = report["methods"]
    order = sorted(methods, key=lambda n: -(methods[n]["VARIF"]["mean"] if methods[n]["VARIF"]["mean"] is not None
                                            else -1.0))
    rows = [[name + ("" if methods[name]["regenerable"] else " †"), _cell(methods[name]["R"]), _cell(methods[name]["I"]),
             _cell(methods[name]["I_unmasked"]), _cell(methods[name]["I_tilde"]), _cell(methods[name]["S"]),
             _cell(methods[name]["VARIF"]), f"{methods[name]['detector_accuracy']:.2f} → "
             f"{methods[name]['detector_accuracy_masked']:.2f}"] for name in order]
    lines = [f"# VARIF report: {report.get('dataset', '')} ({report['n_examples']} test examples)", "",
             "Means with bootstrap 95% intervals. R: robustness under paraphrase (§3.1); I: LC-IG in nats, masked "
             "(§3.2); I unmasked: the same with r unmasked; Ĩ: I mapped to [0, 1]; S: specificity (§3.3); VARIF = S·H. "
             "d: the leakage detector's accuracy p_d(y | r) on r → on r⁻. † cannot be regenerated for perturbed "
             "inputs, so R (and VARIF) is omitted.", "",
             markdown_table(["method", "R", "I (nats)", "I unmasked", "Ĩ", "S", "VARIF", "d acc r → r⁻"], rows), "",
             f"**Frontier** (R, Ĩ): {', '.join(report['frontier']) or '—'}; **hypervolume** "
             f"{report['hypervolume']:.4f} above the reference point {tuple(report['reference_point'])}.", "",
             f"h₀ = p(y | x) accuracy: {report['h0_accuracy']:.3f}.", "", "## Hypotheses (VARIF §6)", ""]
    for name, entry in report["hypotheses"].items():
        if name == "H5":
            for key in ("I_tilde", "VARIF"):
                pairs = "; ".join(f"{pair}: {'yes' if ok else 'no'}" for pair, ok in entry[key]["pairs"].items())
                lines.append(f"- **H5 on {key}**: {'holds' if entry[key]['holds'] else 'fails'} ({pairs})")
        else:
            checks = "; ".join(f"{check}: {'yes' if ok else 'no'}" for check, ok in entry["checks"].items())
            lines.append(f"- **{name}**: {'holds' if entry['holds'] else 'fails'} ({checks})")
    judge = report.get("nli_judge", {})
    perturb = report.get("perturbations", {})
    lines += ["", "## NLI judge and perturbations", "",
              f"- judge: {judge.get('model')}" + (f", e-SNLI test accuracy {judge['accuracy']:.3f}"
                                                 if "accuracy" in judge else ""),
              f"- paraphraser: {perturb.get('paraphraser')}; perturbations kept of the candidates: "
              + ", ".join(f"{kind} {perturb.get('kept', {}).get(kind)}/{count}"
                          for kind, count in perturb.get("candidates", {}).items())]
    if report.get("stage_seconds"):
        lines += ["", "## Stage wall times (s)", "",
                  markdown_table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in report["stage_seconds"].items()])]
    return "\n".join(lines) + "\n"


def plot_frontier(report: Mapping[str, Any], path: str | os.PathLike) -> None:
    """The (R, Ĩ) plane: one labelled point per method, the Pareto front as a step line, and methods without R
    (gold, a user's file) as dashed horizontal lines at their Ĩ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from larev_hf.report import save_figure

    methods = report["methods"]
    fig, ax = plt.subplots(figsize=(7.2, 5.0))
    def near(point: tuple[float, float], groups: dict[tuple[float, float], list[str]]) -> tuple[float, float]:
        """The group whose first point is within 0.03 on both axes (labels closer than that would overlap)."""
        return next((key for key in groups if abs(key[0] - point[0]) < 0.03 and abs(key[1] - point[1]) < 0.03), point)

    clusters: dict[tuple[float, float], list[str]] = {}  # methods at (nearly) the same point share one label
    lines: dict[tuple[float, float], list[str]] = {}  # methods without R: one dashed line per level
    for name, entry in methods.items():
        r, i = entry["R"]["mean"], entry["I_tilde"]["mean"]
        if r is None:
            lines.setdefault(near((0.0, i), lines), []).append(name)
            ax.axhline(i, linestyle="--", color="grey", linewidth=1)
            continue
        clusters.setdefault(near((r, i), clusters), []).append(name)
        on_front = name in report["frontier"]
        ax.scatter([r], [i], s=40, color="tab:red" if on_front else "tab:blue", zorder=4 if on_front else 3)
    for (_, i), names in lines.items():
        ax.annotate(f"{', '.join(names)} (no R)", (0.01, i), textcoords="offset points", xytext=(2, 3), fontsize=8,
                    color="grey")
    for k, ((r, i), names) in enumerate(sorted(clusters.items())):  # by R, labels alternately above and below
        ax.annotate(", ".join(names), (r, i), textcoords="offset points", xytext=(-4, 6 if k % 2 == 0 else -13),
                    fontsize=8, ha="right")
    front = [(methods[n]["R"]["mean"], methods[n]["I_tilde"]["mean"]) for n in report["frontier"]]
    if front:
        xs, ys = [], []
        for k, (r, i) in enumerate(front):
            xs += [r, r] if k else [r]
            ys += [front[k - 1][1], i] if k else [i]
        ax.plot(xs, ys, color="tab:red", linewidth=1, zorder=2, label=f"Pareto front (HV {report['hypervolume']:.3f})")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("robustness R (Sim_NLI under paraphrase)")
    ax.set_ylabel("informativeness Ĩ (LC-IG)")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, max(0.1, 1.15 * max((m["I_tilde"]["mean"] or 0) for m in methods.values())))
    ax.set_title(f"VARIF frontier — {report.get('dataset', '')}")
    fig.tight_layout()
    save_figure(fig, path)
