"""LAREV (the LAREV thesis, ch. 4): LAREV(r) = log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b).

Φ_LA is trained with L = ERM + λ_IRM · Σ_e ‖∇_w L^e(w·Φ_LA)‖²|_{w=1} − λ_probe · L_probe (eq. 4.10) over baseline
environments (E1 original b, E2 leakage term masked, E3 rewritten to a counter-label term; table 4.2), the leakage
term t_leak found by Integrated Gradients on Φ_base (§4.5.2). Stages (algorithm A.1 steps 4-9): Φ_base and Φ (shared
with REV), ``ig``, ``environments``, ``probe`` (only when some Φ_LA uses it) and ``phi_la``; with ``--ablations`` the
models of table 5.6.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from larev_hf.defaults import (
    IG_STEPS,
    IG_TARGET,
    IG_TARGETS,
    IG_TOP_K,
    LEAKAGE_TERM,
    LEAKAGE_TERMS,
    STOP_WORD_GUARD,
)
from larev_hf.io import read_json, read_jsonl, write_json, write_jsonl
from larev_hf.methods.base import MethodResult, RunContext, RunSettings, Stage
from larev_hf.methods.rev import PHI, PHI_BASE, ConditionalVMethod, cvi_variant_scores
from larev_hf.methods.settings import help_field
from larev_hf.modeling.input_formats import get_input_format
from larev_hf.scores import summarize_variants
from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION, IRMArguments, trainer_field, trainer_values

#: Ablations of the LAREV objective (thesis table 5.6): model name → which penalties are switched off.
ABLATIONS = {
    "phi_la_no_irm": {"lambda_irm": 0.0},
    "phi_la_no_probe": {"lambda_probe": 0.0},
    "phi_la_env_only": {"lambda_irm": 0.0, "lambda_probe": 0.0},
}
#: Where Φ_LA's weights start: the backbone as built (the thesis: a fresh pretrained checkpoint), or the run's
#: trained Φ — for a random-init preset, the stand-in for a checkpoint that can already read its input.
PHI_LA_INITS = ("fresh", "phi")
#: The stages that read Φ_LA's own settings: those settings may change until one of these has finished.
PHI_LA_STAGES = ("phi_la", *ABLATIONS)


@dataclass
class LarevSettings:
    """LAREV's settings (thesis eq. 4.10, §4.5, §5.3.3). Φ_LA's penalty weights are the fields of its trainer's config
    (:class:`~larev_hf.training.settings.IRMArguments`, taken with :func:`~larev_hf.training.settings.trainer_field`).
    ``None``: the backbone decides (:data:`~larev_hf.modeling.presets.KIND_DEFAULTS`, a preset's ``defaults``); a run
    fills it in when it starts."""

    lambda_irm: float | None = trainer_field(IRMArguments, "lambda_irm", default=None, stages=PHI_LA_STAGES)
    lambda_probe: float | None = trainer_field(IRMArguments, "lambda_probe", default=None, stages=PHI_LA_STAGES)
    penalty_warmup_ratio: float = trainer_field(IRMArguments, "penalty_warmup_ratio", stages=PHI_LA_STAGES)
    groups_per_batch: int | None = help_field(
        None, "environment groups per Φ_LA batch (its per_device_train_batch_size; default: the backbone's)",
        stages=PHI_LA_STAGES)
    probe_max_loss: float | None = trainer_field(IRMArguments, "probe_max_loss", stages=PHI_LA_STAGES)
    probe_every_n_steps: int = trainer_field(IRMArguments, "probe_every_n_steps", stages=PHI_LA_STAGES)
    ig_steps: int = help_field(IG_STEPS, "Integrated Gradients steps")
    ig_top_k: int = help_field(IG_TOP_K, "words per leakage term")
    leakage_term: str = help_field(
        LEAKAGE_TERM, "where t_leak comes from: ig, Integrated Gradients on Φ_base (the thesis), or verbalization, the "
        "gold label's words where b states them verbatim (the template baselines always do; IG for the others). IG "
        "from an all-zero input misses the label Φ_base falls back on (measured: docs/method.md, '5. ig: leakage terms "
        "by Integrated Gradients')", choices=LEAKAGE_TERMS, stages=("ig", "environments", "probe", *PHI_LA_STAGES))
    ig_target: str = help_field(
        IG_TARGET, "what IG attributes to b's words: log_prob, log p(y | b) as in the thesis, or log_odds, y's log-odds "
        "against the other labels, which still finds the label b states where Φ_base is sure of y without it (a yes/no "
        "task's fallback answer)", choices=IG_TARGETS, stages=("ig", "environments", "probe", *PHI_LA_STAGES))
    stop_word_guard: bool = help_field(STOP_WORD_GUARD, "let IG pick stop words as t_leak", flag="--no-stop-word-guard")
    ablations: bool = help_field(False, "also train Φ_LA with λ_IRM = 0, λ_probe = 0 and both 0 (table 5.6)",
                                 report_only=True)
    rationale_environments: bool = help_field(
        False, "also train Φ_LA on rationale-side environments: the answer in r masked (E4) or swapped for another "
        "choice (E5), b kept — our extension for data whose rationales state the answer (CoS-E), not the thesis's",
        stages=("environments", *PHI_LA_STAGES))
    phi_la_init: str | None = help_field(
        None, "where Φ_LA starts: the backbone as built (fresh, the thesis) or the run's trained Φ (lets a random-init "
        "preset read its input on open-label data such as CoS-E); default: the backbone's (fresh; phi for "
        "minilm2minilm)", choices=PHI_LA_INITS, stages=PHI_LA_STAGES)

    def phi_la_arguments(self) -> IRMArguments:
        """Φ_LA's trainer fields (:class:`~larev_hf.training.IRMProbeConfig`'s own) from these settings, with the
        library's summed label NLL: what :func:`~larev_hf.training.train_irm` copies into the config."""
        return IRMArguments(lambda_irm=self.lambda_irm, lambda_probe=self.lambda_probe,
                            penalty_warmup_ratio=self.penalty_warmup_ratio, probe_max_loss=self.probe_max_loss,
                            probe_every_n_steps=self.probe_every_n_steps, token_reduction=LIBRARY_TOKEN_REDUCTION)

    def validate(self, config: RunSettings) -> None:
        if self.phi_la_init is not None and self.phi_la_init not in PHI_LA_INITS:
            raise ValueError(f"phi_la_init must be one of {PHI_LA_INITS}, got {self.phi_la_init!r}")


