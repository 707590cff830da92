"""LAREV's training objective as a loss module (thesis eq. 4.5-4.10).

    L_LA = L_ERM + λ_IRM · Σ_e ‖∇_w L^e(w · logits)|_{w=1}‖² − λ_probe · L_probe(ψ; Enc_ΦLA(b̃))

- L^e (eq. 4.5): the mean over the batch rows of environment e of the label NLL of r ⊕ b_e;
  the NLL of a row is the sum of its label-token NLLs (``token_reduction="sum"``, = −log p(y|·))
  or their mean.
- IRMv1 (eq. 4.6; Arjovsky et al. 2019): a scalar w scales the logits; the penalty is the squared
  gradient of each environment's risk with respect to w at w = 1, summed over environments.
- L_ERM (eq. 4.7): the mean of the environment risks.
- L_probe (eq. 4.8, 4.10): the frozen probe ψ's NLL of y decoded from Φ_LA's encoding of the
  leakage-masked baseline b̃. It is *subtracted*, so Φ_LA's encoder is pushed to make b̃'s
  encoding uninformative for ψ; ψ's parameters receive no gradient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from accelerate.utils import extract_model_from_parallel
from torch import nn

from larev_hf.citations import bibtex

CITATION = bibtex("li-2026-larev", "arjovsky-etal-2019-irm")


def _reduce_tokens(values: torch.Tensor, mask: torch.Tensor, token_reduction: str) -> torch.Tensor:
    """Sum (or mean) of per-token ``values`` over the label positions of each row."""
    total = values.sum(-1)
    if token_reduction == "sum":
        return total
    if token_reduction == "mean":
        return total / mask.sum(-1).clamp(min=1)
    raise ValueError(f"token_reduction must be 'sum' or 'mean', got {token_reduction!r}")


def label_nll(logits: torch.Tensor, labels: torch.Tensor, token_reduction: str = "sum") -> torch.Tensor:
    """Per-row NLL of ``labels`` (``-100`` = padding) under ``logits`` [rows, T, V], in fp32 at least."""
    return label_nll_and_scale_gradient(logits, labels, token_reduction, with_gradient=False)[0]


def label_nll_and_scale_gradient(
    logits: torch.Tensor, labels: torch.Tensor, token_reduction: str = "sum", with_gradient: bool = True
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-row label NLL and its derivative with respect to a logit scale w at w = 1, in closed form.

    For one token, d/dw −log softmax(w·z)_y at w = 1 is E_{softmax(z)}[z] − z_y, so IRMv1's dummy-classifier
    gradient (eq. 4.6) needs no second backward pass: it is a differentiable function of the logits, computed
    from the same log-softmax as the NLL. The second value is ``None`` when ``with_gradient`` is false.
    """
    mask = labels.ne(-100)
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))  # half precision is upcast
    log_probs = torch.log_softmax(logits, dim=-1)
    gold = labels.clamp(min=0).unsqueeze(-1)
    nll = _reduce_tokens(-log_probs.gather(-1, gold).squeeze(-1) * mask, mask, token_reduction)
    if not with_gradient:
        return nll, None
    token_gradient = (log_probs.exp() * logits).sum(-1) - logits.gather(-1, gold).squeeze(-1)
    return nll, _reduce_tokens(token_gradient * mask, mask, token_reduction)


def irm_penalty(
    logits: torch.Tensor, labels: torch.Tensor, environments: torch.Tensor, token_reduction: str = "sum"
) -> tuple[torch.Tensor, dict[int, torch.Tensor], torch.Tensor]:
    """IRMv1 penalty Σ_e (∂L^e/∂w |_{w=1})², the environment risks L^e, and the per-row NLL.

    The risks and NLL are those at w = 1, i.e. of the model itself, so ERM reuses them. The gradient is the
    closed form of :func:`label_nll_and_scale_gradient` (cheaper than ``torch.autograd.grad`` with ``create_graph`` per
    environment, measured: docs/method.md, "The objective"; equal to it up to float rounding), so it is also defined under
    ``no_grad``, where the trainer evaluates.
    """
    nll, scale_gradient = label_nll_and_scale_gradient(logits, labels, token_reduction)
    risks: dict[int, torch.Tensor] = {}
    penalty = nll.new_zeros(())
    for env in torch.unique(environments).tolist():
        rows = environments == env
        risks[int(env)] = nll[rows].mean()
        penalty = penalty + scale_gradient[rows].mean().pow(2)
    return penalty, risks, nll


@dataclass(frozen=True)
class PenaltyWeights:
    """The weights of eq. 4.10 at one training step, as the trainer hands them to its loss module:
    ``lambda_irm`` on the IRMv1 penalty and ``lambda_probe`` on the subtracted probe loss (0: no probe term).
    :meth:`~larev_hf.training.IRMProbeTrainer.penalty_weights` builds them from the config's fields, warmed up."""

    lambda_irm: float
    lambda_probe: float = 0.0


