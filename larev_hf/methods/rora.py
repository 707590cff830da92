"""RoRA (Jiang et al., 2024): RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅).

Stages (RoRA §3): ``rora_detector`` (a small r → y model and its n-gram attributions), ``rora_masked`` (the leaking
spans), ``rora_infiller`` and ``rora_counterfactuals`` (a label-conditioned infiller makes D^e for every label e),
``rora_phi`` (IRMv1 across the D^e, eq. 7) and ``rora_theta`` (x with an empty rationale, eq. 8). With
``--rora.classifier`` Φ and Θ are a pretrained encoder with a classification head (§4.1). The machinery lives in
:mod:`larev_hf.rora`; this module declares the method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from larev_hf.io import write_json
from larev_hf.methods.base import Method, MethodResult, RunContext, RunSettings, Stage, choice_accuracy
from larev_hf.rora.settings import INFILLER_MAX_LENGTH, RoRASettings, evaluator_backbone, phi_groups_per_batch
from larev_hf.scores import summarize_variants
from larev_hf.training.settings import IRMArguments, TrainSettings

#: Where a run with ``rora.classifier`` keeps the classifier encoder's tokenizer (Θ and Φ share it).
CLASSIFIER_TOKENIZER = "classifier_tokenizer"


def classifier_of(config: RunSettings) -> str | None:
    """``--rora.classifier``: the encoder of RoRA's classifier variant, or ``None`` for seq2seq evaluators."""
    return config.method_settings(RoRASettings).classifier


def phi_groups(config: RunSettings) -> int:
    """Φ's groups per batch in this run: its evaluators' backbone's (the classifier's encoder with
    ``--rora.classifier``)."""
    return phi_groups_per_batch(evaluator_backbone(config.method_settings(RoRASettings), config.model.backbone))


def classifier_train_settings(config: RunSettings, progress: bool = True) -> TrainSettings:
    """Training settings of RoRA's classifier variant. The encoder is pretrained, so its learning rate is the
    pretrained-checkpoint default (3e-5, thesis §5.3.3) whatever the backbone's; epochs and batch size follow
    ``num_train_epochs`` / ``batch_size`` when set, else the same defaults."""
    return TrainSettings.for_backbone(classifier_of(config) or config.model.backbone,
                                      num_train_epochs=config.given("num_train_epochs"),
                                      batch_size=config.given("batch_size"), seed=config.training.seed, progress=progress)


def _detector(context: RunContext) -> None:
    """Φ_small on r → y and its IG attributions averaged per n-gram over the training split (RoRA §3.1)."""
    from larev_hf.rora import LeakageDetector

    settings = context.config.method_settings(RoRASettings).detector_settings(context.config.training.seed)
    detector = LeakageDetector.fit(context.split_records("train"), settings, progress=context.progress)
    detector.save(context.path("rora", "detector"))
    write_json(context.path("rora", "detector_summary.json"), {**detector.history, "top_ngrams": detector.top_ngrams(25)})


def _masked(context: RunContext) -> None:
    """The training rationales with their leaking spans marked for sentinels (RoRA §3.1-3.2)."""
    from larev_hf.rora import LeakageDetector, mask_rationales, save_masked

    train = context.split_records("train")
    masked = mask_rationales(LeakageDetector.load(context.path("rora", "detector")), train)
    save_masked(context.path("rora", "masked_train.jsonl"), [r["id"] for r in train], masked)
    spans = [len(m.spans) for m in masked]
    write_json(context.path("rora", "masked_summary.json"), {
        "n_examples": len(masked), "mean_spans": float(np.mean(spans)) if spans else 0.0,
        "masked_char_share": float(np.mean([sum(e - s for s, e in m.spans) / max(len(m.text), 1) for m in masked]))
        if masked else 0.0,
    })


def _masked_rationales(context: RunContext) -> list:
    """The training rationales' masks, in training-split order."""
    from larev_hf.rora import load_masked

    by_id = load_masked(context.path("rora", "masked_train.jsonl"))
    return [by_id[r["id"]] for r in context.split_records("train")]


def _infiller(context: RunContext) -> None:
    """The label-conditioned infiller, trained MICE-style on the masked spans (RoRA §3.2)."""
    from transformers import AutoTokenizer

    from larev_hf.rora import build_infiller, train_infiller

    cfg = context.config
    tokenizer = AutoTokenizer.from_pretrained(context.path("tokenizer"))  # a copy: the sentinels are the infiller's own
    model = build_infiller(cfg.model.backbone, tokenizer, seed=cfg.training.seed)
    settings = replace(cfg.train_settings(context.progress), max_label_length=INFILLER_MAX_LENGTH)
    train_infiller(model, tokenizer, context.split_records("train"), _masked_rationales(context),
                   context.path("models", "rora_infiller"), settings)


