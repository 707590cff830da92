"""How much of StrategyQA's answer can be learned from its gold facts at this size, with features that are offline.

An evaluator's scores mean something only if it has learned the task (RoRA, Jiang et al. 2024, §3: Φ is trained to
predict y from x and r). On StrategyQA every offline evaluator of the library stayed near the majority class, so
this measures the ceiling any of them could reach: logistic regression (scikit-learn, C chosen by 5-fold
cross-validation on the training split) on

- TF-IDF word 1-2 grams of the question, and of the question with its gold facts;
- the frozen MiniLM-L6 sentence embedding of the same texts (:class:`~larev_hf.varif.specificity.SentenceEmbedder`);
- with ``--fine-tune-epochs N``: the MiniLM-L6 choice classifier that RoRA's classifier variant and the encoder
  evaluators use (:mod:`larev_hf.modeling.choice_classifier`, HF Trainer), fine-tuned on the question with its facts
  for N epochs at the pretrained backbones' learning rate and batch size;

trained on the training split (or its first ``--train-sizes`` rows) and scored on the test split (RoRA's human-study
questions), with a 95% bootstrap interval over test questions, beside always answering the majority class.

    python benchmarks/strategyqa_learnability.py --data-dir ../shared/data/strategyqa \\
        --json benchmarks/results/strategyqa_learnability.json

Internals: ``larev_hf.modeling.choice_classifier`` and ``larev_hf.training.choice_classifier``: it trains the encoder
classifier on StrategyQA outside a run to measure what the task lets a model learn.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from larev_hf.data import load_strategyqa
from larev_hf.io import write_json
from larev_hf.scores import bootstrap_ci
from larev_hf.varif import SentenceEmbedder


def load_split(data_dir: Path, split: str) -> tuple[list[str], list[str], np.ndarray]:
    """The questions, the questions with their gold facts (the library's StrategyQA rationale) and the answers (1 = yes)."""
    records = load_strategyqa(data_dir, split)
    questions = list(records["question"])
    with_facts = [f"{question} {rationale}" for question, rationale in zip(questions, records["rationale"], strict=True)]
    return questions, with_facts, np.array([label == "yes" for label in records["label"]], dtype=int)


def probe(train_features, train_labels: np.ndarray, test_features, test_labels: np.ndarray, seed: int) -> dict:
    """Logistic regression with C chosen by cross-validation; test accuracy with its bootstrap interval."""
    from sklearn.linear_model import LogisticRegressionCV

    warnings.filterwarnings("ignore", category=FutureWarning, module="sklearn")  # parameter defaults changing in 1.10
    model = LogisticRegressionCV(Cs=10, cv=5, max_iter=5000, random_state=seed).fit(train_features, train_labels)
    correct = (model.predict(test_features) == test_labels).astype(float)
    return {"accuracy": float(correct.mean()), "ci95": bootstrap_ci(correct, seed=seed), "C": float(model.C_[0])}


def fine_tuned_classifier(train_texts: list[str], train_labels: np.ndarray, test_texts: list[str],
                          test_labels: np.ndarray, epochs: float, seed: int, output_dir: Path) -> dict:
    """Fine-tune the MiniLM choice classifier (choices "no" / "yes") and score its test accuracy."""
    import time

    from larev_hf.modeling.choice_classifier import build_choice_classifier, choice_rows, gold_log_probs
    from larev_hf.training import TrainSettings
    from larev_hf.training.choice_classifier import train_choice_classifier

    choices = [["no", "yes"]] * len(train_texts)
    answer = ["yes" if label else "no" for label in train_labels]
    model, tokenizer = build_choice_classifier(seed=seed)
    settings = TrainSettings.for_backbone("minilm2minilm", num_train_epochs=epochs, seed=seed)
    start = time.perf_counter()
    model = train_choice_classifier(model, tokenizer, choice_rows(tokenizer, train_texts, choices, answer), output_dir,
                                    settings)
    seconds = time.perf_counter() - start
    test_answer = ["yes" if label else "no" for label in test_labels]
    _, predicted = gold_log_probs(model, tokenizer, test_texts, [["no", "yes"]] * len(test_texts), test_answer)
    correct = (predicted == test_labels).astype(float)
    return {"accuracy": float(correct.mean()), "ci95": bootstrap_ci(correct, seed=seed), "epochs": epochs,
            "learning_rate": settings.learning_rate, "batch_size": settings.batch_size, "train_seconds": seconds,
            "predicted_yes": float(predicted.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data/strategyqa"))
    parser.add_argument("--train-sizes", type=int, nargs="+", default=[800, 1832])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fine-tune-epochs", type=float, default=0.0,
                        help="also fine-tune the MiniLM choice classifier on question + facts (all training rows)")
    parser.add_argument("--output-dir", type=Path, default=Path("runs/strategyqa_learnability"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from sklearn.feature_extraction.text import TfidfVectorizer

    train_q, train_qf, train_y = load_split(args.data_dir, "train")
    test_q, test_qf, test_y = load_split(args.data_dir, "test")
    majority = int(train_y.mean() >= 0.5)
    majority_correct = (test_y == majority).astype(float)
    results: dict = {
        "test_rows": len(test_y), "train_rows": len(train_y),
        "majority": {"answer": "yes" if majority else "no", "accuracy": float(majority_correct.mean())},
        "probes": {},
    }
    embedder = SentenceEmbedder()  # the offline MiniLM-L6 that VARIF's specificity uses (mean-pooled, normalised)
    embeddings = {"question": (embedder.encode(train_q), embedder.encode(test_q)),
                  "question+facts": (embedder.encode(train_qf), embedder.encode(test_qf))}
    texts = {"question": (train_q, test_q), "question+facts": (train_qf, test_qf)}
    for size in args.train_sizes:
        for text_name, (train_texts, test_texts) in texts.items():
            vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit(train_texts[:size])
            tfidf = probe(vectorizer.transform(train_texts[:size]), train_y[:size], vectorizer.transform(test_texts),
                          test_y, args.seed)
            train_emb, test_emb = embeddings[text_name]
            frozen = probe(train_emb[:size], train_y[:size], test_emb, test_y, args.seed)
            for feature, result in (("tfidf", tfidf), ("minilm_frozen", frozen)):
                key = f"{feature}:{text_name}:{size}"
                results["probes"][key] = result
                low, high = result["ci95"]
                print(f"{key:38s} accuracy {result['accuracy']:.3f} [{low:.3f}, {high:.3f}]  (C={result['C']:.3g})")
    if args.fine_tune_epochs:
        size = max(args.train_sizes)
        tuned = fine_tuned_classifier(train_qf[:size], train_y[:size], test_qf, test_y, args.fine_tune_epochs,
                                      args.seed, args.output_dir / f"classifier-seed{args.seed}")
        results["probes"][f"minilm_fine_tuned:question+facts:{size}"] = tuned
        low, high = tuned["ci95"]
        print(f"minilm fine-tuned, question+facts, {size} rows, {tuned['epochs']:g} epochs: accuracy "
              f"{tuned['accuracy']:.3f} [{low:.3f}, {high:.3f}], says 'yes' on {tuned['predicted_yes']:.1%}")
    print(f"majority ({results['majority']['answer']}): {results['majority']['accuracy']:.3f}")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
