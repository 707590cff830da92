"""Where the time of ``larev-hf run`` goes: a py-spy sampling profile of a whole run, summarised per stage and per
kind of work: profile first, then optimise.

    pip install py-spy
    python benchmarks/profile_pipeline.py --max-train-examples 1000 --max-eval-examples 300 \
        --output benchmarks/results/profile_esnli_1k.json

Runs ``larev-hf --quiet run --method rev,larev --dataset esnli ...`` under ``py-spy record`` (sampling, so the run's
own speed is barely touched), then reads the collapsed stacks: each sample is given to the stage whose function is
on its stack and to the kinds of work below (a sample can count for several kinds: a dropout inside a forward).
Flags this script does not know go to ``larev-hf run`` (e.g. ``--ig-steps 10``). Prints and writes JSON with the
stage wall times of the run's report next to the profile shares, and the real against padded input tokens of the
training rows (random vs length-grouped batches). ``--lengths-of RUN_DIR --output F`` reports only the latter for a
finished run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from larev_hf.cli import build_parser
from larev_hf.io import read_json, write_json

#: Stage → the function on the stack of every sample that belongs to it.
STAGES = {
    "phi_base": "_train_phi_base", "phi": "_train_phi", "ig": "_ig", "environments": "_environments",
    "probe": "_probe", "phi_la": "train_phi_la", "score": "stage_score",
}
#: Samples of a waiting helper thread (tqdm's monitor), left out of the shares.
IDLE = re.compile(r"^TMonitor\.run ")
#: Kind of work → a regular expression over one frame.
KINDS = {
    "forward (model)": r"^(T5ForConditionalGeneration|BartForConditionalGeneration|EncoderDecoderModel)\.forward ",
    "backward (autograd)": r"^_engine_run_backward ",
    "linear layers": r"^Linear\.forward ",
    "attention (sdpa)": r"^sdpa_attention_forward ",
    "dropout": r"^dropout \(torch/nn/functional",
    "optimizer step": r"^(Adam|AdamW)\.step ",
    "gradient clipping": r"clip_grad",
    "tokenization": r"_encode_plus|encode_batch|_batch_encode_plus",
    "batch collation": r"__call__ \(.*(collator|data_collator)",
    "checkpoint saving": r"_save_checkpoint|save_pretrained",
    "integrated gradients (captum)": r"^IntegratedGradients\.attribute ",
    "label scoring": r"^score_labels ",
}


def summarise(raw: str) -> dict:
    """Shares of samples per stage and per kind of work, from py-spy's ``--format raw`` (collapsed stacks)."""
    total, idle, stages, kinds, leaves = 0, 0, Counter(), Counter(), Counter()
    patterns = {kind: re.compile(pattern) for kind, pattern in KINDS.items()}
    stage_patterns = {name: re.compile(rf"^(\w+\.)?{re.escape(function)} \(") for name, function in STAGES.items()}
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n, frames = int(count), stack.split(";")
        if any(IDLE.search(frame) for frame in frames):
            idle += n
            continue
        total += n
        stage = next((name for name, pattern in stage_patterns.items() if any(pattern.search(f) for f in frames)),
                     "other (imports, data, tokenizer, report)")
        stages[stage] += n
        for kind, pattern in patterns.items():
            if any(pattern.search(frame) for frame in frames):
                kinds[kind] += n
        leaves[re.sub(r"\(/.*?site-packages/", "(", frames[-1])] += n
    share = lambda counter: {key: round(value / max(total, 1), 4) for key, value in counter.most_common()}  # noqa: E731
    return {"samples": total, "idle_thread_samples_left_out": idle, "stage_share": share(stages), "kind_share": share(kinds),
            "top_leaf_functions": dict(list(share(leaves).items())[:15])}


def padding(run_dir: Path, batch_sizes: tuple[int, ...] = (16, 32)) -> dict:
    """Real against padded input tokens of the training rows: Φ's source (r, b) and Φ_base's (b) in the
    run's tokenizer and input format, batched at random and sorted into length groups; a truncation length cuts
    nothing below the maximum."""
    import numpy as np
    from transformers import AutoTokenizer

    from larev_hf.io import read_jsonl
    from larev_hf.modeling import get_input_format

    config = read_json(run_dir / "run_config.json")
    tokenizer, form = AutoTokenizer.from_pretrained(run_dir / "tokenizer"), get_input_format(config["input_format"])
    records = [record for _, record in read_jsonl(run_dir / "data" / "train.jsonl")]
    sources = {"phi (r, b)": [form.rationale_input(r["rationale"], r["baseline"]) for r in records],
               "phi_base (b)": [form.baseline_input(r["baseline"]) for r in records]}
    out = {}
    for name, texts in sources.items():
        lengths = np.array([len(ids) for ids in tokenizer(texts)["input_ids"]])
        shuffled, ordered = lengths[np.random.default_rng(0).permutation(len(lengths))], np.sort(lengths)
        entry = {"median": float(np.median(lengths)), "p99": float(np.percentile(lengths, 99)),
                 "max": int(lengths.max()), "real_tokens": int(lengths.sum())}
        for size in batch_sizes:
            for how, order in (("random", shuffled), ("length_grouped", ordered)):
                padded = sum(int(order[i:i + size].max()) * len(order[i:i + size]) for i in range(0, len(order), size))
                entry[f"padding_share_{how}_batch{size}"] = round(1 - entry["real_tokens"] / padded, 4)
        out[name] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "esnli"))
    parser.add_argument("--method", default="rev,larev")
    parser.add_argument("--max-train-examples", type=int, default=1000)
    parser.add_argument("--max-eval-examples", type=int, default=300)
    parser.add_argument("--rate", type=int, default=50, help="py-spy samples per second")
    parser.add_argument("--output", default="benchmarks/results/profile_esnli_1k.json")
    parser.add_argument("--lengths-of", default=None, metavar="RUN_DIR",
                        help="only report real vs padded input lengths of a finished run's training rows")
    args, run_args = parser.parse_known_args()
    if args.lengths_of:
        result = {"benchmark": "real vs padded input tokens", "run_dir": args.lengths_of,
                  "input_lengths": padding(Path(args.lengths_of))}
        print(json.dumps(result, indent=2, ensure_ascii=False))
        write_json(args.output, result)
        return
    if shutil.which("py-spy") is None:
        sys.exit("profile_pipeline.py needs py-spy: pip install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        run_dir, raw_path = Path(tmp) / "run", Path(tmp) / "profile.txt"
        run = ["larev-hf", "--quiet", "run", "--method", args.method, "--dataset", "esnli", "--data-dir", args.data_dir,
               "--output-dir", str(run_dir), "--max-train-examples", str(args.max_train_examples),
               "--max-eval-examples", str(args.max_eval_examples), *run_args]
        build_parser().parse_args(run[1:])  # a mistyped forwarded flag fails here, not under the profiler
        command = ["py-spy", "record", "-r", str(args.rate), "--format", "raw", "-o", str(raw_path), "--", *run]
        load_before, start = os.getloadavg()[0], time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        report = read_json(run_dir / "report.json")
        result = {
            "benchmark": "profile of larev-hf run (py-spy sampling)", "command": " ".join(run),
            "wall_s": wall, "load_avg_1m_before": load_before, "load_avg_1m_after": os.getloadavg()[0],
            "cpu_count": os.cpu_count(), "stage_seconds": report.get("timings", {}),
            **summarise(raw_path.read_text()), "input_lengths": padding(run_dir),
        }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    write_json(args.output, result)


if __name__ == "__main__":
    main()
