"""Whether the NLI judge can learn what a negation does: the ``esnli`` judge (``pairs-all`` of
``benchmarks/nli_judge_size.py``) trained one more epoch on N of its training pairs and N of their explanations with
one negation toggled (the rule-based edits of VARSuite's ``drift``, :func:`larev_hf.data.negation.negation_edits`),
the toggled ones with an unlikelihood loss, −log(1 − p(gold label)): an explanation whose polarity is flipped must
not support the label. Scored as ``nli_judge_size.py`` scores a judge (:func:`nli_judge_size.judge_figures`: the
share of ``label_swap`` and ``drift`` rows named at the gold's 1% and 2% quantiles, by gold label).

It measures a design the ``esnli`` recipe does not ship; docs/findings.md ("What is still missing") cites it. The
toggled explanations are edited by the rule that makes VARSuite's ``drift`` rows, so its ``drift`` figure is the rule
on unseen explanations, not a test of other contradictions.

    python benchmarks/counterfactual_judge.py --data-dir ../shared/data --judges runs/nli-judges --pairs 2000 \\
        --json benchmarks/results/counterfactual_judge.json

A judge already in ``--judges/counterfactual-<N>`` is reused; ``--judges/pairs-all`` is trained as
``nli_judge_size.py`` trains it when missing.

Internals: ``larev_hf.data.negation.negation_edits``, the rule-based edits of VARSuite's ``drift`` (the experiment
trains on them); ``larev_hf.training.nli_judge``'s ``JUDGE_LABELS`` (the judge's head order, which the trained labels
follow), ``METRICS_FILE`` and ``is_finished_judge`` (the trained judge is written and reused as ``larev-hf nli-train``
writes and reuses its own).
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
from nli_judge_size import judge_figures

from larev_hf.data import load_examples
from larev_hf.data.negation import negation_edits
from larev_hf.io import read_json, write_json
from larev_hf.meta import build_suite
from larev_hf.training import NLIJudge, train_esnli_judge
from larev_hf.training.nli_judge import JUDGE_LABELS, METRICS_FILE, explained_premise, is_finished_judge


def counterfactual_pairs(train: list[dict[str, Any]], pairs: int, seed: int = 0) -> dict[str, list]:
    """``pairs`` training pairs read with their explanation, and ``pairs`` others with one negation of it toggled
    (``negative`` 1), drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    kept = set(rng.choice(len(train), size=pairs, replace=False).tolist())
    editable = [(record, edits) for record in train if (edits := negation_edits(record["rationale"]))]
    rows = [(record, record["rationale"], 0) for i, record in enumerate(train) if i in kept]
    for k in rng.choice(len(editable), size=pairs, replace=False):
        record, edits = editable[k]
        rows.append((record, edits[int(rng.integers(len(edits)))][1], 1))
    index = {label: i for i, label in enumerate(JUDGE_LABELS)}
    return {"premises": [explained_premise(r["premise"], text) for r, text, _ in rows],
            "hypotheses": [r["hypothesis"] for r, _, _ in rows],
            "labels": [index[r["label"]] for r, _, _ in rows], "negative": [negative for _, _, negative in rows]}


def train_counterfactual(base: Path, output: Path, pairs: dict[str, list], learning_rate: float = 2e-5) -> None:
    """One epoch of ``base`` on ``pairs``: cross-entropy on the pairs as written, unlikelihood on the toggled ones;
    ``output`` gets the judge and its ``nli_metrics.json`` (it reads explanations; training seconds), as
    ``larev-hf nli-train`` writes them, so ``NLIJudge.from_pretrained`` and ``is_finished_judge`` read it as theirs."""
    import datasets
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )

    class UnlikelihoodTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            negative, labels = inputs.pop("negative").bool(), inputs.pop("labels")
            outputs = model(**inputs)
            log_p = torch.log_softmax(outputs.logits.float(), -1).gather(1, labels[:, None]).squeeze(1)
            loss = torch.where(negative, -torch.log1p(-log_p.exp().clamp(max=1 - 1e-6)), -log_p).mean()
            return (loss, outputs) if return_outputs else loss

    model = AutoModelForSequenceClassification.from_pretrained(base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    encoded = tokenizer(pairs["premises"], pairs["hypotheses"], truncation=True, max_length=128)
    train_set = datasets.Dataset.from_dict({"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"],
                                           "labels": pairs["labels"], "negative": pairs["negative"]})
    args = TrainingArguments(output_dir=str(output) + ".trainer", num_train_epochs=1, learning_rate=learning_rate,
                             per_device_train_batch_size=32, seed=0, report_to=[], save_strategy="no", use_cpu=True,
                             remove_unused_columns=False, disable_tqdm=True, logging_strategy="no")
    trainer = UnlikelihoodTrainer(model=model, args=args, train_dataset=train_set, processing_class=tokenizer,
                                  data_collator=DataCollatorWithPadding(tokenizer))
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    trainer.model.save_pretrained(output)
    tokenizer.save_pretrained(output)
    write_json(output / METRICS_FILE, {"reads_explanations": True, "train_seconds": seconds,
                                       "examples": len(pairs["labels"]), "negatives": sum(pairs["negative"])})
    shutil.rmtree(str(output) + ".trainer", ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the shared data layout (esnli/ under it)")
    parser.add_argument("--judges", type=Path, required=True, help="pairs-all/ and counterfactual-<N>/ live here")
    parser.add_argument("--pairs", type=int, default=2000, help="pairs as written, and as many toggled")
    parser.add_argument("--examples", type=int, default=300, help="test examples whose VARSuite rows are scored")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    base = args.judges / "pairs-all"
    train_esnli_judge(args.data_dir / "esnli", base, max_eval_examples=0, epochs=1.0, read_explanations=True)
    output = args.judges / f"counterfactual-{args.pairs}"
    if not is_finished_judge(output):
        train = [dict(r) for r in load_examples("esnli", args.data_dir / "esnli", "train")]
        train_counterfactual(base, output, counterfactual_pairs(train, args.pairs))
    seconds = round(read_json(output / METRICS_FILE)["train_seconds"], 1)
    test = list(load_examples("esnli", args.data_dir / "esnli", "test", max_examples=args.examples))
    rows = build_suite(test, families=["gold", "label_swap", "drift"])
    result: dict[str, Any] = {"examples": len(test), "pairs": args.pairs, "train_seconds": seconds, "judges": {}}
    for name, directory in (("as built", base), ("counterfactual", output)):
        judge = NLIJudge.from_pretrained(directory, max_length=256)  # its nli_metrics.json: it reads explanations
        result["judges"][name] = figures = judge_figures(judge, rows)
        for budget in ("0.01", "0.02"):
            named = figures[f"gold_budget_{budget}"]
            print(f"{name:>15}, gold budget {budget}: gold accuracy {figures['gold_accuracy']:.3f}, label_swap "
                  f"{named['label_swap']['log_prob']:.3f}, drift {named['drift']['log_prob']:.3f} (with the negation "
                  f"gain {named['drift']['either']:.3f}; by gold label {named['drift']['log_prob_by_gold_label']})")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
