"""Tests of ``larev_hf.meta``: the VARSuite families (VARIF §4) and the meta-evaluation statistics (§6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, mannwhitneyu
from sklearn.metrics import roc_auc_score

from larev_hf.data import load_examples, make_baseline_builder, make_example, validate_example
from larev_hf.io import DataError
from larev_hf.meta import (
    DEFAULT_FAMILIES,
    EXPECTED_ORDER,
    FAMILIES,
    ROW_KEYS,
    TEMPLATES,
    auc,
    auc_ci,
    build_suite,
    build_suite_with_skips,
    content_words,
    drift_family,
    is_negation_edit,
    kendall_tau_b,
    load_suite,
    load_user_family,
    mean_separation,
    negation_edits,
    paired_win_rate,
    register_family,
    summarize_method,
    template_family,
    write_suite,
)

KINDS = {"esnli": "nli", "cose": "qa", "strategyqa": "yesno"}
TEMPLATED = ("vacuous", "leak", "circular", "pseudo_specific")


def _constructed() -> list[dict]:
    return [
        make_example(id="n1", task="nli", premise="A man in a red hat is playing guitar in Paris.",
                     hypothesis="A musician performs outside.", choices=("entailment", "neutral", "contradiction"),
                     label="entailment", rationale="a man playing guitar is a musician and he is not inside ."),
        make_example(id="q1", task="qa", question="Where would you keep a blorvex spice?",
                     choices=["kitchen", "garage", "garden"], label="kitchen",
                     rationale="Spices are kept in the kitchen."),
        make_example(id="y1", task="yesno", question="Would the top of Mount Fuji stick out of the Sea of Japan?",
                     choices=("yes", "no"), label="yes", rationale="Mount Fuji is taller than the sea is deep."),
    ]


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> dict[str, list[dict]]:
    """40 real test examples per task (e-SNLI, CoS-E, StrategyQA)."""
    return {KINDS[kind]: load_examples(kind, str(data_dir / kind), "test", max_examples=40).to_list()
            for kind in KINDS}


@pytest.fixture(scope="module")
def suites(samples: dict[str, list[dict]]) -> dict[str, tuple[list[dict], dict[str, list[str]]]]:
    return {task: build_suite_with_skips(records, seed=0) for task, records in samples.items()}


@pytest.fixture
def registry():
    """Restore the family registry after a test that registers families."""
    families, templates = dict(FAMILIES), {k: dict(v) for k, v in TEMPLATES.items()}
    yield
    FAMILIES.clear()
    FAMILIES.update(families)
    TEMPLATES.clear()
    TEMPLATES.update(templates)


def _rows(suites, task: str, family: str) -> list[dict]:
    return [row for row in suites[task][0] if row["family"] == family]


# --------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auc_matches_sklearn_and_mannwhitney_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold, family = rng.integers(0, 6, size=37).astype(float), rng.integers(0, 5, size=53).astype(float)
    expected = roc_auc_score(np.r_[np.ones(37), np.zeros(53)], np.r_[gold, family])
    assert auc(gold, family) == pytest.approx(expected, abs=1e-12)
    assert auc(gold, family) == pytest.approx(mannwhitneyu(gold, family).statistic / (37 * 53), abs=1e-12)
    assert auc([1.0, 1.0], [1.0, 1.0, 1.0]) == 0.5
    assert auc([2.0, 3.0], [0.0, 1.0]) == 1.0 and auc([0.0], [1.0]) == 0.0


def test_auc_ci_bootstrap() -> None:
    rng = np.random.default_rng(0)
    gold, family = rng.normal(1.0, 1.0, 80), rng.normal(0.0, 1.0, 60)
    low, high = auc_ci(gold, family, n_boot=400, seed=3)
    assert 0.0 <= low < auc(gold, family) < high <= 1.0
    assert auc_ci(gold, family, n_boot=400, seed=3) == (low, high)
    assert auc_ci(gold, family, n_boot=400, seed=4) != (low, high)
    assert auc_ci([2.0, 3.0], [0.0, 1.0], n_boot=50) == (1.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        auc_ci([1.0, float("nan")], [0.0])


def test_paired_win_rate_counts_ties_half() -> None:
    gold, family = [1.0, 2.0, 3.0, 4.0], [0.0, 2.0, 5.0, 4.0]  # win, tie, loss, tie
    assert paired_win_rate(gold, family) == 0.5
    assert paired_win_rate([1.0, 1.0], [1.0, 1.0]) == 0.5
    assert mean_separation(gold, family) == pytest.approx(-0.25)
    with pytest.raises(ValueError, match="equal lengths"):
        paired_win_rate([1.0], [1.0, 2.0])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kendall_tau_b_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = ["gold", "pseudo_specific", "vacuous", "leak", "circular"]
    means = dict(zip(names, rng.normal(size=5).round(1), strict=True))
    expected = kendalltau([means[f] for f in means], [2, 1, 0, 0, 0], variant="b").statistic
    assert kendall_tau_b(means) == pytest.approx(expected)
    assert kendall_tau_b(means, EXPECTED_ORDER) == kendall_tau_b(means, ["gold", "pseudo_specific",
                                                                         {"vacuous", "leak", "circular"}])


def test_kendall_tau_b_direction_and_errors() -> None:
    good = {"gold": 3.0, "pseudo_specific": 2.0, "vacuous": 1.0, "leak": 0.5, "circular": 0.0, "drift": 9.0}
    bad = {"gold": 0.0, "pseudo_specific": 1.0, "vacuous": 2.0, "leak": 3.0, "circular": 4.0}
    assert 0.8 < kendall_tau_b(good) < 1.0  # the tied bottom tier caps τ-b below 1; drift is not ranked
    assert kendall_tau_b(bad) == pytest.approx(-kendall_tau_b(good))
    assert kendall_tau_b({"gold": 1.0, "leak": 0.0}) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least two"):
        kendall_tau_b({"gold": 1.0})
    with pytest.raises(ValueError, match="twice"):
        kendall_tau_b(good, ["gold", ("gold", "leak")])


def test_summarize_method_pairs_by_id() -> None:
    ids = [f"e{i}" for i in range(10)]
    gold = np.arange(10, dtype=float)
    drift_ids = ids[::-1][:6]  # another order, and four examples skipped
    drift = np.array([gold[ids.index(i)] - 1 for i in drift_ids])  # always one below its own gold
    leak = gold + 5  # always above gold: the worst family
    scores = {"gold": gold, "drift": drift, "leak": leak, "vacuous": np.zeros(10), "gold_leaky": gold + 9}
    id_map = {"gold": ids, "drift": drift_ids, "leak": ids, "vacuous": ids, "gold_leaky": ids}
    summary = summarize_method(scores, id_map, n_boot=100, seed=0)
    d = summary["families"]["drift"]
    assert d["n"] == 6 and d["win_rate"] == 1.0 and d["mean_separation"] == pytest.approx(1.0)
    assert d["auc"] == auc(gold[4:], drift)  # AUC uses only the ids the family kept
    assert summary["families"]["leak"]["win_rate"] == 0.0
    assert summary["worst_family"] == "leak"  # gold_leaky scores even higher but is left out by default
    assert summary["worst_auc"] == summary["families"]["leak"]["auc"]
    assert summary["family_means"]["vacuous"] == 0.0
    assert summary["tau_b"] == pytest.approx(kendall_tau_b(summary["family_means"]))
    json.dumps(summary)  # JSON-ready
    with pytest.raises(ValueError, match="duplicate"):
        summarize_method({"gold": [1.0, 2.0]}, {"gold": ["a", "a"]})


# --------------------------------------------------------------------------- suite families


def test_templates_are_varied_and_render() -> None:
    for family in TEMPLATED:
        for task, labels in (("nli", ("entailment", "neutral", "contradiction")), ("qa", ("kitchen",)),
                             ("yesno", ("yes", "no"))):
            templates = TEMPLATES[family][task]
            assert len(set(templates)) >= 5
            for template in templates:
                text = template.format(label=labels[0], relation="entails", truth="true", entity="Paris")
                if family == "leak":
                    assert "{label}" in template
                if family in ("vacuous", "pseudo_specific"):
                    assert not re.search(rf"\b({'|'.join(labels)})\b", text, re.IGNORECASE)


def test_every_family_a_to_d_uses_five_templates_per_task(suites) -> None:
    for task in KINDS.values():
        for family in TEMPLATED:
            used = {row["template_id"] for row in _rows(suites, task, family)}
            assert len(used) >= 5, (task, family, used)
            assert all(t.startswith(f"{family}:{task}:") for t in used)


def test_leak_names_its_label_and_adversarial_families_keep_gold_label(suites) -> None:
    for task in KINDS.values():
        for row in _rows(suites, task, "leak"):
            assert row["label_used"] in row["rationale"]
        for family in ("vacuous", "leak", "circular", "pseudo_specific", "drift", "gold_leaky"):
            assert all(row["label_used"] == row["gold_label"] for row in _rows(suites, task, family))
        for family in ("vacuous", "pseudo_specific"):
            if task != "qa":  # NLI and yes/no labels are closed words a template could state
                labels = "|".join(suites[task][0][0]["choices"])
                assert not any(re.search(rf"\b({labels})\b", row["rationale"]) for row in _rows(suites, task, family))


def test_drift_is_exactly_one_negation_edit(samples, suites) -> None:
    for task, records in samples.items():
        gold = {record["id"]: record["rationale"] for record in records}
        rows, skipped = suites[task]
        drift = _rows(suites, task, "drift")
        assert drift and len(drift) + len(skipped["drift"]) == len(records)
        for row in drift:
            assert row["rationale"] != gold[row["id"]]
            assert is_negation_edit(gold[row["id"]], row["rationale"]), (gold[row["id"]], row["rationale"])
        for example_id in skipped["drift"]:
            assert negation_edits(gold[example_id]) == []


@pytest.mark.parametrize(("gold", "edited"), [
    ("he is happy .", "he is not happy ."), ("you can not infer it", "you can infer it"),
    ("watching does n't imply it", "watching does imply it"), ("she can't swim", "she can swim"),
    ("the woman ca n't be tying", "the woman can be tying"), ("it won't rain", "it will rain"),
    ("People cannot fly.", "People can fly."), ("there is no dog here", "there is dog here"),
    ("it has never been seen", "it has been seen"),
])
def test_is_negation_edit_accepts_one_negation(gold: str, edited: str) -> None:
    assert is_negation_edit(gold, edited) and is_negation_edit(edited, gold)


@pytest.mark.parametrize(("gold", "edited"), [
    ("he is happy .", "he is not very happy ."),  # a two-word change
    ("he is happy .", "he was not happy ."),  # a negation plus a substitution
    ("he is not happy .", "he is never happy ."),  # a substitution, not an insertion/deletion
    ("he is happy .", "he is happy ."), ("he isn't happy", "he is not happy"),  # no edit / contraction only
    ("he is happy .", "he is very happy ."),  # one word, but not a negation
    ("he is happy .", "he is not not happy ."),
    ("the dog is happy .", "the dog is not sad ."), ("he is happy .", "he is not happy !"),  # an edit elsewhere too
])
def test_is_negation_edit_rejects_other_changes(gold: str, edited: str) -> None:
    assert not is_negation_edit(gold, edited)


def test_negation_edits_are_all_valid() -> None:
    gold = "the dog is not barking and it can't run , but it will sleep ."
    edits = negation_edits(gold)
    assert {op for op, _ in edits} == {"delete-not", "delete-nt", "insert-not"}
    assert all(is_negation_edit(gold, edited) for _, edited in edits)
    assert "the dog is barking and it can't run , but it will sleep ." in [e for _, e in edits]
    assert negation_edits("Metropolitan Transport Corporation (Chennai)") == []


def test_drift_editor_hook_is_checked() -> None:
    record = _constructed()[2]
    good = drift_family(lambda gold, rng: gold.replace("is taller", "is not taller"))
    assert good(record, np.random.default_rng(0), ())["template_id"] == "drift:editor"
    bad = drift_family(lambda gold, rng: "Mount Fuji is short.")  # not a negation edit: rule-based fallback
    row = bad(record, np.random.default_rng(0), ())
    assert row["template_id"].startswith("drift:") and row["template_id"] != "drift:editor"
    assert is_negation_edit(record["rationale"], row["rationale"])


def test_label_swap_uses_a_wrong_label_and_its_own_baseline(samples) -> None:
    builder = make_baseline_builder("template", seed=7)
    for records in samples.values():
        rows = build_suite(records, families=["gold", "label_swap"], seed=0, baseline_builder=builder)
        by_id = {record["id"]: record for record in records}
        gold_baseline = {row["id"]: row["baseline"] for row in rows if row["family"] == "gold"}
        swaps = [row for row in rows if row["family"] == "label_swap"]
        assert len(swaps) == len(records)
        for row in swaps:
            record = by_id[row["id"]]
            assert row["label_used"] != row["gold_label"] == record["label"]
            assert row["label_used"] in record["choices"] and row["label"] == row["label_used"]
            assert row["rationale"] == record["rationale"]
            swapped = {k: v for k, v in record.items() if k != "rationale"} | {"label": row["label_used"]}
            assert row["baseline"] == builder([swapped])[0] != gold_baseline[row["id"]]
        assert len({row["label_used"] for row in swaps}) > 1


def test_pseudo_specific_picks_entities_and_content_words() -> None:
    nli, qa, yesno = _constructed()
    assert content_words(yesno) == ["Mount Fuji", "Sea", "Japan"]
    assert "Paris" in content_words(nli) and "a" not in content_words(nli)
    qa_words = content_words(qa | {"question": "Is the kitchen a spice store?"})
    assert "kitchen" not in qa_words and "spice" in qa_words  # a choice's words never appear
    assert content_words(qa | {"question": "Is it the one?"}) == []
    assert build_suite_with_skips([qa | {"question": "Is it the one?"}], ["pseudo_specific"])[1] == {
        "pseudo_specific": ["q1"]}


def test_rows_are_schema_records_with_the_documented_keys(suites) -> None:
    for task, (rows, _) in suites.items():
        nli_only = {"hypothesis_copy"} if task != "nli" else set()
        assert {row["family"] for row in rows} == set(DEFAULT_FAMILIES) - nli_only
        for row in rows:
            assert tuple(row)[: len(ROW_KEYS)] == ROW_KEYS
            validate_example(row)
            assert row["baseline"].strip()


# --------------------------------------------------------------------------- determinism and files


def test_same_seed_gives_byte_identical_file(samples, tmp_path: Path) -> None:
    records = [r for task in samples.values() for r in task[:15]]
    write_suite(tmp_path / "a.jsonl", build_suite(records, seed=5))
    write_suite(tmp_path / "b.jsonl", build_suite(records, seed=5))
    write_suite(tmp_path / "c.jsonl", build_suite(records, seed=6))
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.jsonl").read_bytes() != (tmp_path / "c.jsonl").read_bytes()
    assert load_suite(tmp_path / "a.jsonl") == json.loads(json.dumps(build_suite(records, seed=5)))


def test_suite_is_identical_in_another_process(tmp_path: Path) -> None:
    """Seeds come from SHA-256, not ``hash()``: a process with another PYTHONHASHSEED writes the same bytes."""
    script = ("import json, sys; from larev_hf.meta import build_suite, write_suite; "
              "write_suite(sys.argv[2], build_suite(json.load(open(sys.argv[1])), seed=11))")
    (tmp_path / "records.json").write_text(json.dumps(_constructed()), encoding="utf-8")
    write_suite(tmp_path / "here.jsonl", build_suite(_constructed(), seed=11))
    env = os.environ | {"PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "records.json"), str(tmp_path / "there.jsonl")],
                   check=True, env=env, cwd=Path(__file__).resolve().parents[2])
    assert (tmp_path / "here.jsonl").read_bytes() == (tmp_path / "there.jsonl").read_bytes()


# --------------------------------------------------------------------------- extensibility


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_user_family_is_joined_by_id(samples, tmp_path: Path, registry) -> None:
    records = samples["nli"][:5]
    path = _write_jsonl(tmp_path / "llm.jsonl", [
        {"id": records[0]["id"], "rationale": "A concise model rationale."},
        {"id": records[2]["id"], "rationale": "Another one.", "label_used": "neutral"},
    ])
    load_user_family(path, "llm_concise", records=records)
    rows, skipped = build_suite_with_skips(records, families=["gold", "llm_concise"])
    user = [row for row in rows if row["family"] == "llm_concise"]
    assert [row["id"] for row in user] == [records[0]["id"], records[2]["id"]]
    assert user[0]["template_id"] == "user:llm_concise" and user[0]["label_used"] == records[0]["label"]
    assert user[1]["label_used"] == "neutral" and user[1]["rationale"] == "Another one."
    assert len(skipped["llm_concise"]) == 3


@pytest.mark.parametrize(("row", "message"), [
    ({"id": "__ID__", "rationale": ""}, r"bad\.jsonl, line 2; example id '__ID__': field 'rationale'"),
    ({"id": "nope-42", "rationale": "x"}, r"bad\.jsonl, line 2; example id 'nope-42': unknown id"),
    ({"id": "__ID__", "rationale": "x", "label_used": "maybe"},
     r"bad\.jsonl, line 2; example id '__ID__': field 'label_used'"),
    ({"id": "__ID0__", "rationale": "x"}, r"bad\.jsonl, line 2; example id '__ID0__': duplicate id"),
])
def test_user_family_errors_name_file_line_and_id(samples, tmp_path: Path, registry, row: dict, message: str) -> None:
    records = samples["yesno"][:3]
    row = {k: (v.replace("__ID0__", records[0]["id"]).replace("__ID__", records[1]["id"]) if isinstance(v, str) else v)
           for k, v in row.items()}
    message = message.replace("__ID0__", re.escape(records[0]["id"])).replace("__ID__", re.escape(records[1]["id"]))
    path = _write_jsonl(tmp_path / "bad.jsonl", [{"id": records[0]["id"], "rationale": "fine"}, row])
    with pytest.raises(DataError, match=message) as error:
        load_user_family(path, "mine")
        build_suite(records, families=["gold", "mine"])
    assert str(path) in str(error.value)


def test_register_family(registry) -> None:
    register_family("hedge", template_family("hedge"), templates={
        "nli": [f"Maybe {{label}}, variant {k}." for k in range(5)], "qa": ["Perhaps {label}."],
        "yesno": ["Possibly {label}."]})
    rows = build_suite(_constructed(), families=["hedge"])
    assert [row["rationale"] for row in rows][1:] == ["Perhaps kitchen.", "Possibly yes."]
    assert rows[0]["template_id"].startswith("hedge:nli:")
    with pytest.raises(ValueError, match="already registered"):
        register_family("hedge", template_family("hedge"))
    with pytest.raises(ValueError, match="built in"):
        load_user_family("unused.jsonl", "leak")
    with pytest.raises(ValueError, match="unknown families"):
        build_suite(_constructed(), families=["nonexistent"])
