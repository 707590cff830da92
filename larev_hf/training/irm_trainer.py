"""``IRMProbeTrainer``: a drop-in ``Seq2SeqTrainer`` that trains LAREV's Φ_LA (thesis §4.5-4.6, eq. 4.10).

Swap the class and the config, give the dataset an environment column (and a group column):

```python
trainer = IRMProbeTrainer(model=model, args=IRMProbeConfig(output_dir="phi_la", lambda_irm=1.0),
                          train_dataset=environments, processing_class=tokenizer, probe_model=probe)
trainer.train()
```
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torch.utils.data import DataLoader
from transformers import PreTrainedModel, Seq2SeqTrainer

from larev_hf.modeling.backbones import load_evaluator
from larev_hf.training.checkpoints import TiedWeightsResumeMixin
from larev_hf.training.collator import EnvironmentCollator
from larev_hf.training.irm_config import IRMProbeConfig
from larev_hf.training.losses import IRMProbeLoss
from larev_hf.training.sampler import EnvironmentGroupBatchSampler, grouping_lengths


class IRMProbeTrainer(TiedWeightsResumeMixin, Seq2SeqTrainer):
    """Trains with L = ERM + λ_IRM·IRMv1 − λ_probe·L_probe(ψ frozen), both weights warmed up linearly.

    Args:
        model: the evaluator Φ_LA (a fresh model: the thesis does not start it from Φ).
        args (`IRMProbeConfig`): training arguments with LAREV's fields.
        probe_model (`PreTrainedModel` or `str`, *optional*): the leakage probe ψ (or its path, a full model
            or a LoRA adapter directory); frozen and used in evaluation mode only. Without it the probe term is 0.
        loss (`IRMProbeLoss`, *optional*): the objective; built from ``args`` by default.
        Other arguments are those of ``Seq2SeqTrainer``.

    Logged metrics (train and ``eval_``-prefixed in evaluation): ``erm/loss``, ``irm/penalty``,
    ``probe/loss``, ``weights/lambda_irm``, ``weights/lambda_probe``, ``env/<e>/loss``.
    """

    _tag_names = ["larev", "irm", "rationale-evaluation"]
    _name = "IRMProbe"
    #: The config :func:`~larev_hf.training.irm_training.train_irm` builds for this trainer.
    config_class: type[IRMProbeConfig] = IRMProbeConfig

    def __init__(
        self,
        model: PreTrainedModel,
        args: IRMProbeConfig,
        probe_model: PreTrainedModel | str | None = None,
        loss: IRMProbeLoss | None = None,
        **kwargs,
    ) -> None:
        if not isinstance(args, IRMProbeConfig):
            raise TypeError(f"IRMProbeTrainer needs an IRMProbeConfig, got {type(args).__name__}")
        if probe_model is not None and probe_model is model:
            raise ValueError("probe_model is the model being trained; the probe must be a separate, frozen copy")
        if kwargs.get("data_collator") is None and kwargs.get("processing_class") is not None:
            kwargs["data_collator"] = EnvironmentCollator(kwargs["processing_class"], args.environment_column, args.group_column)
        super().__init__(model=model, args=args, **kwargs)
        # The custom loss is already a per-batch mean; gradient accumulation must not rescale it by token counts.
        self.model_accepts_loss_kwargs = False
        self.loss_module = loss or IRMProbeLoss(args.token_reduction, args.probe_max_loss)
        self.probe = None
        if probe_model is not None:
            probe = load_evaluator(probe_model, device="cpu")[0] if isinstance(probe_model, str) else probe_model
            probe.requires_grad_(False).eval()
            self.probe = self.accelerator.prepare_model(probe, evaluation_mode=True)
        self._metrics: dict[str, dict[str, list[float]]] = {"train": defaultdict(list), "eval": defaultdict(list)}

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            args = self.args
            self._signature_columns = [
                "input_ids", "attention_mask", "labels", args.environment_column, args.group_column, "probe_input_ids",
            ]

    def penalty_weights(self) -> tuple[float, float]:
        """(λ_IRM, λ_probe) at the current step: linear warm-up over ``penalty_warmup_ratio`` of the steps (§5.3.3)."""
        warmup_steps = self.args.penalty_warmup_ratio * max(self.state.max_steps, 1)
        factor = 1.0 if warmup_steps == 0 else min(1.0, self.state.global_step / warmup_steps)
        return self.args.lambda_irm * factor, self.args.lambda_probe * factor

    def probe_weight_this_step(self, lambda_probe: float, training: bool) -> float:
        """The probe weight applied now: n·λ_probe on every n-th training step, 0 on the others (``probe_every_n_steps``)."""
        every = self.args.probe_every_n_steps
        if not training or every == 1:
            return lambda_probe
        return lambda_probe * every if self.state.global_step % every == 0 else 0.0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        lambda_irm, lambda_probe = self.penalty_weights()
        mode = "train" if model.training else "eval"
        applied_probe = self.probe_weight_this_step(lambda_probe, model.training)
        parts = self.loss_module(model, inputs, self.probe, lambda_irm, applied_probe)
        with torch.no_grad():
            values = {
                "erm/loss": parts.erm_loss,
                "irm/penalty": parts.irm_penalty,
                **{f"env/{env}/loss": risk for env, risk in parts.environment_losses.items()},
            }
            if self.probe is not None and applied_probe > 0:  # not computed (so not logged) while its weight is 0
                values["probe/loss"] = parts.probe_loss
            for key, value in values.items():
                self._metrics[mode][key].append(self.accelerator.gather_for_metrics(value.detach().reshape(1)).mean().item())
            self._metrics[mode]["weights/lambda_irm"].append(lambda_irm)
            self._metrics[mode]["weights/lambda_probe"].append(lambda_probe)
        return (parts.loss, None) if return_outputs else parts.loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        mode = "train" if self.model.training else "eval"
        metrics = {key: sum(values) / len(values) for key, values in self._metrics[mode].items() if values}
        if mode == "eval":
            metrics = {f"eval_{key}": value for key, value in metrics.items()}
        super().log({**logs, **metrics}, start_time)
        self._metrics[mode].clear()

    def get_batch_sampler(self, dataset) -> EnvironmentGroupBatchSampler:
        """Override point: the batch sampler of the training set (whole environment groups per batch)."""
        column = self.args.group_column
        if column not in dataset.column_names:
            raise ValueError(f"the training set needs a {column!r} column; it has {dataset.column_names}")
        return EnvironmentGroupBatchSampler(dataset[column], self.args.per_device_train_batch_size, seed=self.args.seed,
                                            lengths=grouping_lengths(self.args, dataset))

    def get_train_dataloader(self) -> DataLoader:
        if self.train_dataset is None:
            raise ValueError("IRMProbeTrainer: training requires a train_dataset.")
        dataset = self.train_dataset
        missing = [c for c in (self.args.environment_column,) if c not in dataset.column_names]
        if missing:
            raise ValueError(f"the training set needs the column {missing[0]!r}; it has {dataset.column_names}")
        dataset = self._remove_unused_columns(dataset, description="training")
        loader = DataLoader(
            dataset,
            batch_sampler=self.get_batch_sampler(dataset),
            collate_fn=self.data_collator,
            num_workers=self.args.dataloader_num_workers,
            pin_memory=self.args.dataloader_pin_memory,
        )
        # Under DDP accelerate shards a batch sampler by whole batches (split_batches=False): batch i goes to
        # process i % num_processes, so an environment group never spans two processes. even_batches stays on:
        # a short epoch is padded with whole batches from its start, never with parts of groups.
        return self.accelerator.prepare(loader)
