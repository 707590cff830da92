"""The ``larev-hf`` command line: ``demo``, ``run``, ``evaluate`` and ``export``.

    larev-hf demo --output-dir runs/demo
    larev-hf run --method rev --dataset esnli --data-dir ../shared/data/esnli --output-dir runs/esnli-rev
    larev-hf evaluate --run-dir runs/esnli-rev --data-file my_rationales/test.jsonl --output-dir runs/esnli-rev/eval
    larev-hf export --run-dir runs/esnli-rev --method rev --output-dir bundles/rev-esnli [--push-to-hub user/rev-esnli]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time

from larev_hf.io import DataError

DATASETS = ("esnli", "cose", "strategyqa", "ecqa", "synthetic", "jsonl")


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    from larev_hf.modeling import PRESETS
    from larev_hf.pipeline import METHODS

    parser.add_argument("--method", default="rev",
                        help=f"metric(s) to train and report: 'all' or a comma-separated list of {', '.join(METHODS)}")
    parser.add_argument("--dataset", default="synthetic", choices=DATASETS, help="dataset kind")
    parser.add_argument("--data-dir", default=None, help="local directory with {train,validation,test}.jsonl, or a Hub dataset name")
    parser.add_argument("--output-dir", required=True, help="run directory (created; a rerun resumes it)")
    parser.add_argument("--backbone", default="t5-tiny",
                        help=f"an offline preset ({', '.join(PRESETS)}) or any HF seq2seq checkpoint name or path (t5-large, facebook/bart-large)")
    parser.add_argument("--baseline-builder", default="template", help="'template' (offline rules) or an HF model: 'paraphrase:<name>' / 'qa2d:<name>'")
    parser.add_argument("--input-format", default="larev", choices=("larev", "rev"), help="encoder text template (see docs)")
    parser.add_argument("--reduction", default="sum", choices=("sum", "mean"), help="log p(y|·) as the summed (default) or REV's mean token log-prob")
    parser.add_argument("--column-mapping", type=json.loads, default=None,
                        help='--dataset jsonl: schema field → your column, e.g. \'{"label": "answer", "rationale": "explanation"}\'')
    parser.add_argument("--task", default=None, choices=("nli", "qa", "yesno"), help="--dataset jsonl: the task kind (default qa)")
    parser.add_argument("--label-set", default=None, help="--dataset jsonl without a choices column: comma-separated labels")
    parser.add_argument("--max-train-examples", type=int, default=None, help="use the first N training examples")
    parser.add_argument("--max-eval-examples", type=int, default=None, help="use the first N validation/test examples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--learning-rate", type=float, default=None, help="default: the backbone's (1e-3 presets, 3e-5 pretrained)")
    parser.add_argument("--num-train-epochs", type=float, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--select-on-validation", action="store_true",
                        help="keep the epoch of Φ_base / Φ with the lowest validation loss (default: the last epoch)")
    parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples for the 95%% intervals")
    larev = parser.add_argument_group("LAREV (thesis eq. 4.10)")
    larev.add_argument("--lambda-irm", type=float, default=None, help="IRMv1 penalty weight (default: measured per backbone kind; 0 = ablation)")
    larev.add_argument("--lambda-probe", type=float, default=None, help="leakage-probe weight (0 = ablation)")
    larev.add_argument("--penalty-warmup-ratio", type=float, default=1 / 3, help="linear warm-up of both penalties over this share of steps")
    larev.add_argument("--groups-per-batch", type=int, default=None, help="environment groups per Φ_LA batch (8 presets, 1 pretrained)")
    larev.add_argument("--probe-max-loss", type=float, default=None, help="clamp the subtracted probe loss at this value")
    larev.add_argument("--probe-every-n-steps", type=int, default=1,
                       help="probe term on every n-th step only, weighted n·λ_probe (cheaper; 1 = the thesis)")
    larev.add_argument("--ig-steps", type=int, default=20, help="Integrated Gradients steps")
    larev.add_argument("--ig-top-k", type=int, default=1, help="words per leakage term")
    larev.add_argument("--no-stop-word-guard", dest="stop_word_guard", action="store_false", help="let IG pick stop words as t_leak")
    larev.add_argument("--ablations", action="store_true", help="also train Φ_LA with λ_IRM = 0, λ_probe = 0 and both 0 (table 5.6)")
    parser.add_argument("--train-rationale", default="gold", choices=("gold", "gold_leaky", "vacuous", "leaky"),
                        help="the rationale variant every evaluator trains on (RoRA §4's protocol trains on the type it "
                             "scores: one run per variant); default: the dataset's own rationales")
    larev.add_argument("--phi-la-init", default="fresh", choices=("fresh", "phi"),
                       help="where Φ_LA starts: the backbone as built (thesis) or the run's trained Φ (lets a random-init "
                            "preset read its input on open-label data such as CoS-E)")
    lora = parser.add_argument_group("LoRA (PEFT) for every trained model")
    lora.add_argument("--lora", action="store_true", help="train LoRA adapters instead of full fine-tuning")
    lora.add_argument("--lora-r", type=int, default=16, help="adapter rank")
    lora.add_argument("--lora-alpha", type=int, default=32, help="adapter scaling numerator (update × alpha / r)")
    lora.add_argument("--lora-dropout", type=float, default=0.05)
    lora.add_argument("--lora-target-modules", type=_comma_list, default=None,
                      help="comma-separated module-name suffixes, e.g. 'q,v' (default: every linear layer but the output)")
    lora.add_argument("--lora-modules-to-save", type=_comma_list, default=None,
                      help="modules trained in full alongside the adapters (default: 'embed_tokens' for presets, whose "
                           "embeddings are random; none for checkpoints; '' for none)")
    rora = parser.add_argument_group("RoRA (Jiang et al., 2024)")
    rora.add_argument("--rora-threshold", type=rora_threshold_type, default=0.001,
                      help="global attribution above which an n-gram leaks (more than 8 above: all masked, else the top 2); "
                           "'auto': RoRA's tuning rule (appendix C.2), the largest value at which most training "
                           "rationales get more than the top 2 masked")
    rora.add_argument("--rora-top-k", type=int, default=2,
                      help="n-grams masked per rationale when no more than 8 exceed the threshold (RoRA's top-k fallback); "
                           "3 covers 'yes', 'is yes' and 'yes .' so every label's mask has the same shape")
    rora.add_argument("--rora-lambda-irm", type=float, default=None,
                      help="IRMv1 weight of RoRA's Φ (eq. 7; default 1 for presets, 10 for pretrained checkpoints)")
    rora.add_argument("--rora-classifier", default=None, metavar="ENCODER",
                      help="RoRA's classifier variant (§4.1): Φ and Θ are this pretrained encoder with a classification "
                           "head ('minilm' = the offline MiniLM-L6, or a checkpoint such as microsoft/deberta-v3-large); "
                           "default: seq2seq evaluators on --backbone")


def rora_threshold_type(text: str) -> float | str:
    """argparse type of ``--rora-threshold``: a number, or ``"auto"`` (RoRA appendix C.2's tuning rule)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {text!r}") from None


def _comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _config_from_args(args: argparse.Namespace):
    from larev_hf.pipeline import RunConfig

    return RunConfig(
        dataset=args.dataset, data_dir=args.data_dir, method=args.method, backbone=args.backbone,
        baseline_builder=args.baseline_builder, input_format=args.input_format, reduction=args.reduction,
        max_train_examples=args.max_train_examples, max_eval_examples=args.max_eval_examples, seed=args.seed,
        learning_rate=args.learning_rate, num_train_epochs=args.num_train_epochs, batch_size=args.batch_size,
        n_boot=args.n_boot, lambda_irm=args.lambda_irm, lambda_probe=args.lambda_probe,
        penalty_warmup_ratio=args.penalty_warmup_ratio, groups_per_batch=args.groups_per_batch,
        probe_max_loss=args.probe_max_loss, probe_every_n_steps=args.probe_every_n_steps, ig_steps=args.ig_steps, ig_top_k=args.ig_top_k,
        stop_word_guard=args.stop_word_guard, ablations=args.ablations, loader_options=_loader_options(args),
        select_on_validation=args.select_on_validation, lora=args.lora, lora_r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
        lora_target_modules=args.lora_target_modules, lora_modules_to_save=args.lora_modules_to_save,
        rora_threshold=args.rora_threshold, rora_top_k=args.rora_top_k, rora_lambda_irm=args.rora_lambda_irm,
        rora_classifier=args.rora_classifier, train_rationale=args.train_rationale, phi_la_init=args.phi_la_init,
    )


def _loader_options(args: argparse.Namespace) -> dict:
    options = {"column_mapping": args.column_mapping, "task": args.task,
               "label_set": args.label_set.split(",") if args.label_set else None}
    return {key: value for key, value in options.items() if value is not None}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="larev-hf", description="Leakage-aware evaluation of free-text rationales.")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or stage logs")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="the whole pipeline on the embedded synthetic task (offline, CPU, minutes)")
    demo.add_argument("--output-dir", required=True)
    demo.add_argument("--seed", type=int, default=0)

    run = commands.add_parser("run", help="train the evaluators on a dataset and report on its test split")
    _add_run_arguments(run)
    run.add_argument("--until", default=None, help="stop after this stage (e.g. 'probe'); a later run resumes from there")

    evaluate = commands.add_parser("evaluate", help="score another data file with a trained run (no retraining)")
    evaluate.add_argument("--run-dir", required=True)
    evaluate.add_argument("--data-file", required=True, help="a file of the run's dataset kind, e.g. .../test.jsonl")
    evaluate.add_argument("--output-dir", required=True)

    export = commands.add_parser("export", help="save a run's evaluators as an evaluator bundle (and push it to the Hub)")
    export.add_argument("--run-dir", required=True, help="a finished run directory (`larev-hf run`)")
    export.add_argument("--method", required=True, choices=("rev", "larev", "rora"), help="which metric's evaluators to bundle")
    export.add_argument("--output-dir", required=True, help="the bundle directory (an existing bundle there is replaced)")
    export.add_argument("--push-to-hub", metavar="REPO_ID", default=None, help="also upload the bundle to this Hub model repo")
    export.add_argument("--private", action="store_true", help="create the Hub repo as private")
    return parser


