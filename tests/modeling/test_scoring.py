"""The batched label scorer against per-example computations, and backbone loading by path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from larev_hf.modeling import load_evaluator, predict_choices, save_evaluator, score_labels

INPUTS = [
    "a man is walking his dog in the park implies a person is outside .",
    "two kids play soccer",
    "a woman reads a book is not related to she is a teacher . the answer is neutral .",
    "where is the blorvex kept ?",
    "kitchen",
    "the children are asleep contradicts two kids play soccer in the park with a dog .",
    "garden garage",
]
LABELS = ["entailment", "contradiction", "neutral", "kitchen garage", "garden", "contradiction", "bathroom"]


def reference_log_prob(model, tokenizer, text: str, label: str) -> tuple[float, int]:
    """One example, no padding: the summed token log-probabilities via the model's own loss."""
    enc = tokenizer(text, return_tensors="pt")
    labels = tokenizer(text_target=label, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        loss = model(**enc, labels=labels).loss  # mean token NLL
    return -float(loss) * labels.shape[1], labels.shape[1]


def test_batched_equals_per_example(tiny_model, tiny_tokenizer):
    scores = score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS, batch_size=3)
    for i, (text, label) in enumerate(zip(INPUTS, LABELS, strict=True)):
        expected, n_tokens = reference_log_prob(tiny_model, tiny_tokenizer, text, label)
        assert scores.sum[i] == pytest.approx(expected, abs=1e-5)
        assert scores.n_tokens[i] == n_tokens
        assert scores.mean[i] == pytest.approx(expected / n_tokens, abs=1e-5)
    assert np.all(scores.sum < 0)


@pytest.mark.parametrize("batch_size", [1, 2, 5, 64])
def test_independent_of_batch_size_and_order(tiny_model, tiny_tokenizer, batch_size):
    reference = score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS, batch_size=4).sum
    permutation = np.random.default_rng(batch_size).permutation(len(INPUTS))
    shuffled = score_labels(
        tiny_model, tiny_tokenizer, [INPUTS[i] for i in permutation], [LABELS[i] for i in permutation], batch_size=batch_size
    ).sum
    np.testing.assert_allclose(shuffled, reference[permutation], atol=1e-5)


@pytest.mark.parametrize("batch_size", [2, 7, 64])
def test_an_input_under_several_labels_scores_as_if_alone(tiny_model, tiny_tokenizer, batch_size):
    """The encoder pass shared by the labels of one input (choices) changes no score, also where a batch
    boundary splits an input's labels."""
    options = ["entailment", "neutral", "contradiction", "garden"]
    inputs = [text for text in INPUTS for _ in options]
    labels = options * len(INPUTS)
    scores = score_labels(tiny_model, tiny_tokenizer, inputs, labels, batch_size=batch_size).sum
    for k, (text, label) in enumerate(zip(inputs, labels, strict=True)):
        assert scores[k] == pytest.approx(reference_log_prob(tiny_model, tiny_tokenizer, text, label)[0], abs=1e-5)


def test_half_precision_stays_finite_and_close(tiny_model, tiny_tokenizer):
    full = score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS).sum
    half = score_labels(tiny_model.to(torch.bfloat16), tiny_tokenizer, INPUTS, LABELS).sum
    assert np.all(np.isfinite(half))
    np.testing.assert_allclose(half, full, atol=0.5)


def test_length_mismatch_is_an_error(tiny_model, tiny_tokenizer):
    with pytest.raises(ValueError, match="one label per input"):
        score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS[:-1])


def test_predict_choices_is_the_argmax(tiny_model, tiny_tokenizer):
    choices = [["entailment", "neutral", "contradiction"]] * len(INPUTS)
    predictions = predict_choices(tiny_model, tiny_tokenizer, INPUTS, choices)
    for text, prediction, options in zip(INPUTS, predictions, choices, strict=True):
        per_choice = [reference_log_prob(tiny_model, tiny_tokenizer, text, option)[0] for option in options]
        assert prediction == int(np.argmax(per_choice))


def test_saved_model_loads_by_path_through_the_hub_code_path(tiny_model, tiny_tokenizer, tmp_path):
    save_evaluator(tiny_model, tiny_tokenizer, tmp_path / "evaluator")
    loaded, loaded_tokenizer = load_evaluator(str(tmp_path / "evaluator"), device="cpu")
    assert type(loaded) is type(tiny_model)
    np.testing.assert_allclose(
        score_labels(loaded, loaded_tokenizer, INPUTS, LABELS).sum,
        score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS).sum,
        atol=1e-6,
    )


def test_loading_a_directory_without_a_model_names_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="save_pretrained"):
        load_evaluator(str(tmp_path))


def test_preset_tokenizer_is_identical_across_processes():
    """The same texts give the same vocabulary in a fresh process (tokenizers' own trainer does not guarantee it):
    this process's and two fresh ones', each with another string hash seed."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json,sys; from tests.conftest import CORPUS; from larev_hf.modeling import build_tokenizer; "
        "t = build_tokenizer('t5-tiny', CORPUS); print(json.dumps(sorted(t.get_vocab().items())))"
    )
    root = Path(__file__).resolve().parents[2]
    from larev_hf.modeling import build_tokenizer
    from tests.conftest import CORPUS

    outputs = {json.dumps(sorted(build_tokenizer("t5-tiny", CORPUS).get_vocab().items())) + "\n"}
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        outputs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                                   env=env).stdout)
    assert len(outputs) == 1


def test_preset_tokenizer_never_produces_unknown_tokens_for_seen_characters(tiny_tokenizer):
    # New words made of characters of the corpus fall back to character pieces, never to <unk>.
    ids = tiny_tokenizer("parkdogs kitchenettes soccerball")["input_ids"]
    assert tiny_tokenizer.unk_token_id not in ids
    assert ids[-1] == tiny_tokenizer.eos_token_id
