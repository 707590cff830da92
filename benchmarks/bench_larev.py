"""Speed of LAREV's two extra costs: Integrated Gradients leakage terms, and the IRM + probe training step.

(a) IG throughput: baselines/s of ``integrated_gradients_terms`` (n_steps 20) on e-SNLI training baselines,
    with a t5-tiny Φ_base trained for one epoch on 1000 e-SNLI baselines → labels (``--untrained``: random init);
    and with fewer steps (``--ig-compare-steps``), the share of baselines whose t_leak is unchanged.
(b) Step time: ``IRMProbeTrainer`` (λ_IRM 1; with and without a frozen probe ψ at λ_probe 5e-3, also every n-th
    step; penalties at full weight from the first step) against a plain ``Seq2SeqTrainer`` on the same rows:
    8 environment groups × 3 environments = 24 rows per step for both. The trainers run interleaved, step by step on
    the same batches (see :func:`step_times`), and each overhead is the ratio of mean step times with a paired
    bootstrap 95% interval. The overhead target is ≤ 15 %.

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
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments
from transformers.trainer_callback import PrinterCallback

from larev_hf.data import add_baselines, label_verbalization, load_examples, make_baseline_builder
from larev_hf.io import write_json
from larev_hf.leakage import (
    IGSettings,
    integrated_gradients_terms,
    make_environments,
    mask_token_of,
    verbalization_term,
)
from larev_hf.modeling import PRESETS, build_model, build_tokenizer, get_input_format, load_evaluator
from larev_hf.training import (
    EnvironmentGroupBatchSampler,
    IRMProbeConfig,
    IRMProbeTrainer,
    TrainSettings,
    irm_penalty,
    label_nll,
    tokenize_pairs,
)
from larev_hf.training.leakage_aware import environment_dataset, freeze_encoder

#: Arguments shared by every timed trainer: no saving, reporting, progress bar or pinned memory.
QUIET = {"report_to": "none", "save_strategy": "no", "disable_tqdm": True, "dataloader_pin_memory": False,
         "dataloader_num_workers": 0, "logging_steps": 10_000}


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


def ig_throughput(model, tokenizer, records: list[dict[str, Any]], n_steps: int,
                  reference: list | None = None) -> tuple[dict[str, Any], list]:
    """Baselines per second of ``integrated_gradients_terms`` over ``records`` (after a one-batch warm-up), and the
    terms; with ``reference`` terms (another step count) also the share of baselines whose t_leak span is the same."""
    settings = IGSettings(n_steps=n_steps)
    texts, labels = [r["baseline"] for r in records], [r["label"] for r in records]
    integrated_gradients_terms(model, tokenizer, texts[: settings.batch_size], labels[: settings.batch_size], settings)
    start = time.perf_counter()
    terms = integrated_gradients_terms(model, tokenizer, texts, labels, settings)
    seconds = time.perf_counter() - start
    hits = sum(set(term.text.lower().split()) <= set(label_verbalization(r).lower().split())
               for term, r in zip(terms, records, strict=True))
    result = {
        "n_baselines": len(texts), "n_steps": n_steps, "batch_size": settings.batch_size, "seconds": seconds,
        "baselines_per_s": len(texts) / seconds,
        "term_inside_label_verbalization": hits / len(texts),
    }
    if reference is not None:
        result["same_term_as_reference"] = sum((t.start, t.end) == (r.start, r.end)
                                               for t, r in zip(terms, reference, strict=True)) / len(terms)
    return result, terms


def step_times(model, tokenizer, records: list[dict[str, Any]], args: argparse.Namespace, output_dir: str) -> dict[str, Any]:
    """Per-step times of the plain, IRM-only and IRM + probe trainers, interleaved step by step on the same batches.

    Every trainer keeps its own model copy and AdamW optimizer (``create_optimizer``); step i of each one is
    timed back to back on the same 3×``groups``-row batch (the order of the trainers rotates every step), so
    slow drift of the machine hits all of them alike and the per-step ratios pair like with like. A step is
    ``compute_loss`` (the trainer's own objective: the model's mean token loss for the plain trainer, eq. 4.10
    for ``IRMProbeTrainer``), ``backward`` and the optimizer step; collation happens before the clock starts.
    """
    kept = [(r, term) for r in records if (term := verbalization_term(r)) is not None]
    mask = mask_token_of(tokenizer)
    environments = [make_environments(r, term, mask) for r, term in kept]
    irm_rows = environment_dataset([r for r, _ in kept], environments, tokenizer, get_input_format("larev"))
    batches = list(EnvironmentGroupBatchSampler(irm_rows["group_id"], args.groups, seed=0))
    plain_rows = irm_rows.remove_columns(["environment", "group_id", "probe_input_ids"])
    plain_collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
    probe = freeze_encoder(copy.deepcopy(model))
    steps = args.warmup_steps + args.steps
    common = {"output_dir": output_dir, "max_steps": steps, "learning_rate": 1e-4, "seed": 0, **QUIET}

    def irm(with_probe: bool, every: int = 1) -> IRMProbeTrainer:
        config = IRMProbeConfig(per_device_train_batch_size=args.groups, lambda_irm=1.0, penalty_warmup_ratio=0.0,
                                lambda_probe=5e-3 if with_probe else 0.0, probe_every_n_steps=every, **common)
        return IRMProbeTrainer(model=copy.deepcopy(model), args=config, train_dataset=irm_rows,
                               processing_class=tokenizer, probe_model=probe if with_probe else None)

    plain = Seq2SeqTrainer(model=copy.deepcopy(model), processing_class=tokenizer, data_collator=plain_collator,
                           args=Seq2SeqTrainingArguments(per_device_train_batch_size=3 * args.groups, **common))
    trainers: dict[str, Seq2SeqTrainer] = {"plain_seq2seq": plain, "irm_no_probe": irm(False), "irm_probe": irm(True),
                                           **{f"irm_probe_every{n}": irm(True, n) for n in args.probe_every}}
    for trainer in trainers.values():
        trainer.create_optimizer()
        trainer.model.train()
    names = list(trainers)
    durations: dict[str, list[float]] = {name: [] for name in names}
    tokens = {"main": 0, "probe": 0}
    for step in range(steps):
        indices = batches[step % len(batches)]
        inputs = {"plain_seq2seq": plain_collator([plain_rows[i] for i in indices])}
        irm_inputs = trainers["irm_probe"].data_collator([irm_rows[i] for i in indices])
        tokens["main"] += int(irm_inputs["attention_mask"].sum())
        tokens["probe"] += int(irm_inputs["probe_attention_mask"].sum())
        shift = step % len(names)
        for name in names[shift:] + names[:shift]:
            trainer = trainers[name]
            trainer.state.global_step = step
            batch = inputs.get(name, irm_inputs)
            start = time.perf_counter()
            loss = trainer.compute_loss(trainer.model, batch)
            loss.backward()
            trainer.optimizer.step()
            trainer.optimizer.zero_grad(set_to_none=True)
            if step >= args.warmup_steps:
                durations[name].append(time.perf_counter() - start)

    plain_times = durations["plain_seq2seq"]
    result: dict[str, Any] = {
        "protocol": "interleaved", "groups_per_step": args.groups, "rows_per_step": 3 * args.groups,
        "n_groups_available": len(kept), "warmup_steps": args.warmup_steps, "timed_steps": args.steps,
        "lambda_irm": 1.0, "lambda_probe": 5e-3,
        # the probe's extra encoder pass (with gradient) runs over b̃: its tokens as a share of the step's own
        "probe_encoder_token_share": tokens["probe"] / tokens["main"],
    }
    for name, values in durations.items():
        result[f"{name}_step_s_median"] = statistics.median(values)
        result[f"{name}_step_s_mean"] = statistics.fmean(values)
        if name == "plain_seq2seq":
            continue
        # Steps with and without the probe alternate for every n > 1: the mean, not the median, is the cost per step.
        key = name.removeprefix("irm_")
        result[f"overhead_{key}_pct"] = 100 * (statistics.fmean(values) / statistics.fmean(plain_times) - 1)
        result[f"overhead_{key}_pct_ci95"] = bootstrap_ratio_ci(values, plain_times)
        ratios = [t / p for t, p in zip(values, plain_times, strict=True)]
        result[f"paired_ratio_{key}_quartiles"] = statistics.quantiles(ratios, n=4)
    result["target_overhead_pct"] = 15.0
    result["meets_target"] = result["overhead_probe_pct"] <= 15.0
    result["meets_target_no_probe"] = result["overhead_no_probe_pct"] <= 15.0
    for n in args.probe_every:
        result[f"meets_target_probe_every{n}"] = result[f"overhead_probe_every{n}_pct"] <= 15.0
    return result


def autograd_irm_penalty(
    logits: torch.Tensor, labels: torch.Tensor, environments: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """IRMv1 as Arjovsky et al. write it, one ``autograd.grad(create_graph=True)`` per environment (the reference),
    and the per-row NLL it was computed from (what the trainer's ERM term reuses)."""
    scale = torch.ones((), requires_grad=True)
    nll = label_nll(logits * scale, labels)
    penalty = sum(torch.autograd.grad(nll[environments == e].mean(), scale, create_graph=True)[0].pow(2)
                  for e in environments.unique())
    return penalty, nll


def penalty_cost(rows: int = 24, label_tokens: int = 4, vocab: int = 8000, repeats: int = 50) -> dict[str, Any]:
    """Forward + backward time of ERM on the label NLL alone, and of ERM + the closed-form or the autograd IRMv1
    penalty, each computing the NLL once as ``IRMProbeLoss`` does."""
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(rows, label_tokens, vocab, generator=generator)
    labels = torch.randint(0, vocab, (rows, label_tokens), generator=generator)
    environments = torch.arange(3).repeat(rows // 3)

    def erm_plus(penalty_and_nll: tuple) -> torch.Tensor:
        return penalty_and_nll[0] + penalty_and_nll[-1].mean()

    variants = {
        "nll_only": lambda z: label_nll(z, labels).mean(),
        "nll_plus_closed_form_penalty": lambda z: erm_plus(irm_penalty(z, labels, environments)),
        "nll_plus_autograd_penalty": lambda z: erm_plus(autograd_irm_penalty(z, labels, environments)),
    }
    result: dict[str, Any] = {"shape": [rows, label_tokens, vocab], "repeats": repeats}
    for name, loss_of in variants.items():
        times = []
        for _ in range(repeats):
            z = logits.clone().requires_grad_(True)
            start = time.perf_counter()
            loss_of(z).backward()
            times.append(time.perf_counter() - start)
        result[f"{name}_ms_median"] = 1000 * statistics.median(times)
    return result


def bootstrap_ratio_ci(values: list[float], baseline: list[float], samples: int = 2000) -> list[float]:
    """95% percentile-bootstrap interval of 100·(mean(values)/mean(baseline) − 1), resampling paired steps."""
    generator = random.Random(0)
    n = len(values)
    estimates = []
    for _ in range(samples):
        picks = [generator.randrange(n) for _ in range(n)]
        estimates.append(100 * (sum(values[i] for i in picks) / sum(baseline[i] for i in picks) - 1))
    estimates.sort()
    return [estimates[int(0.025 * samples)], estimates[int(0.975 * samples) - 1]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "esnli"))
    parser.add_argument("--n-train", type=int, default=1000, help="e-SNLI training examples (Φ_base and the rows)")
    parser.add_argument("--n-ig", type=int, default=256, help="baselines attributed by IG")
    parser.add_argument("--ig-steps", type=int, default=20)
    parser.add_argument("--ig-compare-steps", type=lambda text: [int(n) for n in text.split(",") if n], default=[10, 5],
                        help="IG step counts compared with --ig-steps (same t_leak span, speed); '' for none")
    parser.add_argument("--untrained", action="store_true", help="IG on a random-init model instead of Φ_base")
    parser.add_argument("--phi-base", default=None, help="IG with a trained Φ_base directory (e.g. a run's "
                        "models/phi_base, any backbone) instead of training a t5-tiny one")
    parser.add_argument("--ig-only", action="store_true", help="measure (a) only, not the training step")
    parser.add_argument("--groups", type=int, default=8, help="environment groups per step (3 rows each)")
    parser.add_argument("--steps", type=int, default=200, help="timed steps per trainer")
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--backbone", default="t5-tiny", choices=["t5-tiny", "t5-mini", "bart-tiny"],
                        help="offline preset timed (random init; the step cost does not depend on the weights)")
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
    if args.phi_base:
        model, tokenizer = load_evaluator(args.phi_base, device="cpu")
    else:
        tokenizer = build_tokenizer(args.backbone, [t for r in train for t in (r["baseline"], r["rationale"], *r["choices"])])
        model = build_model(args.backbone, tokenizer, seed=0)
    with tempfile.TemporaryDirectory() as output_dir:
        phi_base_seconds = None if args.untrained or args.phi_base else train_phi_base(model, tokenizer, train, output_dir)
        ig, reference_terms = ig_throughput(model, tokenizer, train[: args.n_ig], args.ig_steps)
        ig["fewer_steps"] = [ig_throughput(model, tokenizer, train[: args.n_ig], n, reference_terms)[0]
                             for n in args.ig_compare_steps]
        described = args.phi_base or ("random init" if args.untrained else f"{args.backbone} Φ_base, 1 epoch")
        ig.update({"model": described, "phi_base_train_s": phi_base_seconds})
        step = None if args.ig_only else step_times(build_model(args.backbone, tokenizer, seed=0), tokenizer, train,
                                                    args, output_dir)
    penalty = penalty_cost(vocab=PRESETS[args.backbone].vocab_size)  # the full-data vocabulary, not this sample's

    result = {
        "benchmark": "LAREV: IG leakage terms and IRM + probe training step",
        "backbone": args.phi_base or args.backbone, "dataset": "esnli", "n_train": len(train), "device": "cpu",
        "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
        "load_avg_1m_before": load_before[0], "load_avg_1m_after": os.getloadavg()[0],
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "ig": ig, "step_time": step, "irm_penalty_cost": penalty,
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    write_json(args.output, result)


if __name__ == "__main__":
    main()
