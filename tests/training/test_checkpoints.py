"""Resuming from a checkpoint: tied weights are not reported as missing keys; a truly missing key still is."""

from __future__ import annotations

import logging

import pytest
import torch
from torch.nn.modules.module import _IncompatibleKeys
from transformers import Seq2SeqTrainingArguments

from larev_hf.training.seq2seq import EvaluatorTrainer, tied_parameter_names


@pytest.mark.parametrize("tiny_model", ["t5"], indirect=True)
def test_tied_weights_are_not_missing_keys_on_resume(tiny_model, tmp_path, caplog) -> None:
    tied = tied_parameter_names(tiny_model)
    assert {"shared.weight", "lm_head.weight"} <= tied  # T5 ties its output embeddings to its input embeddings
    untied = next(name for name, _ in tiny_model.named_parameters() if name not in tied)
    trainer = EvaluatorTrainer(model=tiny_model, args=Seq2SeqTrainingArguments(output_dir=str(tmp_path), use_cpu=True,
                                                                               report_to=[]))
    with caplog.at_level(logging.WARNING, logger="transformers.trainer"):
        trainer._issue_warnings_after_load(_IncompatibleKeys(missing_keys=["lm_head.weight"], unexpected_keys=[]))
    assert "missing keys" not in caplog.text
    assert torch.equal(tiny_model.lm_head.weight, tiny_model.shared.weight)
    with caplog.at_level(logging.WARNING, logger="transformers.trainer"):
        trainer._issue_warnings_after_load(_IncompatibleKeys(missing_keys=["lm_head.weight", untied],
                                                             unexpected_keys=[]))
    assert f"There were missing keys in the checkpoint model loaded: ['{untied}']" in caplog.text
