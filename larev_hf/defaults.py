"""Defaults that more than one settings dataclass carries, each declared once here.

A library dataclass (``IGSettings``, ``IRMArguments``, ``DetectorSettings``, ``MaskSettings``) and the command-line
settings that feed it (``LarevSettings``, ``RoRASettings``, ``VarifSettings``) take the same default from one name
below, so changing a default is one edit and the flag's default cannot drift from the library's
(``tests/test_one_declaration.py`` checks that no dataclass spells a shared default out again). A run setting that is
a trainer's own field takes that field whole (:func:`larev_hf.training.settings.trainer_field`). The defaults a
backbone decides are :data:`larev_hf.modeling.presets.KIND_DEFAULTS`; the penalties' warm-up is
:data:`larev_hf.training.settings.PENALTY_WARMUP_RATIO`. A leaf module: it imports nothing.
"""

from __future__ import annotations

#: Bootstrap resamples of every 95% interval (a run's report, ``meta``, ``human``, VARIF, FRAME).
N_BOOT = 1000

#: Integrated Gradients steps (the Riemann approximation of the path integral): LAREV's leakage term t_leak on
#: Φ_base (thesis §4.5.2), RoRA's n-gram detector (RoRA §3.1) and VARIF's LC-IG masks (§3.2).
IG_STEPS = 20
#: Words per leakage term t_leak (thesis §4.5.2: the single most attributed word).
IG_TOP_K = 1
#: What IG attributes: log p(y | b) as in the thesis (eq. 4.2), or y's log-odds against the other labels.
IG_TARGET = "log_prob"
IG_TARGETS = ("log_prob", "log_odds")
#: Where LAREV's leakage term t_leak comes from: Integrated Gradients on Φ_base (the thesis, §4.5.2), or the gold
#: label's verbalization where the baseline states it verbatim (IG for the others).
LEAKAGE_TERM = "ig"
LEAKAGE_TERMS = ("ig", "verbalization")
#: The rationales LAREV-NI's Φ_NI is trained to stay unsure on (docs/method.md, "8c"): none, a label statement, a copy
#: of the input, another training instance's explanation.
UNINFORMATIVE_KINDS = ("empty", "label", "copy", "other_instance")
#: Keep IG from picking a stop word as t_leak (the next most attributed word is taken instead).
STOP_WORD_GUARD = True

#: LAREV's probe term on every n-th step only, weighted n·λ_probe; 1 is the thesis's objective (eq. 4.10).
PROBE_EVERY_N_STEPS = 1

#: RoRA's detector: an n-gram leaks when its global attribution exceeds this (RoRA appendix C.2) ...
RORA_THRESHOLD = 0.001
#: ... and when no more than 8 do, its top-k n-grams are masked.
RORA_TOP_K = 2

#: VARIF's LC-IG (§3.2 Step B): the share of r's words IG masks, at most this many, towards which labels.
LCIG_MASK_SHARE = 0.1
LCIG_MAX_MASKED = 10
LCIG_IG_LABELS = "all"

#: The dataset columns of environment-grouped training: a row's environment index and the instance it belongs to.
ENVIRONMENT_COLUMN = "environment"
GROUP_COLUMN = "group_id"
#: The token ids of the leakage-masked baseline b̃ that the frozen probe ψ decodes the label from (one per group).
PROBE_COLUMN = "probe_input_ids"
