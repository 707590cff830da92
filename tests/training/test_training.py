"""Plain evaluator training (train_seq2seq): model selection on the validation split."""

from __future__ import annotations

import copy

import numpy as np

from larev_hf.modeling import load_evaluator, score_labels
from larev_hf.training import TrainSettings, train_seq2seq

SOURCES = ["a man walks implies a person moves .", "two kids play contradicts the kids sleep ."] * 16
TARGETS = ["entailment", "contradiction"] * 16


def test_select_on_validation_keeps_the_epoch_with_the_lowest_validation_loss(tiny_model, tiny_tokenizer, tmp_path):
    """Validation labels opposite to the training ones: their loss grows with training, so model selection keeps an
    early epoch, whose validation loss is lower than the last epoch's (what training without selection saves)."""
    flipped = ["contradiction" if t == "entailment" else "entailment" for t in TARGETS]
    settings = TrainSettings(learning_rate=5e-3, num_train_epochs=4, batch_size=8, progress=False)
    last = train_seq2seq(copy.deepcopy(tiny_model), tiny_tokenizer, SOURCES, TARGETS, tmp_path / "last", settings)
    train_seq2seq(copy.deepcopy(tiny_model), tiny_tokenizer, SOURCES, TARGETS, tmp_path / "best", settings,
                  eval_sources=SOURCES, eval_targets=flipped)
    best, _ = load_evaluator(tmp_path / "best", device="cpu")
    last.eval()
    flipped_nll = {name: -score_labels(model, tiny_tokenizer, SOURCES, flipped).sum.mean()
                   for name, model in (("best", best), ("last", last))}
    assert flipped_nll["best"] < flipped_nll["last"] - 0.1
    assert not (tmp_path / "best.checkpoints").exists()


def test_resume_skips_a_checkpoint_interrupted_mid_write(tmp_path):
    """A run killed while the Trainer writes checkpoint-26 leaves it without trainer_state.json (written last):
    resuming uses checkpoint-13 and removes the partial one."""
    from larev_hf.training.seq2seq import last_complete_checkpoint

    for step, complete in ((13, True), (26, False)):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"weights")
        if complete:
            (folder / "trainer_state.json").write_text("{}")
    assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-13")
    assert not (tmp_path / "checkpoint-26").exists()
    (tmp_path / "checkpoint-13" / "trainer_state.json").unlink()
    assert last_complete_checkpoint(tmp_path) is None and last_complete_checkpoint(tmp_path / "absent") is None


def test_length_grouped_sampler_cuts_padding_and_keeps_the_epoch_random() -> None:
    """Every row once per epoch, in DataLoader batches of similar length whose order is random (not the longest
    first of HF's sampler), reproducible per (seed, epoch) and different across epochs."""
    from larev_hf.training import LengthGroupedShuffledSampler

    lengths = list(np.random.default_rng(0).integers(3, 100, size=203))
    sampler = LengthGroupedShuffledSampler(lengths, batch_size=8, seed=1, megabatch_batches=10)
    orders = {}
    for epoch in (0, 1):
        sampler.set_epoch(epoch)
        orders[epoch] = list(sampler)
        assert sorted(orders[epoch]) == list(range(203))
        batches = [orders[epoch][i : i + 8] for i in range(0, 203, 8)]
        padded = sum(max(lengths[i] for i in batch) * len(batch) for batch in batches)
        random_order = np.random.default_rng(epoch).permutation(203)
        padded_random = sum(max(lengths[i] for i in random_order[s : s + 8]) * len(random_order[s : s + 8])
                            for s in range(0, 203, 8))
        assert padded < 0.8 * padded_random
        longest = [max(lengths[i] for i in batch) for batch in batches[:-1]]
        assert longest != sorted(longest, reverse=True)
        assert list(sampler) == orders[epoch]
    assert orders[0] != orders[1]


