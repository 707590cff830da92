"""The method registry: a method defined in this file becomes a first-class metric without editing the library;
settings per concern round-trip; one citations source; variants are an open set."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil

import evaluate
import numpy as np
import pytest

import larev_hf
from larev_hf.cli import build_parser, main
from larev_hf.cli.commands.run import DeprecatedFlag, config_from_args
from larev_hf.config import RunConfig, config_sections
from larev_hf.io import read_json, read_jsonl
from larev_hf.methods import (
    ConditionalVMethod,
    Stage,
    get_method,
    method_names,
    register_method,
    resolve_methods,
    text_features,
    unregister_method,
)
from larev_hf.methods.heuristics import HeuristicBaseline
from larev_hf.methods.larev import LarevSettings
from larev_hf.methods.rev import PHI_BASE
from larev_hf.methods.settings import help_field, setting_key
from larev_hf.modeling import load_evaluator
from larev_hf.report import render_markdown
from larev_hf.scores import ConditionalVScorer, summarize_variants


# --------------------------------------------------------------------------- a toy method, from this file only
@dataclasses.dataclass
class ToySettings:
    toy_note: str = help_field("none", "a setting of the toy method", report_only=True)


def _copy_phi_base(context) -> None:
    """The toy's "rationale model" is a copy of Φ_base: its scores are log p_Φbase(y | r ⊕ b) − log p_Φbase(y | b)."""
    shutil.copytree(context.path("models", "phi_base"), context.path("models", "toy"))


class Toy(ConditionalVMethod):
    name = "toy"
    title = "TOY"
    formula = "TOY(r) = log p_Φbase(y | r ⊕ b) − log p_Φbase(y | b)"
    citation_keys = ("chen-etal-2023-rev",)
    roles = {"baseline": "phi_base", "rationale": "toy"}
    model_titles = {"baseline": "Φ_base", "rationale": "Φ_base again"}
    settings_class = ToySettings

    def stages(self, config):
        return [PHI_BASE, Stage("toy_copy", _copy_phi_base)]


@pytest.fixture()
def toy():
    register_method(Toy())
    yield get_method("toy")
    unregister_method("toy")


def test_a_method_registered_in_a_test_file_runs_reports_exports_and_loads_in_evaluate(toy, tmp_path, monkeypatch):
    run_dir, bundle_dir = tmp_path / "run", tmp_path / "bundle"
    argv = ["--quiet", "run", "--method", "rev,toy", "--dataset", "synthetic", "--max-train-examples", "48",
            "--max-eval-examples", "12", "--num-train-epochs", "1", "--n-boot", "50", "--toy-note", "hello",
            "--output-dir", str(run_dir)]
    assert main(argv) == 0
    report = read_json(run_dir / "report.json")
    assert list(report["methods"]) == ["rev", "toy"]  # canonical (registry) order
    assert report["settings"]["toy_note"] == "hello"
    assert set(report["methods"]["toy"]["absolute"]) == {"gold", "gold_leaky", "vacuous", "leaky"}
    records = [record for _, record in read_jsonl(run_dir / "data" / "test.jsonl")]
    phi_base, tokenizer = load_evaluator(run_dir / "models" / "phi_base")
    expected = ConditionalVScorer(phi_base, phi_base, tokenizer).score(
        [r["rationale"] for r in records], [r["baseline"] for r in records], [r["label"] for r in records]).scores
    rows = [row for _, row in read_jsonl(run_dir / "scores" / "test_scores.jsonl")]
    np.testing.assert_allclose([row["toy/gold"] for row in rows], expected, rtol=0, atol=1e-5)
    assert report["methods"]["toy"]["absolute"]["gold"] == pytest.approx(float(np.mean(expected)), abs=1e-5)
    assert "rev/gold" in rows[0]
    assert (run_dir / "stages" / "toy_copy.done").is_file()
    assert "| TOY |" in (run_dir / "report.md").read_text()

    assert main(["export", "--run-dir", str(run_dir), "--method", "toy", "--output-dir", str(bundle_dir),
                 "--force"]) == 0
    assert read_json(bundle_dir / "config_larev.json")["method"] == "toy"
    assert "@inproceedings{chen-etal-2023-rev" in (bundle_dir / "README.md").read_text()

    monkeypatch.chdir(tmp_path)  # the shipped module loads from any directory
    module = evaluate.load(larev_hf.metric_path("bundle"), evaluator=str(bundle_dir))
    result = module.compute(rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
                            inputs=records, baselines=[r["baseline"] for r in records])
    np.testing.assert_allclose(result["scores"], expected, rtol=0, atol=1e-5)
    assert result["hashcode"].startswith("larev-hf:toy:")


