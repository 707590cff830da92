"""Training settings shared by every evaluator, importable without torch (the CLI builds its flags from them)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from larev_hf.modeling.lora_settings import LoraSettings
from larev_hf.modeling.presets import KIND_DEFAULTS, backbone_default

if TYPE_CHECKING:
    from transformers import PreTrainedModel, Seq2SeqTrainingArguments

#: Both LAREV penalties (and RoRA's) rise linearly from 0 over this share of the training steps (thesis §5.3.3).
PENALTY_WARMUP_RATIO = 1 / 3


@dataclass
class TrainSettings:
    """What a pipeline stage needs to train one evaluator (a small subset of ``Seq2SeqTrainingArguments``)."""

    #: the random-init presets' values (:data:`~larev_hf.modeling.presets.KIND_DEFAULTS`); a run passes its backbone's
    learning_rate: float = KIND_DEFAULTS["random_init"]["learning_rate"]
    num_train_epochs: float = KIND_DEFAULTS["random_init"]["num_train_epochs"]
    batch_size: int = KIND_DEFAULTS["random_init"]["batch_size"]
    seed: int = 0
    max_input_length: int = 256
    max_label_length: int = 32
    bf16: bool = False
    fp16: bool = False
    progress: bool = True
    lora: LoraSettings | None = None
    #: Batches of rows of similar input length in random batch order (:class:`EvaluatorTrainer`), so little of a
    #: batch is padding; every row is still seen once per epoch. Off by default: on small sets whose input length
    #: follows the label, such batches hold mostly one label (measured in docs/scale.md).
    group_by_length: bool = False
    #: Keep the word embeddings (encoder's, decoder's, and an output projection tied to them) at their starting
    #: values: no gradient and no AdamW state for about a third of a BERT2BERT's weights. It changes what is
    #: trained, so the report names it; speed and scores against full fine-tuning are in docs/scale.md.
    freeze_word_embeddings: bool = False

    @classmethod
    def for_backbone(cls, backbone: str, learning_rate: float | None = None, num_train_epochs: float | None = None,
                     batch_size: int | None = None, **values: Any) -> TrainSettings:
        """Settings for ``backbone``: each of learning rate, epochs and batch size as given, else the backbone's
        (:func:`~larev_hf.modeling.presets.backbone_defaults`); ``values`` set the other fields."""
        return cls(learning_rate=learning_rate or backbone_default(backbone, "learning_rate"),
                   num_train_epochs=num_train_epochs or backbone_default(backbone, "num_train_epochs"),
                   batch_size=int(batch_size or backbone_default(backbone, "batch_size")), **values)

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
