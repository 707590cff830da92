"""FRAME: the axioms of rationale-label consistency metrics (Chan et al., 2022; ``papers/frame.txt``; docs/frame.md).

- :mod:`~larev_hf.frame.meta_metrics`: Φ, MAR, ASD, SCV, NRG, the perturbations Ψe, Ψc and the paper's tables
  (numpy only);
- :mod:`~larev_hf.frame.run`: ``larev-hf frame`` (:class:`~larev_hf.frame.run.FrameRun`), its settings
  (:mod:`~larev_hf.frame.settings`, torch-free) and report (:mod:`~larev_hf.frame.report`);
- :mod:`~larev_hf.frame.library`: the library's own metrics through the same axioms.

The task model F and the choice log-probabilities its simulators read with are shared with VARIF
(:mod:`larev_hf.explain`). Every name loads on first use (:mod:`larev_hf.lazy`).
"""

from larev_hf.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "settings": ("FRAME_METRICS", "FrameSettings"),
    "meta_metrics": (
        "AXIOM_META_METRICS", "NLI_PARAPHRASES", "QA_PREFIXES", "asd", "contrastive_perturbation",
        "equivalent_perturbation", "mar", "noisy_labels", "nrg", "phi", "scv"
    ),
    "run": ("FrameRun", "RLC_METRICS", "SimulatorPair", "Simulators", "aggregate_seeds", "seed_results"),
    "report": ("plot_axioms", "render_frame_markdown"),
})
