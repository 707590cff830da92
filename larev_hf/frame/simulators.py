"""FRAME's simulators: G (control, x → label) and H (treatment, x ⊕ r → label) of each RLC metric, and how the
task model F's labels are read (``papers/frame.txt`` §2.2, §3.3; :mod:`larev_hf.frame.run` trains and uses them).

Trained pairs read labels with :func:`~larev_hf.explain.choices.choice_log_probs` (the most probable of the record's
choices); F-GOLD's pair is F itself (:class:`~larev_hf.explain.task_model.SelfRationalizer`), which generates its
label. torch and transformers load inside the methods that need them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer

from larev_hf.explain.choices import augmented_input, choice_log_probs
from larev_hf.explain.task_model import SelfRationalizer, check_label_decoding, parse_outputs
from larev_hf.frame.meta_metrics import accuracy, phi
from larev_hf.meta.family_registry import example_rng
from larev_hf.modeling import build_model, build_tokenizer, load_evaluator
from larev_hf.modeling.input_formats import task_text
from larev_hf.modeling.scoring import generate_texts
from larev_hf.training import TrainSettings, train_seq2seq

#: Tokens F may generate for a label alone (its label comes before the separator; the rationale is not needed).
LABEL_TOKENS = 24


def generate_labels(model: Any, tokenizer: Any, inputs: Sequence[str], records: Sequence[Mapping[str, Any]],
                    batch_size: int = 64, max_new_tokens: int = LABEL_TOKENS,
                    label_decoding: str = "generate") -> tuple[list[str], list[bool]]:
    """The label a self-rationalizing F gives each input and whether it was repaired: generated (greedy, batched as
    :meth:`~larev_hf.explain.task_model.SelfRationalizer.predict`), parsed and repaired to the nearest of the record's
    choices, or (``label_decoding="score"``) ranked over the choices
    (:meth:`~larev_hf.explain.task_model.SelfRationalizer.score_labels`, never repaired)."""

    check_label_decoding(label_decoding)
    if label_decoding == "score":
        return SelfRationalizer(model, tokenizer).score_labels(inputs, records, batch_size), [False] * len(inputs)
    outputs = generate_texts(model, tokenizer, inputs, batch_size=batch_size, max_new_tokens=max_new_tokens)
    predictions, repaired = parse_outputs(outputs, records)
    return [p["label"] for p in predictions], repaired


#: What H may read in training (``--h-rationales``): the gold rationale ṙ, or the label H is trained to predict
#: stated alone (ẏ for GH-GOLD, ŷ for GH-PRED and NP-GH-PRED).
H_RATIONALES: tuple[str, ...] = ("gold", "label")


def check_h_rationales(kinds: Sequence[str]) -> None:
    """Refuse an empty ``--h-rationales`` or a kind that is not in :data:`H_RATIONALES`, naming the flag."""
    unknown = [kind for kind in kinds if kind not in H_RATIONALES]
    if unknown or not kinds:
        raise ValueError(f"--h-rationales: {unknown or 'none given'}; expected some of {', '.join(H_RATIONALES)}")


def h_training_rationales(records: Sequence[Mapping[str, Any]], targets: Sequence[str], kinds: Sequence[str],
                          seed: int) -> list[str]:
    """H's training rationale per record: one of ``kinds`` (:data:`H_RATIONALES`) drawn uniformly by a generator
    seeded by (seed, example id), so the mix is the same for every metric and variant of one seed. FRAME's Fig. 4
    leaves H's rationale open among r̂, ẏ, ṙ, ŷ; an H that never reads a stated label sees r = ŷ out of distribution
    (measured: docs/frame.md, "A first e-SNLI run, and why it is not yet the paper's tables"), one that only reads
    labels learns nothing about rationales."""

    check_h_rationales(kinds)
    texts = []
    for record, target in zip(records, targets, strict=True):
        kind = kinds[int(example_rng(seed, record["id"], "frame-h").integers(len(kinds)))] if len(kinds) > 1 else kinds[0]
        texts.append(record["rationale"] if kind == "gold" else target)
    return texts


class SimulatorPair:
    """G (control: x → label) and H (treatment: x ⊕ r → label) of one RLC metric.

    Trained pairs (GH-GOLD, GH-PRED, NP-GH-PRED) predict the most probable of the record's choices
    (:func:`~larev_hf.explain.choices.choice_log_probs`); F-GOLD's pair is F itself (``generative``), predicting the label
    it generates. H is trained on x ⊕ ṙ, the gold rationale: FRAME's Fig. 4 says only that H reads "some rationale
    (one of r̂, ẏ, ṙ, ŷ)"; ṙ is the rationale every metric has without F, so GH-GOLD's H does not depend on F either.
    """

    def __init__(self, metric: str, control: Any, treatment: Any, tokenizer: Any, generative: bool = False,
                 batch_size: int = 64, label_decoding: str = "generate") -> None:
        self.metric = metric
        self.label_decoding = label_decoding
        self.control = control
        self.treatment = treatment
        self.tokenizer = tokenizer
        self.generative = generative
        self.batch_size = batch_size
        #: Per call of :meth:`predict` on a generative pair: whether each generated label was repaired.
        self.last_repaired: list[bool] = []

    @classmethod
    def of_task_model(cls, task_model: Any, metric: str = "f_gold", label_decoding: str = "generate") -> SimulatorPair:
        """F-GOLD's pair: G = F(x), H = F(x ⊕ r) (a :class:`~larev_hf.explain.task_model.SelfRationalizer`), reading
        labels as F's predictions are read (``label_decoding``)."""
        return cls(metric, task_model.model, task_model.model, task_model.tokenizer, generative=True,
                   label_decoding=label_decoding)

    @classmethod
    def train(cls, metric: str, records: Sequence[Mapping[str, Any]], directory: str | os.PathLike,
              targets: Sequence[str], backbone: str, settings: Any = None, seed: int = 0,
              h_rationales: Sequence[str] = ("gold",)) -> SimulatorPair:
        """Train G on x → target and H on x ⊕ r → target into ``directory/{G,H}`` (one tokenizer,
        ``directory/tokenizer``; both from the same initial weights); a finished model is kept. H's r per record is
        drawn from ``h_rationales`` (:func:`h_training_rationales`): the gold ṙ, the target label, or both."""

        targets = list(targets)
        if len(targets) != len(records):
            raise ValueError(f"got {len(targets)} targets for {len(records)} records")
        directory = Path(directory)
        settings = settings or TrainSettings(seed=seed, progress=False)
        tokenizer_dir = directory / "tokenizer"
        if (tokenizer_dir / "tokenizer_config.json").is_file():
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        else:
            texts = [task_text(r) for r in records] + [r["rationale"] for r in records]
            texts += [choice for r in records for choice in r["choices"]]
            tokenizer = build_tokenizer(backbone, texts)
            tokenizer.save_pretrained(tokenizer_dir)
        rationales = h_training_rationales(records, targets, h_rationales, seed)
        sources = {"G": [task_text(r) for r in records],
                   "H": [augmented_input(r, text) for r, text in zip(records, rationales, strict=True)]}
        for name, texts in sources.items():
            if not (directory / name / "config.json").is_file():
                train_seq2seq(build_model(backbone, tokenizer, seed=seed), tokenizer, texts, targets,
                              directory / name, settings)
        return cls.load(metric, directory)

    @classmethod
    def load(cls, metric: str, directory: str | os.PathLike, device: str | None = None) -> SimulatorPair:
        """A trained pair saved by :meth:`train`."""

        control, tokenizer = load_evaluator(Path(directory) / "G", device=device)
        treatment, _ = load_evaluator(Path(directory) / "H", device=device)
        return cls(metric, control, treatment, tokenizer)

    def predict(self, model: Any, inputs: Sequence[str], records: Sequence[Mapping[str, Any]],
                targets: Sequence[str] | None = None) -> list[str]:
        """One of the record's choices per input."""
        if self.generative:
            labels, self.last_repaired = generate_labels(model, self.tokenizer, inputs, records, self.batch_size,
                                                         label_decoding=self.label_decoding)
            return labels

        return choice_log_probs(model, self.tokenizer, inputs, records, targets, self.batch_size)[1]

    def control_predictions(self, records: Sequence[Mapping[str, Any]],
                            targets: Sequence[str] | None = None) -> list[str]:
        """G's label for each x."""

        return self.predict(self.control, [task_text(r) for r in records], records, targets)

    def treatment_predictions(self, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                              targets: Sequence[str] | None = None) -> list[str]:
        """H's label for each x ⊕ r."""

        inputs = [augmented_input(r, t) for r, t in zip(records, rationales, strict=True)]
        return self.predict(self.treatment, inputs, records, targets)

    def control_accuracy(self, records: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> float:
        """𝟙_G(ŷ|x) in percent, ``targets`` = ŷ."""
        return accuracy(self.control_predictions(records, targets), list(targets))

    def treatment_accuracy(self, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                           targets: Sequence[str]) -> float:
        """𝟙_H(ŷ|x,r) in percent, ``targets`` = ŷ."""
        return accuracy(self.treatment_predictions(records, rationales, targets), list(targets))

    def phi_scores(self, records: Sequence[Mapping[str, Any]], rationales: Mapping[str, Sequence[str]],
                   targets: Sequence[str]) -> dict[str, float]:
        """Φ(r) = 𝟙_H(ŷ|x,r) − 𝟙_G(ŷ|x) per rationale type (``{type: [r_i]}``)."""
        control = self.control_accuracy(records, targets)
        return {kind: phi(self.treatment_accuracy(records, texts, targets), control)
                for kind, texts in rationales.items()}


class Simulators:
    """The simulator pairs of the RLC metrics for one task model F (metric → :class:`SimulatorPair`)."""

    def __init__(self, pairs: Mapping[str, SimulatorPair]) -> None:
        self.pairs = dict(pairs)

    def __getitem__(self, metric: str) -> SimulatorPair:
        return self.pairs[metric]

    def __contains__(self, metric: object) -> bool:
        return metric in self.pairs

    def control_accuracy(self, metric: str, records: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> float:
        """𝟙_G(ŷ|x) of ``metric``."""
        return self.pairs[metric].control_accuracy(records, targets)

    def treatment_accuracy(self, metric: str, records: Sequence[Mapping[str, Any]], rationales: Sequence[str],
                           targets: Sequence[str]) -> float:
        """𝟙_H(ŷ|x,r) of ``metric``."""
        return self.pairs[metric].treatment_accuracy(records, rationales, targets)

    def phi_scores(self, metric: str, records: Sequence[Mapping[str, Any]], rationales: Mapping[str, Sequence[str]],
                   targets: Sequence[str]) -> dict[str, float]:
        """Φ per rationale type of ``metric``."""
        return self.pairs[metric].phi_scores(records, rationales, targets)
