"""bf16 arithmetic where the hardware has it: an evaluator trained with ``--bf16`` computes in bf16 autocast.

Autocast keeps the weights in fp32 and runs the matrix products in bf16 (accumulating in fp32); the label
log-softmax stays fp32 (:mod:`larev_hf.modeling.scoring`). On CPUs with bf16 instructions (Intel AMX or AVX512-BF16,
as on this project's build machines) it is several times faster than fp32 for scoring; on a CPU without them bf16 is
emulated and slower than fp32, so it is used only where :func:`native_bf16` says the device computes it natively.

A model trained this way records it in its config (:data:`AUTOCAST_ATTRIBUTE`, saved in ``config.json`` with the
weights), so every later scoring of it — the run's, a meta or human evaluation's, a bundle's on a user's machine —
computes the same way without being told: scores of one evaluator do not depend on who loads it, only (slightly;
measured: docs/scale.md, "bf16 on a CPU that has it") on whether the loading machine has bf16 arithmetic.
"""

from __future__ import annotations

import contextlib
import logging
from functools import cache
from typing import Any

import torch

logger = logging.getLogger(__name__)

#: The model config attribute that names the autocast dtype a model was trained (and is scored) in.
AUTOCAST_ATTRIBUTE = "larev_autocast_dtype"


@cache
def native_bf16(device_type: str) -> bool:
    """Whether ``device_type`` (``"cpu"``, ``"cuda"``) computes bf16 natively: a CUDA device that supports it, or a
    CPU with AMX or AVX512-BF16 instructions (oneDNN's own check)."""
    if device_type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device_type == "cpu":
        try:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):  # a build without oneDNN
            return False
    return False


def mark_bf16(model: Any) -> None:
    """Record in ``model``'s config that it trains and scores in bf16 autocast (saved with the model)."""
    setattr(model.config, AUTOCAST_ATTRIBUTE, "bfloat16")


def autocast_for(model: Any) -> contextlib.AbstractContextManager:
    """The autocast context ``model`` computes in: bf16 if its config asks for it and its device has bf16
    arithmetic, else none (fp32). A model that asks for bf16 on a device without it says so once in the log."""
    wanted = getattr(getattr(model, "config", None), AUTOCAST_ATTRIBUTE, None)
    if wanted != "bfloat16":
        return contextlib.nullcontext()
    device_type = next(model.parameters()).device.type
    if not native_bf16(device_type):
        _warn_fp32(device_type)
        return contextlib.nullcontext()
    return torch.autocast(device_type, dtype=torch.bfloat16)


@cache
def _warn_fp32(device_type: str) -> None:
    logger.warning("this evaluator was trained in bf16, but this %s has no bf16 arithmetic: it is scored in fp32 "
                   "(scores close to a bf16 machine's, not equal, and slower: the larev-hf docs, scale.md, 'bf16 on a "
                   "CPU that has it')", device_type)
