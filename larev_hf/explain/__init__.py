"""What VARIF and FRAME share: the models that write explanations and those that read them.

- writers: the explanation generators VARIF compares (:mod:`~larev_hf.explain.generators`: gold, templates,
  extractive heuristics, any text2text model, a user's file) and the self-rationalizing task model F
  (:mod:`~larev_hf.explain.task_model`: FRAME's F, VARIF's ``self_rationalizer``);
- readers: the NLI judge (:mod:`~larev_hf.explain.nli`: VARIF's Sim_NLI and paraphrase filter) and a seq2seq reader's
  log p(y | ·) over the record's choices (:mod:`~larev_hf.explain.choices`: LC-IG's predictors, FRAME's G and H);
- the run directory both ``larev-hf varif`` and ``larev-hf frame`` keep their stages in
  (:mod:`~larev_hf.explain.run_dir`).

It imports nothing of :mod:`larev_hf.varif` or :mod:`larev_hf.frame`; they meet only here. Every name loads on first
use (:mod:`larev_hf.lazy`).
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.explain.choices import RATIONALE_SEPARATOR, augmented_input, choice_log_probs
    from larev_hf.explain.generated import (
        ExplanationMetrics,
        GenerationScorer,
        score_saved_generations,
        trainer_metrics,
    )
    from larev_hf.explain.generators import (
        ExplanationGenerator,
        GoldGenerator,
        JsonlGenerator,
        RandomKGenerator,
        SelfRationalizerGenerator,
        TemplateGenerator,
        Text2TextGenerator,
        TfidfTopKGenerator,
        build_generator,
        raw_input_text,
    )
    from larev_hf.explain.nli import NLIJudge, train_nli_judge
    from larev_hf.explain.run_dir import DatasetRunDirectory
    from larev_hf.explain.task_model import (
        SelfRationalizer,
        parse_self_rationalization,
        self_rationalization_target,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "generators": (
        "ExplanationGenerator", "GoldGenerator", "JsonlGenerator", "RandomKGenerator", "SelfRationalizerGenerator",
        "TemplateGenerator", "Text2TextGenerator", "TfidfTopKGenerator", "build_generator", "raw_input_text"
    ),
    "task_model": ("SelfRationalizer", "parse_self_rationalization", "self_rationalization_target"),
    "nli": ("NLIJudge", "train_nli_judge"),
    "choices": ("RATIONALE_SEPARATOR", "augmented_input", "choice_log_probs"),
    "run_dir": ("DatasetRunDirectory",),
    "generated": ("ExplanationMetrics", "GenerationScorer", "score_saved_generations", "trainer_metrics"),
})
