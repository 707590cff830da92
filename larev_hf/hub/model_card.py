"""The model card (``README.md``) of an evaluator bundle.

The card is rendered from the package file ``model_card_template.md`` with
``huggingface_hub.ModelCard.from_template``. Its YAML front matter carries
``library_name: larev-hf``, tags, the training data set and, as ``model-index`` results, the
run's Gold − variant separations and absolute scores for the bundle's method (thesis tables
5.3/5.4 and 5.9/5.10), so the Hub shows them as evaluation results. Everything in it comes from
the bundle's config and report: the same bundle always renders the same card.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from larev_hf.hub.trust import Trust
from larev_hf.io import read_json
from larev_hf.methods import get_method
from larev_hf.modeling import is_preset
from larev_hf.report import separation_title, variant_title

#: What the card reads of a bundle (:class:`larev_hf.hub.EvaluatorBundle`: ``config``, ``report``, ``spec``,
#: ``sources``); typed loosely so that this module does not import the bundle that renders it.
EvaluatorBundle = Any

#: Hub dataset ids of the dataset kinds that have one (a local copy in the same layout is common).
HUB_DATASETS = {"esnli": "esnli", "cose": "cos_e", "ecqa": "yangdong/ecqa", "strategyqa": "ChilleD/StrategyQA"}
#: ``task.type`` of the ``model-index`` results.
TASK_TYPE = "rationale-evaluation"
#: The ``evaluate`` modules shipped with the package (:func:`larev_hf.metric_path`); other methods use ``bundle``.
METRIC_MODULES = ("larev", "rev", "rora", "bundle")



#: What a score's sign and size mean: the one sentence the card, docs/hub.md, docs/faq.md and README share.
SCORE_MEANING = (
    "A score is how many nats more (positive) or less (negative) log-probability the evaluator gives the label with "
    "the rationale than the baseline model gives it from the vacuous baseline alone: positive means the rationale "
    "adds label-relevant information, about 0 means nothing new. Raw scores carry a per-label offset (an evaluator "
    "can be less sure of one label whatever the rationale), so rank explanations of the same instance, or use "
    "`label_centred_scores` (the score minus its label's mean gold score on the evaluator's test split) across labels."
)


def model_card_template() -> str:
    """The Jinja template of the card (``larev_hf/hub/model_card_template.md``)."""
    return resources.files("larev_hf.hub").joinpath("model_card_template.md").read_text(encoding="utf-8")



def _fmt(value: float) -> str:
    return f"{value:.4f}"


def _example_input(task: str) -> tuple[str, str, str]:
    """A literal example of (rationale, label, input) for the usage snippet."""
    if task == "nli":
        return ('"A man on a bike is outside, since he is in the street."', '"entailment"',
                '{"premise": "A man rides a bike in the street.", "hypothesis": "A man is outside."}')
    if task == "yesno":
        return ('"Penguins cannot fly, so they never migrate by air."', '"no"',
                '{"question": "Do penguins migrate by flying?"}')
    return ('"Spices are kept where food is cooked."', '"kitchen"',
            '{"question": "Where is the pepper kept?", "choices": ["kitchen", "garage", "garden"]}')


def eval_results(bundle: EvaluatorBundle) -> list[EvalResult]:
    """The bundle's report as ``model-index`` results: separations (with intervals) then absolute scores."""
    report, config = bundle.report, bundle.config
    entry = report["methods"][config.method]
    dataset = report.get("dataset", config.dataset)
    common = {"task_type": TASK_TYPE, "task_name": "Rationale evaluation", "dataset_type": HUB_DATASETS.get(dataset, dataset),
              "dataset_name": dataset, "dataset_split": report.get("split", "test")}
    title = bundle.spec.title
    results = []
    for key in entry["separations"]:
        low, high = entry["ci95"][key]
        results.append(EvalResult(metric_type=key, metric_name=f"{title} {separation_title(key)}",
                                  metric_value=float(entry["separations"][key]),
                                  metric_args={"ci95_low": float(low), "ci95_high": float(high)}, **common))
    for variant in entry["absolute"]:
        results.append(EvalResult(metric_type=f"score_{variant}", metric_name=f"{title} score ({variant_title(variant)})",
                                  metric_value=float(entry["absolute"][variant]), **common))
    return results


