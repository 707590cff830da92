"""What ``larev-hf frame`` trains and measures, importable without torch (the CLI builds its flags from it)."""

from __future__ import annotations

from dataclasses import dataclass

from larev_hf.defaults import N_BOOT
from larev_hf.methods.settings import comma_list, help_field, seed_values

#: FRAME's four RLC metrics (§3.3), in table order.
FRAME_METRICS: tuple[str, ...] = ("f_gold", "gh_gold", "gh_pred", "np_gh_pred")


@dataclass
class FrameSettings:
    """What ``larev-hf frame`` trains and measures (FRAME §3-§4, ``papers/frame.txt``; the offline stand-ins and the
    choices the paper leaves open are documented in docs/frame.md); every field is a ``--flag``."""

    dataset: str = help_field("esnli", "dataset kind (FRAME: e-SNLI and CoS-E)",
                              choices=("esnli", "cose", "ecqa", "strategyqa", "jsonl"))
    data_dir: str | None = help_field(None, "local directory with {train,test}.jsonl, or a Hub dataset name")
    max_train_examples: int | None = help_field(2000, "training examples of F and of the simulators G, H (the "
                                                "split's first N)")
    max_eval_examples: int | None = help_field(500, "test examples Φ is measured on (the first N)")
    task_backbone: str = help_field("t5-tiny", "the task model F (T5-Base in the paper): a preset or an HF seq2seq "
                                    "checkpoint")
    pretrained_simulator: str = help_field("minilm2minilm", "G and H of GH-GOLD and GH-PRED (pretrained; T5-Base in "
                                           "the paper)")
    scratch_simulator: str = help_field("minilm2minilm-scratch", "G and H of NP-GH-PRED (the same architecture with "
                                        "random weights)")
    capacity_backbones: list[str] = help_field(
        ["t5-tiny", "t5-mini", "t5-midi"], "axiom 3 (C): F at these sizes (comma list; T5-Small/Base/Large in the "
        "paper)", type=comma_list)
    train_shares: list[str] = help_field(["1.0", "0.5", "0.3", "0.1"], "axiom 3 (A): F trained on these shares of "
                                         "the training split (comma list)", type=comma_list)
    noise_shares: list[str] = help_field(["0.0", "0.1", "0.3", "0.5"], "axiom 3 (B): F trained with these shares of "
                                         "its training labels replaced by another class (comma list)", type=comma_list)
    seeds: list[str] = help_field(["0", "1", "2"], "seeds (comma list); every cell is a mean ± std over them; adding "
                                  "seeds to a finished run trains only theirs", type=comma_list, report_only=True)
    metrics: list[str] = help_field(list(FRAME_METRICS), "RLC metrics compared (comma list of "
                                    + ", ".join(FRAME_METRICS) + ")", type=comma_list)
    axioms: list[str] = help_field(["1", "2", "3"], "axioms measured (comma list of 1, 2, 3)", type=comma_list)
    num_train_epochs: float | None = help_field(None, "epochs of every trained model (default: each backbone's)")
    learning_rate: float | None = help_field(None, "learning rate of every pretrained model trained (F, GH-GOLD's "
                                             "and GH-PRED's G and H; default: each backbone's); models from random "
                                             "weights keep their backbone's")
    f_label_decoding: str = help_field(
        "auto", "how F's label is read: generate (greedy; a label that is no choice is repaired to the nearest), "
        "score (the choice c with the highest log p('c explanation:' | x), then r̂ generated after it), auto (score "
        "for QA, generate for NLI)", choices=("auto", "generate", "score"))
    h_rationales: list[str] = help_field(
        ["gold", "label"], "what H reads in training, drawn per example (comma list): gold (the reference "
        "rationale ṙ), label (the label H learns, stated alone); FRAME leaves it open (Fig. 4)", type=comma_list)
    library_run: str | None = help_field(
        None, "a trained `larev-hf run` directory on the same dataset: its metrics (REV, LAREV, RoRA, LAS, RQ) are "
        "put through the same axioms with their pointwise scores (docs/frame.md); adding it to a finished run scores "
        "only them", report_only=True)
    library_methods: list[str] = help_field([], "the library run's metrics to put through the axioms (comma list; "
                                            "default: all the run has trained)", type=comma_list, report_only=True)
    scv_denominator: str = help_field(
        "abs", "SCV of axiom 3: 'abs' σ/|μ| where μ(Φ(ŷ)) < 0 (F-GOLD's always is; the paper prints positive SCVs for "
        "it), 'signed' σ/μ, undefined for μ ≤ 0", choices=("abs", "signed"), report_only=True)
    n_boot: int = help_field(N_BOOT, "bootstrap replicates of the 95%% intervals of Φ(ŷ)", report_only=True)

    def share_values(self, name: str) -> list[float]:
        """``train_shares`` or ``noise_shares`` as numbers (a malformed entry raises naming the flag)."""
        try:
            return [float(value) for value in getattr(self, name)]
        except ValueError as error:
            raise ValueError(f"--{name.replace('_', '-')}: expected numbers, got {getattr(self, name)}") from error

    def seed_values(self) -> list[int]:
        """``seeds`` as integers (:func:`~larev_hf.methods.settings.seed_values`)."""
        return seed_values(self.seeds)
