"""FRAME's meta-metrics (larev_hf.frame.meta_metrics) against hand computations and the paper's own printed tables."""

from __future__ import annotations

import numpy as np
import pytest

from larev_hf.frame.meta_metrics import (
    AXIOM_META_METRICS,
    NLI_PARAPHRASES,
    PAPER_TABLES,
    QA_PREFIXES,
    accuracy,
    asd,
    contrastive_perturbation,
    equivalent_perturbation,
    mar,
    noisy_labels,
    nrg,
    phi,
    scv,
)

METRICS = ("F-GOLD", "GH-GOLD", "GH-PRED", "NP-GH-PRED")

TABLE1, TABLE2, TABLE3 = (PAPER_TABLES[key] for key in ("axiom1", "axiom2", "axiom3"))


def table_nrg(rows: list[tuple[float, ...]], axiom: str, columns: int | None = None) -> list[float]:
    """NRG of the table's rows; ``columns``: only the first so many meta-metrics."""
    names = list(AXIOM_META_METRICS[axiom])
    scores = {metric: dict(zip(names, row, strict=True)) for metric, row in zip(METRICS, rows, strict=True)}
    result = nrg(scores, {name: AXIOM_META_METRICS[axiom][name] for name in names[:columns]})
    return [round(result[metric] + 1e-9, 2) for metric in METRICS]


@pytest.mark.parametrize("dataset", list(TABLE1))
def test_nrg_reproduces_table_1_from_its_printed_means(dataset: str) -> None:
    rows, printed = TABLE1[dataset]
    assert table_nrg(rows, "axiom1") == printed


def test_nrg_reproduces_11_of_the_12_cells_of_table_2() -> None:
    """The one cell that does not: CoS-E v1.11 GH-GOLD, 0.88 from the printed means against the printed 0.93."""
    mismatches = {}
    for dataset, (rows, printed) in TABLE2.items():
        for metric, ours, theirs in zip(METRICS, table_nrg(rows, "axiom2"), printed, strict=True):
            if ours != theirs:
                mismatches[(dataset, metric)] = (ours, theirs)
    assert mismatches == {("CoS-E v1.11", "GH-GOLD"): (0.88, 0.93)}


@pytest.mark.parametrize("dataset", list(TABLE3))
def test_table_3_nrg_is_the_mean_of_its_first_two_columns_only(dataset: str) -> None:
    """Table 3's printed NRG does not follow from all four of its columns (e-SNLI by hand: F-GOLD
    (0 + 0.544 + 0 + 0.840)/4 = 0.35, printed 0.27); it is the NRG of the % Train and % Noisy Train SCVs alone
    (F-GOLD (0 + 0.544)/2 = 0.27), on all three datasets."""
    rows, printed = TABLE3[dataset]
    assert table_nrg(rows, "axiom3") != printed
    assert table_nrg(rows, "axiom3", columns=2) == printed
    if dataset == "e-SNLI":
        assert table_nrg(rows, "axiom3") == [0.35, 0.28, 0.55, 1.00]


def test_nrg_directions_ties_and_errors() -> None:
    scores = {"a": {"up": 1.0, "down": 5.0, "flat": 2.0}, "b": {"up": 3.0, "down": 1.0, "flat": 2.0}}
    result = nrg(scores, {"up": "max", "down": "min", "flat": "max"})
    assert result == {"a": pytest.approx((0 + 0 + 1) / 3), "b": pytest.approx((1 + 1 + 1) / 3)}
    with pytest.raises(ValueError, match="'down' is missing for \\['b'\\]"):
        nrg({"a": {"down": 1.0}, "b": {}}, {"down": "min"})
    with pytest.raises(ValueError, match="must be 'max' or 'min'"):
        nrg(scores, {"up": "higher"})


def test_phi_mar_asd_scv_on_hand_made_numbers() -> None:
    assert accuracy(["a", "b", "a", "c"], ["a", "b", "c", "c"]) == 75.0
    assert phi(80.0, 62.5) == 17.5
    # 𝟙_H(ŷ|x,ŷ) = 90 against r̂ 60, ṙ 45, ẏ 90: (1.5 + 2 + 1) / 3
    assert mar(90.0, {"predicted": 60.0, "gold": 45.0, "gold_label": 90.0}) == pytest.approx(1.5)
    assert mar(50.0, [0.0]) == np.inf
    assert asd(-3.0, 4.5) == asd(4.5, -3.0) == 7.5
    assert scv([10.0, 20.0, 30.0]) == pytest.approx(np.std([10, 20, 30]) / 20)
    assert scv([10.0, 20.0, 30.0], ddof=1) == pytest.approx(10 / 20)
    with pytest.raises(ValueError, match="undefined for a mean"):
        scv([-5.0, 5.0])