def _export(args: argparse.Namespace) -> int:
    """``larev-hf export``: bundle a run's evaluators, optionally push them; prints where they went."""
    from larev_hf.hub import EvaluatorBundle

    bundle = EvaluatorBundle.from_run(args.run_dir, args.method)
    try:
        path = bundle.save_pretrained(args.output_dir, repo_id=args.push_to_hub)
    except (FileExistsError, NotADirectoryError) as error:
        print(f"larev-hf: error: {error}", file=sys.stderr)
        return 2
    print(f"bundle: {path}  ({bundle.hashcode})")
    if args.push_to_hub:
        try:
            commit = bundle.push_to_hub(args.push_to_hub, private=args.private or None)
        except Exception as error:  # noqa: BLE001 - network, authentication, permissions: report them all the same way
            print(f"larev-hf: error: pushing to {args.push_to_hub} failed ({type(error).__name__}: {error}); "
                  f"the bundle is saved in {path}", file=sys.stderr)
            return 1
        print(f"pushed: {getattr(commit, 'commit_url', commit)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    from larev_hf.pipeline import Run, RunConfig, dumps_summary

    progress = not args.quiet
    start = time.perf_counter()
    try:
        if args.command == "export":
            return _export(args)
        if args.command == "demo":
            # The main job: LAREV against REV. RoRA/LAS/RQ (``--method all``) add their own models and are ≈ 0 here by
            # design (the synthetic rationale alone decides the answer, which RoRA treats as leakage).
            config = RunConfig(dataset="synthetic", method="rev,larev", backbone="t5-tiny", seed=args.seed)
            report = Run(config, args.output_dir, progress).execute()
        elif args.command == "run":
            report = Run(_config_from_args(args), args.output_dir, progress).execute(until=args.until)
            if args.until:
                print(f"stopped after stage {args.until!r}; rerun without --until to continue")
                return 0
        else:
            report = Run.load(args.run_dir, progress).evaluate_file(args.data_file, args.output_dir)
    except (DataError, FileNotFoundError, ValueError) as error:
        print(f"larev-hf: error: {error}", file=sys.stderr)
        return 2
    print(dumps_summary(report))
    print(f"report: {args.output_dir}/report.md  ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
