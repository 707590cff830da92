"""larev-hf: leakage-aware evaluation of free-text rationales (LAREV, REV) in the HuggingFace ecosystem.

The flow: ``larev_hf.data`` (loaders, baselines, variants) → ``larev_hf.modeling`` (backbones,
batched label scoring) → ``larev_hf.training`` → ``larev_hf.scores`` → ``larev_hf.report``;
``larev_hf.pipeline`` runs the stages and ``larev_hf.cli`` is the ``larev-hf`` command.
"""

__version__ = "0.1.0.dev0"
