"""IRMProbeTrainer through the Trainer's own paths: evaluate(), predict(), predict_with_generate, HF's collator with a
probe and renamed columns, and the checks that refuse or warn before training instead of doing nothing."""

from __future__ import annotations

import copy

import datasets
import pytest
import torch
from transformers import DataCollatorForSeq2Seq

from larev_hf.modeling import get_input_format
from larev_hf.training import IRMProbeConfig, IRMProbeTrainer
from larev_hf.training.collator import EnvironmentCollator, TrainerColumnsCollator
from larev_hf.training.leakage_aware import environment_dataset

PLACES = ["kitchen", "garden", "garage", "bathroom"]


@pytest.fixture(scope="module")
def groups(tiny_tokenizer) -> datasets.Dataset:
    """4 groups × 3 environments of the larev input format (12 rows, with probe inputs)."""
    records = [{"rationale": f"a blorvex is kept in the {PLACES[i]} .", "label": PLACES[i]} for i in range(4)]
    envs = [{"original": f"it is in the {PLACES[i]} .", "mask": "it is in the <mask> .",
             "antonym": f"it is in the {PLACES[(i + 1) % 4]} ."} for i in range(4)]
    return environment_dataset(records, envs, tiny_tokenizer, get_input_format("larev"))


@pytest.fixture
def t5(_tiny_models):
    return copy.deepcopy(_tiny_models["t5"])


def config(tmp_path, **values) -> IRMProbeConfig:
    base = dict(output_dir=str(tmp_path), per_device_train_batch_size=2, per_device_eval_batch_size=6, max_steps=1,
                learning_rate=1e-3, lambda_irm=1.0, penalty_warmup_ratio=0.0, logging_steps=1, report_to="none",
                save_strategy="no", disable_tqdm=True, dataloader_pin_memory=False, seed=0)
    return IRMProbeConfig(**{**base, **values})


def plain(dataset: datasets.Dataset) -> datasets.Dataset:
    return dataset.remove_columns(["environment", "group_id", "probe_input_ids"])


def independent_nll(model, tokenizer, dataset: datasets.Dataset, token_reduction: str = "mean") -> float:
    """Mean over rows of the label tokens' NLL (their mean, the default, or their sum), one row at a time."""
    model.eval()
    values = []
    with torch.no_grad():
        for row in dataset:
            labels = torch.tensor([row["labels"]])
            logits = model(input_ids=torch.tensor([row["input_ids"]]), labels=labels).logits
            token_nll = -torch.log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1))
            values.append(float(token_nll.sum() if token_reduction == "sum" else token_nll.mean()))
    return sum(values) / len(values)


def test_evaluate_and_predict_return_the_objective_and_its_parts(t5, tiny_tokenizer, groups, tmp_path):
    trainer = IRMProbeTrainer(model=t5, args=config(tmp_path, lambda_irm=2.0), train_dataset=groups,
                              eval_dataset=groups, processing_class=tiny_tokenizer)
    trainer.train()
    metrics = trainer.evaluate()
    for key in ("eval_loss", "eval_erm/loss", "eval_irm/penalty", "eval_env/0/loss", "eval_env/1/loss", "eval_env/2/loss"):
        assert key in metrics
    # the same quantity as training's loss: ERM + λ_IRM · penalty (λ fully warmed up), over equal-sized batches
    assert metrics["eval_loss"] == pytest.approx(metrics["eval_erm/loss"] + 2.0 * metrics["eval_irm/penalty"], rel=1e-5)
    assert metrics["eval_erm/loss"] == pytest.approx(independent_nll(trainer.model, tiny_tokenizer, groups), rel=1e-4)
    predicted = trainer.predict(groups)
    assert predicted.metrics["test_loss"] == pytest.approx(metrics["eval_loss"], rel=1e-6)
    assert predicted.metrics["test_irm/penalty"] == pytest.approx(metrics["eval_irm/penalty"], rel=1e-6)
    logits = predicted.predictions[0] if isinstance(predicted.predictions, tuple) else predicted.predictions
    assert logits.shape[:2] == (len(groups), max(len(ids) for ids in groups["labels"]))
    # training's own log was not polluted by evaluation's parts
    assert all("irm/penalty" not in entry for entry in trainer.state.log_history if "eval_loss" in entry)


