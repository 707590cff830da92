"""FRAME: the axioms of rationale-label consistency metrics (Chan et al., 2022; ``papers/frame.txt``; docs/frame.md).

- :mod:`~larev_hf.frame.meta_metrics`: Φ, MAR, ASD, SCV, NRG, the perturbations Ψe, Ψc and the paper's tables, and
  :mod:`~larev_hf.frame.seeds`: one seed's results and their aggregate over the seeds (both numpy only);
- :mod:`~larev_hf.frame.run`: ``larev-hf frame`` (:class:`~larev_hf.frame.run.FrameRun`, its settings in
  :mod:`~larev_hf.frame.settings`, torch-free) as stages (:mod:`~larev_hf.frame.stages`): the task models F and their
  variants (:mod:`~larev_hf.frame.variants`), the simulators G and H (:mod:`~larev_hf.frame.simulators`), the axioms'
  predictions, the library's scores; where each is written (:mod:`~larev_hf.frame.run`); the report
  (:mod:`~larev_hf.frame.report`);
- :mod:`~larev_hf.frame.library`: the library's own metrics (a trained ``--library-run``) through the same axioms.

The task model F and the choice log-probabilities its simulators read with are shared with VARIF
(:mod:`larev_hf.explain`). Every name loads on first use (:mod:`larev_hf.lazy`).
"""

from typing import TYPE_CHECKING

from larev_hf.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy table below serves, spelled out for IDEs and type checkers
    from larev_hf.frame.library import LibraryRun
    from larev_hf.frame.meta_metrics import (
        AXIOM_META_METRICS,
        NLI_PARAPHRASES,
        QA_PREFIXES,
        asd,
        contrastive_perturbation,
        equivalent_perturbation,
        mar,
        noisy_labels,
        nrg,
        phi,
        scv,
    )
    from larev_hf.frame.report import plot_axioms, render_frame_markdown, write_frame_report
    from larev_hf.frame.run import RLC_METRICS, FramePaths, FrameRun, frame_main
    from larev_hf.frame.seeds import aggregate_seeds, axiom_nrg, seed_results
    from larev_hf.frame.settings import FRAME_METRICS, FrameSettings
    from larev_hf.frame.simulators import SimulatorPair, Simulators, generate_labels, h_training_rationales
    from larev_hf.frame.stages import FrameStage, frame_stages
    from larev_hf.frame.variants import (
        BASE,
        Variant,
        rationale_texts,
        rationale_types,
        train_subset,
        variant_plan,
    )


__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("FRAME_METRICS", "FrameSettings"),
    "meta_metrics": (
        "AXIOM_META_METRICS", "NLI_PARAPHRASES", "QA_PREFIXES", "asd", "contrastive_perturbation",
        "equivalent_perturbation", "mar", "noisy_labels", "nrg", "phi", "scv"
    ),
    "seeds": ("aggregate_seeds", "axiom_nrg", "seed_results"),
    "variants": ("BASE", "Variant", "rationale_texts", "rationale_types", "train_subset", "variant_plan"),
    "simulators": ("SimulatorPair", "Simulators", "generate_labels", "h_training_rationales"),
    "stages": ("FrameStage", "frame_stages"),
    "library": ("LibraryRun",),
    "run": ("FramePaths", "FrameRun", "RLC_METRICS", "frame_main"),
    "report": ("plot_axioms", "render_frame_markdown", "write_frame_report"),
})