def _counterfactuals(context: RunContext) -> None:
    """D^e for every candidate label e: greedy infilling of each training rationale's masked spans (RoRA §3.2)."""
    from larev_hf.modeling import load_evaluator
    from larev_hf.rora import generate_counterfactuals, save_counterfactuals
    from larev_hf.rora.settings import GENERATION_BATCH_SIZE, MAX_NEW_TOKENS

    model, tokenizer = load_evaluator(context.path("models", "rora_infiller"))
    counterfactuals, stats = generate_counterfactuals(
        model, tokenizer, context.split_records("train"), _masked_rationales(context),
        batch_size=GENERATION_BATCH_SIZE, max_new_tokens=MAX_NEW_TOKENS, progress=context.progress)
    save_counterfactuals(context.path("rora", "counterfactuals_train.jsonl"), counterfactuals)
    write_json(context.path("rora", "counterfactuals_summary.json"), stats)


def _train_classifier(context: RunContext, name: str, counterfactuals=None, arguments: IRMArguments | None = None,
                      groups_per_batch: int | None = None) -> None:
    """RoRA's classifier variant (§4.1): Φ on the D^e with λ · IRMv1 (``counterfactuals`` given) or Θ on x alone,
    a fresh head on the ``rora.classifier`` encoder over the training split's one label set."""
    from larev_hf.rora import build_classifier, classifier_dataset, shared_label_set, train_classifier

    cfg, train = context.config, context.split_records("train")
    labels = shared_label_set(train)
    model, tokenizer = build_classifier(classifier_of(cfg), labels, seed=cfg.training.seed)
    settings = classifier_train_settings(cfg, context.progress)
    train_classifier(model, tokenizer, classifier_dataset(train, tokenizer, labels, counterfactuals),
                     context.path("models", name), settings, arguments,
                     groups_per_batch=groups_per_batch or settings.batch_size)
    tokenizer.save_pretrained(context.path("rora", CLASSIFIER_TOKENIZER))  # the encoder's, shared by Θ and Φ


def _phi(context: RunContext) -> None:
    """Φ on the union of the D^e with the per-environment IRMv1 penalty (RoRA eq. 7; the classifier variant: eq. 6)."""
    from larev_hf.modeling.backbones import fresh_model
    from larev_hf.rora import RoRAConfig, counterfactual_dataset, load_counterfactuals, train_phi

    cfg = context.config
    arguments, groups = cfg.method_settings(RoRASettings).phi_arguments(), phi_groups(cfg)
    counterfactuals = load_counterfactuals(context.path("rora", "counterfactuals_train.jsonl"))
    if classifier_of(cfg):
        _train_classifier(context, "rora_phi", counterfactuals, arguments, groups)
    else:
        train_settings = cfg.train_settings(context.progress)
        dataset = counterfactual_dataset(context.split_records("train"), counterfactuals, context.tokenizer(),
                                         train_settings.max_input_length, train_settings.max_label_length)
        train_phi(fresh_model(context), context.tokenizer(), dataset, context.path("models", "rora_phi"), train_settings,
                  arguments, groups)
    write_json(context.path("models", "rora_phi", "rora_weights.json"), {
        "lambda_irm": arguments.lambda_irm, "groups_per_batch": groups, "normalization": RoRAConfig.normalization,
        "penalty_warmup_ratio": RoRAConfig.penalty_warmup_ratio,
        "classifier": classifier_of(cfg),
    })


def _theta(context: RunContext) -> None:
    """Θ on x with an empty rationale (RoRA eq. 8)."""
    from larev_hf.modeling.backbones import fresh_model
    from larev_hf.rora import train_theta

    cfg = context.config
    if classifier_of(cfg):
        _train_classifier(context, "rora_theta")
        return
    train_theta(fresh_model(context), context.tokenizer(), context.split_records("train"),
                context.path("models", "rora_theta"), cfg.train_settings(context.progress))


class RoRABundleScorer:
    """A bundle's RoRA scorer over Θ (x → y) and Φ (x, r → y); classifier evaluators (§4.1) go through
    :class:`~larev_hf.rora.RoRAClassifierScorer`. Reads the input x, no baseline b."""

    needs_baselines = False

    def __init__(self, models, tokenizer, config, batch_size: int) -> None:
        from larev_hf.rora import RoRAClassifierScorer, RoRAScorer

        theta, phi = models["baseline"], models["rationale"]
        if phi.config.is_encoder_decoder:
            self.scorer = RoRAScorer(theta, phi, tokenizer, config.reduction, batch_size)
        else:
            self.scorer = RoRAClassifierScorer(theta, phi, tokenizer, batch_size=batch_size)

    def score(self, *, records: Sequence[Mapping[str, Any]], rationales: Sequence[str], progress: bool = False) -> Any:
        """log p_Φ(y | x, r) − log p_Θ(y | x, ∅) of each rationale, with its record's input x and label y."""
        return self.scorer.score_records(records=records, rationales=rationales, progress=progress)


