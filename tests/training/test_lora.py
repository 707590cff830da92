"""LoRA through PEFT: which parameters train, the saved layout, the probe's frozen encoder, a LoRA run."""

from __future__ import annotations

import copy

import pytest
import torch

from larev_hf.io import read_json
from larev_hf.modeling import load_evaluator, score_labels
from larev_hf.modeling.lora import BASE_MODEL_DIR, LoraSettings, apply_lora, lora_target_modules
from larev_hf.pipeline import Run, RunConfig
from larev_hf.training import TrainSettings, train_seq2seq
from larev_hf.training.leakage_aware import train_probe

SOURCES = ["a man walks implies a person moves .", "two kids play contradicts the kids sleep ."] * 16
TARGETS = ["entailment", "contradiction"] * 16


def _settings(**kwargs) -> TrainSettings:
    return TrainSettings(learning_rate=5e-3, num_train_epochs=2, batch_size=8, progress=False, **kwargs)


def test_only_adapters_train_and_decoder_only_leaves_the_encoder_alone(tiny_model):
    names = lora_target_modules(tiny_model, decoder_only=True)
    assert names and all("decoder" in name.split(".") for name in names)
    assert tiny_model.get_output_embeddings() not in [tiny_model.get_submodule(n) for n in lora_target_modules(tiny_model)]
    peft_model = apply_lora(copy.deepcopy(tiny_model), LoraSettings(r=4), decoder_only=True)
    trainable = [name for name, p in peft_model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name for name in trainable)
    assert not any("encoder" in name.split(".") for name in trainable)  # cross-attention (encoder_attn) is decoder-side
    # a preset's input embeddings trained alongside: only the decoder's copy, so the probe's encoder stays Φ's
    peft_model = apply_lora(copy.deepcopy(tiny_model), LoraSettings(r=4, modules_to_save=["embed_tokens"]), decoder_only=True)
    trainable = [name for name, p in peft_model.named_parameters() if p.requires_grad]
    assert any("embed_tokens.modules_to_save" in name for name in trainable)
    assert not any("encoder" in name.split(".") for name in trainable)
    with pytest.raises(ValueError, match="no linear layer"):
        lora_target_modules(tiny_model, ["no_such_module"])
    with pytest.raises(ValueError, match="rank"):
        LoraSettings(r=0)


def test_modules_to_save_must_be_the_module_the_forward_calls(tiny_model, tiny_tokenizer):
    """T5's ``shared`` is also ``encoder.embed_tokens``: PEFT's trained copy of it would get no gradient, so it is
    refused; ``embed_tokens`` is accepted and its copies do get gradients (BART: ``model.shared`` likewise)."""
    with pytest.raises(ValueError, match="never calls a module of that name"):
        apply_lora(copy.deepcopy(tiny_model), LoraSettings(r=4, modules_to_save=["shared"]))
    model = apply_lora(copy.deepcopy(tiny_model), LoraSettings(r=4, modules_to_save=["embed_tokens"]))
    encoded = tiny_tokenizer(["a man walks ."], return_tensors="pt")
    labels = tiny_tokenizer(text_target=["entailment"], return_tensors="pt")["input_ids"]
    model(**encoded, labels=labels).loss.backward()
    saved = [p for n, p in model.named_parameters() if "modules_to_save" in n]
    assert saved and all(p.grad is not None and p.grad.abs().sum() > 0 for p in saved)


def test_lora_model_round_trips_through_its_directory(tiny_model, tiny_tokenizer, tmp_path):
    """The adapter directory (adapter + base weights of a random-init preset) reloads to the same scores,
    and the saved base is the untouched initialisation."""
    initial = {k: v.clone() for k, v in tiny_model.state_dict().items()}
    trained = train_seq2seq(tiny_model, tiny_tokenizer, SOURCES, TARGETS, tmp_path / "phi", _settings(lora=LoraSettings(r=4)))
    assert (tmp_path / "phi" / "adapter_config.json").is_file() and (tmp_path / "phi" / BASE_MODEL_DIR / "config.json").is_file()
    assert not (tmp_path / "phi" / "model.safetensors").exists()  # only the adapter at the top level
    base, _ = load_evaluator(tmp_path / "phi" / BASE_MODEL_DIR, device="cpu")
    assert all(torch.equal(base.state_dict()[k], v) for k, v in initial.items())
    loaded, _ = load_evaluator(tmp_path / "phi", device="cpu")
    trained.eval()
    before = score_labels(trained, tiny_tokenizer, SOURCES[:4], TARGETS[:4]).sum
    after = score_labels(loaded, tiny_tokenizer, SOURCES[:4], TARGETS[:4]).sum
    assert after == pytest.approx(before, abs=1e-4)
    untrained = score_labels(base, tiny_tokenizer, SOURCES[:4], TARGETS[:4]).sum
    assert after.mean() > untrained.mean() + 0.5  # the adapters learned the task


