"""``larev-hf nli-train``: the NLI judge of VARIF's robustness axis (``papers/varif-proposal.md`` §3.1) trained
offline on e-SNLI (:class:`NliTrainArguments`, :func:`nli_train_main`).

The judge itself (:class:`~larev_hf.training.nli_judge.NLIJudge`, :func:`~larev_hf.training.nli_judge.train_nli_judge`)
lives in :mod:`larev_hf.training.nli_judge`, where evaluator bundles can reach it too; it is served here as well, where
VARIF and FRAME use it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.methods.settings import help_field
from larev_hf.training.nli_judge import (
    JUDGE_LABELS,
    METRICS_FILE,
    NLI_BATCH_SIZE,
    NLI_EPOCHS,
    NLI_LEARNING_RATE,
    NLIJudge,
    entailment_index,
    train_esnli_judge,
    train_nli_judge,
)

__all__ = ["JUDGE_LABELS", "METRICS_FILE", "NLIJudge", "NliTrainArguments", "entailment_index", "nli_train_main",
           "train_nli_judge"]

# --------------------------------------------------------------------------- larev-hf nli-train


@dataclass
class NliTrainArguments:
    """``larev-hf nli-train``: train the offline NLI judge on e-SNLI (§3.1)."""

    data_dir: str | None = help_field(None, "an e-SNLI directory in the shared layout (train.jsonl, test.jsonl)",
                                      required=True)
    output_dir: str | None = help_field(None, "where the judge and nli_metrics.json are written", required=True)
    max_train_examples: int | None = help_field(None, "first N train examples (default all)")
    max_eval_examples: int | None = help_field(
        None, "first N test examples to report accuracy on (default all; 0: no evaluation)")
    epochs: float = help_field(NLI_EPOCHS, "training epochs")
    learning_rate: float = help_field(NLI_LEARNING_RATE, "AdamW learning rate")
    batch_size: int = help_field(NLI_BATCH_SIZE, "training batch size")
    seed: int = help_field(0, "seed of the head's init and the data order")
    read_explanations: bool = help_field(
        False, "train (and evaluate) on premises followed by their gold explanation: the judge an evaluator bundle "
        "carries for the finding 'contradicts the label' (larev-hf export --nli-judge)")


def nli_train_main(args: argparse.Namespace, progress: bool) -> int:
    """Train (or load a finished) judge from parsed :class:`NliTrainArguments` flags; print its accuracy on the
    e-SNLI test split and its path."""
    metrics = train_esnli_judge(args.data_dir, args.output_dir, max_train_examples=args.max_train_examples,
                                max_eval_examples=args.max_eval_examples, epochs=args.epochs,
                                learning_rate=args.learning_rate, batch_size=args.batch_size, seed=args.seed,
                                read_explanations=args.read_explanations, progress=progress)
    if "accuracy" in metrics:
        print(f"NLI judge accuracy on {metrics['eval_examples']} e-SNLI test examples: {metrics['accuracy']:.4f}")
    print(f"NLI judge saved to {args.output_dir}")
    return 0