@pytest.mark.parametrize("token_reduction", ["mean", "sum"])
def test_rows_without_environments_give_the_erm_part(t5, tiny_tokenizer, groups, tmp_path, token_reduction):
    trainer = IRMProbeTrainer(model=t5, args=config(tmp_path, token_reduction=token_reduction), train_dataset=groups,
                              processing_class=tiny_tokenizer)
    metrics = trainer.evaluate(plain(groups))
    assert "eval_irm/penalty" not in metrics
    assert metrics["eval_loss"] == pytest.approx(metrics["eval_erm/loss"], rel=1e-6)
    expected = independent_nll(trainer.model, tiny_tokenizer, groups, token_reduction)
    assert metrics["eval_loss"] == pytest.approx(expected, rel=1e-4)
    unlabeled = groups.remove_columns(["labels"])  # a test set without targets: generate only, as HF's scripts do
    trainer.args.predict_with_generate, trainer.args.generation_max_length = True, 4
    output = trainer.predict(unlabeled)
    assert output.metrics.get("test_loss") is None and output.predictions.shape[0] == len(groups)


@pytest.mark.parametrize("with_environments", [True, False])
def test_predict_with_generate_never_hands_the_trainer_columns_to_generate(t5, tiny_tokenizer, groups, tmp_path,
                                                                          with_environments):
    args = config(tmp_path, predict_with_generate=True, generation_max_length=6)
    collator = DataCollatorForSeq2Seq(tiny_tokenizer, model=t5)
    trainer = IRMProbeTrainer(model=t5, args=args, train_dataset=groups, processing_class=tiny_tokenizer,
                              data_collator=collator)
    eval_set = groups if with_environments else plain(groups)
    output = trainer.predict(eval_set)
    expected = t5.generate(**tiny_tokenizer.pad({"input_ids": groups["input_ids"]}, return_tensors="pt"),
                           max_length=6)
    generated = torch.as_tensor(output.predictions)[:, : expected.shape[1]]
    assert torch.equal(generated.where(generated != -100, tiny_tokenizer.pad_token_id), expected)
    assert ("test_irm/penalty" in output.metrics) is with_environments
    assert output.metrics["test_erm/loss"] == pytest.approx(independent_nll(t5, tiny_tokenizer, groups), rel=1e-4)


def test_hf_collator_with_a_probe_pads_the_probe_inputs_as_the_library_collator(t5, tiny_tokenizer, groups, tmp_path):
    rows = [groups[i] for i in range(6)]
    wrapped = TrainerColumnsCollator(DataCollatorForSeq2Seq(tiny_tokenizer), tiny_tokenizer)(rows)
    ours = EnvironmentCollator(tiny_tokenizer)(rows)
    for key in ("environment", "probe_input_ids", "probe_attention_mask", "probe_labels", "input_ids", "labels"):
        assert torch.equal(wrapped[key], ours[key]), key
    assert "group_id" not in wrapped
    # the probe column as text, tokenized by the collator: the same ids as tokenizing it beforehand
    texts = [f"it is in the {PLACES[i // 3]} <mask> ." for i in range(6)]
    as_text = [{**row, "probe_input_ids": text} for row, text in zip(rows, texts, strict=True)]
    as_ids = [{**row, "probe_input_ids": tiny_tokenizer(text)["input_ids"]} for row, text in zip(rows, texts, strict=True)]
    from_text = TrainerColumnsCollator(DataCollatorForSeq2Seq(tiny_tokenizer), tiny_tokenizer)(as_text)
    assert torch.equal(from_text["probe_input_ids"], EnvironmentCollator(tiny_tokenizer)(as_ids)["probe_input_ids"])
    assert from_text["probe_input_ids"].shape[0] == 2
    probe = copy.deepcopy(t5).requires_grad_(False)
    args = config(tmp_path, max_steps=2, lambda_probe=0.1)
    trainer = IRMProbeTrainer(model=t5, args=args, train_dataset=groups, eval_dataset=groups,
                              processing_class=tiny_tokenizer, probe_model=probe,
                              data_collator=DataCollatorForSeq2Seq(tiny_tokenizer, model=t5))
    trainer.train()
    assert all(entry["probe/loss"] > 0 for entry in trainer.state.log_history if "erm/loss" in entry)
    assert trainer.evaluate()["eval_probe/loss"] > 0


