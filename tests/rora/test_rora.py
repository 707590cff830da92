"""RoRA's machinery (larev_hf.rora): n-gram masking rules, the detector on real leaky rationales, eq. 7's penalty, the infiller's edits,
and the score's sign on a task where the fact matters only together with the question."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from larev_hf.data import LEAKY_TEMPLATE, load_examples
from larev_hf.io import DataError
from larev_hf.modeling import build_model, build_tokenizer
from larev_hf.rora import (
    MINILM,
    CandidateCollator,
    ClassifierIRMLoss,
    Counterfactuals,
    DetectorSettings,
    FastTextClassifier,
    LabelSetIRMLoss,
    LeakageDetector,
    MaskedRationale,
    NGramVocab,
    RoRAClassifierScorer,
    RoRAScorer,
    RoRASettings,
    build_classifier,
    classifier_dataset,
    counterfactual_dataset,
    extract_ngrams,
    fit_rora,
    label_set_irm_penalty,
    shared_label_set,
    tokenizer_texts,
    train_classifier,
    train_plain_evaluator,
)
from larev_hf.training import IRMArguments, PenaltyWeights, TrainSettings, label_nll
from larev_hf.training.collator import EnvironmentCollator
from tests.yesno_task import fact_and_leaky, yesno_records


# ---------------------------------------------------------------------------------------------- detector
def test_ngrams_are_unigrams_and_bigrams_with_character_spans():
    grams = extract_ngrams("The answer is yes.")
    assert [g.key for g in grams] == ["the", "the answer", "answer", "answer is", "is", "is yes", "yes", "yes .", "."]
    text = "The answer is yes."
    assert all(text[g.start : g.end].lower().replace(" ", "") == g.key.replace(" ", "") for g in grams)
    vocab = NGramVocab.build(["b a", "a c", "a b"])  # counts: a 3, b 2, then alphabetical ties
    assert vocab.ngrams[:3] == ["a", "b", "a b"] and vocab.id("zzz") == 0
    assert NGramVocab.build(["b a", "a c", "a b"]).ngrams == vocab.ngrams


def hand_detector(scores: dict[str, float], threshold: float = 0.1) -> LeakageDetector:
    vocab = NGramVocab.build(["a b c x d e f g"])
    attributions = np.zeros(len(vocab))
    for key, value in scores.items():
        attributions[vocab.id(key)] = value
    return LeakageDetector(vocab, ["no", "yes"], FastTextClassifier(len(vocab), 2), attributions,
                           DetectorSettings(threshold=threshold))


def test_more_than_max_ngrams_above_threshold_masks_all_of_them_merging_adjacent_spans():
    above = {key: 0.2 for key in ["b", "c", "d", "e", "f", "g", "b c", "d e", "e f"]}  # 9 > 8
    masked = hand_detector(above).mask("A b c x d e f g")
    assert masked.masked == "A <extra_id_0> x <extra_id_1>"
    assert masked.originals == ["b c", "d e f g"]


def test_otherwise_the_top_two_ngrams_are_masked_whatever_their_score():
    scores = {key: 0.2 for key in ["c", "d", "e", "f", "b c", "d e"]} | {"g": 0.9, "b": 0.8}  # 8 above: not more than 8
    masked = hand_detector(scores).mask("A b c x d e f g")
    assert masked.masked == "A <extra_id_0> c x d e f <extra_id_1>"
    assert masked.fill(["B", "G"]) == "A B c x d e f G"
    # Below the threshold everywhere: still the top two (RoRA's top-k fallback); "x d" and "d" are adjacent → one span.
    low = hand_detector({"x d": 0.05, "d": 0.04}).mask("A b c x d e f g")
    assert low.masked == "A b c <extra_id_0> e f g" and low.originals == ["x d"]


def test_auto_threshold_is_the_largest_at_which_most_rationales_get_more_than_the_top_k():
    """RoRA appendix C.2: tune the threshold so that the majority of the training rationales get more masked
    than the top-k. Hand attributions: the 9th-highest n-gram score of each rationale decides."""
    ngrams = ["b", "c", "d", "e", "f", "g", "b c", "d e", "e f"]  # the 9 n-grams of "b c d e f g" beyond the top 8
    detector = hand_detector({key: 0.1 * (i + 1) for i, key in enumerate(ngrams)})
    text = "A b c x d e f g"
    ninth = sorted(detector.score(gram.key) or 0.0 for gram in detector.vocab.encode(text)[1])[-9]
    rationales = [text, text, "A b", "c x"]  # two of four have more than 8 n-grams
    threshold = detector.calibrate_threshold(rationales, min_share=0.5)
    assert threshold < ninth and threshold == pytest.approx(ninth)
    detector.settings = DetectorSettings(threshold=threshold)
    assert [len(detector.select(r)) > 8 for r in rationales] == [True, True, False, False]
    detector.settings = DetectorSettings(threshold=ninth)  # a hair higher: the 9th n-gram no longer counts
    assert not any(len(detector.select(r)) > 8 for r in rationales)
    with pytest.raises(ValueError, match="fewer than 75% of the rationales"):
        detector.calibrate_threshold(rationales, min_share=0.75)
    with pytest.raises(ValueError, match="a number or 'auto'"):
        DetectorSettings(threshold="tuned")


@pytest.mark.slow
def test_detector_finds_the_label_word_in_the_answer_is_x_rationales(data_dir):
    records = load_examples("strategyqa", data_dir / "strategyqa", "train", max_examples=600).to_list()
    for record in records:
        record["rationale"] = f"{record['rationale']} {LEAKY_TEMPLATE.format(label=record['label'])}"
    detector = LeakageDetector.fit(records)
    assert detector.history["train_accuracy"] > 0.95
    # Each label's n-grams score in the top 15% of all global attributions; the template words that every rationale
    # shares ("the answer", "answer is") carry no label information and stay below the median.
    attributions = detector.attributions[1:]
    for label in ("yes", "no"):
        assert max(detector.score(key) for key in (label, f"is {label}", f"{label} .")) > np.quantile(attributions, 0.85)
    for key in ("the answer", "answer is"):
        assert detector.score(key) < np.median(attributions)
    # threshold "auto": the fitted settings carry the tuned number, and most rationales get more than the top-k
    tuned = LeakageDetector.fit(records, DetectorSettings(threshold="auto"))
    assert tuned.settings.threshold == tuned.history["calibrated_threshold"] > 0
    assert np.mean([len(tuned.select(r["rationale"])) > tuned.settings.max_ngrams for r in records]) >= 0.5
    covered = 0
    for record in records:
        label_start = record["rationale"].rindex(f" {record['label']}.") + 1
        spans = detector.mask(record["rationale"], record["id"]).spans
        covered += any(start <= label_start < end for start, end in spans)
    assert covered / len(records) > 0.95
    for label in ("yes", "no"):
        masked = detector.mask(LEAKY_TEMPLATE.format(label=label))
        assert label not in masked.masked and any(label in original for original in masked.originals)


def test_detector_reports_bad_records():
    with pytest.raises(DataError, match="example id 'x2'.*'label' is 'maybe'"):
        LeakageDetector.fit([{"id": "x1", "rationale": "r", "label": "yes", "choices": ["yes", "no"]},
                             {"id": "x2", "rationale": "r", "label": "maybe", "choices": ["yes", "no"]}])
    with pytest.raises(DataError, match="example id 'x1'.*missing field 'rationale'"):
        LeakageDetector.fit([{"id": "x1", "label": "yes", "choices": ["yes", "no"]}])


# ---------------------------------------------------------------------------------------------- eq. 7
def hand_label_set_penalty(logits, candidates, valid, gold, environments) -> tuple[float, dict[int, float]]:
    """d/dw log p_w(c) at w = 1 is Σ_t (z_{t,c_t} − E_softmax(z_t)[z_t]); the normalised log-probability's derivative
    is g(y) − Σ_k softmax(log p)_k g(c_k)."""
    z = logits.double()
    mask = candidates.ne(-100)
    ids = candidates.clamp(min=0).unsqueeze(-1)
    token_log_p = torch.log_softmax(z, -1).gather(-1, ids).squeeze(-1) * mask
    token_grad = (z.gather(-1, ids).squeeze(-1) - (torch.softmax(z, -1) * z).sum(-1)) * mask
    rows, k = valid.shape
    log_p, grad = token_log_p.sum(-1).view(rows, k), token_grad.sum(-1).view(rows, k)
    weights = torch.softmax(log_p.masked_fill(~valid, float("-inf")), -1)
    d_normalized = grad.gather(1, gold[:, None]).squeeze(1) - (weights * grad).sum(-1)
    penalty, risks = 0.0, {}
    for env in environments.unique().tolist():
        rows_e = environments == env
        penalty += float(-d_normalized[rows_e].mean()) ** 2
        risks[env] = float(-log_p.gather(1, gold[:, None]).squeeze(1)[rows_e].mean())
    return penalty, risks


def test_label_set_irm_penalty_matches_hand_computation():
    generator = torch.Generator().manual_seed(0)
    rows, k, t, v = 6, 3, 2, 9
    logits = torch.randn(rows * k, t, v, generator=generator) * 2
    candidates = torch.randint(0, v, (rows * k, t), generator=generator)
    candidates[1, 1] = candidates[7, 1] = -100  # shorter candidates
    valid = torch.ones(rows, k, dtype=torch.bool)
    valid[4, 2] = False  # a row with two choices only
    candidates[4 * k + 2] = -100
    gold = torch.tensor([0, 1, 2, 0, 1, 2])
    environments = torch.tensor([0, 1, 2, 0, 1, 2])
    penalty, risks = label_set_irm_penalty(logits, candidates, valid, gold, environments)
    expected_penalty, expected_risks = hand_label_set_penalty(logits, candidates, valid, gold, environments)
    assert float(penalty) == pytest.approx(expected_penalty, rel=1e-5) and float(penalty) > 0
    assert {e: float(r.detach()) for e, r in risks.items()} == pytest.approx(expected_risks, rel=1e-5)
    # Differentiable with respect to the logits, so the trainer backpropagates through it.
    logits.requires_grad_(True)
    penalty, _ = label_set_irm_penalty(logits, candidates, valid, gold, environments)
    penalty.backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


def test_label_set_irm_penalty_matches_a_finite_difference():
    # Independent of the closed form: difference quotients of each environment's normalised risk in the logit scale.
    generator = torch.Generator().manual_seed(1)
    rows, k, t, v = 4, 2, 2, 7
    logits = torch.randn(rows * k, t, v, generator=generator, dtype=torch.double) * 2
    candidates = torch.randint(0, v, (rows * k, t), generator=generator)
    valid, gold = torch.ones(rows, k, dtype=torch.bool), torch.tensor([0, 1, 1, 0])
    environments = torch.tensor([0, 1, 0, 1])

    def risks_at(scale: float) -> dict[int, float]:
        log_p = -label_nll(logits * scale, candidates).view(rows, k)
        normalized = log_p.gather(1, gold[:, None]).squeeze(1) - torch.logsumexp(log_p, 1)
        return {e: float(-normalized[environments == e].mean()) for e in (0, 1)}

    eps = 1e-4
    up, down = risks_at(1 + eps), risks_at(1 - eps)
    expected = sum(((up[e] - down[e]) / (2 * eps)) ** 2 for e in (0, 1))
    penalty, _ = label_set_irm_penalty(logits, candidates, valid, gold, environments)
    assert float(penalty) == pytest.approx(expected, rel=1e-4) and expected > 0


def test_label_set_loss_encodes_once_and_matches_the_penalty_on_repeated_inputs(tiny_model, tiny_tokenizer):
    records = yesno_records("train", 6, leaky=True)
    counterfactuals = [Counterfactuals(r["id"], {e: r["rationale"].replace(f"is {r['label']}.", f"is {e}.")
                                                 for e in ("yes", "no")}) for r in records]
    rows = counterfactual_dataset(records, counterfactuals, tiny_tokenizer)
    batch = CandidateCollator(tiny_tokenizer)(list(rows))
    parts = LabelSetIRMLoss()(tiny_model.eval(), batch, None, PenaltyWeights(lambda_irm=3.0))
    candidates = batch["candidate_labels"]
    rows_, k, width = candidates.shape
    flat = candidates.reshape(rows_ * k, width)
    logits = tiny_model(input_ids=batch["input_ids"].repeat_interleave(k, 0),
                        attention_mask=batch["attention_mask"].repeat_interleave(k, 0),
                        decoder_input_ids=tiny_model.prepare_decoder_input_ids_from_labels(labels=flat)).logits
    penalty, risks = label_set_irm_penalty(logits, flat, batch["candidate_mask"], batch["gold_index"], batch["environment"])
    assert float(parts.irm_penalty.detach()) == pytest.approx(float(penalty.detach()), rel=1e-5)
    assert float(parts.erm_loss.detach()) == pytest.approx(float(sum(risks.values()).detach()), rel=1e-5)
    assert float(parts.loss.detach()) == pytest.approx(float((sum(risks.values()) + 3.0 * penalty).detach()), rel=1e-5)
    vocab = LabelSetIRMLoss("vocab")(tiny_model, batch, None, PenaltyWeights(lambda_irm=3.0))  # LAREV's full-vocabulary IRMv1 instead
    assert float(vocab.irm_penalty.detach()) != pytest.approx(float(parts.irm_penalty.detach()), rel=1e-3)


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def rora_fit(tmp_path_factory):
    """RoRA and its ablation (plain ERM on the original rationales, RoRA §4) trained on fact + "The answer is y."."""
    train = yesno_records("train", 200, leaky=True)
    output = tmp_path_factory.mktemp("rora")
    tokenizer = build_tokenizer("t5-tiny", tokenizer_texts(train))
    settings = TrainSettings(learning_rate=1e-3, num_train_epochs=4, batch_size=16, progress=False)
    # The synthetic facts' n-grams score ~0.002 and the label's ~0.15: 0.05 separates them (RoRA appendix C.2 tunes
    # the threshold on a sample of training data; the default 0.001 would mask most of these short facts). Top 3:
    # all of "yes", "is yes", "yes ." (or the "no" ones), so every label's mask has the same shape; with the top 2
    # the shapes differ by label ("answer is <mask>" vs "answer <mask>.") and the fills carry that artifact.
    fit = fit_rora(train, output, tokenizer=tokenizer, train_settings=settings,
                   settings=RoRASettings(threshold=0.05, top_k=3))
    plain = train_plain_evaluator(build_model("t5-tiny", tokenizer), tokenizer, train, output / "plain", settings)
    return {"train": train, "fit": fit, "plain": RoRAScorer(fit.scorer.baseline_model, plain.eval(), tokenizer),
            "output": output}


@pytest.mark.slow
def test_infiller_edits_only_the_detected_spans(rora_fit):
    train, fit = rora_fit["train"], rora_fit["fit"]
    assert fit.counterfactual_stats["generated"] == 2 * len(train)
    flipped = consistent = 0
    for record, masked, counterfactual in zip(train, fit.masked, fit.counterfactuals, strict=True):
        assert counterfactual.id == record["id"] and set(counterfactual.rationales) == {"yes", "no"}
        assert masked.spans, "every leaky training rationale has a masked span"
        # Everything outside the masked spans is kept character for character in every D^e.
        outside = [masked.text[:masked.spans[0][0]]]
        outside += [masked.text[end:start] for (_, end), (start, _) in zip(masked.spans[:-1], masked.spans[1:], strict=True)]
        outside.append(masked.text[masked.spans[-1][1]:])
        pattern = re.compile("(.*?)".join(re.escape(piece) for piece in outside), re.DOTALL)
        for rationale in counterfactual.rationales.values():
            assert pattern.fullmatch(rationale), (masked.masked, rationale)
        fills = counterfactual.fills
        flipped += all(any(re.search(rf"\b{label}\b", fill) for fill in fills[label]) for label in ("yes", "no"))
        consistent += all(counterfactual.rationales[e].endswith(f"The answer is {e}.") for e in ("yes", "no"))
    # The infiller is label-conditioned: the masked label word follows e (RoRA §3.2), and D^e reads the same whatever
    # the example's own label, so the environments leave no trace of y in the restated label.
    assert flipped / len(train) > 0.8
    assert consistent / len(train) > 0.8


@pytest.mark.slow
def test_rora_scores_the_fact_above_the_label_restatement(rora_fit):
    test = yesno_records("test", 96)
    rationales = fact_and_leaky(test)
    rora, plain = rora_fit["fit"].scorer, rora_fit["plain"]
    theta = rora.theta_log_probs(test)
    score = {name: rora.score_records(test, texts, theta).corpus for name, texts in rationales.items()}
    ablation = {name: plain.score_records(test, texts, theta).corpus for name, texts in rationales.items()}
    # RoRA: the fact carries information beyond x, the restated label none; appending the label changes nothing.
    # (Seeds 0-2: fact +0.42 to +0.65, label only −0.07 to +0.18, fact + label within 0.01 of the fact.)
    assert score["gold"] > 0.3
    assert score["gold"] > score["leaky"] + 0.3
    assert abs(score["gold_leaky"] - score["gold"]) < 0.1
    # Without detection, counterfactuals and IRM the same evaluator rewards the label restatement (RoRA table 2).
    # (Seeds 0-2: fact −2.4 to −3.4, label only +0.73 to +0.79.)
    assert ablation["leaky"] > 0.5
    assert ablation["leaky"] > ablation["gold"] + 2.0


@pytest.mark.slow
def test_detector_round_trips_and_counterfactual_rows_need_every_label(rora_fit, tmp_path):
    fit, train = rora_fit["fit"], rora_fit["train"]
    # On the synthetic task the label's n-grams are exactly the six top-scoring ones; the facts' are near 0.
    assert {key for key, _ in fit.detector.top_ngrams(6)} == {"yes", "no", "is yes", "is no", "yes .", "no ."}
    assert abs(fit.detector.score("spice")) < 0.02 and abs(fit.detector.score("tool")) < 0.02
    loaded = LeakageDetector.load(rora_fit["output"] / "detector")
    assert [loaded.mask(r["rationale"]).spans for r in train] == [m.spans for m in fit.masked]
    assert loaded.accuracy(train) == pytest.approx(fit.detector.accuracy(train))
    tokenizer = fit.scorer.tokenizer
    rows = counterfactual_dataset(train[:3], fit.counterfactuals[:3], tokenizer)
    assert rows["environment"] == [0, 1] * 3 and rows["group_id"] == [0, 0, 1, 1, 2, 2]
    assert rows["gold_index"] == [["yes", "no"].index(r["label"]) for r in train[:3] for _ in range(2)]
    with pytest.raises(DataError, match=f"example id '{train[3]['id']}'.*no counterfactual"):
        counterfactual_dataset(train[:4], fit.counterfactuals[:3], tokenizer)
    assert MaskedRationale("abc", [(1, 2)]).fill([""]) == "ac"


# ---------------------------------------------------------------------------------------------- classifier variant
def test_classifier_loss_is_cross_entropy_per_environment_plus_irm_penalty():
    records = yesno_records("train", 4, leaky=True)
    labels = shared_label_set(records)
    counterfactuals = [Counterfactuals(r["id"], {e: r["rationale"].replace(f"is {r['label']}.", f"is {e}.") for e in labels})
                       for r in records]
    model, tokenizer = build_classifier(MINILM, labels)
    rows = classifier_dataset(records, tokenizer, labels, counterfactuals)
    assert rows["environment"] == [0, 1] * 4 and rows["labels"] == [[labels.index(r["label"])] for r in records for _ in labels]
    batch = EnvironmentCollator(tokenizer)(list(rows))
    parts = ClassifierIRMLoss()(model.eval(), batch, None, PenaltyWeights(lambda_irm=2.0))
    with torch.no_grad():
        z = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.double()
    gold = batch["labels"][:, 0]
    ce = torch.nn.functional.cross_entropy(z, gold, reduction="none")
    d_ce = -(z.gather(1, gold[:, None]).squeeze(1) - (torch.softmax(z, -1) * z).sum(-1))  # d/dw CE(w z) at w = 1
    envs = batch["environment"]
    expected_penalty = sum(float(d_ce[envs == e].mean()) ** 2 for e in (0, 1))
    assert float(parts.erm_loss.detach()) == pytest.approx(sum(float(ce[envs == e].mean()) for e in (0, 1)), rel=1e-4)
    assert float(parts.irm_penalty.detach()) == pytest.approx(expected_penalty, rel=1e-3)
    assert float(parts.loss.detach()) == pytest.approx(float(parts.erm_loss.detach()) + 2.0 * float(parts.irm_penalty.detach()), rel=1e-5)
    with pytest.raises(DataError, match="needs one label set"):
        shared_label_set([*records, {**records[0], "id": "q", "choices": ["no", "yes"]}])


@pytest.mark.slow
def test_classifier_variant_ignores_the_restated_label(rora_fit, tmp_path):
    """RoRA_DeBERTa-style (§4.1) with the offline MiniLM encoder, on the fixture's counterfactual environments."""
    train, fit = rora_fit["train"], rora_fit["fit"]
    labels = shared_label_set(train)
    settings = TrainSettings(learning_rate=2e-4, num_train_epochs=3, batch_size=16, progress=False)
    phi, tokenizer = build_classifier(MINILM, labels)
    phi = train_classifier(phi, tokenizer, classifier_dataset(train, tokenizer, labels, fit.counterfactuals),
                           tmp_path / "phi", settings, IRMArguments(lambda_irm=1.0, token_reduction="sum"))
    theta, _ = build_classifier(MINILM, labels)
    theta = train_classifier(theta, tokenizer, classifier_dataset(train, tokenizer, labels), tmp_path / "theta", settings)
    scorer = RoRAClassifierScorer(theta, phi, tokenizer, labels)
    test = yesno_records("test", 96)
    score = {name: scorer.score_records(test, texts).corpus for name, texts in fact_and_leaky(test).items()}
    assert score["gold"] > score["leaky"] + 1.0
    assert abs(score["gold_leaky"] - score["gold"]) < 0.3