class RoRA(Method):
    """RoRA (Jiang et al., 2024, eq. 9)."""

    name = "rora"
    title = "RoRA"
    formula = "RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅)"
    citation_keys = ("jiang-etal-2024-rora", "chen-etal-2023-rev")
    roles = {"baseline": "rora_theta", "rationale": "rora_phi"}
    model_titles = {"baseline": "Θ (x → y)", "rationale": "Φ (x, r → y, IRM across counterfactual rationales)"}
    reads_input = True
    settings_class = RoRASettings

    def stages(self, config: RunSettings) -> list[Stage]:
        return [Stage("rora_detector", _detector), Stage("rora_masked", _masked), Stage("rora_infiller", _infiller),
                Stage("rora_counterfactuals", _counterfactuals), Stage("rora_phi", _phi), Stage("rora_theta", _theta)]

    def bundle_tokenizer(self, config: RunSettings) -> tuple[str, ...]:
        return ("rora", CLASSIFIER_TOKENIZER) if classifier_of(config) else ("tokenizer",)

    def bundle_scorer(self, models, tokenizer, config, batch_size) -> RoRABundleScorer:
        return RoRABundleScorer(models, tokenizer, config, batch_size)

    def _scorer(self, context: RunContext, shared: dict[str, Any]):
        """The run's RoRA scorer (generative or classifier evaluators) and log p_Θ(y | x, ∅) per record, once per
        scoring pass."""
        if "rora_scorer" not in shared:
            from larev_hf.rora import RoRAClassifierScorer, RoRAScorer

            cfg = context.config
            theta_model, phi_model = context.model("rora_theta"), context.model("rora_phi")
            if classifier_of(cfg):
                from transformers import AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(context.path("rora", CLASSIFIER_TOKENIZER))
                shared["rora_scorer"] = RoRAClassifierScorer(theta_model, phi_model, tokenizer,
                                                             batch_size=cfg.evaluation.eval_batch_size)
            else:
                shared["rora_scorer"] = RoRAScorer(theta_model, phi_model, context.tokenizer(), cfg.model.reduction,
                                                   cfg.evaluation.eval_batch_size)
        return shared["rora_scorer"]

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        """RoRA(r) = log p_Φ(y | x, r) − log p_Θ(y | x, ∅) per record and variant (RoRA eq. 9)."""
        scorer = self._scorer(context, shared)
        if "log_p_theta" not in shared:
            shared["log_p_theta"] = scorer.theta_log_probs(records, context.progress)
        return {variant: scorer.score_records(records, list(rationales), shared["log_p_theta"], context.progress).scores
                for variant, rationales in variants.items()}

    def score(self, context, records, variants, shared) -> MethodResult:
        """RoRA(r) of every variant (RoRA eq. 9), and Θ's and Φ's accuracies."""
        from larev_hf.modeling.scoring import predict_choices
        from larev_hf.rora import baseline_input, evaluator_input

        cfg = context.config
        labels, choices = [r["label"] for r in records], [r["choices"] for r in records]
        scores = self.pointwise(context, records, variants, shared)
        scorer = shared["rora_scorer"]

        def accuracy_of(model, inputs: list[str]) -> float:
            if classifier_of(cfg):
                return float(np.mean([p == y for p, y in zip(scorer.predict(model, inputs), labels, strict=True)]))
            predictions = predict_choices(model, context.tokenizer(), inputs, choices,
                                          batch_size=cfg.evaluation.eval_batch_size, reduction=cfg.model.reduction)
            return choice_accuracy(predictions, choices, labels)

        theta_model, phi_model = context.model("rora_theta"), context.model("rora_phi")
        columns: dict[str, list] = {"log_p_theta": [float(v) for v in shared["log_p_theta"]]}
        accuracy = {"rora_theta": {"baseline": accuracy_of(theta_model, [baseline_input(r) for r in records])},
                    "rora_phi": {}}
        for variant, rationales in variants.items():
            columns[f"rora/{variant}"] = [float(v) for v in scores[variant]]
            inputs = [evaluator_input(r, text) for r, text in zip(records, rationales, strict=True)]
            accuracy["rora_phi"][variant] = accuracy_of(phi_model, inputs)
        return MethodResult(summarize_variants(scores, n_boot=cfg.evaluation.n_boot, seed=cfg.training.seed), scores,
                            columns, accuracy)