def needs_probe(config: RunSettings) -> bool:
    """ψ is trained only if some Φ_LA uses it (λ_probe > 0, or the ablations, whose λ_IRM = 0 model keeps it)."""
    settings = config.method_settings(LarevSettings)
    return settings.lambda_probe > 0 or settings.ablations


def _ig(context: RunContext) -> None:
    """t_leak per training baseline by Integrated Gradients on Φ_base (thesis §4.5.2; A.1 step 6), or, with
    ``leakage_term="verbalization"``, the gold label's verbalization where b states it."""
    from larev_hf.leakage import IGSettings, integrated_gradients_terms, verbalization_term

    larev, train = context.config.method_settings(LarevSettings), context.split_records("train")
    fmt = get_input_format(context.config.model.input_format)
    settings = IGSettings(n_steps=larev.ig_steps, top_k=larev.ig_top_k, stop_word_guard=larev.stop_word_guard,
                          target=larev.ig_target)
    stated = {} if larev.leakage_term == "ig" else {r["id"]: verbalization_term(r) for r in train}
    by_ig = [r for r in train if stated.get(r["id"]) is None]
    offset = fmt.baseline_offset
    ig_terms = integrated_gradients_terms(context.model("phi_base"), context.tokenizer(),
                                          [fmt.baseline_input(r["baseline"]) for r in by_ig],
                                          [r["label"] for r in by_ig], settings, progress=context.progress,
                                          regions=[(offset, offset + len(r["baseline"])) for r in by_ig],
                                          candidates=[r["choices"] for r in by_ig]) if by_ig else []
    found = {r["id"]: term for r, term in zip(by_ig, ig_terms, strict=True)}
    rows = []
    for record in train:
        if record["id"] in found:
            term = found[record["id"]]
            row = {"id": record["id"], **term.to_dict(), "source": "ig"}
            row["start"], row["end"] = term.start - offset, term.end - offset  # character span within b itself
        else:
            row = {"id": record["id"], **stated[record["id"]].to_dict(), "source": "verbalization"}
        rows.append(row)
    write_jsonl(context.path("leakage", "train_terms.jsonl"), rows)
    counts = Counter(row["text"].lower() for row in rows)
    write_json(context.path("leakage", "summary.json"), {
        "n_examples": len(rows), "stop_word_guard_fired": sum(row["guard_fired"] for row in rows),
        "most_common_terms": counts.most_common(25), "leakage_term": larev.leakage_term,
        "sources": dict(Counter(row["source"] for row in rows)), "ig_settings": vars(settings),
    })


