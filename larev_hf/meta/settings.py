"""What ``larev-hf meta`` builds and scores, importable without torch (the CLI builds its flags from it)."""

from __future__ import annotations

from dataclasses import dataclass

from larev_hf.methods.settings import comma_list, help_field

#: Family name → VARIF §4 letter.
FAMILY_LETTERS: dict[str, str] = {"vacuous": "A", "leak": "B", "circular": "C", "pseudo_specific": "D", "drift_model": "E",
                                  "drift": "E", "label_swap": "F"}
#: Families built when ``build_suite(families=None)``, in row order.
DEFAULT_FAMILIES: tuple[str, ...] = ("gold", "gold_leaky", "vacuous", "leak", "circular", "pseudo_specific",
                                     "drift", "label_swap")
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