def test_renamed_columns_train_identically_with_hf_collator(_tiny_models, tiny_tokenizer, groups, tmp_path):
    def losses(dataset, **columns):
        model = copy.deepcopy(_tiny_models["t5"])
        trainer = IRMProbeTrainer(model=model, args=config(tmp_path, max_steps=2, **columns), train_dataset=dataset,
                                  processing_class=tiny_tokenizer,
                                  data_collator=DataCollatorForSeq2Seq(tiny_tokenizer, model=model))
        trainer.train()
        return [(e["loss"], e["irm/penalty"]) for e in trainer.state.log_history if "irm/penalty" in e]

    renamed = groups.rename_columns({"environment": "domain", "group_id": "doc", "probe_input_ids": "masked"})
    expected = losses(groups)
    assert len(expected) == 2
    assert losses(renamed, environment_column="domain", group_column="doc", probe_column="masked") == expected


def test_a_probe_weight_without_a_probe_model_is_an_error(t5, tiny_tokenizer, groups, tmp_path):
    with pytest.raises(ValueError, match=r"lambda_probe=0.01 but no probe_model"):
        IRMProbeTrainer(model=t5, args=config(tmp_path, lambda_probe=0.01), train_dataset=groups,
                        processing_class=tiny_tokenizer)
    probe = copy.deepcopy(t5)
    with pytest.raises(ValueError, match=r"needs the column 'probe_input_ids'"):
        IRMProbeTrainer(model=t5, args=config(tmp_path, lambda_probe=0.01), train_dataset=plain(groups),
                        processing_class=tiny_tokenizer, probe_model=probe)
    with pytest.warns(UserWarning, match="lambda_probe is 0: the probe is never used"):
        IRMProbeTrainer(model=t5, args=config(tmp_path), train_dataset=groups, processing_class=tiny_tokenizer,
                        probe_model=probe)


def test_one_environment_under_a_penalty_is_an_error(t5, tiny_tokenizer, groups, tmp_path):
    one = groups.filter(lambda row: row["environment"] == 0)
    trainer = IRMProbeTrainer(model=t5, args=config(tmp_path), train_dataset=one, processing_class=tiny_tokenizer)
    with pytest.raises(ValueError, match=r"training set's 4 rows all have 'environment' = 0"):
        trainer.train()
    IRMProbeTrainer(model=t5, args=config(tmp_path, lambda_irm=0.0), train_dataset=one,
                    processing_class=tiny_tokenizer).train()  # plain ERM on groups: nothing to say


def test_groups_cut_by_a_sample_limit_warn_with_counts(t5, tiny_tokenizer, groups, tmp_path):
    cut = groups.select(range(8))  # HF's max_train_samples=8: the third group loses its last environment
    trainer = IRMProbeTrainer(model=t5, args=config(tmp_path), train_dataset=cut, processing_class=tiny_tokenizer)
    with pytest.warns(UserWarning, match=r"1 of 3 groups \('group_id'\) have fewer environments than the fullest "
                                         r"group's 3 \(0 have only one\)") as record:
        trainer.train()
    assert not [w for w in record if "single environment" in str(w.message)]


def test_batches_of_one_environment_warn_with_counts(t5, tiny_tokenizer, groups, tmp_path):
    # sorted by environment and cut, as `select(range(n))` of an environment-major file does: groups 2 and 3 keep
    # only their first environment, and with one group per batch their batches hold one environment
    by_environment = groups.sort(["environment", "group_id"]).select(range(6))
    trainer = IRMProbeTrainer(model=t5, args=config(tmp_path, per_device_train_batch_size=1),
                              train_dataset=by_environment, processing_class=tiny_tokenizer)
    with pytest.warns(UserWarning) as record:
        trainer.train()
    messages = [str(w.message) for w in record]
    assert any(m.startswith("2 of 4 groups ('group_id') have fewer environments than the fullest group's 2 (2 have "
                            "only one)") for m in messages)
    batches = [m for m in messages if "training batches hold a single environment" in m]
    assert len(batches) == 1 and batches[0].startswith("2 of 4 training batches")

