"""What ``larev-hf meta`` builds and scores, importable without torch (the CLI builds its flags from it)."""

from __future__ import annotations

from dataclasses import dataclass

from larev_hf.lazy import moved
from larev_hf.methods.settings import comma_list, help_field

#: Moved to their packages: read here they still resolve, with a DeprecationWarning, for one release.
__getattr__ = moved(__name__, (), names={"DEFAULT_GENERATORS": "larev_hf.varif.settings",
                                        "VarifSettings": "larev_hf.varif.settings"})

#: Family name → VARIF §4 letter.
FAMILY_LETTERS: dict[str, str] = {"vacuous": "A", "leak": "B", "circular": "C", "pseudo_specific": "D", "drift_model": "E",
                                  "drift": "E", "label_swap": "F"}
#: Families built when ``build_suite(families=None)``, in row order: VARIF §4's, then the four that a surface
#: heuristic cannot pass (:mod:`larev_hf.meta.surface_families`).
DEFAULT_FAMILIES: tuple[str, ...] = ("gold", "gold_leaky", "vacuous", "leak", "circular", "pseudo_specific",
                                     "drift", "label_swap", "input_copy", "hypothesis_copy", "off_topic", "shuffled")
#: The family every other one is ranked against.
REFERENCE = "gold"
#: Splits of a run the suite can be built from.
META_SPLITS = ("test", "validation")


@dataclass
class MetaSettings:
    """What ``larev-hf meta`` builds and scores (VARIF §4-§6); every field is a ``--flag``."""

    families: list[str] = help_field(list(DEFAULT_FAMILIES), "VARSuite families to build and score (comma list; "
                                     "'gold' is the reference and always included)", type=comma_list)
    user_families: list[str] = help_field(
        [], "your own families, NAME=PATH.jsonl (rows: id, rationale, optional label_used), comma list",
        type=comma_list, flag="--user-families")
    methods: list[str] = help_field(
        [], "methods to score (default: the run's methods and every metric baseline whose models are trained)",
        type=comma_list, report_only=True)
    drift_model: str | None = help_field(
        None, "also build family 'drift_model': negation edits by this HF text2text model (Hub name or path), "
        "kept where they are exactly one negation edit, else the rule's")
    split: str = help_field("test", "the run's split the suite is built from", choices=META_SPLITS)
    seed: int | None = help_field(None, "seed of the suite's template draws (default: the run's seed)")
    max_examples: int | None = help_field(None, "only the split's first N examples")
    n_boot: int = help_field(1000, "bootstrap replicates of each AUC interval", report_only=True)

    def user_family_paths(self) -> dict[str, str]:
        """``NAME=PATH`` entries → ``{name: path}``; a malformed entry raises naming it."""
        out = {}
        for entry in self.user_families:
            name, sep, path = entry.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ValueError(f"--user-families entry {entry!r}: expected NAME=PATH.jsonl")
            out[name.strip()] = path.strip()
        return out


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
    n_boot: int = help_field(1000, "bootstrap replicates of the 95%% intervals of Φ(ŷ)", report_only=True)

    def share_values(self, name: str) -> list[float]:
        """``train_shares`` or ``noise_shares`` as numbers (a malformed entry raises naming the flag)."""
        try:
            return [float(value) for value in getattr(self, name)]
        except ValueError as error:
            raise ValueError(f"--{name.replace('_', '-')}: expected numbers, got {getattr(self, name)}") from error

    def seed_values(self) -> list[int]:
        """``seeds`` as integers."""
        try:
            return [int(value) for value in self.seeds]
        except ValueError as error:
            raise ValueError(f"--seeds: expected integers, got {self.seeds}") from error


#: Which instances of a judged file a human-agreement report covers: all, or one half of a split by instance
#: (choose on ``select``, report on ``held``).
HUMAN_HALVES = ("all", "select", "held")


@dataclass
class HumanSettings:
    """What ``larev-hf human`` scores and reports (agreement with human judgments; docs/human.md); every field is a
    ``--flag``."""

    judgments: str | None = help_field(
        None, "judged explanations (JSONL): the run's input fields, 'rationale', an instance 'id' shared by its "
        "explanations, and numeric human columns")
    human_columns: list[str] = help_field(["acceptable"], "numeric human columns (comma list; higher = better)",
                                          type=comma_list, report_only=True)
    baseline_columns: list[str] = help_field(
        [], "numeric columns of the file reported as baselines beside the metrics, NAME (higher = better) or "
        "NAME:lower (lower = better), e.g. gpt3_nll:lower (comma list)", type=comma_list, report_only=True)
    column_mapping: str | None = help_field(
        None, "schema field → the file's column, as for --dataset jsonl, e.g. '{\"label\": \"answer\"}' (default: "
        "schema names; 'answer' stands for a missing 'label')")
    methods: list[str] = help_field(
        [], "methods to score (default: the run's methods and every metric baseline whose models are trained)",
        type=comma_list, report_only=True)
    half: str = help_field("all", "the instances reported: all, or a half of a split by instance (select: where "
                           "changes are chosen; held: where they are reported)", choices=HUMAN_HALVES,
                           report_only=True)
    split_seed: int = help_field(0, "seed of the instance split into halves", report_only=True)
    calibrate: list[str] = help_field(
        [], "also report a calibrated score: a logistic combination of these scored methods (e.g. larev,length,"
        "rouge_l) fitted on the select half's first human column (≥ ½ = acceptable), out-of-fold there, and written to "
        "calibration.json for `larev-hf export --calibration` (comma list)", type=comma_list, report_only=True)
    max_instances: int | None = help_field(None, "only the file's first N instances")
    reduction: str | None = help_field(
        None, "log p(y | ·) as the summed (sum) or REV's mean (mean) label-token log-prob when scoring (default: the "
        "run's; the evaluators are not retrained)", choices=("sum", "mean"))
    n_boot: int = help_field(1000, "bootstrap replicates (resampling instances) of the 95%% intervals",
                             report_only=True)