def test_an_unregistered_method_and_its_settings_are_reported(toy):
    with pytest.raises(ValueError, match="method 'rev,nope' is not available"):
        RunConfig(method="rev,nope")
    saved = RunConfig(method="toy", toy_note="x").to_dict()
    unregister_method("toy")
    with pytest.raises(ValueError, match=r"run_config.json: unknown setting\(s\) \['toy_note'\]"):
        RunConfig.from_dict(saved)
    register_method(Toy())


def test_registry_refuses_duplicates_and_orders_canonically():
    assert method_names()[:5] == ("rev", "larev", "rora", "las", "rq")
    assert resolve_methods("rq,rev") == ("rev", "rq")
    with pytest.raises(ValueError, match="already registered"):
        register_method(type(get_method("rev"))())
    with pytest.raises(ValueError, match="Python identifier"):
        register_method(type("Bad", (Toy,), {"name": "all"})())


# --------------------------------------------------------------------------- settings per concern
def test_run_config_round_trips_and_reports_unknown_keys(tmp_path):
    config = RunConfig(method="all", lambda_irm=0.5, **{"rora.threshold": "auto"}, lora_target_modules=["q", "v"])
    path = tmp_path / "run_config.json"
    path.write_text(json.dumps(config.to_dict()))
    assert RunConfig.from_dict(json.loads(path.read_text())) == config
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['lamda_irm'\]"):
        RunConfig.from_dict({**config.to_dict(), "lamda_irm": 1.0})
    with pytest.raises(AttributeError, match="immutable"):
        config.seed = 3  # type: ignore[attr-defined]
    assert config.replace(seed=3).training.seed == 3 and config.training.seed == 0
    assert config.method_settings(LarevSettings).lambda_irm == 0.5 and config.peft.lora_target_modules == ["q", "v"]
    assert not hasattr(config, "lambda_irm")  # one way to read a setting: through the section that declares it


def test_every_setting_has_one_flag_whose_default_is_the_fields():
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    actions = {action.dest: action for action in run._actions if not isinstance(action, DeprecatedFlag)}
    for _, cls, _ in config_sections():
        for field in dataclasses.fields(cls):
            if field.metadata.get("cli", True) is False:
                continue
            default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
            key = setting_key(cls, field.name)
            assert key in actions, f"no flag for {cls.__name__}.{field.name}"
            assert actions[key].default == default, key
            assert actions[key].help, key


def test_documented_flag_spellings_still_parse():
    args = build_parser().parse_args(["run", "--output-dir", "x", "--no-stop-word-guard", "--lora-target-modules", "q,v",
                                      "--rora.threshold", "auto", "--penalty-warmup-ratio", "0.5"])
    assert (args.stop_word_guard, args.lora_target_modules, getattr(args, "rora.threshold")) == (False, ["q", "v"], "auto")
    assert args.penalty_warmup_ratio == 0.5


