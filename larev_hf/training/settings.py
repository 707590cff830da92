"""Training settings shared by every evaluator, and the fields of the IRM trainers' configs, importable without torch
(the CLI builds its flags from them).

Each knob is one field here: :class:`TrainSettings` (what every trained model trains with) and :class:`IRMArguments`
(what an IRM trainer adds to ``Seq2SeqTrainingArguments``; :class:`~larev_hf.training.IRMProbeConfig` is these fields
plus HF's). A run's settings take these fields with :func:`trainer_field` instead of declaring their own, and hand their
values on with :func:`trainer_values`: flag → run setting → trainer config, one declaration.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from larev_hf.defaults import ENVIRONMENT_COLUMN, GROUP_COLUMN, PROBE_COLUMN, PROBE_EVERY_N_STEPS
from larev_hf.modeling.lora_settings import LoraSettings
from larev_hf.modeling.presets import KIND_DEFAULTS, fill_backbone_defaults

if TYPE_CHECKING:
    from transformers import PreTrainedModel, Seq2SeqTrainingArguments

#: Both LAREV penalties (and RoRA's) rise linearly from 0 over this share of the training steps (thesis §5.3.3).
PENALTY_WARMUP_RATIO = 1 / 3
#: The per-example NLL the library's own evaluators train with (``larev-hf run``, the named recipes): the sum over the
#: label's tokens, −log p(y|·), as the scores use. :func:`~larev_hf.training.train_irm` passes it unless told otherwise,
#: so their recorded scores do not move with :class:`IRMArguments`' default, which is the per-token mean for scripts.
LIBRARY_TOKEN_REDUCTION = "sum"
#: What a field left ``None`` in a run's settings means (:func:`trainer_field` adds it to the help).
BACKBONE_DECIDES = "default: the backbone's; larev_hf.modeling.presets"


def trainer_field(config: type, name: str, default: Any = dataclasses.MISSING, **metadata: Any) -> Any:
    """A run setting that *is* field ``name`` of the trainer config ``config``: its help (and, unless ``default`` is
    given, its default) come from there, and ``metadata["trainer_field"]`` names it, so :func:`trainer_values` hands
    the value on. ``default=None`` means the backbone decides (said in the help); ``metadata`` adds the run's own
    (``stages``, ``report_only``)."""
    source = next(f for f in dataclasses.fields(config) if f.name == name)
    help_text = source.metadata["help"] + (f" ({BACKBONE_DECIDES})" if default is None else "")
    value = source.default if default is dataclasses.MISSING else default
    return field(default=value, metadata={"help": help_text, "trainer_field": name, **metadata})


def trainer_values(settings: Any) -> dict[str, Any]:
    """The values of ``settings``' :func:`trainer_field` fields, by the trainer config's field names."""
    return {f.metadata["trainer_field"]: getattr(settings, f.name) for f in dataclasses.fields(settings)
            if "trainer_field" in f.metadata}


@dataclass
class IRMArguments:
    """The fields an IRM trainer adds to ``Seq2SeqTrainingArguments`` (thesis eq. 4.9-4.10), declared once:
    :class:`~larev_hf.training.IRMProbeConfig` is them plus HF's fields, LAREV's and RoRA's run settings take them
    (:func:`trainer_field`). The weights' defaults are the random-init presets' (``KIND_DEFAULTS``); a run passes its
    backbone's."""

    lambda_irm: float = field(
        default=KIND_DEFAULTS["random_init"]["lambda_irm"],
        metadata={"help": "weight λ_IRM of the IRMv1 penalty Σ_e ‖∇_w L^e‖² (Arjovsky et al. 2019; LAREV eq. 4.10, "
                          "RoRA eq. 7; 0 = ablation)"})
    lambda_probe: float = field(
        default=KIND_DEFAULTS["random_init"]["lambda_probe"],
        metadata={"help": "weight λ_probe of the subtracted frozen-probe loss (thesis eq. 4.10; 0 = ablation)"})
    penalty_warmup_ratio: float = field(
        default=PENALTY_WARMUP_RATIO,
        metadata={"help": "linear warm-up of both penalties over this share of steps (thesis §5.3.3)"})
    token_reduction: str = field(
        default="mean", metadata={"help": "per-example label NLL: 'mean' of its token NLLs (nats per token, the scale "
                                          "of Seq2SeqTrainer's loss) or their 'sum' (−log p(y|·), what the scores use "
                                          "and the library's own evaluators train with)"})
    probe_max_loss: float | None = field(
        default=None, metadata={"help": "clamp the subtracted probe loss at this value (None: no clamp), so maximising "
                                        "it cannot run away"})
    probe_every_n_steps: int = field(
        default=PROBE_EVERY_N_STEPS,
        metadata={"help": "probe term on every n-th step only, weighted n·λ_probe (cheaper; 1 = the thesis)"})
    environment_column: str = field(default=ENVIRONMENT_COLUMN,
                                    metadata={"help": "integer environment index column"})
    group_column: str = field(default=GROUP_COLUMN, metadata={"help": "group (instance) column; batches hold whole groups"})
    probe_column: str = field(default=PROBE_COLUMN, metadata={
        "help": "token ids of the probe's leakage-masked baseline b̃ (with a probe model only)"})

    def removable_columns(self, column_names: Sequence[str]) -> list[str]:
        """``column_names`` without the ones the trainer reads (environment, group, probe input): what to pass as
        ``remove_columns`` to the ``map`` that tokenizes a split, so those columns survive it as HF's scripts write it:
        ``dataset.map(preprocess, batched=True, remove_columns=training_args.removable_columns(column_names))``."""
        kept = {self.environment_column, self.group_column, self.probe_column}
        return [name for name in column_names if name not in kept]

    def validate_irm(self) -> None:
        """Refuse negative weights, a warm-up outside [0, 1], ``probe_every_n_steps`` < 1, an unknown reduction."""
        if self.lambda_irm < 0 or self.lambda_probe < 0:
            raise ValueError(f"penalty weights must be >= 0, got lambda_irm={self.lambda_irm}, lambda_probe={self.lambda_probe}")
        if not 0 <= self.penalty_warmup_ratio <= 1:
            raise ValueError(f"penalty_warmup_ratio must be in [0, 1], got {self.penalty_warmup_ratio}")
        if self.probe_every_n_steps < 1:
            raise ValueError(f"probe_every_n_steps must be >= 1, got {self.probe_every_n_steps}")
        if self.token_reduction not in ("sum", "mean"):
            raise ValueError(f"token_reduction must be 'sum' or 'mean', got {self.token_reduction!r}")


