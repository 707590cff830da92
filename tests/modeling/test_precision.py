"""bf16 autocast for evaluators trained in it: recorded in the saved config, applied by the scorer where the device
computes bf16 natively, and equal to scoring the same model under an explicit autocast."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest
import torch

from larev_hf.modeling import load_evaluator, precision, save_evaluator, score_labels
from larev_hf.modeling.precision import AUTOCAST_ATTRIBUTE, autocast_for, mark_bf16, native_bf16
from larev_hf.training.settings import TrainSettings

INPUTS = ["a man is walking his dog in the park implies a person is outside .", "two kids play soccer",
          "a woman reads a book is not related to she is a teacher ."]
LABELS = ["entailment", "contradiction", "neutral"]


def test_an_unmarked_model_scores_in_fp32(tiny_model, tiny_tokenizer):
    assert getattr(tiny_model.config, AUTOCAST_ATTRIBUTE, None) is None
    with autocast_for(tiny_model):
        assert not torch.is_autocast_enabled("cpu")


def test_the_mark_survives_save_and_load(tiny_model, tiny_tokenizer, tmp_path):
    model = copy.deepcopy(tiny_model)
    mark_bf16(model)
    save_evaluator(model, tiny_tokenizer, tmp_path / "evaluator")
    loaded, _ = load_evaluator(str(tmp_path / "evaluator"), device="cpu")
    assert getattr(loaded.config, AUTOCAST_ATTRIBUTE) == "bfloat16"


@pytest.mark.skipif(not native_bf16("cpu"), reason="this CPU has no bf16 arithmetic (AMX / AVX512-BF16)")
def test_a_marked_model_scores_as_under_an_explicit_bf16_autocast(tiny_model, tiny_tokenizer):
    full = score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS).sum
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference = score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS).sum
    marked = copy.deepcopy(tiny_model)
    mark_bf16(marked)
    scored = score_labels(marked, tiny_tokenizer, INPUTS, LABELS).sum
    np.testing.assert_array_equal(scored, reference)
    assert not np.array_equal(scored, full)  # bf16 really ran: products rounded to 8 bits of mantissa differ
    np.testing.assert_allclose(scored, full, atol=0.5)


def test_without_bf16_arithmetic_a_marked_model_falls_back_to_fp32_and_says_so(tiny_model, tiny_tokenizer,
                                                                                 monkeypatch, caplog):
    marked = copy.deepcopy(tiny_model)
    mark_bf16(marked)
    monkeypatch.setattr(precision, "native_bf16", lambda device_type: False)
    precision._warn_fp32.cache_clear()
    with caplog.at_level(logging.WARNING, logger="larev_hf.modeling.precision"):
        scored = score_labels(marked, tiny_tokenizer, INPUTS, LABELS).sum
    np.testing.assert_array_equal(scored, score_labels(tiny_model, tiny_tokenizer, INPUTS, LABELS).sum)
    assert "no bf16 arithmetic: it is scored in fp32" in caplog.text


def test_training_in_bf16_marks_the_model_only_where_the_device_has_it(tiny_model, monkeypatch):
    for native in (True, False):
        monkeypatch.setattr(precision, "native_bf16", lambda device_type, native=native: native)
        model = copy.deepcopy(tiny_model)
        settings = TrainSettings(bf16=True)
        assert settings.uses_bf16() is native
        settings.prepare_model(model)
        assert getattr(model.config, AUTOCAST_ATTRIBUTE, None) == ("bfloat16" if native else None)
        assert settings.training_arguments("unused").bf16 is native
    assert TrainSettings(bf16=False).uses_bf16() is False
