"""The run's own stages and what a resume checks of their inputs.

``data`` and ``tokenizer`` (thesis algorithm A.1 steps 1-3) are :class:`~larev_hf.methods.Stage` objects like the
methods' stages, each a function of the run (:class:`~larev_hf.pipeline.view.RunView`); :func:`method_stages` gathers
every method's stages from the registry, a stage shared by several methods once. :func:`data_inputs` fingerprints
what ``data`` reads, and :func:`drop_training_checkpoints` clears what an input change made stale.
"""

from __future__ import annotations

import logging
import shutil

from larev_hf.config import RunConfig
from larev_hf.data import add_baselines, add_variants, baseline_builder_from_spec, load_examples, source_files
from larev_hf.data.baseline_builders import build_variants
from larev_hf.io import DataError, file_sha256, write_json, write_jsonl
from larev_hf.methods import Stage, get_method
from larev_hf.modeling import build_tokenizer, is_preset
from larev_hf.pipeline.view import SPLITS, RunView

logger = logging.getLogger(__name__)


def stage_data(run: RunView) -> None:
    """Load the splits, build baselines b everywhere and the rationale variants (thesis A.1 steps 1-3)."""
    data, seed = run.config.data, run.config.training.seed
    builder = baseline_builder_from_spec(data.baseline_builder, seed)
    splits = {}  # every split is loaded and validated before anything is written
    for split in SPLITS:
        limit = data.max_train_examples if split == "train" else data.max_eval_examples
        dataset = load_examples(data.dataset, data.data_dir, split, max_examples=limit, seed=seed,
                                **data.loader_options)
        if len(dataset) == 0:
            where = source_files(data.dataset, data.data_dir, [split])[split] or f"{data.data_dir} (split {split!r})"
            raise DataError(f"{where}: split {split!r} has no examples; expected at least one")
        splits[split] = add_variants(add_baselines(dataset, builder)).to_list()
    for split, records in splits.items():
        write_jsonl(run.path("data", f"{split}.jsonl"), records)
    write_json(run.path("data", "baseline_builder.json"), builder.to_config())


def stage_tokenizer(run: RunView) -> None:
    """Train the preset's tokenizer on the training text (or save the checkpoint's own)."""
    texts = None
    if is_preset(run.config.model.backbone):
        texts = []
        for record in run.split_records("train"):
            texts += [record["baseline"], record["rationale"], *record["choices"], *build_variants(record).values()]
    build_tokenizer(run.config.model.backbone, texts).save_pretrained(run.path("tokenizer"))


#: The run's own stages, before every method's; the evaluator seeds of a multi-seed run share them.
RUN_STAGES = (Stage("data", stage_data, seeded=False), Stage("tokenizer", stage_tokenizer, seeded=False))


def method_stages(config: RunConfig) -> list[Stage]:
    """Every method's stages in canonical method order, each shared stage once."""
    stages: dict[str, Stage] = {}
    for method in config.methods:
        for stage in get_method(method).stages(config):
            stages.setdefault(stage.name, stage)
    return list(stages.values())


def data_inputs(run: RunView) -> dict[str, str | None]:
    """What the ``data`` stage reads: the SHA-256 of each split's local file (``None``: Hub or generated data,
    identified by the settings). A change reruns ``data`` and every later stage (:class:`~larev_hf.runner.StageRunner`).
    If the files are gone but the run has read them, the recorded inputs stand (``data/*.jsonl`` holds all it needs)."""
    try:
        files = source_files(run.config.data.dataset, run.config.data.data_dir, SPLITS)
    except DataError:
        recorded = run.runner.recorded_inputs("data")
        if recorded is None:
            raise
        logger.warning("%s: the data files are no longer there; resuming with the data this run already read",
                       run.config.data.data_dir)
        return recorded
    return {split: file_sha256(path) if path is not None else None for split, path in files.items()}


def drop_training_checkpoints(run: RunView, stages: list[str]) -> None:
    """After an input changed (``stages`` are the invalidated ones): remove the epoch checkpoints of unfinished trainings (``models/*.checkpoints``),
    which were made from the old inputs and would otherwise be resumed."""
    for path in run.path("models").glob("*.checkpoints"):
        logger.warning("%s: removed, it was trained on the earlier inputs", path)
        shutil.rmtree(path, ignore_errors=True)
