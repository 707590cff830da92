"""Training: plain evaluators through ``Seq2SeqTrainer``; LAREV's IRM + probe trainer builds on it."""

from larev_hf.training.seq2seq import TrainSettings, save_model_atomically, tokenize_pairs, train_seq2seq

__all__ = ["TrainSettings", "save_model_atomically", "tokenize_pairs", "train_seq2seq"]