def test_group_by_length_reaches_the_trainers_sampler(tiny_model, tiny_tokenizer, tmp_path) -> None:
    """``TrainSettings(group_by_length=True)`` → the evaluator trainer samples with the shuffled length-grouped
    sampler over the rows' input lengths; the default keeps HF's random sampler."""
    from transformers import DataCollatorForSeq2Seq

    from larev_hf.training import EvaluatorTrainer, LengthGroupedShuffledSampler, tokenize_pairs

    dataset = tokenize_pairs(tiny_tokenizer, SOURCES, TARGETS)
    for grouped in (True, False):
        settings = TrainSettings(batch_size=4, progress=False, group_by_length=grouped)
        trainer = EvaluatorTrainer(model=tiny_model, args=settings.training_arguments(tmp_path / str(grouped)),
                                   train_dataset=dataset, processing_class=tiny_tokenizer,
                                   data_collator=DataCollatorForSeq2Seq(tiny_tokenizer, model=tiny_model))
        sampler = trainer._get_train_sampler()
        assert isinstance(sampler, LengthGroupedShuffledSampler) == grouped
        if grouped:
            assert sampler.lengths == [len(ids) for ids in dataset["input_ids"]] and sampler.batch_size == 4


def test_freeze_word_embeddings_trains_everything_but_the_word_embeddings(tiny_model, tiny_tokenizer, tmp_path) -> None:
    """``TrainSettings(freeze_word_embeddings=True)``: after training the saved model's word embeddings equal the
    starting ones while its layers moved; without it the embeddings move too."""
    import torch

    start = copy.deepcopy(tiny_model)
    start_weights = dict(start.named_parameters())
    for freeze in (True, False):
        settings = TrainSettings(learning_rate=5e-3, num_train_epochs=1, batch_size=8, progress=False,
                                 freeze_word_embeddings=freeze)
        train_seq2seq(copy.deepcopy(start), tiny_tokenizer, SOURCES, TARGETS, tmp_path / str(freeze), settings)
        trained, _ = load_evaluator(tmp_path / str(freeze), device="cpu")
        embeddings_kept = torch.equal(trained.get_input_embeddings().weight, start.get_input_embeddings().weight)
        assert embeddings_kept == freeze
        moved = [name for name, weight in trained.named_parameters()
                 if not torch.equal(weight, start_weights[name])]
        assert any("layer" in name or "layers" in name for name in moved), moved


def test_a_report_names_the_training_shortcuts_it_was_run_with() -> None:
    """report.md says when the evaluators were trained with LoRA or frozen word embeddings, and only then."""
    from larev_hf.report import render_markdown

    base = {"dataset": "esnli", "split": "test", "n_examples": 3, "methods": {}}
    plain = render_markdown({**base, "settings": {"lora": False, "freeze_word_embeddings": False}})
    frozen = render_markdown({**base, "settings": {"lora": False, "freeze_word_embeddings": True}})
    both = render_markdown({**base, "settings": {"lora": True, "freeze_word_embeddings": True}})
    assert "--freeze-word-embeddings" not in plain and "Trained with" not in plain
    assert "Trained with `--freeze-word-embeddings`" in frozen
    assert "`--lora` and `--freeze-word-embeddings`" in both


def test_the_run_flag_reaches_the_training_settings_and_the_recorded_config() -> None:
    """``--freeze-word-embeddings`` sets the run's TrainSettings (every trained model of the run uses them) and is
    recorded in the run's settings, where the report finds it."""
    from larev_hf.cli import build_parser
    from larev_hf.pipeline import RunConfig

    parsed = build_parser().parse_args(["run", "--dataset", "synthetic", "--output-dir", "x", "--freeze-word-embeddings"])
    config = RunConfig(method="rev", dataset="synthetic", freeze_word_embeddings=parsed.freeze_word_embeddings)
    assert config.train_settings(progress=False).freeze_word_embeddings is True
    assert config.to_dict()["freeze_word_embeddings"] is True
    assert RunConfig(method="rev", dataset="synthetic").train_settings(progress=False).freeze_word_embeddings is False
