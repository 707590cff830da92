"""The model card (``README.md``) of an evaluator bundle.

The card is rendered from :data:`MODEL_CARD_TEMPLATE` with
``huggingface_hub.ModelCard.from_template``. Its YAML front matter carries
``library_name: larev-hf``, tags, the training data set and, as ``model-index`` results, the
run's Gold − variant separations and absolute scores for the bundle's method (thesis tables
5.3/5.4 and 5.9/5.10), so the Hub shows them as evaluation results. Everything in it comes from
the bundle's config and report: the same bundle always renders the same card.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from larev_hf.io import read_json
from larev_hf.report import SEPARATION_TITLES, VARIANT_TITLES
from larev_hf.scores.stats import SEPARATIONS, VARIANTS

if TYPE_CHECKING:
    from larev_hf.hub import EvaluatorBundle

#: Hub dataset ids of the dataset kinds that have one (a local copy in the same layout is common).
HUB_DATASETS = {"esnli": "esnli", "cose": "cos_e", "ecqa": "yangdong/ecqa", "strategyqa": "ChilleD/StrategyQA"}
#: ``task.type`` of the ``model-index`` results.
TASK_TYPE = "rationale-evaluation"

CITATIONS = {
    "rev": """@inproceedings{chen-etal-2023-rev,
  title     = {{REV}: Information-Theoretic Evaluation of Free-Text Rationales},
  author    = {Chen, Hanjie and Brahman, Faeze and Ren, Xiang and Ji, Yangfeng and Choi, Yejin and Swayamdipta, Swabha},
  booktitle = {Proceedings of the 61st Annual Meeting of the Association for Computational Linguistics},
  year      = {2023},
  url       = {https://arxiv.org/abs/2210.04982}
}""",
    "larev": """@mastersthesis{li-2026-larev,
  title  = {{LAREV}: Leakage-Aware Rationale Evaluation with Conditional V-information},
  author = {Li, Hong-Sian},
  school = {National Taiwan University},
  year   = {2026}
}""",
    "rora": """@inproceedings{jiang-etal-2024-rora,
  title     = {{RoRA}: Robust Free-Text Rationale Evaluation},
  author    = {Jiang, Zhengping and Lu, Yining and Chen, Hanjie and Khashabi, Daniel and Van Durme, Benjamin and Liu, Anqi},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics},
  year      = {2024},
  url       = {https://github.com/zipJiang/RORA}
}""",
}
#: The works each method's card cites: the method itself and what it builds on.
METHOD_CITATIONS = {"rev": ("rev",), "larev": ("larev", "rev"), "rora": ("rora", "rev")}

MODEL_CARD_TEMPLATE = """---
{{ card_data }}
---

# {{ title }}

A **{{ method_title }}** evaluator bundle made with `larev-hf`:
it scores how much new, label-relevant information a free-text rationale adds, in nats.

    {{ formula }}

The bundle holds {{ model_list }}, their tokenizer, {{ builder_sentence }}, the label set, the training
configuration and the training run's report.

## How to use

```bash
pip install larev-hf
```

With `evaluate` (the module `metrics/{{ method }}` of the larev-hf repository):

```python
import evaluate

metric = evaluate.load("metrics/{{ method }}", evaluator="{{ location }}")
results = metric.compute(
    rationales=[{{ example_rationale }}],
    labels=[{{ example_label }}],
    inputs=[{{ example_input }}],
)
print(results["scores"], results["mean_score"], results["hashcode"])
```

Or directly:

```python
from larev_hf.hub import EvaluatorBundle

bundle = EvaluatorBundle.from_pretrained("{{ location }}")
scores = bundle.score(rationales=[...], labels=[...], inputs=[...])
```

### Inputs

- `inputs`: one dict per example with {{ input_fields }}; an optional `id` seeds the baseline's
  surface frame (without it the id is derived from the input text).
- `labels`: {{ label_description }}
- `rationales`: the free-text rationales to score (an empty string scores the baseline alone).
{{ baselines_item }}

Higher is better: a positive score means the rationale made the evaluator more confident in the
label than {{ reference }} alone; ≈ 0 means no new information; negative means it misled.

## Evaluation results

On the {{ split }} split of `{{ dataset }}` (n = {{ n_examples }}): each test example's gold
rationale against its degraded variants (Leaky: the label stated, "The answer is X."; Gold-Leaky:
gold + that sentence; Vacuous: the vacuous baseline b, which restates the input and the label). A good metric scores Gold above every
variant, so larger separations are better.

| Separation | {{ method_title }} | 95% bootstrap interval |
| --- | --- | --- |
{% for row in separation_rows -%}
| {{ row.title }} | {{ row.value }} | {{ row.interval }} |
{% endfor %}
| Variant | Mean score (nats) |
| --- | --- |
{% for row in absolute_rows -%}
| {{ row.title }} | {{ row.value }} |
{% endfor %}
{%- if accuracy_rows %}
Evaluator accuracy on the {{ split }} split (%):

| Model | Input | Accuracy |
| --- | --- | --- |
{% for row in accuracy_rows -%}
| {{ row.model }} | {{ row.input }} | {{ row.value }} |
{% endfor %}
{%- endif %}

## Training

- Data set: `{{ dataset }}`{% if max_train_examples %} (first {{ max_train_examples }} training examples){% endif %}
- Backbone: `{{ backbone }}`; input format `{{ input_format }}`; log p(y | ·) reduction `{{ reduction }}`
- Seed: {{ seed }}
{%- if larev_weights %}
- Leakage-aware objective of the rationale model: {{ larev_weights }}
{%- endif %}

<details>
<summary>Full training configuration</summary>

```json
{{ training_json }}
```

</details>

## Limitations

- Scores are comparable only between rationales scored by the same bundle (the same
  `hashcode`), on inputs like the training data: a different task, domain or label set is out
  of distribution for both evaluators.
- An evaluator trained on one data set's rationales rewards what that data set's rationales
  contain; it is not a judge of truthfulness or of style.
- A `hf` baseline builder loads its generation model by the name stored in the bundle at
  scoring time (a download unless it is cached or passed as `baselines`).

## Citation

```bibtex
{{ citation }}
```
"""


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
    for key in SEPARATIONS:
        low, high = entry["ci95"][key]
        results.append(EvalResult(metric_type=key, metric_name=f"{title} {SEPARATION_TITLES[key]}",
                                  metric_value=float(entry["separations"][key]),
                                  metric_args={"ci95_low": float(low), "ci95_high": float(high)}, **common))
    for variant in VARIANTS:
        results.append(EvalResult(metric_type=f"score_{variant}", metric_name=f"{title} score ({VARIANT_TITLES[variant]})",
                                  metric_value=float(entry["absolute"][variant]), **common))
    return results


def citation(method: str) -> str:
    """BibTeX of the works a ``method``'s bundle rests on."""
    return "\n".join(CITATIONS[key] for key in METHOD_CITATIONS[method])


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
        {"title": SEPARATION_TITLES[k], "value": _fmt(entry["separations"][k]),
         "interval": f"[{_fmt(entry['ci95'][k][0])}, {_fmt(entry['ci95'][k][1])}]"}
        for k in SEPARATIONS
    ]
    absolute_rows = [{"title": VARIANT_TITLES[v], "value": _fmt(entry["absolute"][v])} for v in VARIANTS]
    accuracy_rows = [
        {"model": model, "input": VARIANT_TITLES.get(variant, "b alone" if variant == "baseline" else variant),
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
        template_str=MODEL_CARD_TEMPLATE,
        title=f"{spec.title} evaluator: {config.dataset}, {backbone}",
        method=config.method,
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
    )


def _larev_weights(bundle: EvaluatorBundle) -> dict[str, object]:
    """The penalty weights Φ_LA was trained with (``larev_weights.json`` beside its weights), if any."""
    path = bundle.sources[bundle.config.models["rationale"]] / "larev_weights.json"
    return read_json(path) if path.is_file() else {}


def _is_preset(backbone: str) -> bool:
    from larev_hf.modeling import is_preset

    return is_preset(backbone)
