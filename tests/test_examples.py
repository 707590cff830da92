"""The example scripts the docs point to, run as a user runs them (subprocesses, offline, CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from larev_hf.modeling import load_evaluator

ROOT = Path(__file__).resolve().parents[1]


def run_example(script: str, *arguments: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, str(ROOT / "examples" / script), *arguments], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.slow
@pytest.mark.parametrize("trainer", ["seq2seq", "irm"])
def test_drop_in_trainer_swaps_seq2seq_for_irm(trainer, tmp_path):
    """The same script trains with either trainer; only the IRM one logs the penalty and per-environment losses,
    and both lower the loss."""
    output = tmp_path / trainer
    run_example("drop_in_trainer.py", "--trainer", trainer, "--output_dir", str(output), "--max_steps", "30")
    history = json.loads((output / "log_history.json").read_text())
    assert history[0]["loss"] > history[-1]["loss"]
    logged = set().union(*history)
    assert ({"irm/penalty", "env/0/loss", "env/2/loss", "erm/loss"} <= logged) == (trainer == "irm")
    model, _ = load_evaluator(output, device="cpu")
    assert model.config.d_model == 128
