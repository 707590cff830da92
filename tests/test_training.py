"""Plain evaluator training (train_seq2seq): model selection on the validation split."""

from __future__ import annotations

import copy

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