@dataclass
class BackboneOptimiser:
    """The optimiser settings a backbone decides where a caller leaves them ``None``: what
    :meth:`TrainSettings.for_backbone` hands to :func:`~larev_hf.modeling.presets.fill_backbone_defaults`, the one place
    a backbone decides (the run's ``TrainingSection`` is filled there too)."""

    learning_rate: float | None = None
    num_train_epochs: float | None = None
    batch_size: int | None = None


@dataclass
class TrainSettings:
    """What a pipeline stage needs to train one evaluator (a small subset of ``Seq2SeqTrainingArguments``). The run's
    training flags are these fields (``TrainingSection`` takes them with :func:`trainer_field`)."""

    #: the random-init presets' values (:data:`~larev_hf.modeling.presets.KIND_DEFAULTS`); a run passes its backbone's
    learning_rate: float = field(default=KIND_DEFAULTS["random_init"]["learning_rate"],
                                 metadata={"help": "AdamW learning rate of every trained model"})
    num_train_epochs: float = field(default=KIND_DEFAULTS["random_init"]["num_train_epochs"],
                                    metadata={"help": "training epochs of every trained model"})
    batch_size: int = field(default=KIND_DEFAULTS["random_init"]["batch_size"],
                            metadata={"help": "training batch size of every trained model"})
    seed: int = field(default=0, metadata={"help": "random seed of data sampling, initialisation and training"})
    max_input_length: int = 256
    max_label_length: int = 32
    bf16: bool = field(default=False, metadata={
        "help": "train every model in bf16 autocast, and score it so, where the hardware computes bf16 natively (a "
                "GPU, a CPU with AMX or AVX512-BF16; elsewhere fp32): the models record it, so a bundle scores the "
                "same way (docs/scale.md)"})
    fp16: bool = False
    progress: bool = True
    lora: LoraSettings | None = None
    group_by_length: bool = field(default=False, metadata={
        "help": "train every model on batches of rows of similar input length (whole environment groups for Φ_LA), in "
                "random batch order, so little of a batch is padding; every row is still seen once per epoch. Off by "
                "default: on small sets whose input length follows the label such batches hold mostly one label "
                "(docs/scale.md)"})
    freeze_word_embeddings: bool = field(default=False, metadata={
        "help": "keep every trained model's word embeddings (and a tied output projection) at their starting values: "
                "no gradient and no AdamW state for them; it changes what is trained, so the report names it "
                "(docs/scale.md measures speed and scores)"})

    def __post_init__(self) -> None:
        self.batch_size = int(self.batch_size)

    @classmethod
    def for_backbone(cls, backbone: str, learning_rate: float | None = None, num_train_epochs: float | None = None,
                     batch_size: int | None = None, **values: Any) -> TrainSettings:
        """Settings for ``backbone``: each of learning rate, epochs and batch size as given, else (``None``) the
        backbone's, decided where a run's are (:func:`~larev_hf.modeling.presets.fill_backbone_defaults`); ``values``
        set the other fields."""
        optimiser = BackboneOptimiser(learning_rate, num_train_epochs, batch_size)
        fill_backbone_defaults(optimiser, backbone)
        return cls(**dataclasses.asdict(optimiser), **values)

    def prepare_model(self, model: PreTrainedModel, decoder_only: bool = False) -> PreTrainedModel:
        """``model`` ready to train: word embeddings frozen when ``freeze_word_embeddings`` is set, wrapped in LoRA
        adapters when ``lora`` is set (decoder layers only for the probe)."""
        from larev_hf.modeling.backbones import freeze_word_embeddings
        from larev_hf.modeling.lora import apply_lora, is_peft_model
        from larev_hf.modeling.precision import mark_bf16

        if self.uses_bf16():
            mark_bf16(model)  # saved with the weights: every later scoring of the model computes in bf16 too
        if self.freeze_word_embeddings:
            freeze_word_embeddings(model)
        if self.lora is None or is_peft_model(model):
            return model
        return apply_lora(model, self.lora, decoder_only=decoder_only)

    def uses_bf16(self) -> bool:
        """Whether training runs in bf16 autocast: ``bf16`` asked for and the training device computes it natively
        (:func:`~larev_hf.modeling.precision.native_bf16`; elsewhere fp32, which is faster there)."""
        import torch

        from larev_hf.modeling.precision import native_bf16

        return self.bf16 and native_bf16("cuda" if torch.cuda.is_available() else "cpu")

    def training_arguments(
        self, output_dir: str | os.PathLike, args_class: type[Seq2SeqTrainingArguments] | None = None, **overrides
    ) -> Seq2SeqTrainingArguments:
        """``args_class`` (``Seq2SeqTrainingArguments`` or a subclass) for these settings: AdamW, linear decay,
        epoch checkpoints, no reporting; ``overrides`` set further fields."""
        import torch
        from transformers import Seq2SeqTrainingArguments
        kwargs = dict(
            output_dir=str(output_dir),
            learning_rate=self.learning_rate,
            num_train_epochs=self.num_train_epochs,
            per_device_train_batch_size=self.batch_size,
            per_device_eval_batch_size=self.batch_size,
            seed=self.seed,
            data_seed=self.seed,
            bf16=self.uses_bf16(),
            fp16=self.fp16,
            # the Trainer's bf16 on a machine without CUDA is CPU autocast, which it runs only when told to use the CPU
            **({"use_cpu": True} if self.uses_bf16() and not torch.cuda.is_available() else {}),
            save_strategy="epoch",
            save_total_limit=1,
            logging_strategy="steps",
            logging_steps=50,
            report_to="none",
            disable_tqdm=not self.progress,
            dataloader_num_workers=0,
            dataloader_pin_memory=torch.cuda.is_available(),
            max_grad_norm=1.0,
            train_sampling_strategy="group_by_length" if self.group_by_length else "random",
        )
        kwargs.update(overrides)
        return (args_class or Seq2SeqTrainingArguments)(**kwargs)
