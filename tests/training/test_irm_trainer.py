"""LAREV's objective in the trainer (thesis eq. 4.10): the IRMv1 penalty, the frozen probe's gradients, the warm-up,
the environment datasets and collator."""

from __future__ import annotations

import copy

import pytest
import torch

from larev_hf.training import (
    IRMProbeConfig,
    IRMProbeLoss,
    IRMProbeTrainer,
    PenaltyWeights,
    irm_penalty,
    label_nll,
)
from larev_hf.training.collator import EnvironmentCollator
from larev_hf.training.leakage_aware import environment_dataset, freeze_encoder


def hand_irm_penalty(logits: torch.Tensor, labels: torch.Tensor, environments: torch.Tensor) -> float:
    """Σ_e (dL^e/dw at w=1)² with the closed form d/dw −log softmax(w z)_y = −(z_y − Σ_v softmax(z)_v z_v)."""
    probs = torch.softmax(logits.double(), -1)
    expected = (probs * logits.double()).sum(-1)
    gold = logits.double().gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    row_gradient = (-(gold - expected) * labels.ne(-100)).sum(-1)
    return sum(float(row_gradient[environments == e].mean()) ** 2 for e in environments.unique())


def toy_batch(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(6, 3, 7, generator=generator) * 2
    labels = torch.randint(0, 7, (6, 3), generator=generator)
    labels[0, 2] = labels[4, 1] = -100
    return logits, labels, torch.tensor([0, 1, 2, 0, 1, 2])


def test_irm_penalty_matches_hand_computation():
    logits, labels, environments = toy_batch()
    penalty, risks, nll = irm_penalty(logits, labels, environments)
    assert float(penalty) == pytest.approx(hand_irm_penalty(logits, labels, environments), rel=1e-5)
    assert float(penalty) > 0
    for env, risk in risks.items():
        assert float(risk) == pytest.approx(float(nll[environments == env].mean()), rel=1e-6)


def test_irm_penalty_matches_a_finite_difference():
    logits, labels, environments = toy_batch(1)
    eps, total = 1e-3, 0.0
    for env in environments.unique():
        rows = environments == env
        up = label_nll(logits[rows].double() * (1 + eps), labels[rows]).mean()
        down = label_nll(logits[rows].double() * (1 - eps), labels[rows]).mean()
        total += float((up - down) / (2 * eps)) ** 2
    assert float(irm_penalty(logits, labels, environments)[0]) == pytest.approx(total, rel=1e-3)


def test_closed_form_penalty_backpropagates_like_the_double_backward_definition():
    # IRMv1 as Arjovsky et al. write it: autograd.grad of each environment's risk w.r.t. a dummy scale, with
    # create_graph. The closed form must give the model the same gradient, not just the same value.
    logits, labels, environments = toy_batch(3)
    logits = logits.double().requires_grad_(True)
    scale = torch.ones((), dtype=torch.double, requires_grad=True)
    nll = label_nll(logits * scale, labels)
    reference = sum(torch.autograd.grad(nll[environments == e].mean(), scale, create_graph=True)[0].pow(2)
                    for e in environments.unique())
    (expected,) = torch.autograd.grad(reference, logits)
    (actual,) = torch.autograd.grad(irm_penalty(logits, labels, environments)[0], logits)
    assert torch.allclose(actual.double(), expected, rtol=1e-4, atol=1e-6)
    assert expected.abs().sum() > 0


def test_irm_penalty_is_zero_when_every_environment_is_fit_at_its_optimal_scale():
    # Uniform logits: scaling them changes nothing, so w = 1 is optimal in every environment.
    _, labels, environments = toy_batch()
    penalty, _, _ = irm_penalty(torch.zeros(6, 3, 7), labels, environments)
    assert float(penalty) == 0.0
    # Identical environments fit identically: the penalty is the number of environments × one environment's term.
    logits, labels, _ = toy_batch(2)
    one = float(irm_penalty(logits[:2], labels[:2], torch.zeros(2, dtype=torch.long))[0])
    three = float(irm_penalty(logits[:2].repeat(3, 1, 1), labels[:2].repeat(3, 1), torch.arange(3).repeat_interleave(2))[0])
    assert three == pytest.approx(3 * one, rel=1e-5)


def test_irm_penalty_is_differentiable_and_computed_under_no_grad():
    logits, labels, environments = toy_batch()
    logits.requires_grad_(True)
    penalty, _, _ = irm_penalty(logits, labels, environments)
    penalty.backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0
    with torch.no_grad():  # evaluation in the trainer runs under no_grad
        assert float(irm_penalty(logits.detach(), labels, environments)[0]) == pytest.approx(float(penalty), rel=1e-6)


def _batch_for(tokenizer, rows):
    collator = EnvironmentCollator(tokenizer)
    return collator(rows)


@pytest.fixture
def environment_rows(tiny_tokenizer):
    records = [
        {"rationale": "a blorvex is a kind of spice .", "label": "kitchen"},
        {"rationale": "two kids play soccer .", "label": "garden"},
    ]
    envs = [
        {"original": "the blorvex is kept in the kitchen .", "mask": "the blorvex is kept in the <mask> .",
         "antonym": "the blorvex is kept in the garage ."},
        {"original": "kids play in the garden .", "mask": "kids play in the <mask> .", "antonym": "kids play in the bathroom ."},
    ]
    from larev_hf.modeling import get_input_format

    dataset = environment_dataset(records, envs, tiny_tokenizer, get_input_format("larev"))
    return [dataset[i] for i in range(len(dataset))]


def test_environment_dataset_and_collator_keep_groups(environment_rows, tiny_tokenizer):
    assert [row["group_id"] for row in environment_rows] == [0, 0, 0, 1, 1, 1]
    assert [row["environment"] for row in environment_rows] == [0, 1, 2, 0, 1, 2]
    batch = _batch_for(tiny_tokenizer, environment_rows)
    assert batch["input_ids"].shape[0] == 6
    assert batch["probe_input_ids"].shape[0] == 2  # b̃ once per group
    assert torch.equal(batch["environment"], torch.tensor([0, 1, 2, 0, 1, 2]))


def test_probe_receives_no_gradient_and_only_the_encoder_learns_from_it(tiny_model, tiny_tokenizer, environment_rows):
    probe = freeze_encoder(copy.deepcopy(tiny_model)).requires_grad_(False)
    batch = _batch_for(tiny_tokenizer, environment_rows)
    loss_module = IRMProbeLoss()
    probe_loss = loss_module.probe_loss(tiny_model, batch, probe)
    (-probe_loss).backward()
    assert all(p.grad is None for p in probe.parameters())
    encoder_grads = [p.grad for n, p in tiny_model.get_encoder().named_parameters() if "embed" not in n]
    assert all(g is not None and g.abs().sum() > 0 for g in encoder_grads)
    decoder_only = [p for n, p in tiny_model.named_parameters() if n.startswith(("decoder.", "model.decoder.")) and "embed" not in n]
    assert decoder_only and all(p.grad is None or p.grad.abs().sum() == 0 for p in decoder_only)


def test_full_objective_combines_the_parts(tiny_model, tiny_tokenizer, environment_rows):
    probe = copy.deepcopy(tiny_model).requires_grad_(False)
    batch = _batch_for(tiny_tokenizer, environment_rows)
    parts = IRMProbeLoss()(tiny_model, batch, probe, PenaltyWeights(lambda_irm=2.0, lambda_probe=0.1))
    expected = parts.erm_loss + 2.0 * parts.irm_penalty - 0.1 * parts.probe_loss
    assert float(parts.loss) == pytest.approx(float(expected), rel=1e-6)
    assert set(parts.environment_losses) == {0, 1, 2}
    assert float(parts.erm_loss) == pytest.approx(float(torch.stack(list(parts.environment_losses.values())).mean()), rel=1e-6)


def test_warmup_schedule_and_config_validation(tiny_model, tiny_tokenizer, environment_rows, tmp_path):
    import datasets

    args = IRMProbeConfig(output_dir=str(tmp_path), lambda_irm=3.0, lambda_probe=0.3, report_to="none", max_steps=30)
    trainer = IRMProbeTrainer(model=tiny_model, args=args, train_dataset=datasets.Dataset.from_list(environment_rows),
                              processing_class=tiny_tokenizer, probe_model=copy.deepcopy(tiny_model))
    trainer.state.max_steps = 30
    for step, factor in [(0, 0.0), (5, 0.5), (10, 1.0), (25, 1.0)]:
        trainer.state.global_step = step
        weights = trainer.penalty_weights()
        assert weights.lambda_irm == pytest.approx(3.0 * factor) and weights.lambda_probe == pytest.approx(0.3 * factor)
    with pytest.raises(ValueError, match="probe_model is the model"):
        IRMProbeTrainer(model=tiny_model, args=args, probe_model=tiny_model, processing_class=tiny_tokenizer)
    with pytest.raises(ValueError, match="penalty weights"):
        IRMProbeConfig(output_dir=str(tmp_path), lambda_irm=-1.0, report_to="none")


def test_trainer_logs_every_term_and_updates_all_parameters(tiny_model, tiny_tokenizer, environment_rows, tmp_path):
    import datasets

    before = {n: p.detach().clone() for n, p in tiny_model.named_parameters()}
    probe = freeze_encoder(copy.deepcopy(tiny_model)).requires_grad_(False)
    args = IRMProbeConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, max_steps=3, logging_steps=1,
                          learning_rate=1e-2, penalty_warmup_ratio=0.0, lambda_irm=1.0, lambda_probe=0.01,
                          report_to="none", save_strategy="no", disable_tqdm=True, dataloader_pin_memory=False)
    trainer = IRMProbeTrainer(model=tiny_model, args=args, train_dataset=datasets.Dataset.from_list(environment_rows),
                              processing_class=tiny_tokenizer, probe_model=probe)
    trainer.train()
    logged = {key for entry in trainer.state.log_history for key in entry}
    for key in ("loss", "erm/loss", "irm/penalty", "probe/loss", "weights/lambda_irm", "weights/lambda_probe",
                "env/0/loss", "env/1/loss", "env/2/loss"):
        assert key in logged
    changed = [n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())]
    assert len(changed) == len(before)


