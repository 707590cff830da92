"""Leakage terms t_leak and the environments built from them (thesis §4.5, table 4.2): E1-E3, the counter-label
rewriters, the stop-word guard, the rationale-side environments."""

from __future__ import annotations

import pytest

from larev_hf.data import add_baselines, add_variants, load_examples, make_baseline_builder
from larev_hf.leakage import (
    CounterLabelRewriter,
    IGSettings,
    LeakageTerm,
    make_environments,
    select_leakage_term,
    widen_to_verbalization,
)


@pytest.fixture(scope="module")
def esnli_with_baselines(data_dir):
    dataset = load_examples("esnli", str(data_dir / "esnli"), "train", max_examples=300)
    return add_variants(add_baselines(dataset, make_baseline_builder("template", seed=0))).to_list()


def _label_term(record: dict) -> LeakageTerm:
    from larev_hf.data import label_verbalization

    word = label_verbalization(record).split()[-2 if record["label"] == "neutral" else 0]  # "related" / "implies"
    start = record["baseline"].lower().index(word)
    return LeakageTerm(start, start + len(word), word, 1.0, False)


def test_environments_differ_only_at_the_leakage_term(esnli_with_baselines):
    rewriter = CounterLabelRewriter(seed=0)
    for record in esnli_with_baselines:
        envs = make_environments(record, _label_term(record), "<mask>", rewriter)
        start, end = envs["start"], envs["end"]
        prefix, suffix = record["baseline"][:start], record["baseline"][end:]
        for name in ("original", "mask", "antonym"):
            assert envs[name].startswith(prefix) and envs[name].endswith(suffix)
        assert envs["original"] == record["baseline"]
        assert envs["mask"] == prefix + "<mask>" + suffix
        middle = envs["antonym"][len(prefix) : len(envs["antonym"]) - len(suffix)]
        from larev_hf.data import NLI_VERBALIZERS

        # Widened to the whole gold verbalization, rewritten to another label's verbalization.
        assert envs["term"].lower() == NLI_VERBALIZERS[record["label"]]
        assert middle in [v for label, v in NLI_VERBALIZERS.items() if label != record["label"]]


def test_counter_label_rewrite_for_qa_uses_another_choice():
    record = {"id": "q1", "task": "qa", "label": "bedroom", "choices": ["bedroom", "attic", "kitchen"],
              "baseline": "he put carpeting in the bedroom ."}
    start = record["baseline"].index("bedroom")
    envs = make_environments(record, LeakageTerm(start, start + 7, "bedroom", 1.0, False), "<mask>")
    assert envs["antonym"].replace("attic", "X").replace("kitchen", "X") == "he put carpeting in the X ."
    assert envs["mask"] == "he put carpeting in the <mask> ."
    # Deterministic for a seed.
    assert make_environments(record, LeakageTerm(start, start + 7, "bedroom", 1.0, False), "<mask>") == envs


def test_widen_leaves_terms_outside_the_verbalization_alone():
    record = {"task": "nli", "label": "neutral"}
    baseline = "a dog runs is not related to a cat sleeps ."
    assert widen_to_verbalization(record, baseline, 0, 1) == (0, 1)
    assert widen_to_verbalization(record, baseline, 15, 22) == (11, 28)  # "related" → "is not related to"


def test_stop_word_guard_skips_function_words_and_counts_it():
    text = "the dog implies that it runs"
    spans = [(0, 3), (4, 7), (8, 15), (16, 20), (21, 23), (24, 28)]
    scores = [5.0, 0.1, 3.0, 4.0, 0.2, 0.3]
    guarded = select_leakage_term(text, spans, scores, IGSettings())
    assert guarded.text == "implies" and guarded.guard_fired
    unguarded = select_leakage_term(text, spans, scores, IGSettings(stop_word_guard=False))
    assert unguarded.text == "the" and not unguarded.guard_fired
    # top-k words (after the guard: "implies" 3.0, "runs" 0.3) merge into one span from the first to the last.
    top2 = select_leakage_term(text, spans, scores, IGSettings(top_k=2))
    assert top2.text == "implies that it runs"
    # A minimum score stops the search; with nothing left the top word is still returned.
    assert select_leakage_term(text, spans, scores, IGSettings(top_k=2, min_score=1.0)).text == "implies"
    assert select_leakage_term(text, spans, scores, IGSettings(min_score=10.0)).text == "the"


def test_hf_rewriter_keeps_the_context_or_falls_back(tiny_model, tiny_tokenizer, tmp_path):
    """A model that does not return the baseline with only the term changed is not trusted: the counter-label
    substitution is used and counted, so E3 still differs from E1 only at t_leak."""
    from larev_hf.leakage import HFRewriter
    from larev_hf.modeling import save_evaluator

    save_evaluator(tiny_model, tiny_tokenizer, tmp_path / "rewriter")
    rewriter = HFRewriter(str(tmp_path / "rewriter"), max_new_tokens=8, device="cpu")
    record = {"id": "q1", "task": "qa", "question": "where is it kept ?", "label": "kitchen",
              "choices": ["kitchen", "garage"], "baseline": "the blorvex is kept in the kitchen ."}
    start = record["baseline"].index("kitchen")
    envs = make_environments(record, LeakageTerm(start, start + 7, "kitchen", 1.0, False), "<mask>", rewriter)
    assert envs["antonym"] == "the blorvex is kept in the garage ."  # a random-init model cannot do it: fallback
    assert rewriter.fallbacks == 1 and rewriter.to_config()["fallbacks"] == 1


def test_rationale_environments_mask_and_swap_only_the_stated_answer():
    from larev_hf.leakage import rationale_environments

    example = {"id": "q1", "label": "bus depot", "choices": ["bus depot", "train station", "bridge"],
               "rationale": "Bus depot: people wait at a bus depot, not at busdepots."}
    envs = rationale_environments(example, "<mask>", seed=0)
    assert envs["rationale_mask"] == "<mask>: people wait at a <mask>, not at busdepots."
    counter = envs["rationale_swap"].split(":")[0]
    assert counter in ("train station", "bridge")
    assert envs["rationale_swap"] == f"{counter}: people wait at a {counter}, not at busdepots."
    assert rationale_environments(example, "<mask>", seed=0) == envs  # drawn by (seed, id)
    whole_words = {**example, "label": "table", "choices": ["table", "desk"], "rationale": "tables and a tablet."}
    assert set(rationale_environments(whole_words, "<mask>").values()) == {"tables and a tablet."}
