"""How a bundle scores (:class:`BundleScoring`), what it returns (:class:`BundleScores`) and the two ways it goes beyond
one evaluator: the mean over an ensemble of seeds' evaluators (:func:`ensemble_mean`) and a calibration fitted on human
judgments (:func:`calibrated_scores`).

One path for every way in: the user's columns are validated once, into schema records
(:meth:`BundleScoring.records`, :func:`~larev_hf.hub.inputs.build_records`), and those records go down as they are —
to :meth:`BundleScoring.score`, then to the method's bundle scorer (:meth:`larev_hf.methods.Method.bundle_scorer`),
called with keyword arguments. ``larev-hf evaluate``, the ``evaluate`` modules and :meth:`EvaluatorBundle.score
<larev_hf.hub.EvaluatorBundle.score>` all end in :meth:`BundleScoring.score`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from larev_hf.hub import findings as finding_rules
from larev_hf.hub.config import BundleConfig
from larev_hf.hub.findings import Finding, FindingThresholds
from larev_hf.hub.inputs import INSTANCE_ID, build_records
from larev_hf.hub.models import BundleModels
from larev_hf.io import DataError
from larev_hf.methods import Method, get_method, text_features
from larev_hf.modeling.input_formats import get_input_format
from larev_hf.modeling.scoring import MAX_INPUT_TOKENS
from larev_hf.scores.calibration import Calibration
from larev_hf.scores.ranking import within_instance_ranks


@dataclass
class BundleScores:
    """Per-example scores of one ``score`` call (nats) and the settings hash of the bundle that made them.

    An ensemble bundle (several evaluator seeds) scores with each seed's evaluators; ``scores`` and the two
    log-probabilities are then the means over seeds and ``seed_scores`` holds each seed's scores (``[seeds, n]``).
    """

    scores: np.ndarray
    log_p_rationale: np.ndarray
    log_p_baseline: np.ndarray
    baselines: list[str] | None
    hashcode: str
    #: the bundle's calibrated score (log-odds that people judge the explanation acceptable), when it has a calibration
    calibrated: np.ndarray | None = None
    #: each evaluator seed's scores (an ensemble bundle), ``[seeds, examples]``
    seed_scores: np.ndarray | None = None
    #: the score minus the same evaluators' score of the vacuous baseline b as the rationale (the instance's own
    #: Gold − Vacuous reference point): comparable across instances and labels, where a raw score carries a per-label
    #: offset. ``None`` for bundles that read the input, not a baseline (RoRA).
    relative: np.ndarray | None = None
    #: the score minus the mean gold score of its label on the evaluator's test split (``label_offsets`` of the
    #: bundle; fixed label sets only): removes the per-label offset of raw scores, so explanations of different
    #: labels rank on one scale
    label_centred: np.ndarray | None = None
    #: each row's ``instance_id`` (``None`` where it gave none): explanations of one instance are ranked together
    instance_ids: list[str | None] | None = None
    #: the calibration's inputs per feature (``{feature: [rows]}``, as scored: before the log, caps and
    #: standardisation), where the bundle has a calibration; findings read them (:mod:`larev_hf.hub.findings`)
    features: dict[str, np.ndarray] | None = None
    #: per feature, what it added to each row's calibrated score (coefficient × standardised value, log-odds):
    #: ``calibrated = Σ contributions + calibration_intercept`` (:meth:`Calibration.contributions
    #: <larev_hf.scores.calibration.Calibration.contributions>`)
    contributions: dict[str, np.ndarray] | None = None
    calibration_intercept: float | None = None
    #: per row, log p(given label | r ⊕ b) − the best other label's (each label with its own vacuous baseline) and
    #: that label (:meth:`BundleScoring.label_margins`), where it was asked for
    label_margin: np.ndarray | None = None
    read_label: list[str] | None = None
    #: per row, the most its label margin rises with one negation of the explanation toggled, and that text (NaN,
    #: ``None``: nothing to toggle; :meth:`BundleScoring.negation_gains`), where label margins were asked for
    negation_gain: np.ndarray | None = None
    negation_text: list[str | None] | None = None
    #: per row, how much more likely the explanation language model finds the explanation's own word order than
    #: shuffled orders of its content words (:func:`~larev_hf.hub.findings.word_order_margins`), where the
    #: calibration carries that model
    word_order: np.ndarray | None = None
    #: per row, the bundle's NLI judge's log-probability of the given label reading the premise followed by the
    #: explanation, and the label it reads (:meth:`BundleScoring.judge_reads`), where the bundle carries a judge and
    #: label margins were asked for
    judge_log_prob: np.ndarray | None = None
    judge_read: list[str] | None = None
    #: per row, the evaluator input's length in tokens, and how many scoring keeps (:meth:`BundleScoring.input_tokens`)
    input_tokens: np.ndarray | None = None
    max_input_tokens: int | None = None
    #: per row, its findings, strongest first (:mod:`larev_hf.hub.findings`), with the bundle's thresholds
    findings: list[list[Finding]] | None = None
    #: per row, whether the raw score can carry a judgment: ``False`` where the evaluator is already certain of the
    #: label from the vacuous baseline (log p(y | b) at or above ``baseline_ceiling``), so every explanation scores ≈ 0
    raw_informative: np.ndarray | None = None

    @property
    def recommended(self) -> np.ndarray:
        """The score to read per explanation: the calibrated score where the bundle has a calibration (it resists
        every VARSuite attack and agrees best with people, docs/human.md), the raw score otherwise."""
        return self.calibrated if self.calibrated is not None else self.scores

    @property
    def instance_ranks(self) -> list[int | None] | None:
        """Per row, the rank of its :attr:`recommended` score among its instance's rows (1 = best); ``None`` when no
        row names an instance."""
        if not self.instance_ids or all(instance is None for instance in self.instance_ids):
            return None
        return within_instance_ranks(self.recommended, self.instance_ids)

    @property
    def mean(self) -> float:
        """The corpus score: the mean pointwise score (REV eq. 6); NaN for no examples."""
        return float(np.mean(self.scores)) if len(self.scores) else float("nan")

    @property
    def seed_std(self) -> np.ndarray | None:
        """Per example, the standard deviation (ddof 1) of the seeds' scores: how much retraining moves it."""
        return None if self.seed_scores is None else np.std(self.seed_scores, axis=0, ddof=1)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values: what the ``evaluate`` modules return."""
        out = {"scores": [float(x) for x in self.scores], "mean_score": self.mean,
               "log_p_rationale": [float(x) for x in self.log_p_rationale],
               "log_p_baseline": [float(x) for x in self.log_p_baseline],
               "baselines": self.baselines, "hashcode": self.hashcode}
        if self.calibrated is not None:
            out["calibrated_scores"] = [float(x) for x in self.calibrated]
        if self.contributions is not None:
            out["contributions"] = [{name: float(values[i]) for name, values in self.contributions.items()}
                                    for i in range(len(self.scores))]
            out["calibration_intercept"] = self.calibration_intercept
        if self.relative is not None:
            out["relative_scores"] = [float(x) for x in self.relative]
        if self.label_centred is not None:
            out["label_centred_scores"] = [float(x) for x in self.label_centred]
        if self.findings is not None:
            out["findings"] = [[finding.to_dict() for finding in row] for row in self.findings]
        if self.raw_informative is not None:
            out["raw_score_informative"] = [bool(x) for x in self.raw_informative]
        ranks = self.instance_ranks
        if ranks is not None:
            out["instance_ranks"] = ranks
        if self.seed_scores is not None:
            out["seed_scores"] = [[float(x) for x in row] for row in self.seed_scores]
            out["seed_std"] = [float(x) for x in self.seed_std]
        return out


def ensemble_mean(results: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(scores, log_p_rationale, log_p_baseline, seed_scores)`` from one scorer result per seed: the means over seeds
    of each pointwise score and log-probability (the mean of log-ratios, not of probabilities: it keeps the metric's
    unit, nats, and its definition as a difference of two log-probabilities); ``seed_scores`` is ``None`` for one
    seed."""
    scores = np.stack([np.asarray(r.scores, dtype=np.float64) for r in results])
    log_r = np.mean([np.asarray(r.log_p_with_rationale, dtype=np.float64) for r in results], axis=0)
    log_b = np.mean([np.asarray(r.log_p_baseline, dtype=np.float64) for r in results], axis=0)
    return scores.mean(axis=0), log_r, log_b, scores if len(results) > 1 else None


