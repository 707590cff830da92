"""What ``larev-hf meta`` builds and scores, importable without torch (the CLI builds its flags from it)."""

from __future__ import annotations

from dataclasses import dataclass

from larev_hf.defaults import N_BOOT
from larev_hf.methods.settings import comma_list, help_field

#: Family name → VARIF §4 letter.
FAMILY_LETTERS: dict[str, str] = {"vacuous": "A", "leak": "B", "circular": "C", "pseudo_specific": "D", "drift_model": "E",
                                  "drift": "E", "label_swap": "F"}
#: Families built when ``build_suite(families=None)``, in row order: VARIF §4's, then those that a surface
#: heuristic cannot pass (:mod:`larev_hf.meta.surface_families`), then the gold padded with sentences that add nothing
#: (also :mod:`larev_hf.meta.surface_families`), which catches a score that rewards length.
DEFAULT_FAMILIES: tuple[str, ...] = ("gold", "gold_leaky", "vacuous", "leak", "circular", "pseudo_specific",
                                     "drift", "label_swap", "input_copy", "hypothesis_copy", "off_topic", "shuffled",
                                     "label_only", "padding")
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
    n_boot: int = help_field(N_BOOT, "bootstrap replicates of each AUC interval", report_only=True)
    calibration: str | None = help_field(
        None, "also score a calibrated score (calibration.json of `larev-hf human --calibrate`) like any metric: it "
        "reads the scores of its features, which are scored too", report_only=True)

    def user_family_paths(self) -> dict[str, str]:
        """``NAME=PATH`` entries → ``{name: path}``; a malformed entry raises naming it."""
        out = {}
        for entry in self.user_families:
            name, sep, path = entry.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ValueError(f"--user-families entry {entry!r}: expected NAME=PATH.jsonl")
            out[name.strip()] = path.strip()
        return out


#: Which instances of a judged file a human-agreement report covers: all, or one half of a split by instance
#: (choose on ``select``, report on ``held``).
HUMAN_HALVES = ("all", "select", "held")
#: What the robust calibration's rule reads per VARSuite family: the AUC of every gold row against every attack row
#: (``auc``), or the paired win rate, the share of attack rows whose own gold scores strictly higher (``paired``).
ROBUSTNESS_STATISTICS = ("auc", "paired")


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
    calibration_fit: str = help_field(
        "robust", "how --calibrate chooses its fit: robust (by agreement and by AUC against every VARSuite family on "
        "the run's validation split, with capped text features, so no attack such as a copy of the input can "
        "outscore the gold) or agreement (by agreement with the judgments alone: a copy of the input can outscore "
        "the gold). robust also reports the agreement fit beside it",
        choices=("robust", "agreement"), report_only=True)
    robustness_examples: int = help_field(
        1000, "--calibrate: examples of the run's validation split (to choose the fit) and test split (to report its "
        "robustness) that VARSuite is built from", report_only=True)
    robustness_report_split: str = help_field(
        "test", "--calibrate robust: the split whose VARSuite rows report the chosen calibration's AUC against every "
        "family (test), or none: the choice and the calibration are the same, the report leaves that section out (a "
        "named evaluator's build, whose bundle does not carry it)", choices=("test", "none"), report_only=True)
    robustness_fit_split: str = help_field(
        "train", "--calibrate robust: the split whose VARSuite rows enter the fit as unacceptable explanations: train "
        "(the whole validation split then checks the choice) or validation (alternate examples, the others check it: "
        "half as many, which on a small split may not hold on the test split; measured: docs/human.md, 'A calibration "
        "that cannot be gamed')",
        choices=("train", "validation"), report_only=True)
    robustness_statistic: str = help_field(
        "auc", "--calibrate robust: what the rule reads per VARSuite family: auc (every gold row against every attack "
        "row, across examples) or paired (the share of attack rows whose own gold scores strictly higher: a feature "
        "that is the same for a gold and its attack then costs nothing; docs/human.md, 'Candidate recipes for the "
        "calibrated score')", choices=ROBUSTNESS_STATISTICS, report_only=True)
    max_instances: int | None = help_field(None, "only the file's first N instances")
    reduction: str | None = help_field(
        None, "log p(y | ·) as the summed (sum) or REV's mean (mean) label-token log-prob when scoring (default: the "
        "run's; the evaluators are not retrained)", choices=("sum", "mean"))
    n_boot: int = help_field(N_BOOT, "bootstrap replicates (resampling instances) of the 95%% intervals",
                             report_only=True)