def _environments(context: RunContext) -> None:
    """E1 original, E2 masked, E3 counter-label baselines per training example (table 4.2; A.1 step 7)."""
    from larev_hf.leakage import (
        CounterLabelRewriter,
        LeakageTerm,
        make_environments,
        mask_token_of,
        rationale_environments,
    )

    seed, larev = context.config.training.seed, context.config.method_settings(LarevSettings)
    rewriter, mask = CounterLabelRewriter(seed=seed), mask_token_of(context.tokenizer())
    terms = {row["id"]: row for _, row in read_jsonl(context.path("leakage", "train_terms.jsonl"))}
    rows = []
    for record in context.split_records("train"):
        t = terms[record["id"]]
        term = LeakageTerm(t["start"], t["end"], t["text"], t["score"], t["guard_fired"])
        row = {"id": record["id"], **make_environments(record, term, mask, rewriter)}
        if larev.rationale_environments:
            row["rationales"] = rationale_environments(record, mask, seed=seed)
        rows.append(row)
    write_jsonl(context.path("leakage", "train_environments.jsonl"), rows)
    write_json(context.path("leakage", "rewriter.json"), {**rewriter.to_config(), "mask_token": mask})


def _environment_rows(context: RunContext) -> list[dict[str, Any]]:
    return [row for _, row in read_jsonl(context.path("leakage", "train_environments.jsonl"))]


def _probe(context: RunContext) -> None:
    """ψ from Φ, encoder frozen, decoder trained on b̃ → y (§4.5.3-4.5.4; A.1 step 8)."""
    from larev_hf.modeling.backbones import load_evaluator
    from larev_hf.training.leakage_aware import train_probe

    fmt, train = get_input_format(context.config.model.input_format), context.split_records("train")
    phi, _ = load_evaluator(context.path("models", "phi"))
    train_probe(phi, context.tokenizer(), [fmt.baseline_input(env["mask"]) for env in _environment_rows(context)],
                [r["label"] for r in train], context.path("models", "probe"), context.config.train_settings(context.progress))


@dataclass(frozen=True)
class AddedEnvironments:
    """Environments a variant of Φ_LA adds to every IRM group (LAREV-G's grounding environments,
    :mod:`larev_hf.methods.larev_grounded`).

    Attributes:
        names: the added environments, after E1-E3 (and E4-E5).
        add: fills them in: called with the training records and their environment rows, in the same order.
        unsure: those of ``names`` whose target is every label equally rather than the instance's label.
        recorded: what ``larev_weights.json`` records of them.
    """

    names: tuple[str, ...]
    add: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None]
    unsure: tuple[str, ...] = ()
    recorded: Mapping[str, Any] = field(default_factory=dict)


