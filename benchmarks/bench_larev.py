"""Speed of LAREV's two extra costs: Integrated Gradients leakage terms, and the IRM + probe training step.

(a) IG throughput: baselines/s of ``integrated_gradients_terms`` (n_steps 20) on e-SNLI training baselines,
    with a t5-tiny Φ_base trained for one epoch on 1000 e-SNLI baselines → labels (``--untrained``: random init).
(b) Step time: ``IRMProbeTrainer`` (λ_IRM 1, λ_probe 5e-3 with a frozen probe ψ, penalties at full weight from
    the first step) against a plain ``Seq2SeqTrainer`` on the same rows: 8 environment groups × 3 environments =
    24 rows per step for the former, ``per_device_train_batch_size=24`` on the same rows without the
    environment/group/probe columns for the latter, read in the IRM trainer's batch order (identical batches). Also the IRM trainer without a probe, to split the overhead.
    A step is timed from ``on_step_begin`` to ``on_step_end`` (forward, backward, optimizer; the batch is
    already collated), after warm-up steps; the runs alternate (plain, IRM, IRM without probe, repeated), and
    each method reports the median over all its timed steps. The overhead target is ≤ 15 %.

    python benchmarks/bench_larev.py --output benchmarks/results/larev_speed.json

The number of torch threads is fixed (``--threads``, default 1) and recorded, with the load average, since
timings on a shared machine move with whatever else runs there.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments, TrainerCallback
from transformers.trainer_callback import PrinterCallback

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from larev_hf.data import add_baselines, load_examples, make_baseline_builder  # noqa: E402
from larev_hf.io import write_json  # noqa: E402
from larev_hf.leakage import IGSettings, integrated_gradients_terms, make_environments  # noqa: E402
from larev_hf.leakage.environments import mask_token_of, verbalization_term  # noqa: E402
from larev_hf.leakage.rewriters import label_verbalization  # noqa: E402
from larev_hf.modeling import build_model, build_tokenizer, get_input_format  # noqa: E402
from larev_hf.training import (  # noqa: E402
    EnvironmentGroupBatchSampler,
    IRMProbeConfig,
    IRMProbeTrainer,
    TrainSettings,
    tokenize_pairs,
)
from larev_hf.training.leakage_aware import environment_dataset, freeze_encoder  # noqa: E402

#: Arguments shared by every timed trainer: no saving, reporting, progress bar or pinned memory.
QUIET = {"report_to": "none", "save_strategy": "no", "disable_tqdm": True, "dataloader_pin_memory": False,
         "dataloader_num_workers": 0, "logging_steps": 10_000}


class StepTimer(TrainerCallback):
    """Wall time of every optimizer step, from ``on_step_begin`` to ``on_step_end``."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self._start = 0.0

    def on_step_begin(self, args, state, control, **kwargs) -> None:
        self._start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs) -> None:
        self.durations.append(time.perf_counter() - self._start)


def train_phi_base(model, tokenizer, records: list[dict[str, Any]], output_dir: str) -> float:
    """One epoch of Φ_base on b → y; returns the seconds it took."""
    fmt = get_input_format("larev")
    dataset = tokenize_pairs(tokenizer, [fmt.baseline_input(r["baseline"]) for r in records], [r["label"] for r in records])
    args = TrainSettings(learning_rate=1e-3, num_train_epochs=1.0, batch_size=32, progress=False).training_arguments(
        output_dir, **QUIET)
    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100))
    trainer.remove_callback(PrinterCallback)  # keep stdout for the JSON
    start = time.perf_counter()
    trainer.train()
    return time.perf_counter() - start


def ig_throughput(model, tokenizer, records: list[dict[str, Any]], n_steps: int) -> dict[str, Any]:
    """Baselines per second of ``integrated_gradients_terms`` over ``records`` (after a one-batch warm-up)."""
    settings = IGSettings(n_steps=n_steps)
    texts, labels = [r["baseline"] for r in records], [r["label"] for r in records]
    integrated_gradients_terms(model, tokenizer, texts[: settings.batch_size], labels[: settings.batch_size], settings)
    start = time.perf_counter()
    terms = integrated_gradients_terms(model, tokenizer, texts, labels, settings)
    seconds = time.perf_counter() - start
    hits = sum(set(term.text.lower().split()) <= set(label_verbalization(r, r["label"]).lower().split())
               for term, r in zip(terms, records, strict=True))
    return {
        "n_baselines": len(texts), "n_steps": n_steps, "batch_size": settings.batch_size, "seconds": seconds,
        "baselines_per_s": len(texts) / seconds,
        "term_inside_label_verbalization": hits / len(texts),
    }


def timed_run(trainer: Seq2SeqTrainer, warmup_steps: int) -> list[float]:
    """Train for ``trainer.args.max_steps`` steps; the step durations after the warm-up ones."""
    timer = StepTimer()
    trainer.add_callback(timer)
    trainer.remove_callback(PrinterCallback)  # keep stdout for the JSON
    trainer.train()
    return timer.durations[warmup_steps:]