def calibration_columns(calibration: Calibration, method: str, scores: Any,
                        records: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """``{feature: [rows]}``: what ``calibration`` reads of each scored record — ``{method: scores}`` and the text
    scores of the registry's text features (:func:`~larev_hf.methods.text_features`) among its features, computed by
    their methods from the records' rationales and inputs, and from the calibration's ``text_models`` where a feature
    needs more (the explanation language model's training explanations)."""
    columns: dict[str, np.ndarray] = {method: np.asarray(scores, dtype=float)}
    texts = [record["rationale"] for record in records]
    for name in text_features():
        if name in calibration.features:
            columns[name] = np.asarray(get_method(name).text_scores(list(records), texts,
                                                                    calibration.text_models.get(name)), dtype=float)
    return columns


def calibrated_scores(calibration: Mapping[str, Any] | Calibration, method: str, scores: Any,
                      records: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """The calibrated score of each scored record: ``calibration`` over :func:`calibration_columns`."""
    calibration = calibration if isinstance(calibration, Calibration) else Calibration.from_dict(calibration)
    return calibration(calibration_columns(calibration, method, scores, records))


class ScoredBundle(Protocol):
    """What :class:`BundleScoring` reads of its bundle (:class:`~larev_hf.hub.EvaluatorBundle`, one layer up)."""

    config: BundleConfig
    models: BundleModels

    @property
    def spec(self) -> Method: ...
    @property
    def hashcode(self) -> str: ...


class BundleScoring:
    """A bundle's scoring: its inputs validated into schema records, the vacuous baselines b its builder makes, and
    the records scored with its method's bundle scorer over each evaluator seed (the mean over seeds, the
    calibration and the label offsets on top).

    It reads the bundle's config when it scores, so a config replaced after loading (``larev-hf export`` adding a
    calibration) is the one that scores.

    Args:
        bundle (`EvaluatorBundle`): the bundle whose config, method and models (:class:`~larev_hf.hub.models.BundleModels`)
            score.
    """

    def __init__(self, bundle: ScoredBundle) -> None:
        self.bundle = bundle

    def records(self, rationales: Sequence[str], labels: Sequence[str], inputs: Sequence[Mapping[str, Any]],
                baselines: Sequence[str] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
        """Validated schema records for this bundle's task and label set (see :func:`build_records`; ``kwargs``:
        ``offset``, ``locate``, ``check_ids``); given ``baselines`` become the records' ``baseline``."""
        config = self.bundle.config
        return build_records(rationales, labels, inputs, task=config.task, label_set=config.label_set,
                             baselines=baselines, require_choices=self.bundle.spec.reads_input and config.task == "qa",
                             **kwargs)

    def make_baselines(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        """The vacuous baseline b of each schema record, from its input and label only (never the rationale)."""
        config = self.bundle.config
        if config.baseline_builder is None:
            raise ValueError(f"a {config.method} bundle has no baseline builder: its evaluators read the input x")
        hidden = {"rationale", "baseline"}
        baselines = self.bundle.models.baseline_builder([{k: v for k, v in r.items() if k not in hidden}
                                                         for r in records])
        if len(baselines) != len(records) or not all(isinstance(b, str) and b.strip() for b in baselines):
            raise DataError(f"the baseline builder {config.baseline_builder} returned {len(baselines)} baselines "
                            f"for {len(records)} examples, or an empty one")
        return list(baselines)

    def _with_baselines(self, records: Sequence[Mapping[str, Any]], needed: bool) -> list[Mapping[str, Any]]:
        """``records`` as the method's scorer reads them: each with its baseline b (the user's, else the builder's)
        where the scorer reads b; refused where it reads the input x instead."""
        given = sum("baseline" in record for record in records)
        if given and not needed:
            raise ValueError(f"a {self.bundle.spec.title} bundle reads the input x, not vacuous baselines: pass no "
                             "`baselines`")
        if given and given != len(records):
            raise ValueError(f"{given} of {len(records)} records carry a baseline; give one for every record or none")
        if given or not needed:
            return list(records)
        return [{**record, "baseline": baseline}
                for record, baseline in zip(records, self.make_baselines(records), strict=True)]

    def input_tokens(self, records: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, int] | None:
        """Per record with its baseline, the evaluator's encoder input (r ⊕ b) in tokens, and how many scoring keeps
        (longer inputs are truncated); ``None`` for bundles that read x instead of b."""
        if self.bundle.spec.reads_input:
            return None
        tokenizer, fmt = self.bundle.models.tokenizer, get_input_format(self.bundle.config.input_format)
        texts = [fmt.rationale_input(r["rationale"], r["baseline"]) for r in records]
        lengths = np.array([len(ids) for ids in tokenizer(texts)["input_ids"]]) if texts else np.zeros(0, int)
        return lengths, int(min(MAX_INPUT_TOKENS, getattr(tokenizer, "model_max_length", MAX_INPUT_TOKENS)))

    def label_margins(self, records: Sequence[Mapping[str, Any]], scorers: Sequence[Any],
                      progress: bool = False) -> tuple[np.ndarray, list[str]] | None:
        """Per record, log p(its label | r ⊕ b_label) − max over the other labels y' of log p(y' | r ⊕ b_y') under
        the rationale model (the mean over seeds), each label with the vacuous baseline built for it, and the best
        other label: below 0, the evaluator reads the explanation as arguing for another label. ``None`` for
        bundles without a fixed label set or a baseline builder."""
        labels = self.bundle.config.label_set
        if not labels or len(labels) < 2 or self.bundle.config.baseline_builder is None:
            return None
        log_p = {}
        for label in labels:
            relabelled = [{**{k: v for k, v in r.items() if k != "baseline"}, "label": label} for r in records]
            relabelled = [{**r, "baseline": b} for r, b in zip(relabelled, self.make_baselines(relabelled), strict=True)]
            log_p[label] = np.mean([np.asarray(scorer.rationale_log_probs(
                records=relabelled, rationales=[r["rationale"] for r in relabelled], progress=progress), dtype=float)
                for scorer in scorers], axis=0)
        table = np.stack([log_p[label] for label in labels], axis=1)
        margins, read = np.zeros(len(records)), []
        for i, record in enumerate(records):
            given = labels.index(record["label"])
            others = [j for j in range(len(labels)) if j != given]
            best = max(others, key=lambda j: table[i, j])
            margins[i] = table[i, given] - table[i, best]
            read.append(labels[best])
        return margins, read

    def negation_gains(self, records: Sequence[Mapping[str, Any]], scorers: Sequence[Any], margins: np.ndarray,
                       progress: bool = False) -> tuple[np.ndarray, list[str | None]]:
        """Per record, the largest rise of its label margin (:meth:`label_margins`) when one negation of its
        explanation is toggled (:func:`~larev_hf.hub.findings.negation_toggles`), and the toggled text: high where
        the explanation's polarity argues against its label, as in an explanation with a negation flipped. NaN and
        ``None`` where there is no negation to insert or remove."""
        owners, toggled = [], []
        for i, record in enumerate(records):
            for text in finding_rules.negation_toggles(str(record["rationale"])):
                owners.append(i)
                toggled.append({**{k: v for k, v in record.items() if k != "baseline"}, "rationale": text})
        gains, texts = np.full(len(records), np.nan), [None] * len(records)
        if not toggled:
            return gains, texts
        toggled_margins, _ = self.label_margins(toggled, scorers, progress)
        for i, record, margin in zip(owners, toggled, toggled_margins, strict=True):
            if np.isnan(gains[i]) or margin - margins[i] > gains[i]:
                gains[i], texts[i] = float(margin - margins[i]), record["rationale"]
        return gains, texts

    def judge_reads(self, records: Sequence[Mapping[str, Any]],
                    progress: bool = False) -> tuple[np.ndarray, list[str]] | None:
        """Per NLI record, the bundle's NLI judge's log p(given label | premise ⊕ explanation, hypothesis) and the
        label it reads likeliest (the bundle's spelling); ``None`` for a bundle without a judge."""
        directory = self.bundle.config.judge_dir
        if directory is None:
            return None
        log_p, read = self.bundle.models.nli_judge(directory).label_log_probs(records, progress)
        spelling = {label.lower(): label for label in self.bundle.config.label_set or []}
        return log_p, [spelling.get(label.lower(), label) for label in read]

    def score(self, records: Sequence[Mapping[str, Any]], *, batch_size: int = 64, progress: bool = False,
              relative: bool = False, check_labels: bool = False) -> BundleScores:
        """Score validated schema records (:meth:`records`): per-example scores in nats (higher = more new label
        information), with each record's ``baseline`` where it has one, else the bundle's builder's.

        Args:
            records (`Sequence[Mapping]`): schema records as :meth:`records` returns them; not validated again.
            batch_size (`int`, *optional*, defaults to 64): scoring batch size.
            progress (`bool`, *optional*, defaults to `False`): show progress bars.
            relative (`bool`, *optional*, defaults to `False`): also score each baseline b as the rationale and return
                ``relative`` = score − that score (a second scoring pass; bundles that read b only). It ranks
                explanations across instances worse than the raw score on the SNLI acceptability judgments
                (docs/hub.md), so it is off by default.
            check_labels (`bool`, *optional*, defaults to `False`): also score each explanation under every label
                (:meth:`label_margins`, one pass per label), and so its negation-toggled texts
                (:meth:`negation_gains`), for the finding *contradicts the label*.
        """
        bundle = self.bundle
        config, models = bundle.config, bundle.models
        scorers = [bundle.spec.bundle_scorer(models.of_seed(seed), models.tokenizer, config, batch_size)
                   for seed in config.seeds or [None]]
        needed = scorers[0].needs_baselines
        scored = self._with_baselines(records, needed)
        results = [scorer.score(records=scored, rationales=[r["rationale"] for r in scored], progress=progress)
                   for scorer in scorers]
        scores, log_p_rationale, log_p_baseline, seed_scores = ensemble_mean(results)
        calibrated = features = contributions = intercept = order = None
        if config.calibration is not None:
            calibration = Calibration.from_dict(config.calibration)
            if "explanation_lm" in calibration.text_models:
                order = finding_rules.word_order_margins(records, calibration.text_models["explanation_lm"])
            features = calibration_columns(calibration, config.method, scores, records)
            parts = calibration.contributions(features)
            contributions = {name: parts[:, j] for j, name in enumerate(calibration.features)}
            intercept = float(calibration.intercept)
            calibrated = parts.sum(axis=1) + intercept
        vacuous = None
        if relative and needed:  # the instance's own reference point: b as the rationale
            vacuous = ensemble_mean([scorer.score(records=scored, rationales=[r["baseline"] for r in scored],
                                                  progress=progress) for scorer in scorers])[0]
        margins = self.label_margins(records, scorers, progress) if check_labels and needed else None
        gains = None if margins is None else self.negation_gains(records, scorers, margins[0], progress)
        judged = self.judge_reads(records, progress) if margins is not None else None
        lengths = self.input_tokens(scored) if needed else None
        thresholds = FindingThresholds.from_dict(config.findings)
        found = finding_rules.find(records, thresholds, label_set=config.label_set, features=features,
                                   label_margin=None if margins is None else margins[0],
                                   read_label=None if margins is None else margins[1],
                                   negation_gain=None if gains is None else gains[0],
                                   negation_text=None if gains is None else gains[1], word_order=order,
                                   tokens=None if lengths is None else lengths[0],
                                   max_tokens=None if lengths is None else lengths[1],
                                   judge_log_prob=None if judged is None else judged[0],
                                   judge_read=None if judged is None else judged[1])
        informative = np.asarray(log_p_baseline) < thresholds.baseline_ceiling if needed else None
        offsets = config.label_offsets
        centred = None if not offsets else scores - np.array([offsets.get(r["label"], np.nan) for r in scored])
        return BundleScores(scores=scores, log_p_rationale=log_p_rationale, log_p_baseline=log_p_baseline,
                            baselines=[r["baseline"] for r in scored] if needed else None, hashcode=bundle.hashcode,
                            calibrated=calibrated, seed_scores=seed_scores,
                            relative=None if vacuous is None else scores - vacuous, label_centred=centred,
                            instance_ids=[r.get(INSTANCE_ID) for r in scored], features=features,
                            contributions=contributions, calibration_intercept=intercept,
                            label_margin=None if margins is None else margins[0],
                            read_label=None if margins is None else margins[1],
                            negation_gain=None if gains is None else gains[0],
                            negation_text=None if gains is None else gains[1], word_order=order,
                            input_tokens=None if lengths is None else lengths[0],
                            max_input_tokens=None if lengths is None else lengths[1], findings=found,
                            judge_log_prob=None if judged is None else judged[0],
                            judge_read=None if judged is None else judged[1],
                            raw_informative=informative)