def test_trainer_tags_reach_the_model_card(t5, tiny_tokenizer, groups, tmp_path):
    trainer = IRMProbeTrainer(model=t5, args=config(tmp_path), train_dataset=groups, processing_class=tiny_tokenizer)
    trainer.create_model_card(tags="mine")
    card = (tmp_path / "README.md").read_text()
    for tag in ("mine", "larev", "irm", "rationale-evaluation"):
        assert f"- {tag}\n" in card
    assert set(trainer._tag_names) <= set(t5.model_tags)



def test_the_default_loss_is_per_token_and_the_library_keeps_the_sum(tmp_path):
    from larev_hf.training import TrainSettings
    from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION

    assert IRMProbeConfig(output_dir=str(tmp_path), report_to="none").token_reduction == "mean"
    assert LIBRARY_TOKEN_REDUCTION == "sum"  # the recorded objective of `larev-hf run` and the named recipes
    args = TrainSettings().training_arguments(tmp_path, args_class=IRMProbeConfig)
    assert args.token_reduction == "mean"  # the library's callers pass the sum (checked through a run below)


def test_train_irm_trains_the_library_evaluators_with_the_summed_nll(_tiny_models, tiny_tokenizer, groups, tmp_path):
    from larev_hf.training import IRMArguments, TrainSettings, train_irm
    from larev_hf.training.settings import LIBRARY_TOKEN_REDUCTION

    seen = {}

    class Recording(IRMProbeTrainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen["args"], seen["loss"] = self.args.token_reduction, self.loss_module.token_reduction

    settings = TrainSettings(num_train_epochs=1, batch_size=2, progress=False)
    arguments = IRMArguments(lambda_irm=1.0, token_reduction=LIBRARY_TOKEN_REDUCTION)  # as the library's callers build it
    train_irm(Recording, copy.deepcopy(_tiny_models["t5"]), tiny_tokenizer, groups, tmp_path / "phi_la", settings,
              arguments, 2)
    assert seen == {"args": "sum", "loss": "sum"}


def test_removable_columns_keep_what_the_trainer_reads(tmp_path):
    args = IRMProbeConfig(output_dir=str(tmp_path), report_to="none", environment_column="domain")
    columns = ["document", "summary", "domain", "group_id", "probe_input_ids", "id"]
    assert args.removable_columns(columns) == ["document", "summary", "id"]


def test_the_docs_quick_start_then_evaluate_and_predict(tmp_path, monkeypatch):
    """docs/trainer.md's complete quick start (two steps instead of an epoch), then the Trainer's evaluate() and
    predict() on its environment set: the objective and its parts come back."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "trainer.md").read_text()
    block = next(code for code in re.findall(r"```python\n(.*?)```", page, re.S) if "trainer.train()" in code
                 and "environment_dataset" in code)
    monkeypatch.chdir(tmp_path)
    code = block.replace("num_train_epochs=1,", "max_steps=2, disable_tqdm=True,")
    assert code != block
    namespace: dict = {}
    exec(compile(code, "docs/trainer.md", "exec"), namespace)
    trainer, dataset = namespace["trainer"], namespace["train_dataset"]
    subset = dataset.select(range(24))
    metrics = trainer.evaluate(subset)
    assert metrics["eval_loss"] == pytest.approx(metrics["eval_erm/loss"] + metrics["eval_irm/penalty"], rel=1e-4)
    assert {"eval_env/0/loss", "eval_env/1/loss", "eval_env/2/loss"} <= set(metrics)
    predicted = trainer.predict(subset)
    assert predicted.metrics["test_loss"] == pytest.approx(metrics["eval_loss"], rel=1e-6)
    assert len(predicted.label_ids) == 24


def test_the_batch_size_is_logged_in_groups_and_rows(t5, tiny_tokenizer, groups, tmp_path):
    import logging

    from transformers.utils import logging as hf_logging

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler, logger = Keep(), hf_logging.get_logger("transformers.trainer")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        IRMProbeTrainer(model=t5, args=config(tmp_path), train_dataset=groups, processing_class=tiny_tokenizer).train()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert "  IRM batches: 2 groups per device (about 6 rows); 4 groups of 3.00 rows on average, environments " \
           "[0, 1, 2]" in records