def train_phi_la(name: str, context: RunContext, added: AddedEnvironments | None = None, **overrides: float) -> None:
    """Φ_LA (or an ablation of it): a fresh model trained with IRMProbeTrainer (eq. 4.10; A.1 step 9).

    With ``phi_la_init="phi"`` it starts from the run's Φ instead (a deviation from the thesis for from-scratch
    presets, which otherwise must learn to read b and r while E3 contradicts b). ``added`` puts further environments
    into every IRM group (LAREV-G's Φ_G). ``overrides`` replace the run's IRMProbeConfig settings; all of them are
    saved to ``larev_weights.json``.
    """
    from larev_hf.leakage import ENVIRONMENTS, RATIONALE_ENVIRONMENTS
    from larev_hf.modeling.backbones import fresh_model, load_evaluator
    from larev_hf.training import IRMProbeTrainer, train_irm
    from larev_hf.training.leakage_aware import environment_dataset

    cfg = context.config
    larev = cfg.method_settings(LarevSettings)
    names = (ENVIRONMENTS + (RATIONALE_ENVIRONMENTS if larev.rationale_environments else ())
             + (added.names if added else ()))
    train, environments = context.split_records("train"), _environment_rows(context)
    if added:
        added.add(train, environments)
    dataset = environment_dataset(train, environments, context.tokenizer(), get_input_format(cfg.model.input_format),
                                  environment_names=names, unsure_environments=added.unsure if added else ())
    arguments = replace(larev.phi_la_arguments(), **overrides)
    probe = context.model("probe") if arguments.lambda_probe > 0 else None
    if larev.phi_la_init == "phi":  # a copy of Φ's weights (LoRA-trained ones merged), trained on from there
        model = load_evaluator(context.path("models", "phi"), device="cpu")[0]
    else:
        model = fresh_model(context)
    train_irm(IRMProbeTrainer, model, context.tokenizer(), dataset, context.path("models", name),
              cfg.train_settings(context.progress), arguments, int(larev.groups_per_batch), probe=probe)
    weights = {field: getattr(arguments, field) for field in trainer_values(larev)}  # the run's settings, as trained
    write_json(context.path("models", name, "larev_weights.json"), {
        **weights, "environments": list(names), **(added.recorded if added else {})})


IG = Stage("ig", _ig)
#: The stage that builds E1-E3 per training example (not the environments' names: ``larev_hf.leakage.ENVIRONMENTS``).
ENVIRONMENTS_STAGE = Stage("environments", _environments)
PROBE = Stage("probe", _probe)


class LAREV(ConditionalVMethod):
    """LAREV (thesis eq. 4.4 and 4.10)."""

    name = "larev"
    title = "LAREV"
    formula = "LAREV(r) = log p_ΦLA(y | r ⊕ b) − log p_Φbase(y | b)"
    citation_keys = ("li-2026-larev", "chen-etal-2023-rev")
    roles = {"baseline": "phi_base", "rationale": "phi_la"}
    model_titles = {"baseline": "Φ_base (b → y)", "rationale": "Φ_LA (r ⊕ b → y, leakage-aware)"}
    settings_class = LarevSettings

    def stages(self, config: RunSettings) -> list[Stage]:
        stages = [PHI_BASE, PHI, IG, ENVIRONMENTS_STAGE, *([PROBE] if needs_probe(config) else []),
                  Stage("phi_la", partial(train_phi_la, "phi_la"))]
        if config.method_settings(LarevSettings).ablations:
            stages += [Stage(name, partial(train_phi_la, name, **overrides)) for name, overrides in ABLATIONS.items()]
        return stages

    def score(self, context, records, variants, shared) -> MethodResult:
        result = super().score(context, records, variants, shared)
        if context.config.method_settings(LarevSettings).ablations:
            result.extra["ablations"] = self._ablation_table(context, records, variants, shared, result)
        return result

    def _ablation_table(self, context, records, variants, shared, result: MethodResult) -> dict[str, dict]:
        """Separations of REV (when scored), each ablated Φ_LA and the full LAREV (thesis table 5.6)."""
        evaluation, seed = context.config.evaluation, context.config.training.seed
        table = {}
        if "rev" in shared.get("summaries", {}):
            table["REV"] = {"lambda_irm": "n/a", "lambda_probe": "n/a",
                            "separations": shared["summaries"]["rev"]["separations"]}
        for name in ABLATIONS:
            scores = cvi_variant_scores(context, name, records, variants, shared["log_p_baseline"])
            for variant, values in scores.items():
                result.columns[f"{name}/{variant}"] = [float(x) for x in values]
            entry = summarize_variants(scores, n_boot=evaluation.n_boot, seed=seed)
            weights = read_json(context.path("models", name, "larev_weights.json"))
            table[f"LAREV {name.removeprefix('phi_la_')}"] = {**weights, "separations": entry["separations"],
                                                              "ci95": entry["ci95"]}
        full = read_json(context.path("models", "phi_la", "larev_weights.json"))
        table["LAREV (full)"] = {**full, "separations": result.summary["separations"], "ci95": result.summary["ci95"]}
        return table