def test_probe_every_n_steps_applies_n_times_the_weight_on_every_nth_step(tiny_model, tiny_tokenizer, environment_rows,
                                                                         tmp_path):
    """probe_every_n_steps=2: the probe term (and its log) on steps 1, 3, ... with weight 2·λ_probe, none between."""
    import datasets

    probe = freeze_encoder(copy.deepcopy(tiny_model)).requires_grad_(False)
    args = IRMProbeConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, max_steps=4, logging_steps=1,
                          learning_rate=1e-3, penalty_warmup_ratio=0.0, lambda_irm=0.0, lambda_probe=0.05,
                          probe_every_n_steps=2, report_to="none", save_strategy="no", disable_tqdm=True,
                          dataloader_pin_memory=False)
    trainer = IRMProbeTrainer(model=tiny_model, args=args, train_dataset=datasets.Dataset.from_list(environment_rows),
                              processing_class=tiny_tokenizer, probe_model=probe)
    trainer.state.global_step = 2
    assert trainer.probe_weight_this_step(0.05, training=True) == pytest.approx(0.1)
    assert trainer.probe_weight_this_step(0.05, training=False) == pytest.approx(0.05)  # evaluation: every time
    trainer.state.global_step = 3
    assert trainer.probe_weight_this_step(0.05, training=True) == 0.0
    trainer.state.global_step = 0
    trainer.train()
    steps = [entry for entry in trainer.state.log_history if "erm/loss" in entry]
    assert [entry["step"] for entry in steps] == [1, 2, 3, 4]
    assert ["probe/loss" in entry for entry in steps] == [True, False, True, False]
    for entry in steps:  # λ_IRM = 0: loss = ERM − 2·λ_probe·L_probe on probe steps, ERM alone otherwise
        expected = entry["erm/loss"] - 0.1 * entry.get("probe/loss", 0.0)
        assert entry["loss"] == pytest.approx(expected, rel=1e-3, abs=1e-3)
    with pytest.raises(ValueError, match="probe_every_n_steps"):
        IRMProbeConfig(output_dir=str(tmp_path), probe_every_n_steps=0, report_to="none")


