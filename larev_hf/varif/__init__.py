"""VARIF: explanation methods on robustness R, leakage-controlled informativeness I and specificity S
(``papers/varif-proposal.md`` §3, §6; docs/varif.md).

- :mod:`~larev_hf.varif.measures`: the arithmetic (Sim_NLI, R, Ĩ, S, H, the scalar VARIF, the Pareto frontier and its
  hypervolume), numpy only;
- :mod:`~larev_hf.varif.perturb`: the perturbations P(x); :mod:`~larev_hf.varif.lcig`: LC-IG's predictors and masks;
  :mod:`~larev_hf.varif.specificity`: S from sentence embeddings;
- :mod:`~larev_hf.varif.run`: ``larev-hf varif`` (:class:`~larev_hf.varif.run.VarifRun`), its settings
  (:mod:`~larev_hf.varif.settings`, torch-free), its stages (:mod:`~larev_hf.varif.stages`) and report
  (:mod:`~larev_hf.varif.report`).

The explanation generators, the self-rationalizer and the NLI judge it compares and judges with are shared with FRAME
(:mod:`larev_hf.explain`). Every name loads on first use (:mod:`larev_hf.lazy`). The measure ``specificity`` is read
from :mod:`larev_hf.varif.measures`: as a package attribute it would be shadowed by the submodule of that name.
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.varif.lcig import LCIG, MaskSettings, mask_rationales
    from larev_hf.varif.measures import (
        EntailmentFn,
        harmonic,
        hypervolume_2d,
        identity_aware,
        keep_equivalent,
        pareto_front,
        robustness,
        sim_nli,
        transform_informativeness,
        varif_scores,
    )
    from larev_hf.varif.perturb import format_perturbation, hf_paraphraser, perturb_records, rule_paraphrases
    from larev_hf.varif.report import (
        check_hypotheses,
        plot_frontier,
        render_varif_markdown,
        summarize_varif,
        write_varif_report,
    )
    from larev_hf.varif.run import VarifRun
    from larev_hf.varif.settings import DEFAULT_GENERATORS, VarifSettings, generator_name
    from larev_hf.varif.specificity import SentenceEmbedder, other_inputs, specificity_scores
    from larev_hf.varif.stages import varif_stages


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("DEFAULT_GENERATORS", "VarifSettings", "generator_name"),
    "measures": (
        "EntailmentFn", "harmonic", "hypervolume_2d", "identity_aware", "keep_equivalent", "pareto_front",
        "robustness", "sim_nli", "transform_informativeness", "varif_scores"
    ),
    "perturb": ("format_perturbation", "hf_paraphraser", "perturb_records", "rule_paraphrases"),
    "lcig": ("LCIG", "MaskSettings", "mask_rationales"),
    "specificity": ("SentenceEmbedder", "other_inputs", "specificity_scores"),
    "run": ("VarifRun",),
    "stages": ("varif_stages",),
    "report": ("check_hypotheses", "plot_frontier", "render_varif_markdown", "summarize_varif", "write_varif_report"),
})