def citation(method: str) -> str:
    """BibTeX of the works a ``method``'s bundle rests on (the registry's citation keys, from ``citations.bib``)."""
    return get_method(method).citation


def make_model_card(bundle: EvaluatorBundle, repo_id: str | None = None) -> ModelCard:
    """Render the README.md model card of ``bundle``.

    Args:
        bundle (`EvaluatorBundle`): the bundle (its config and report are read, no model is loaded).
        repo_id (`str`, *optional*): the Hub repo the card is written for; it names the model and
            appears in the usage snippet. Defaults to a local-path placeholder.
    """
    config, report, spec = bundle.config, bundle.report, bundle.spec
    training = config.training
    backbone = training.get("backbone", "")
    name = repo_id.split("/")[-1] if repo_id else f"{config.method}-{config.dataset}-{backbone}"
    card_data = ModelCardData(
        model_name=name,
        library_name="larev-hf",
        tags=["larev-hf", "rationale-evaluation", config.method, "conditional-v-information", "explainability", "evaluate"],
        datasets=[HUB_DATASETS[config.dataset]] if config.dataset in HUB_DATASETS else None,
        base_model=backbone if backbone and not _is_preset(backbone) else None,
        eval_results=eval_results(bundle),
    )
    entry = report["methods"][config.method]
    separation_rows = [
        {"title": separation_title(k), "value": _fmt(entry["separations"][k]),
         "interval": f"[{_fmt(entry['ci95'][k][0])}, {_fmt(entry['ci95'][k][1])}]"}
        for k in entry["separations"]
    ]
    absolute_rows = [{"title": variant_title(v), "value": _fmt(value)} for v, value in entry["absolute"].items()]
    accuracy_rows = [
        {"model": model, "input": "b alone" if variant == "baseline" else variant_title(variant),
         "value": f"{100 * value:.2f}"}
        for model, values in (report.get("accuracy") or {}).items() if model in config.models.values()
        for variant, value in values.items()
    ]
    rationale, label, example = _example_input(config.task)
    if config.task == "nli":
        input_fields = "`premise` and `hypothesis`"
    else:
        input_fields = "`question`" + (" and, optionally, `choices` (the answer options)" if config.task == "qa" else "")
    label_description = (f"one of {', '.join(f'`{x}`' for x in config.label_set)}." if config.label_set
                         else "the answer text (one of the example's `choices` when they are given).")
    if config.baseline_builder is None:
        builder_sentence = "no baseline builder (its evaluators read the input x itself)"
        baselines_item = "- No `baselines`: the evaluators read the input x, not a vacuous baseline."
        reference = "the input"
    else:
        builder = dict(config.baseline_builder)
        builder_sentence = ("the settings of the vacuous-baseline builder (b is built from the input and the label, "
                            "never from the rationale)")
        baselines_item = ("- `baselines` (optional): your own vacuous baselines; by default the bundle's builder makes "
                          f"them (`{builder.pop('name')}`: `{json.dumps(builder, sort_keys=True)}`).")
        reference = "the vacuous baseline"
    return ModelCard.from_template(
        card_data,
        template_str=model_card_template(),
        title=f"{spec.title} evaluator: {config.dataset}, {backbone}",
        method=config.method,
        metric_module=config.method if config.method in METRIC_MODULES else "bundle",
        method_title=spec.title,
        formula=spec.formula,
        model_list=" and ".join(f"{spec.model_titles[role]} in `{subdir}/`" for role, subdir in config.models.items()),
        location=repo_id or "path/to/bundle",
        example_rationale=rationale,
        example_label=label,
        example_input=example,
        input_fields=input_fields,
        label_description=label_description,
        builder_sentence=builder_sentence,
        baselines_item=baselines_item,
        reference=reference,
        dataset=config.dataset,
        split=report.get("split", "test"),
        n_examples=report.get("n_examples", "?"),
        separation_rows=separation_rows,
        absolute_rows=absolute_rows,
        accuracy_rows=accuracy_rows,
        max_train_examples=training.get("max_train_examples"),
        backbone=backbone,
        input_format=config.input_format,
        reduction=config.reduction,
        seed=training.get("seed"),
        larev_weights=", ".join(f"{key} = {value}" for key, value in _larev_weights(bundle).items()),
        training_json=json.dumps(training, indent=2, sort_keys=True),
        citation=citation(config.method),
        score_meaning=get_method(config.method).score_meaning or SCORE_MEANING,
        trust_sentence=Trust(**config.trust).sentence() if config.trust else "not recorded (a bundle made by hand)",
        judge_sentence=_judge_sentence(config.nli_judge),
        **recipe_context(getattr(bundle, "recipe", None)),
    )