def test_a_nested_section_keeps_its_own_field_names_under_its_namespace():
    """RoRA's settings are fields of their own section (``lambda_irm``, beside LAREV's), spelt ``rora.<name>`` in the
    run's one namespace: the flags, ``run_config.json`` and ``backbone_defaults``."""
    from larev_hf.rora import RoRASettings

    config = config_from_args(build_parser().parse_args(
        ["run", "--output-dir", "x", "--method", "all", "--lambda-irm", "0.5", "--rora.lambda-irm", "2",
         "--rora.top-k", "2"]))
    rora, larev = config.method_settings(RoRASettings), config.method_settings(LarevSettings)
    assert (rora.lambda_irm, rora.top_k, larev.lambda_irm) == (2.0, 2, 0.5)
    assert {"rora.lambda_irm", "rora.top_k", "rora.threshold", "rora.classifier"} <= set(config.to_dict())
    assert not [key for key in config.to_dict() if key.startswith("rora_")]
    assert config.given("rora.lambda_irm") == 2.0
    assert RunConfig(method="rora").model.backbone_defaults["rora.lambda_irm"] == "random-init presets"


@pytest.mark.parametrize("old, new, value", [("--rora-threshold", "--rora.threshold", "auto"),
                                             ("--rora-top-k", "--rora.top-k", "2"),
                                             ("--rora-lambda-irm", "--rora.lambda-irm", "2.5"),
                                             ("--rora-classifier", "--rora.classifier", "minilm")])
def test_an_old_flag_still_works_and_warns_naming_the_new_one(old, new, value):
    parser = build_parser()
    with pytest.warns(FutureWarning, match=f"{old} is now {new}"):
        args = parser.parse_args(["run", "--output-dir", "x", "--method", "rora", old, value])
    assert args == parser.parse_args(["run", "--output-dir", "x", "--method", "rora", new, value])
    assert old not in parser._subparsers._group_actions[0].choices["run"].format_help()  # hidden from --help


def test_old_setting_keys_load_through_the_one_table_of_renamed_settings():
    """``RENAMED_SETTINGS`` maps each old key: a ``run_config.json`` written before loads silently (its keys and its
    ``backbone_defaults``), ``RunConfig(rora_threshold=...)`` with a FutureWarning."""
    from larev_hf.config import RENAMED_SETTINGS, saved_settings

    config = RunConfig(method="all", **{"rora.threshold": "auto", "rora.top_k": 2})
    old = {next((o for o, n in RENAMED_SETTINGS.items() if n == key), key): value
           for key, value in config.to_dict().items()}
    old["backbone_defaults"] = {next((o for o, n in RENAMED_SETTINGS.items() if n == key), key): source
                                for key, source in old["backbone_defaults"].items()}
    assert "rora_lambda_irm" in old and "rora_lambda_irm" in old["backbone_defaults"]
    assert saved_settings(old) == config.to_dict()
    assert RunConfig.from_dict(old) == config
    with pytest.warns(FutureWarning, match="'rora_top_k' is now 'rora.top_k'"):
        assert RunConfig(method="all", rora_threshold="auto", rora_top_k=2) == config