def step_times(model, tokenizer, records: list[dict[str, Any]], args: argparse.Namespace, output_dir: str) -> dict[str, Any]:
    """Median step times of the plain, IRM + probe and IRM-only trainers on the same 24-row batches."""
    kept = [(r, term) for r in records if (term := verbalization_term(r)) is not None]
    mask = mask_token_of(tokenizer)
    environments = [make_environments(r, term, mask) for r, term in kept]
    irm_rows = environment_dataset([r for r, _ in kept], environments, tokenizer, get_input_format("larev"))
    # The plain trainer reads the rows sequentially in the IRM trainer's batch order (its sampler, seed 0), so
    # both see the same 24-row batches with the same padding.
    order = [row for batch in EnvironmentGroupBatchSampler(irm_rows["group_id"], args.groups, seed=0) for row in batch]
    plain_rows = irm_rows.select(order).remove_columns(["environment", "group_id", "probe_input_ids"])
    probe = freeze_encoder(copy.deepcopy(model))
    steps = args.warmup_steps + args.steps
    common = {"output_dir": output_dir, "max_steps": steps, "learning_rate": 1e-4, "seed": 0, **QUIET}

    def plain() -> list[float]:
        trainer = Seq2SeqTrainer(
            model=copy.deepcopy(model), args=Seq2SeqTrainingArguments(per_device_train_batch_size=3 * args.groups, train_sampling_strategy="sequential",
                                          **common),
            train_dataset=plain_rows, processing_class=tokenizer,
            data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100),
        )
        return timed_run(trainer, args.warmup_steps)

    def irm(with_probe: bool, probe_every_n_steps: int = 1) -> list[float]:
        config = IRMProbeConfig(per_device_train_batch_size=args.groups, lambda_irm=1.0,
                                lambda_probe=5e-3 if with_probe else 0.0, penalty_warmup_ratio=0.0,
                                probe_every_n_steps=probe_every_n_steps, **common)
        trainer = IRMProbeTrainer(model=copy.deepcopy(model), args=config, train_dataset=irm_rows,
                                  processing_class=tokenizer, probe_model=probe if with_probe else None)
        return timed_run(trainer, args.warmup_steps)

    runs = {"plain_seq2seq": plain, "irm_probe": lambda: irm(True), "irm_no_probe": lambda: irm(False),
            **{f"irm_probe_every{n}": partial(irm, True, n) for n in args.probe_every}}
    durations: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, function in runs.items():
            durations[name] += function()
    medians = {name: statistics.median(values) for name, values in durations.items()}
    result: dict[str, Any] = {
        "groups_per_step": args.groups, "rows_per_step": 3 * args.groups, "n_groups_available": len(kept),
        "warmup_steps": args.warmup_steps, "timed_steps_per_run": args.steps, "repeats": args.repeats,
        "lambda_irm": 1.0, "lambda_probe": 5e-3,
    }
    for name, values in durations.items():
        result[f"{name}_step_s_median"] = medians[name]
        result[f"{name}_step_s_mean"] = statistics.fmean(values)
    result["overhead_pct"] = 100 * (medians["irm_probe"] / medians["plain_seq2seq"] - 1)
    result["overhead_no_probe_pct"] = 100 * (medians["irm_no_probe"] / medians["plain_seq2seq"] - 1)
    result["overhead_pct_mean"] = 100 * (statistics.fmean(durations["irm_probe"]) / statistics.fmean(durations["plain_seq2seq"]) - 1)
    result["target_overhead_pct"] = 15.0
    result["meets_target"] = result["overhead_pct"] <= 15.0
    for n in args.probe_every:
        # Steps with and without the probe alternate: the mean, not the median, is the cost per step.
        overhead = 100 * (statistics.fmean(durations[f"irm_probe_every{n}"]) / statistics.fmean(durations["plain_seq2seq"]) - 1)
        result[f"overhead_probe_every{n}_pct"] = overhead
        result[f"meets_target_probe_every{n}"] = overhead <= 15.0
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "esnli"))
    parser.add_argument("--n-train", type=int, default=1000, help="e-SNLI training examples (Φ_base and the rows)")
    parser.add_argument("--n-ig", type=int, default=256, help="baselines attributed by IG")
    parser.add_argument("--ig-steps", type=int, default=20)
    parser.add_argument("--untrained", action="store_true", help="IG on a random-init model instead of Φ_base")
    parser.add_argument("--groups", type=int, default=8, help="environment groups per step (3 rows each)")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per run")
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs of each trainer")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--probe-every", type=lambda text: [int(n) for n in text.split(",")], default=[2, 4],
                        help="probe_every_n_steps values to time besides 1 (comma-separated)")
    parser.add_argument("--output", default="benchmarks/results/larev_speed.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    transformers.logging.set_verbosity_error()
    load_before = os.getloadavg()

    train = add_baselines(load_examples("esnli", args.data_dir, "train", max_examples=args.n_train, seed=0),
                          make_baseline_builder("template", seed=0)).to_list()
    tokenizer = build_tokenizer("t5-tiny", [t for r in train for t in (r["baseline"], r["rationale"], *r["choices"])])
    model = build_model("t5-tiny", tokenizer, seed=0)
    with tempfile.TemporaryDirectory() as output_dir:
        phi_base_seconds = None if args.untrained else train_phi_base(model, tokenizer, train, output_dir)
        ig = ig_throughput(model, tokenizer, train[: args.n_ig], args.ig_steps)
        ig.update({"model": "random init" if args.untrained else "t5-tiny Φ_base, 1 epoch", "phi_base_train_s": phi_base_seconds})
        step = step_times(build_model("t5-tiny", tokenizer, seed=0), tokenizer, train, args, output_dir)

    result = {
        "benchmark": "LAREV: IG leakage terms and IRM + probe training step",
        "backbone": "t5-tiny", "dataset": "esnli", "n_train": len(train), "device": "cpu",
        "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
        "load_avg_1m_before": load_before[0], "load_avg_1m_after": os.getloadavg()[0],
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "ig": ig, "step_time": step,
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    write_json(args.output, result)


if __name__ == "__main__":
    main()