# --------------------------------------------------------------------------- environments and leakage terms


def test_environment_dataset_reads_rationale_side_environments_with_the_original_baseline(tiny_tokenizer):
    from larev_hf.leakage import ENVIRONMENTS, RATIONALE_ENVIRONMENTS
    from larev_hf.modeling import get_input_format

    fmt = get_input_format("larev")
    records = [{"rationale": "the kitchen holds spice .", "label": "kitchen"}]
    envs = [{"original": "it is the kitchen .", "mask": "it is the <mask> .", "antonym": "it is the garage .",
             "rationales": {"rationale_mask": "the <mask> holds spice .", "rationale_swap": "the garage holds spice ."}}]
    dataset = environment_dataset(records, envs, tiny_tokenizer, fmt, environment_names=ENVIRONMENTS + RATIONALE_ENVIRONMENTS)
    expected = [fmt.rationale_input("the kitchen holds spice .", "it is the kitchen ."),
                fmt.rationale_input("the kitchen holds spice .", "it is the <mask> ."),
                fmt.rationale_input("the kitchen holds spice .", "it is the garage ."),
                fmt.rationale_input("the <mask> holds spice .", "it is the kitchen ."),
                fmt.rationale_input("the garage holds spice .", "it is the kitchen .")]
    assert dataset["input_ids"] == tiny_tokenizer(expected, truncation=True, max_length=256)["input_ids"]
    assert dataset["environment"] == [0, 1, 2, 3, 4] and dataset["group_id"] == [0] * 5


def test_irm_loss_parts_is_the_one_objective_of_every_irm_loss() -> None:
    from larev_hf.training import irm_loss_parts

    risks, penalty = {0: torch.tensor(1.0), 1: torch.tensor(3.0)}, torch.tensor(0.5)
    mean = irm_loss_parts(risks, penalty, PenaltyWeights(lambda_irm=2.0))  # LAREV and the choice classifiers: ERM = mean risk
    assert (mean.loss.item(), mean.erm_loss.item(), mean.probe_loss.item()) == (3.0, 2.0, 0.0)
    summed = irm_loss_parts(risks, penalty, PenaltyWeights(lambda_irm=2.0), erm_reduction="sum")  # RoRA eq. 6-7: the sum
    assert (summed.loss.item(), summed.erm_loss.item()) == (5.0, 4.0)
    probe = irm_loss_parts(risks, penalty, PenaltyWeights(2.0, 0.25), probe_loss=torch.tensor(4.0))  # − λ_probe L_probe
    assert (probe.loss.item(), probe.probe_loss.item(), probe.environment_losses) == (2.0, 4.0, risks)