@pytest.mark.parametrize("modules_to_save", [None, ["embed_tokens"]])
def test_lora_probe_keeps_phi_encoder_frozen(tiny_model, tiny_tokenizer, tmp_path, modules_to_save):
    settings = _settings(lora=LoraSettings(r=4, modules_to_save=modules_to_save))
    train_seq2seq(tiny_model, tiny_tokenizer, SOURCES, TARGETS, tmp_path / "phi", settings)
    phi, _ = load_evaluator(tmp_path / "phi", device="cpu")
    phi_state = {k: v.clone() for k, v in phi.state_dict().items()}
    train_probe(phi, tiny_tokenizer, SOURCES, TARGETS, tmp_path / "probe", settings)
    probe, _ = load_evaluator(tmp_path / "probe", device="cpu")
    probe_state = probe.state_dict()
    encoder_keys = [k for k in phi_state if "encoder" in k.split(".")]  # its input embeddings included
    decoder_keys = [k for k in phi_state if "decoder" in k.split(".") and k.endswith(".weight") and "norm" not in k
                    and "embed" not in k]
    assert encoder_keys and all(torch.equal(probe_state[k], phi_state[k]) for k in encoder_keys)
    assert any(not torch.equal(probe_state[k], phi_state[k]) for k in decoder_keys)


def test_lora_run_trains_adapters_for_every_model_and_reports(tmp_path):
    config = RunConfig(method="larev", dataset="synthetic", max_train_examples=96, max_eval_examples=16,
                       num_train_epochs=1.0, n_boot=50, lora=True, lora_r=4, lambda_probe=1e-3)
    report = Run(config, tmp_path, progress=False).execute()
    for name in ("phi_base", "phi", "probe", "phi_la"):
        assert (tmp_path / "models" / name / "adapter_config.json").is_file(), name
        assert read_json(tmp_path / "models" / name / "adapter_config.json")["r"] == 4
    assert set(report["methods"]) == {"larev"} and report["settings"]["lora"] is True
    # a preset's random input embeddings train alongside by default; the probe's only on the decoder side
    assert read_json(tmp_path / "models" / "phi_la" / "adapter_config.json")["modules_to_save"] == ["embed_tokens"]
    assert read_json(tmp_path / "models" / "probe" / "adapter_config.json")["modules_to_save"] == ["decoder.embed_tokens"]
    assert RunConfig(lora=True, lora_modules_to_save=[]).train_settings().lora.modules_to_save is None
    assert RunConfig(lora=True, backbone="t5-large").train_settings().lora.modules_to_save is None
    with pytest.raises(ValueError, match="lora"):  # LoRA changes every trained model: no silent resume without it
        Run(config.replace(lora=False), tmp_path, progress=False).execute()


@pytest.mark.slow
def test_example_script_trains_and_saves_a_lora_evaluator(tmp_path):
    """examples/train_larev.py --lora_r: the saved directory is an adapter that load_evaluator puts back on its base."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root)}
    output = tmp_path / "phi_la"
    result = subprocess.run(
        [sys.executable, str(root / "examples" / "train_larev.py"), "--output_dir", str(output), "--max_train_examples", "32",
         "--max_steps", "3", "--per_device_train_batch_size", "4", "--lora_r", "4", "--lambda_irm", "1", "--report_to", "none",
         "--save_strategy", "no", "--disable_tqdm", "true"],
        cwd=root, env=env, capture_output=True, text=True, timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert read_json(output / "adapter_config.json")["r"] == 4 and (output / BASE_MODEL_DIR / "config.json").is_file()
    model, tokenizer = load_evaluator(output, device="cpu")
    assert not any("lora" in name for name, _ in model.named_parameters())  # merged for scoring
    base, _ = load_evaluator(output / BASE_MODEL_DIR, device="cpu")
    merged_score = score_labels(model, tokenizer, ["a dog runs ."], ["entailment"]).sum
    assert merged_score != pytest.approx(score_labels(base, tokenizer, ["a dog runs ."], ["entailment"]).sum, abs=1e-6)

