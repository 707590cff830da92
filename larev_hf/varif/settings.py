"""What ``larev-hf varif`` builds and measures, importable without torch (the CLI builds its flags from it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from larev_hf.defaults import IG_STEPS, LCIG_IG_LABELS, LCIG_MASK_SHARE, LCIG_MAX_MASKED, N_BOOT
from larev_hf.methods.settings import comma_list, help_field

#: Generators compared by ``larev-hf varif`` when ``--generators`` is not given (VARIF §2, §4: natural methods, then
#: the suite's templates as attack methods).
DEFAULT_GENERATORS: tuple[str, ...] = ("gold", "self_rationalizer", "tfidf", "random", "vacuous", "leak", "circular",
                                       "pseudo_specific")


@dataclass
class VarifSettings:
    """What ``larev-hf varif`` builds and measures (VARIF §3; the choices the proposal leaves open are documented in
    docs/varif.md); every field is a ``--flag``."""

    dataset: str = help_field("esnli", "dataset kind", choices=("esnli", "cose", "strategyqa", "ecqa", "jsonl"))
    data_dir: str | None = help_field(None, "local directory with {train,validation,test}.jsonl, or a Hub dataset name")
    generators: list[str] = help_field(
        list(DEFAULT_GENERATORS), "explanation methods to compare (comma list): gold, self_rationalizer, tfidf[:K], "
        "random[:K], vacuous, leak, circular, pseudo_specific, gold_leaky, hf:NAME_OR_PATH, NAME=jsonl:PATH; adding "
        "one to a finished run measures only it", type=comma_list, report_only=True)
    max_train_examples: int | None = help_field(5000, "training examples for the self-rationalizer and LC-IG's "
                                                "predictors (the split's first N)")
    max_eval_examples: int | None = help_field(500, "test examples whose explanations are measured (the first N)")
    backbone: str = help_field("t5-tiny", "LC-IG's predictors h0, h1, d and the self-rationalizer: a preset or an HF "
                               "seq2seq checkpoint")
    num_train_epochs: float | None = help_field(None, "epochs of every trained model (default: the backbone's)")
    nli_model: str | None = help_field(
        None, "NLI judge of Sim_NLI and the paraphrase filter: any HF NLI sequence classifier by name or path "
        "(roberta-large-mnli in the paper); default: a MiniLM cross-encoder trained in the run on --nli-data-dir")
    nli_data_dir: str | None = help_field(
        None, "e-SNLI directory the default NLI judge is trained on (default: --data-dir when --dataset esnli)")
    nli_train_examples: int | None = help_field(None, "e-SNLI training pairs of the default judge (default: all)")
    nli_eval_examples: int | None = help_field(None, "e-SNLI test pairs the default judge's accuracy is measured on "
                                               "(default: all)", report_only=True)
    paraphraser: str = help_field("rules", "paraphrases of the query: 'rules' (offline, docs/varif.md) or an HF "
                                  "text2text paraphraser by name or path (Vamsi/T5_Paraphrase_Paws in the paper)")
    k_paraphrases: int = help_field(2, "paraphrase perturbations per example (plus one format perturbation)")
    nli_threshold: float = help_field(0.5, "a paraphrase is kept when p(entailment) exceeds this both ways")
    h1_null_rationales: float = help_field(
        0.5, "LC-IG: share of training examples h1 also sees with an empty rationale (x ⊕ ∅ → y), so a rationale "
        "that says nothing falls back to p(y | x) instead of going out of distribution; 0: the proposal's h1")
    mask_share: float = help_field(LCIG_MASK_SHARE, "LC-IG: share of r's words masked by IG (§3.2: 10%%)")
    max_masked: int = help_field(LCIG_MAX_MASKED, "LC-IG: at most this many words masked by IG (§3.2: 10)")
    ig_labels: str = help_field(LCIG_IG_LABELS, "LC-IG: IG towards every label's logit, a word scored by its largest "
                                "attribution (label-symmetric, default) or the gold label's only (the proposal)",
                                choices=("all", "gold"))
    ig_steps: int = help_field(IG_STEPS, "LC-IG: integrated-gradients steps")
    other_inputs: int = help_field(50, "M of the specificity S: other inputs each explanation is compared with")
    informativeness_transform: str = help_field("exp", "Ĩ from I: 'exp' (1 − e^(−max(I, 0))) or 'minmax'",
                                                choices=("exp", "minmax"), report_only=True)
    eps: float = help_field(1e-8, "ε of H = 2RĨ/(R + Ĩ + ε)", report_only=True)
    reference_point: list[str] = help_field(["0", "0"], "hypervolume reference point R,Ĩ", type=comma_list,
                                            report_only=True)
    seed: int = help_field(0, "seed of training, template draws, perturbations and the M other inputs")
    n_boot: int = help_field(N_BOOT, "bootstrap replicates of the 95%% intervals", report_only=True)


def generator_name(spec: str) -> str:
    """The stage/file name of a generator spec (a ``--generators`` entry): ``NAME=...`` → NAME, ``hf:org/model`` →
    ``hf-model``, ``tfidf:3`` → ``tfidf3``, else the spec."""
    name, sep, rest = spec.partition("=")
    if sep:
        return name.strip()
    if spec.startswith("hf:"):
        return "hf-" + Path(spec[3:].rstrip("/")).name
    if spec.startswith("jsonl:"):
        return Path(spec[6:]).stem
    return re.sub(r"[^\w-]", "", spec.replace(":", ""))