@dataclass
class LossParts:
    """The objective and its named parts; the parts are unweighted (``loss`` applies the weights)."""

    loss: torch.Tensor
    erm_loss: torch.Tensor
    irm_penalty: torch.Tensor
    probe_loss: torch.Tensor
    environment_losses: dict[int, torch.Tensor]
    #: the model's outputs on the batch (its logits), returned to the Trainer's prediction loop; ``None`` if not kept
    outputs: Any = None


def irm_loss_parts(
    risks: dict[int, torch.Tensor],
    penalty: torch.Tensor,
    weights: PenaltyWeights,
    erm_reduction: str = "mean",
    probe_loss: torch.Tensor | None = None,
) -> LossParts:
    """The IRM objective from its parts: ERM (the ``"mean"`` or ``"sum"`` of the environment ``risks``) +
    ``weights.lambda_irm`` · ``penalty``, minus ``weights.lambda_probe`` · ``probe_loss`` when a probe loss is given
    (thesis eq. 4.10; RoRA eq. 6-7 sum the risks)."""
    stacked = torch.stack(list(risks.values()))
    erm = stacked.mean() if erm_reduction == "mean" else stacked.sum()
    loss = erm + weights.lambda_irm * penalty
    if probe_loss is None:
        probe_loss = erm.new_zeros(())
    else:
        loss = loss - weights.lambda_probe * probe_loss
    return LossParts(loss, erm, penalty, probe_loss, risks)


class IRMProbeLoss(nn.Module):
    """ERM + λ_IRM · IRMv1 penalty − λ_probe · frozen-probe loss (thesis eq. 4.10).

    Args:
        token_reduction (`str`, *optional*, defaults to `"mean"`): per-row label NLL as the mean of its token NLLs
            (nats per token, as ``IRMProbeConfig``'s default) or their sum (−log p(y|·), what the scores use).
        probe_max_loss (`float`, *optional*): clamp the probe loss at this value before subtracting it.

    Inputs of ``forward``: the model, its batch (``input_ids``, ``attention_mask``, ``labels``,
    ``environment``, and, when a probe is used, ``probe_input_ids`` / ``probe_attention_mask`` with
    ``probe_labels``), the frozen probe (or ``None``) and the current :class:`PenaltyWeights`.
    """

    def __init__(self, token_reduction: str = "mean", probe_max_loss: float | None = None) -> None:
        super().__init__()
        self.token_reduction = token_reduction
        self.probe_max_loss = probe_max_loss

    def forward(
        self,
        model: nn.Module,
        batch: dict[str, torch.Tensor],
        probe: nn.Module | None,
        weights: PenaltyWeights,
    ) -> LossParts:
        labels = batch["labels"]
        # The forward goes through the (possibly DDP-wrapped) model so gradients are synchronised;
        # helper methods live on the wrapped module.
        unwrapped = extract_model_from_parallel(model)
        outputs = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=unwrapped.prepare_decoder_input_ids_from_labels(labels=labels),
        )
        penalty, risks, _ = irm_penalty(outputs.logits, labels, batch["environment"], self.token_reduction)
        use_probe = probe is not None and weights.lambda_probe > 0
        probe_loss = self.probe_loss(model, batch, probe) if use_probe else penalty.new_zeros(())
        parts = irm_loss_parts(risks, penalty, weights, probe_loss=probe_loss)
        parts.outputs = outputs
        return parts

    def probe_loss(self, model: nn.Module, batch: dict[str, torch.Tensor], probe: nn.Module) -> torch.Tensor:
        """Mean NLL of the frozen probe ψ decoding y from Enc_ΦLA(b̃) (eq. 4.10's last term)."""
        encoder = extract_model_from_parallel(model).get_encoder()
        encoder_outputs = encoder(input_ids=batch["probe_input_ids"], attention_mask=batch["probe_attention_mask"])
        labels = batch["probe_labels"]
        logits = probe(
            encoder_outputs=encoder_outputs,
            attention_mask=batch["probe_attention_mask"],
            decoder_input_ids=probe.prepare_decoder_input_ids_from_labels(labels=labels),
        ).logits
        loss = label_nll(logits, labels, self.token_reduction).mean()
        return loss.clamp(max=self.probe_max_loss) if self.probe_max_loss is not None else loss

    def get_config_dict(self) -> dict[str, object]:
        return {"token_reduction": self.token_reduction, "probe_max_loss": self.probe_max_loss}

    @property
    def citation(self) -> str:
        return CITATION
