"""Evaluation and prediction of the IRM trainer through the Trainer's own paths (``evaluate``, ``predict``,
``predict_with_generate``).

Evaluation rows may carry environments or not. With them, the loss is the training objective and its parts are
returned under training's names (``eval_erm/loss``, ``eval_irm/penalty``, ``eval_env/<e>/loss``); without them, the ERM
part alone (``eval_erm/loss``, which is then also ``eval_loss``). The trainer's own columns (environment, group, probe
inputs) are taken off before anything reaches the model's ``forward`` or ``generate``.
"""

from __future__ import annotations

from typing import Any

import torch

from larev_hf.training.losses import label_nll

#: The keys the IRM collators add to a batch for the loss; never model inputs.
LOSS_KEYS = ("environment", "group_id", "probe_input_ids", "probe_attention_mask", "probe_labels")


class IRMEvaluationMixin:
    """For :class:`~larev_hf.training.IRMProbeTrainer`: the plain loss of rows without environments, prediction steps
    that keep the trainer's columns away from the model, and the loss parts in the metrics of ``evaluate``/``predict``."""

    def model_inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """``inputs`` without the trainer's own keys (the loss's, and the raw environment/group/probe columns)."""
        args = self.args
        own = {*LOSS_KEYS, args.environment_column, args.group_column, args.probe_column}
        return {key: value for key, value in inputs.items() if key not in own}

    def plain_loss(self, model, inputs: dict[str, Any], return_outputs: bool = False):
        """The ERM part of the objective on rows without environments: the mean over rows of the label NLL (summed or
        averaged over tokens by ``token_reduction``, as in training), logged as ``erm/loss``."""
        model_inputs = self.model_inputs(inputs)
        labels = model_inputs.get("labels")
        outputs = model(**model_inputs)
        if labels is None:
            return (None, outputs) if return_outputs else None
        reduction = getattr(self.loss_module, "token_reduction", self.args.token_reduction)
        loss = label_nll(outputs.logits, labels, reduction).mean()
        mode = "train" if model.training else "eval"
        value = self.accelerator.gather_for_metrics(loss.detach().reshape(1)).mean().item()
        self._metrics[mode]["erm/loss"].append(value)
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model, inputs: dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None, **gen_kwargs):
        """HF's prediction step with the trainer's loss: the objective (or its ERM part) through ``compute_loss``,
        logits or generated tokens from the model's own inputs only."""
        generating = self.args.predict_with_generate and not prediction_loss_only
        if "labels" not in inputs:  # nothing to score: HF's step on the model's inputs
            return super().prediction_step(model, self.model_inputs(inputs), prediction_loss_only, ignore_keys,
                                           **gen_kwargs)
        if not generating:  # compute_loss gives the loss and the logits (Trainer.prediction_step calls it)
            return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
        prepared = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, prepared).detach()
        _, generated, labels = super().prediction_step(model, self.model_inputs(prepared), prediction_loss_only,
                                                       ignore_keys, **gen_kwargs)
        return loss, generated, labels

    def evaluation_loop(self, *args, metric_key_prefix: str = "eval", **kwargs):
        """HF's loop, plus the mean of every loss part over the evaluation batches, prefixed like HF's metrics
        (``eval_irm/penalty`` from ``evaluate()``, ``test_irm/penalty`` from ``predict()``)."""
        self._metrics["eval"].clear()
        output = super().evaluation_loop(*args, metric_key_prefix=metric_key_prefix, **kwargs)
        parts = {f"{metric_key_prefix}_{key}": sum(values) / len(values)
                 for key, values in self._metrics["eval"].items() if values}
        self._metrics["eval"].clear()
        output.metrics.update(parts)
        return output
