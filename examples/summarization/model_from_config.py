"""Write a randomly initialised seq2seq model (no weights are downloaded) for run_summarization.py's
``--model_name_or_path``: ``t5-large`` or ``bart-large`` from their published configs, or the ``t5-tiny`` preset; the
tokenizer is trained on the data files' text (larev_hf.modeling.build_tokenizer), so nothing leaves the machine.

    python examples/summarization/model_from_config.py t5-large runs/t5-large-init --text train.json

Used by ``scale_large.sh`` to time training steps and peak memory on a GPU (docs/scale.md); the scores of such a
model mean nothing.
"""

from __future__ import annotations

import argparse
import json

from transformers import AutoModelForSeq2SeqLM, BartConfig, T5Config

from larev_hf.modeling import build_model, build_tokenizer

#: The architecture fields of the published configs (google-t5/t5-large, facebook/bart-large); the vocabulary size
#: follows the tokenizer trained here.
CONFIGS = {
    "t5-large": lambda vocab, pad: T5Config(vocab_size=vocab, d_model=1024, d_kv=64, d_ff=4096, num_layers=24,
                                            num_decoder_layers=24, num_heads=16, dropout_rate=0.1,
                                            pad_token_id=pad, eos_token_id=1, decoder_start_token_id=pad),
    "bart-large": lambda vocab, pad: BartConfig(vocab_size=vocab, d_model=1024, encoder_layers=12, decoder_layers=12,
                                                encoder_attention_heads=16, decoder_attention_heads=16,
                                                encoder_ffn_dim=4096, decoder_ffn_dim=4096, max_position_embeddings=1024,
                                                pad_token_id=pad, bos_token_id=0, eos_token_id=2,
                                                decoder_start_token_id=2, forced_eos_token_id=2),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("architecture", choices=[*CONFIGS, "t5-tiny"])
    parser.add_argument("output_dir")
    parser.add_argument("--text", nargs="+", required=True, help="JSON-lines files whose string fields train the tokenizer")
    args = parser.parse_args()
    corpus = [value for path in args.text for line in open(path, encoding="utf-8") if line.strip()
              for value in json.loads(line).values() if isinstance(value, str)]
    tokenizer = build_tokenizer("t5-tiny", corpus)
    if args.architecture == "t5-tiny":
        model = build_model("t5-tiny", tokenizer, seed=0)
    else:
        model = AutoModelForSeq2SeqLM.from_config(CONFIGS[args.architecture](len(tokenizer), tokenizer.pad_token_id))
    model.save_pretrained(args.output_dir)
    tokenizer.save_pretrained(args.output_dir)
    print(f"{args.architecture}: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters -> {args.output_dir}")


if __name__ == "__main__":
    main()