def test_contrastive_perturbation_never_returns_the_original_label() -> None:
    rng = np.random.default_rng(0)
    classes = ["entailment", "neutral", "contradiction"]
    draws = [contrastive_perturbation("neutral", classes, rng) for _ in range(300)]
    assert set(draws) == {"entailment", "contradiction"}
    assert abs(draws.count("entailment") - 150) < 40  # uniform over the other m − 1
    with pytest.raises(ValueError, match="no other class"):
        contrastive_perturbation("yes", ["yes", "yes"], rng)


def test_equivalent_perturbation_keeps_the_class_and_writes_enough_sentences() -> None:
    rng = np.random.default_rng(1)
    assert all(len(sentences) >= 5 for sentences in NLI_PARAPHRASES.values()) and len(QA_PREFIXES) >= 5
    for label, sentences in NLI_PARAPHRASES.items():
        assert equivalent_perturbation(label.upper(), "nli", rng) in sentences
    perturbed = equivalent_perturbation("have fun in the park", "qa", rng)
    assert perturbed.endswith("have fun in the park") and perturbed[: -len("have fun in the park")] in QA_PREFIXES
    with pytest.raises(ValueError, match="no paraphrases"):
        equivalent_perturbation("maybe", "nli", rng)


@pytest.mark.parametrize("share", [0.0, 0.1, 0.3, 0.5])
def test_label_noise_flips_exactly_the_stated_share(share: float) -> None:
    labels = ["entailment", "neutral", "contradiction"] * 40
    choices = [["entailment", "neutral", "contradiction"]] * len(labels)
    noisy, flipped = noisy_labels(labels, choices, share, np.random.default_rng(2))
    changed = [i for i, (a, b) in enumerate(zip(labels, noisy, strict=True)) if a != b]
    assert changed == flipped and len(changed) == round(share * len(labels))
    assert all(label in options for label, options in zip(noisy, choices, strict=True))


def test_paper_comparison_of_the_papers_own_means_agrees_everywhere_and_a_swap_shows() -> None:
    from larev_hf.frame.meta_metrics import TABLE_COLUMNS
    from larev_hf.frame.report import paper_comparison, render_paper_comparison

    keys = ["f_gold", "gh_gold", "gh_pred", "np_gh_pred"]

    def report_from(rows_by_axiom: dict) -> dict:
        tables, nrgs = {}, {}
        for axiom, rows in rows_by_axiom.items():
            names = [name for name, _ in TABLE_COLUMNS[axiom]]
            tables[axiom] = {m: {n: {"mean": v} for n, v in zip(names, row, strict=True)} for m, row in zip(keys, rows, strict=True)}
            used = names[:2] if axiom == "axiom3" else names
            values = nrg({m: dict(zip(names, row, strict=True)) for m, row in zip(keys, rows, strict=True)},
                         {n: AXIOM_META_METRICS[axiom][n] for n in used})
            nrgs["axiom3_ab" if axiom == "axiom3" else axiom] = {"values": values}
        return {"dataset": "esnli", "metrics": dict.fromkeys(keys, ""), "tables": tables, "nrg": nrgs}

    paper = {axiom: PAPER_TABLES[axiom]["e-SNLI"][0] for axiom in ("axiom1", "axiom2", "axiom3")}
    same = paper_comparison(report_from(paper))
    for entry in same["tables"].values():
        assert entry["nrg_best"]["ours"] == entry["nrg_best"]["paper"]
        for cell in entry["meta_metrics"].values():
            assert all(cell["same_sign"]) and cell["kendall_tau"] == pytest.approx(1.0)
    swapped = {**paper, "axiom1": [paper["axiom1"][3], *paper["axiom1"][1:3], paper["axiom1"][0]]}
    cell = paper_comparison(report_from(swapped))["tables"]["axiom1"]["meta_metrics"]["phi_reference"]
    assert cell["same_sign"] == [False, True, True, False] and cell["kendall_tau"] < 0.5
    assert paper_comparison({**report_from(paper), "dataset": "strategyqa"}) is None
    assert "## Against the paper (FRAME's printed means, e-SNLI)" in "\n".join(render_paper_comparison(same))