# --------------------------------------------------------------------------- citations and variants
def test_one_citation_source_feeds_methods_losses_and_modules():
    from larev_hf.citations import bibtex, citations
    from larev_hf.training.losses import CITATION

    assert len(citations()) >= 6
    assert get_method("larev").citation == bibtex("li-2026-larev", "chen-etal-2023-rev")
    assert bibtex("li-2026-larev") in CITATION
    spec = importlib.util.spec_from_file_location("larev_module", f"{larev_hf.metric_path('larev')}/larev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module._CITATION.strip() == get_method("larev").citation
    with pytest.raises(KeyError, match="no citation"):
        bibtex("nobody-2099")


def test_variants_are_an_open_set():
    rng = np.random.default_rng(0)
    scores = {name: rng.normal(size=30) for name in ("gold", "gold_leaky", "vacuous", "leaky", "pseudo_specific")}
    entry = summarize_variants(scores, n_boot=50)
    assert list(entry["separations"])[-2:] == ["gold_minus_pseudo_specific", "sum"]
    assert entry["separations"]["sum"] == pytest.approx(sum(v for k, v in entry["separations"].items() if k != "sum"))
    markdown = render_markdown({"dataset": "d", "split": "test", "n_examples": 30, "methods": {"rev": entry}})
    assert "Pseudo-Specific" in markdown and "Gold − Pseudo-Specific" in markdown
    with pytest.raises(ValueError, match="'gold' are missing"):
        summarize_variants({"leaky": scores["leaky"]})


def test_metric_path_names_the_known_modules():
    assert larev_hf.metric_path("rev").endswith("rev")
    with pytest.raises(ValueError, match="expected one of .*'bundle'.*'larev'"):
        larev_hf.metric_path("nope")


# --------------------------------------------------------------------------- a toy calibration feature
class ToyLetters(HeuristicBaseline):
    """A text feature of this file only: the rationale's letters, in tens (not its words: ``length`` counts those)."""

    name = "toy_letters"
    title = "Letters"
    formula = "|r| in letters / 10"
    unit = "tens of letters"

    def pointwise(self, context, records, variants, shared) -> dict[str, np.ndarray]:
        return {variant: np.array([sum(c.isalpha() for c in text) / 10 for text in texts])
                for variant, texts in variants.items()}


def test_a_text_feature_registered_in_a_test_file_is_fitted_into_a_bundles_calibration_and_scored(
        tiny_run, judged_file, tmp_path, capsys):
    """One class and its registration: the human calibration fits it, export accepts it, the bundle computes it for
    new explanations; once unregistered, no bundle reads it."""
    from larev_hf.hub import EvaluatorBundle
    from larev_hf.hub import config as bundle_config
    from larev_hf.meta import human_evaluate
    from larev_hf.pipeline import Run
    from larev_hf.scores.calibration import Calibration

    assert "toy_letters" not in text_features() and "rationale_only" not in text_features()
    register_method(ToyLetters())
    try:
        assert text_features()[-1] == "toy_letters" and "toy_letters" in bundle_config.CALIBRATION_TEXT_FEATURES
        human_evaluate(tiny_run, judged_file, tmp_path / "h", progress=False, methods=["larev", "toy_letters"],
                       calibrate=["larev", "toy_letters"], calibration_fit="agreement", half="held", n_boot=20)
        calibration = Calibration.load(tmp_path / "h" / "calibration.json")
        assert calibration.features == ["larev", "toy_letters"] and calibration.coef[1] != 0
        assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir",
                     str(tmp_path / "bundle"), "--calibration", str(tmp_path / "h" / "calibration.json"),
                     "--force"]) == 0
        records = Run.load(tiny_run, progress=False).split_records("test")[:6]
        texts = [r["rationale"] for r in records][:3] + ["Birds can fly over the house."] * 3
        out = EvaluatorBundle.from_pretrained(tmp_path / "bundle").score(texts, [r["label"] for r in records], records)
        letters = np.array([sum(c.isalpha() for c in text) / 10 for text in texts])
        assert out.calibrated == pytest.approx(calibration({"larev": out.scores, "toy_letters": letters}).tolist())
        assert list(out.contributions) == ["larev", "toy_letters"] and np.abs(out.contributions["toy_letters"]).max() > 0
    finally:
        unregister_method("toy_letters")
    assert "toy_letters" not in text_features()
    assert main(["--quiet", "export", "--run-dir", str(tiny_run), "--method", "larev", "--output-dir",
                 str(tmp_path / "b2"), "--calibration", str(tmp_path / "h" / "calibration.json"), "--force"]) == 2
    assert "calibration reads ['toy_letters'], which a larev bundle cannot compute" in capsys.readouterr().err


def test_the_calibration_text_features_are_the_registrys():
    from larev_hf.hub import config

    assert config.CALIBRATION_TEXT_FEATURES == text_features()
    assert set(text_features()) == {"rouge_l", "length", "grounding", "copied_span", "copy_excess", "premise_link",
                                    "explanation_lm"}
    with pytest.raises(TypeError, match="no text_scores"):
        register_method(type("NoText", (Toy,), {"name": "no_text", "text_feature": True})())
