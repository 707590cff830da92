"""Resuming training from an epoch checkpoint without a false alarm about tied weights.

A checkpoint saved with safetensors keeps one copy of a tensor that several parameters share (tied input and output
embeddings: T5's ``lm_head``, BERT2BERT's decoder ``cls.predictions.decoder``), so on resume the others are "missing
keys". They are not missing: loading keeps them tied to the copy that was saved. HF's ``Trainer`` stays silent only when
the model lists them in ``_keys_to_ignore_on_save``; the models here do not, so it warned on every resume.
"""

from __future__ import annotations

from typing import Any


def tied_parameter_names(model: Any) -> set[str]:
    """The names of parameters that share their tensor with another named parameter."""
    by_storage: dict[int, list[str]] = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        by_storage.setdefault(parameter.data_ptr(), []).append(name)
    return {name for names in by_storage.values() if len(names) > 1 for name in names}


class TiedWeightsResumeMixin:
    """For a ``Trainer`` subclass: leave tied parameters out of the "missing keys" warning after a resume (every other
    missing key is still reported), and re-tie the weights as HF does when it knows the keys."""

    def _issue_warnings_after_load(self, load_result: Any) -> None:
        tied = tied_parameter_names(self.model)
        missing = [key for key in load_result.missing_keys if key not in tied]
        if len(missing) < len(load_result.missing_keys):
            self.model.tie_weights()
        super()._issue_warnings_after_load(load_result._replace(missing_keys=missing))
