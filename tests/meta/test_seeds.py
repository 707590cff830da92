"""Evaluator seeds (``--seeds``): the two-level bootstrap, what is established across seeds, resuming with an added
seed, the meta-evaluation per seed and ensemble bundles."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from larev_hf.methods import get_method
from larev_hf.pipeline import Run, RunConfig
from larev_hf.scores.stats import ensemble_scores, seed_summary, two_level_bootstrap


def test_the_two_level_bootstrap_equals_the_enumerated_distribution() -> None:
    table = np.array([[0.0, 1.0], [2.0, 3.0]])
    # every replicate draws 2 rows and 2 columns with replacement: 16 equally likely cases; the smallest mean (0, rows
    # {0,0} and columns {0,0}) and the largest (3) each have probability 1/16 > 2.5%, so they are the 95% bounds
    means = sorted(table[np.ix_(rows, cols)].mean() for rows in itertools.product(range(2), repeat=2)
                   for cols in itertools.product(range(2), repeat=2))
    assert two_level_bootstrap(table, n_boot=4000, seed=0) == [means[0], means[-1]] == [0.0, 3.0]
    # one seed: only examples are resampled, so a constant row has a zero-width interval
    assert two_level_bootstrap([[2.0, 2.0, 2.0]], n_boot=50) == [2.0, 2.0]
    with pytest.raises(ValueError, match="seeds, examples"):
        two_level_bootstrap([1.0, 2.0])


def _scores(gold_minus: float, n: int = 40, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    gold = rng.normal(0, 0.1, n)
    return {"gold": gold + gold_minus, "leaky": gold, "vacuous": gold - 1.0}


def test_seeds_that_disagree_in_sign_are_not_established() -> None:
    per_seed = {0: _scores(+0.5, seed=0), 1: _scores(-0.5, seed=1)}
    ci = {0: {"gold_minus_leaky": [0.45, 0.55], "gold_minus_vacuous": [1.4, 1.6], "sum": [1.9, 2.1]},
          1: {"gold_minus_leaky": [-0.55, -0.45], "gold_minus_vacuous": [0.4, 0.6], "sum": [0.0, 0.2]}}
    summary = seed_summary(per_seed, ci, n_boot=200)["separations"]
    leaky = summary["gold_minus_leaky"]
    assert leaky["per_seed"] == {"0": pytest.approx(0.5), "1": pytest.approx(-0.5)}
    assert leaky["mean"] == pytest.approx(0.0) and leaky["sd"] == pytest.approx(np.std([0.5, -0.5], ddof=1))
    assert (leaky["holds"], leaky["of"], leaky["established"]) == (1, 2, False)
    vacuous = summary["gold_minus_vacuous"]  # 1.5 and 0.5: above 0 in both seeds and combined
    assert vacuous["holds"] == 2 and vacuous["established"] and vacuous["ci95"][0] > 0
    assert summary["sum"]["holds"] == 1 and not summary["sum"]["established"]  # seed 1's own interval touches 0
    mean = ensemble_scores(list(per_seed.values()))
    assert mean["gold"] == pytest.approx((per_seed[0]["gold"] + per_seed[1]["gold"]) / 2)


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory) -> Path:
    """A tiny synthetic REV + LAREV run trained with seeds 0 and 1, then given seed 2."""
    output = tmp_path_factory.mktemp("seed-run")
    base = dict(method="rev,larev", dataset="synthetic", max_train_examples=48, max_eval_examples=16,
                num_train_epochs=1.0, n_boot=50)
    Run(RunConfig(**base, seeds=["0", "1"]), output, progress=False).execute()
    stamps = {p.name: p.stat().st_mtime_ns for p in (output / "stages").glob("*.done")}
    Run(RunConfig(**base, seeds=["0", "1", "2"]), output, progress=False).execute()
    (output / "stamps.txt").write_text("\n".join(f"{k} {v}" for k, v in stamps.items()))
    return output


def test_adding_a_seed_trains_only_that_seed(seed_run: Path) -> None:
    before = dict(line.split() for line in (seed_run / "stamps.txt").read_text().splitlines())
    after = {p.name: str(p.stat().st_mtime_ns) for p in (seed_run / "stages").glob("*.done")}
    new = sorted(set(after) - set(before))
    trained = [name for name in new if not name.startswith(("score-", "report-"))]
    assert trained and all(name.endswith("@seed2.done") for name in trained)
    assert all(after[name] == stamp for name, stamp in before.items() if not name.startswith("report-"))
    assert (seed_run / "seeds" / "seed-2" / "models" / "phi_la").is_dir()
    assert not (seed_run / "seeds" / "seed-0").exists()  # --seed's models stay at the run's root


def test_each_seeds_models_differ_and_the_report_combines_them(seed_run: Path) -> None:
    import json

    report = json.loads((seed_run / "report.json").read_text())
    run = Run.load(seed_run, progress=False)
    records = run.split_records("test")
    rationales = {"gold": [r["rationale"] for r in records], "vacuous": [r["rationale_vacuous"] for r in records]}
    own = {view.config.training.seed: get_method("larev").pointwise(view, records, rationales, {})
           for view in run.seed_views()}
    assert not np.allclose(own[0]["gold"], own[1]["gold"])  # another seed, another evaluator
    entry = report["seeds"]["methods"]["larev"]
    assert entry["seeds"] == [0, 1, 2]
    expected = [float(np.mean(own[s]["gold"] - own[s]["vacuous"])) for s in (0, 1, 2)]
    assert list(entry["separations"]["gold_minus_vacuous"]["per_seed"].values()) == pytest.approx(expected, abs=1e-5)
    ensemble_gold = np.mean([own[s]["gold"] for s in (0, 1, 2)], axis=0)
    assert entry["ensemble"]["absolute"]["gold"] == pytest.approx(float(ensemble_gold.mean()), abs=1e-5)
    assert "what survives retraining" in (seed_run / "report.md").read_text()


def test_meta_reports_each_seeds_auc(seed_run: Path, tmp_path: Path) -> None:
    from larev_hf.meta import meta_evaluate

    report = meta_evaluate(seed_run, tmp_path / "meta", progress=False, families=["gold", "vacuous", "leak"],
                           n_boot=20)
    larev = report["seeds"]["larev"]["families"]["vacuous"]
    assert list(larev["per_seed"]) == ["0", "1", "2"] and larev["per_seed"]["0"] == pytest.approx(
        report["methods"]["larev"]["families"]["vacuous"]["auc"])
    assert (tmp_path / "meta" / "scores" / "seed-2" / "larev.jsonl").is_file() and "rouge_l" not in report["seeds"]


def test_an_ensemble_bundle_scores_the_mean_of_its_seeds_through_evaluate_load(seed_run: Path,
                                                                                 tmp_path: Path) -> None:
    import evaluate

    from larev_hf.cli import main

    assert main(["--quiet", "export", "--run-dir", str(seed_run), "--method", "larev", "--output-dir",
                 str(tmp_path / "bundle"), "--force"]) == 0
    run = Run.load(seed_run, progress=False)
    records = run.split_records("test")[:5]
    own = [get_method("larev").pointwise(view, records, {"g": [r["rationale"] for r in records]}, {})["g"]
           for view in run.seed_views()]
    module_dir = Path(__file__).resolve().parents[2] / "metrics" / "larev"
    cwd = os.getcwd()
    os.chdir(tmp_path)  # loaded from another directory
    try:
        out = evaluate.load(str(module_dir), evaluator=str(tmp_path / "bundle"), keep_in_memory=True).compute(
            rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
            inputs=[{"question": r["question"], "choices": r["choices"]} for r in records])
    finally:
        os.chdir(cwd)
    assert out["scores"] == pytest.approx(np.mean(own, axis=0).tolist(), abs=1e-5)
    assert np.array(out["seed_scores"]) == pytest.approx(np.array(own), abs=1e-5)
    assert out["seed_std"] == pytest.approx(np.std(own, axis=0, ddof=1).tolist(), abs=1e-5)


def test_human_agreement_per_seed_and_for_the_ensemble(seed_run: Path, tmp_path: Path) -> None:
    from larev_hf.io import read_jsonl, write_jsonl
    from larev_hf.meta import human_evaluate

    run = Run.load(seed_run, progress=False)
    lines = [{"id": r["id"], "question": r["question"], "choices": r["choices"], "label": r["label"], "rationale": text,
              "acceptable": value} for r in run.split_records("test")
             for text, value in ((r["rationale"], 1.0), (f"The answer is {r['label']}.", 0.0))]
    write_jsonl(tmp_path / "judged.jsonl", lines)
    report = human_evaluate(seed_run, tmp_path / "judged.jsonl", tmp_path / "h", progress=False, methods=["larev"],
                            n_boot=20)
    assert list(report["metrics"]) == ["larev", "larev@seed1", "larev@seed2", "larev@ensemble"]
    seeds = [{row["id"]: row["score"] for _, row in read_jsonl(path)}
             for path in (tmp_path / "h" / "scores" / "larev.jsonl", *sorted((tmp_path / "h" / "scores").glob(
                 "seed-*/larev.jsonl")))]
    ids = [f"{line['id']}#{k % 2}" for k, line in enumerate(lines)]
    from larev_hf.meta import pairwise_agreement

    ensemble = np.mean([[s[i] for i in ids] for s in seeds], axis=0)
    expected = pairwise_agreement(ensemble, [line["acceptable"] for line in lines], [line["id"] for line in lines])[0]
    assert report["human"]["acceptable"]["metrics"]["larev@ensemble"]["pairwise"]["value"] == pytest.approx(expected)
