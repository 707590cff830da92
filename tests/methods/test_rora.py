"""RoRA as a method of a run: the classifier variant end to end and its settings checks."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.slow
def test_pipeline_classifier_variant_scores_strategyqa_and_round_trips_through_a_bundle(data_dir, tmp_path):
    """`larev-hf run --method rora --rora.classifier minilm`: Θ and Φ are MiniLM classifiers over StrategyQA's
    yes/no; the run's scores are log-softmax differences, and its bundle reproduces them after a save and reload."""
    from larev_hf.hub import EvaluatorBundle
    from larev_hf.io import read_jsonl
    from larev_hf.modeling import load_evaluator
    from larev_hf.pipeline import Run, RunConfig
    from larev_hf.rora import classifier_labels

    config = RunConfig(method="rora", **{"rora.classifier": "minilm"}, dataset="strategyqa",
                       data_dir=str(data_dir / "strategyqa"), max_train_examples=48, max_eval_examples=12,
                       num_train_epochs=1.0, batch_size=16, n_boot=20)
    run = Run(config, tmp_path / "run", progress=False)
    report = run.execute()
    phi, _ = load_evaluator(run.path("models", "rora_phi"))
    assert not phi.config.is_encoder_decoder and classifier_labels(phi) == run.split_records("train")[0]["choices"]
    rows = [row for _, row in read_jsonl(run.path("scores", "test_scores.jsonl"))]
    # a classifier's log-probabilities over two labels: each term ≤ 0, so a score is bounded by −log p_Θ(y)
    assert all(row["rora/gold"] <= -row["log_p_theta"] + 1e-9 for row in rows)
    assert report["methods"]["rora"]["absolute"]["gold"] == pytest.approx(np.mean([row["rora/gold"] for row in rows]))
    bundle = EvaluatorBundle.from_pretrained(EvaluatorBundle.from_run(run.dir, "rora").save_pretrained(tmp_path / "bundle"))
    assert bundle.models.tokenizer.__class__.__name__.startswith("Bert")  # the encoder's tokenizer, not the run's seq2seq one
    records = run.split_records("test")
    scores = bundle.score([r["rationale"] for r in records], [r["label"] for r in records], records).scores
    np.testing.assert_allclose(scores, [row["rora/gold"] for row in rows], rtol=0, atol=1e-5)


def test_classifier_variant_settings_are_checked():
    from larev_hf.pipeline import RunConfig

    with pytest.raises(ValueError, match="applies to RoRA; add rora to --method 'rev'"):
        RunConfig(method="rev", **{"rora.classifier": "minilm"})
    with pytest.raises(ValueError, match="trains its encoder in full"):
        RunConfig(method="rora", **{"rora.classifier": "minilm"}, lora=True)
    from larev_hf.methods.rora import classifier_train_settings, phi_groups
    from larev_hf.rora import RoRASettings

    def phi_lambda(config):
        return config.method_settings(RoRASettings).phi_arguments().lambda_irm

    config = RunConfig(method="all", **{"rora.classifier": "minilm"}, learning_rate=1e-3)
    assert classifier_train_settings(config).learning_rate == 3e-5
    # λ left to the backbone: the classifier's (pretrained) encoder decides, not the run's random-init preset, in the
    # run's one fill-in, so run_config.json records the value Φ trains with
    assert (phi_lambda(config), phi_groups(config)) == (10.0, 32)
    assert config.model.backbone_defaults["rora.lambda_irm"] == "pretrained backbones"
    assert phi_lambda(RunConfig(method="rora")) == 1.0
    assert phi_lambda(RunConfig(method="all", **{"rora.classifier": "minilm", "rora.lambda_irm": 2.0})) == 2.0
    rora = RunConfig(method="rora", **{"rora.top_k": 3, "rora.threshold": "auto"}, seed=4).method_settings(RoRASettings)
    settings = rora.detector_settings(seed=4)
    assert (settings.top_k, settings.threshold, settings.seed) == (3, "auto", 4)


def test_an_older_run_config_of_the_classifier_variant_reads_the_lambda_phi_trained_with():
    """Earlier versions recorded RoRA's λ from the run's backbone while Φ trained with the classifier encoder's; such
    a file loads as the run that trained (and a rerun of the same command resumes it)."""
    from larev_hf.config import RunConfig
    from larev_hf.rora import RoRASettings

    fresh = RunConfig(method="rora", **{"rora.classifier": "minilm"})
    # as they wrote it: RoRA's settings under their old flat keys, λ at t5-tiny's value
    old = {key: value for key, value in fresh.to_dict().items() if not key.startswith("rora.")}
    old.update(rora_threshold=fresh.to_dict()["rora.threshold"], rora_top_k=fresh.to_dict()["rora.top_k"],
               rora_classifier="minilm", rora_lambda_irm=1.0)
    old["backbone_defaults"] = {**{name: source for name, source in old["backbone_defaults"].items()
                                   if name != "rora.lambda_irm"}, "rora_lambda_irm": "random-init presets"}
    loaded = RunConfig.from_dict(old)
    assert loaded.method_settings(RoRASettings).lambda_irm == 10.0
    assert loaded == fresh
    asked = {name: source for name, source in old["backbone_defaults"].items() if name != "rora_lambda_irm"}
    given = {**old, "rora_lambda_irm": 2.0, "backbone_defaults": asked}  # asked for: kept
    assert RunConfig.from_dict(given).method_settings(RoRASettings).lambda_irm == 2.0