def recipe_context(record: dict[str, Any] | None) -> dict[str, Any]:
    """The card's "Recipe" section of a published named evaluator (its ``recipe.json``, see
    :mod:`larev_hf.evaluators.published`): its name, fingerprint, data, build time and the commands it ran; empty for
    any other bundle."""
    if not record:
        return {"recipe_name": None}
    recipe = record.get("recipe", {})
    data = record.get("data")
    if data == "local":
        data_sentence = (f"a local copy of the repository's shared data layout (`DATA` below: `{recipe.get('data_subdir')}/`"
                         + (f", `human/{recipe['judgments']}`" if recipe.get("judgments") else "") + ")")
    else:
        data_sentence = f"the Hub dataset `{data}`"
    if recipe.get("judgments") and not record.get("calibrated"):
        data_sentence += "; without its people's judgments, so the calibration was left out"
    steps = record.get("steps") or []
    return {"recipe_name": record.get("name", recipe.get("name")), "recipe_fingerprint": record.get("fingerprint"),
            "recipe_description": recipe.get("description", ""), "recipe_data": data_sentence,
            "recipe_minutes": record.get("build_minutes"),
            "recipe_steps": [" ".join(["larev-hf", *step]) for step in steps],
            "recipe_settings": [f"{title}: `{_setting_text(recipe[key])}`"
                                for key, title in (("run", "the run"), ("calibrate", "calibration features"),
                                                   ("human", "the calibration"), ("nli_judge", "the NLI judge"),
                                                   ("force_export", "export despite the "
                                                                                  "trust check"))
                                if recipe.get(key)]}


def _judge_sentence(judge: dict[str, Any] | None) -> str | None:
    """What the card says of the bundle's NLI judge (``None``: it carries none)."""
    if judge is None:
        return None
    metrics = judge.get("metrics", {})
    accuracy = (f", {metrics['accuracy']:.1%} accurate on {metrics['eval_examples']} e-SNLI test pairs read with their "
                "explanations" if isinstance(metrics.get("accuracy"), float) else "")
    return (f"`{judge['directory']}/` reads each premise followed by the explanation, then the hypothesis "
            f"(MiniLM-L6 trained on {metrics.get('train_examples', '?')} pairs{accuracy}). Where it gives the given label "
            "a low probability, the explanation is reported as *contradicting the label*; it changes no score.")


def _setting_text(value: object) -> str:
    """A recipe setting as the card shows it: ``name=value`` pairs, a comma list, or the value."""
    if isinstance(value, dict):
        return ", ".join(f"{name}={item}" for name, item in value.items())
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def _larev_weights(bundle: EvaluatorBundle) -> dict[str, object]:
    """The penalty weights Φ_LA was trained with (``larev_weights.json`` beside its weights), if any."""
    path = bundle.sources[bundle.config.models["rationale"]] / "larev_weights.json"
    return read_json(path) if path.is_file() else {}


def _is_preset(backbone: str) -> bool:
    return is_preset(backbone)
