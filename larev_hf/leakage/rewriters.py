"""Rewriters for the antonym environment E3: replace t_leak by a counter-label term (thesis §4.5.2, table 4.2).

The thesis used an LLM with the prompt of appendix C.2. Offline, :class:`CounterLabelRewriter`
substitutes another label's verbalization (NLI: implies ↔ contradicts ↔ is not related to; QA:
another answer choice, as bedroom → attic; yes/no: the other answer), with a small antonym
lexicon as the fallback. :class:`HFRewriter` runs any HF text2text model with the thesis's prompt.
"""

from __future__ import annotations

import random
from typing import Protocol

from larev_hf.data.vacuous import label_verbalization as gold_verbalization
from larev_hf.modeling.backbones import resolve_device

ANTONYMS = {
    "implies": "contradicts", "contradicts": "implies", "entails": "contradicts", "means": "denies", "suggests": "denies",
    "not": "indeed", "related": "opposed", "unrelated": "related", "yes": "no", "no": "yes", "true": "false",
    "false": "true", "can": "cannot", "cannot": "can", "always": "never", "never": "always", "is": "is not",
    "are": "are not", "will": "will not", "does": "does not", "did": "did not", "has": "lacks",
}

ANTONYM_PROMPT = """Please change the masked part of the following sentence with an antonym.
Do not change any other part of the sentence except the masked part.
Output only a single sentence.

Question context: {question}

Original answer: {answer}

Masked sentence: {masked_sentence}

The masked term to be changed: {term}

Antonym version:"""


class Rewriter(Protocol):
    """Rewrites an example's baseline ``prefix + term + suffix`` into its E3 sentence (t_leak → counter term)."""

    def rewrite(self, example: dict, prefix: str, term: str, suffix: str) -> str: ...

    def to_config(self) -> dict: ...


def label_verbalization(example: dict, label: str) -> str:
    """How ``label`` (the gold one or any other of the example's choices) is written in a baseline."""
    return gold_verbalization({**example, "label": label})


class CounterLabelRewriter:
    """Offline E3: the term becomes another label's verbalization when it is (part of) the gold one.

    Args:
        seed (`int`, *optional*, defaults to 0): picks the counter label per example (with the example id).
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def replacement(self, example: dict, term: str) -> str:
        gold = label_verbalization(example, example["label"]).lower()
        others = [c for c in example["choices"] if c != example["label"]]
        if others and term.lower().strip() == gold:
            counter = random.Random(f"{self.seed}:{example['id']}").choice(others)
            return label_verbalization(example, counter)
        return ANTONYMS.get(term.lower(), f"not {term}")

    def rewrite(self, example: dict, prefix: str, term: str, suffix: str) -> str:
        """The baseline with only ``term`` replaced (see :meth:`replacement`)."""
        return f"{prefix}{self.replacement(example, term)}{suffix}"

    def to_config(self) -> dict:
        return {"name": "counter_label", "seed": self.seed}


class HFRewriter:
    """E3 by any HF text2text model given the thesis's prompt (appendix C.2); greedy decoding, so deterministic.

    The thesis asks the model to change only the masked term. An output that does not keep the
    baseline's text before and after t_leak is not used: the counter-label substitution is, and
    ``fallbacks`` counts how often, so E1/E2/E3 still differ only at t_leak.
    """

    def __init__(self, model_name_or_path: str, max_new_tokens: int = 64, device: str | None = None, seed: int = 0) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


        self.name = model_name_or_path
        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path).to(resolve_device(device)).eval()
        self.max_new_tokens = max_new_tokens
        self.fallback = CounterLabelRewriter(seed=seed)
        self.fallbacks = 0

    def rewrite(self, example: dict, prefix: str, term: str, suffix: str) -> str:
        prompt = ANTONYM_PROMPT.format(
            question=example.get("question") or f"{example.get('premise', '')} {example.get('hypothesis', '')}".strip(),
            answer=example["label"], masked_sentence=f"{prefix}<mask>{suffix}", term=term,
        )
        inputs = self.tokenizer(prompt, return_tensors="pt", truncation=True).to(self.model.device)
        output = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        sentence = self.tokenizer.decode(output[0], skip_special_tokens=True).strip()
        head, tail = prefix.strip(), suffix.strip()
        middle = sentence[len(head) : len(sentence) - len(tail)].strip() if len(sentence) >= len(head) + len(tail) else ""
        if sentence.startswith(head) and sentence.endswith(tail) and middle and middle.lower() != term.lower():
            return f"{prefix}{middle}{suffix}"
        self.fallbacks += 1
        return self.fallback.rewrite(example, prefix, term, suffix)

    def to_config(self) -> dict:
        return {"name": "hf", "model": self.name, "max_new_tokens": self.max_new_tokens, "fallbacks": self.fallbacks}
