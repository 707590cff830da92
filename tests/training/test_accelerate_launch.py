"""Multi-process training of Φ_LA: the group sampler under accelerate's sharding, and the example under a launcher.

Under DDP accelerate wraps the trainer's batch sampler in ``BatchSamplerShard(split_batches=False,
even_batches=True)``: batch ``i`` goes to process ``i % num_processes``, and a short epoch is topped up with
batches from its start. IRM needs every batch to hold whole environment groups, so the sharded batches must
still be unions of whole groups, the processes together must see every group, and every process must get the
same number of batches (DDP would hang otherwise).

These are regression tests for two DDP bugs: the sampler's ``batch_size`` counted groups while
``BatchSamplerShard`` compares it with ``len(batch)`` in rows (so process 0 got no batch and process 1 split
groups), and ``IRMProbeLoss`` called model helpers on the ``DistributedDataParallel`` wrapper.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from accelerate.data_loader import BatchSamplerShard, prepare_data_loader
from torch.utils.data import DataLoader

from larev_hf.training import EnvironmentGroupBatchSampler

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_larev.py"
CONFIGS = ROOT / "examples" / "accelerate_configs"


# ----------------------------------------------------------------------------------------------- sampler


def interleaved_groups(n_groups: int, n_environments: int = 3) -> list[int]:
    """Group id of every row, with a group's rows spread over the dataset (row r belongs to group r % n_groups)."""
    return [row % n_groups for row in range(n_groups * n_environments)]


def rows_by_group(group_ids: list[int]) -> dict[int, set[int]]:
    rows: dict[int, set[int]] = {}
    for row, group in enumerate(group_ids):
        rows.setdefault(group, set()).add(row)
    return rows


def assert_whole_groups(batch: list[int], group_ids: list[int], groups_per_batch: int) -> set[int]:
    """Assert that ``batch`` is a union of whole groups (no row twice, at most ``groups_per_batch``); return them."""
    groups = {group_ids[row] for row in batch}
    whole = set().union(*(rows_by_group(group_ids)[g] for g in groups))
    assert len(batch) == len(set(batch)), f"a row appears twice in {sorted(batch)}"
    assert set(batch) == whole, f"batch {sorted(batch)} holds part of groups {sorted(groups)}"
    assert len(groups) <= groups_per_batch
    return groups


def test_group_sampler_set_epoch_is_deterministic() -> None:
    """Same seed and epoch → the same batches; another epoch → another order of the same whole groups."""
    group_ids = interleaved_groups(12)
    first, second = (EnvironmentGroupBatchSampler(group_ids, groups_per_batch=2, seed=5) for _ in range(2))
    orders = {}
    for epoch in (0, 1, 2):
        first.set_epoch(epoch)
        second.set_epoch(epoch)
        orders[epoch] = list(first)
        assert orders[epoch] == list(second) == list(first), f"epoch {epoch} is not reproducible"
        covered = [g for batch in orders[epoch] for g in assert_whole_groups(batch, group_ids, 2)]
        assert sorted(covered) == list(range(12)), "an epoch must visit every group exactly once"
    assert orders[0] != orders[1] and orders[1] != orders[2], "set_epoch must reshuffle the group order"
    first.set_epoch(1)
    assert list(first) == orders[1], "going back to an epoch must give its order again"


def test_length_grouped_batches_hold_whole_groups_of_similar_length() -> None:
    """With row lengths, each epoch still visits every group once in whole-group batches; a batch's groups are
    length neighbours within its mega-batch, so padding falls far below that of the random order, and the
    batches come in random order, not longest first."""
    n_groups, per_batch = 60, 3
    group_ids = interleaved_groups(n_groups)
    rng = np.random.default_rng(0)
    group_length = rng.integers(5, 120, size=n_groups)
    lengths = [int(group_length[g] - rng.integers(0, 3)) for g in group_ids]  # environments differ a little

    def padded_tokens(batches: list[list[int]]) -> int:
        return sum(max(lengths[row] for row in batch) * len(batch) for batch in batches)

    grouped = EnvironmentGroupBatchSampler(group_ids, per_batch, seed=3, lengths=lengths, megabatch_batches=5)
    plain = EnvironmentGroupBatchSampler(group_ids, per_batch, seed=3)
    for epoch in (0, 1):
        grouped.set_epoch(epoch)
        plain.set_epoch(epoch)
        batches = list(grouped)
        covered = [g for batch in batches for g in assert_whole_groups(batch, group_ids, per_batch)]
        assert sorted(covered) == list(range(n_groups))
        assert padded_tokens(batches) < 0.8 * padded_tokens(list(plain))
        longest = [max(lengths[row] for row in batch) for batch in batches]
        assert longest != sorted(longest, reverse=True), "the batches must not arrive longest to shortest"
    with pytest.raises(ValueError, match="lengths for"):
        EnvironmentGroupBatchSampler(group_ids, per_batch, lengths=lengths[:-1])


@pytest.mark.parametrize("n_groups", [8, 9, 10])
def test_batch_sampler_shard_keeps_whole_groups(n_groups: int) -> None:
    """``BatchSamplerShard`` over 2 processes: whole groups per batch, equal batch counts, every group covered.

    8 groups make 4 full batches of 2; 9 end with a 1-group batch; 10 make an odd number of batches, so
    ``even_batches`` tops up the second process with a batch from the start of the epoch.
    """
    group_ids = interleaved_groups(n_groups)
    sampler = EnvironmentGroupBatchSampler(group_ids, groups_per_batch=2, seed=0)
    shards = [
        list(BatchSamplerShard(sampler, num_processes=2, process_index=i, split_batches=False, even_batches=True))
        for i in (0, 1)
    ]
    assert len(shards[0]) == len(shards[1]) > 0, f"processes got {[len(s) for s in shards]} batches"
    covered: set[int] = set()
    for shard in shards:
        for batch in shard:
            covered |= assert_whole_groups(batch, group_ids, 2)
    assert covered == set(range(n_groups)), f"groups {sorted(set(range(n_groups)) - covered)} were never seen"


def test_prepared_loader_reshuffles_whole_groups_per_epoch() -> None:
    """The loader accelerate builds for each of 2 processes: whole groups, every group, reshuffled by ``set_epoch``.

    This is the trainer's path: ``DataLoaderShard.set_epoch`` reaches the group order sampler inside the
    ``BatchSamplerShard``, and both processes must draw the same permutation for their shards to be disjoint.
    """
    group_ids = interleaved_groups(8)

    def epoch_batches(process_index: int, epoch: int) -> list[list[int]]:
        sampler = EnvironmentGroupBatchSampler(group_ids, groups_per_batch=2, seed=0)
        loader = DataLoader(range(len(group_ids)), batch_sampler=sampler, collate_fn=list)
        loader = prepare_data_loader(loader, num_processes=2, process_index=process_index, put_on_device=False)
        loader.set_epoch(epoch)
        return list(loader)

    per_epoch = {}
    for epoch in (0, 1):
        shards = [epoch_batches(i, epoch) for i in (0, 1)]
        assert len(shards[0]) == len(shards[1]) == 2
        groups = [sorted(g for batch in shard for g in assert_whole_groups(batch, group_ids, 2)) for shard in shards]
        assert sorted(groups[0] + groups[1]) == list(range(8)), "the two processes must split the groups between them"
        per_epoch[epoch] = shards
        assert epoch_batches(0, epoch) == shards[0], "the same epoch must give the same batches"
    assert per_epoch[0] != per_epoch[1], "set_epoch must reshuffle"


# ------------------------------------------------------------------------------------------ launcher


def gloo_available() -> bool:
    return torch.distributed.is_available() and torch.distributed.is_gloo_available()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def accelerate_launcher() -> list[str]:
    """This interpreter's ``accelerate`` console script, else ``python -m accelerate.commands.launch``.

    Never an ``accelerate`` found elsewhere on PATH, which could belong to another environment.
    """
    script = Path(sys.executable).with_name("accelerate")
    if script.is_file():
        return [str(script), "launch"]
    return [sys.executable, "-m", "accelerate.commands.launch"]


def subprocess_env(tmp_path: Path) -> dict[str, str]:
    """One thread per process, offline, CPU, this checkout first on the path, no inherited distributed settings."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}}
    env.update({
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "ACCELERATE_USE_CPU": "1", "TOKENIZERS_PARALLELISM": "false",
        # a fresh HF_HOME: no user-level accelerate default_config.yaml changes what the launcher does
        "HF_HOME": str(tmp_path / "hf_home"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    })
    return env


def run(command: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def launch_two_processes(script_args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    """``accelerate launch`` the example on 2 CPU processes; if it hangs, the error shows where each rank waited.

    The ranks run with ``PYTHONFAULTHANDLER=1``. On a timeout the launcher and every rank (torch's elastic agent
    starts each rank in a session of its own, so they are found as the launcher's descendants) get SIGABRT, so
    faulthandler prints each one's Python stack into the output the assertion shows; then they are killed. (A hang
    at exit, in gloo's teardown, is what ``exit_without_gloo_teardown`` in the example prevents.)
    """
    import psutil  # a dependency of accelerate

    command = [*accelerate_launcher(), "--config_file", str(CONFIGS / "cpu_ddp.yaml"), "--main_process_port",
               str(free_port()), str(EXAMPLE), *script_args]
    process = subprocess.Popen(command, cwd=ROOT, env={**env, "PYTHONFAULTHANDLER": "1"}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        ranks = psutil.Process(process.pid).children(recursive=True)
        for member in (*ranks, process):
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                member.send_signal(signal.SIGABRT)
        psutil.wait_procs(ranks, timeout=20)
        for member in (*ranks, process):
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                member.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"the 2-process launch hung for {timeout:.0f} s; its last output, with every rank's "
                             f"stack:\n{(stdout + stderr)[-8000:]}") from None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def read_losses(output_dir: Path, result: subprocess.CompletedProcess) -> dict:
    tail = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, f"exit code {result.returncode}:\n{tail}"
    path = output_dir / "train_losses.json"
    assert path.is_file(), f"no train_losses.json in {output_dir}:\n{tail}"
    assert (output_dir / "config.json").is_file() and (output_dir / "tokenizer.json").is_file(), "model not saved"
    return json.loads(path.read_text())


@pytest.mark.slow
def test_accelerate_launch_two_processes_matches_one(tmp_path: Path) -> None:
    """The example trains under 1 and 2 processes on the same global batches, and both agree where they must.

    Runs ``python examples/train_larev.py`` with 4 groups per device, then a 2-process launch with 2 groups per
    device (the same global batch of 4 groups), 4 steps, λ_IRM 1, on 32 synthetic examples.

    ``accelerate launch --cpu --num_processes 2`` starts a single process in accelerate 1.15 unless MPI is set
    up, so the launch uses ``examples/accelerate_configs/cpu_ddp.yaml`` (the multi-GPU launcher; gloo on CPU
    with ``ACCELERATE_USE_CPU=1``) and the test asserts that the run reports 2 processes.

    What is compared, and why it is robust:

    - ``initial_erm``: the ERM loss of the untrained model on the first global batch in evaluation mode (no
      dropout), averaged over processes. The group sampler is seeded identically everywhere, so the 4 groups
      of the single process's first batch are exactly the 2 + 2 groups of the two processes' first batches,
      and with 2 groups × 3 environments per process the mean of the per-process ERMs equals the single
      process's ERM. The 2-process run reuses the single run's saved tokenizer (WordPiece training is not
      deterministic across processes: huggingface/tokenizers#1794), and the model is built from the same seed,
      so only floating-point summation order differs: 1e-4 relative tolerance. This fails if a process gets
      other groups, part of a group, or a different model.
    - the loss logged at step 1: the penalty weights warm up from 0, so it is the ERM of the initial model
      with dropout, whose masks differ between 12 rows on one process and 2 × 6 rows on two (≈ 4 % apart
      here): 15 % relative tolerance. This catches loss scaling errors (×2 from summing over processes,
      gradient-accumulation rescaling) in the logged value. Later steps are not compared: the IRMv1 penalty
      is computed per process on its own groups (a mean of squared gradients, not the square of the mean
      gradient), so the two objectives legitimately differ once λ_IRM > 0.
    """
    if not gloo_available():
        pytest.skip("torch.distributed with the gloo backend is not available")
    env = subprocess_env(tmp_path)
    common = [
        "--max_train_examples", "32", "--max_steps", "4", "--learning_rate", "1e-4", "--lambda_irm", "1",
        "--logging_steps", "1", "--seed", "0", "--report_to", "none", "--save_strategy", "no",
        "--disable_tqdm", "true", "--dataloader_pin_memory", "false",
    ]
    single_dir, multi_dir = tmp_path / "single", tmp_path / "multi"
    single = run([sys.executable, str(EXAMPLE), "--output_dir", str(single_dir), "--per_device_train_batch_size", "4",
                  *common], env)
    single_losses = read_losses(single_dir, single)

    multi = launch_two_processes(["--output_dir", str(multi_dir), "--per_device_train_batch_size", "2",
                                  "--tokenizer_name_or_path", str(single_dir), *common], env)
    multi_losses = read_losses(multi_dir, multi)

    for summary, processes in ((single_losses, 1), (multi_losses, 2)):
        assert summary["num_processes"] == processes
        assert summary["groups_per_step"] == 4
        assert summary["steps"] == [1, 2, 3, 4]
        assert all(math.isfinite(loss) for loss in summary["losses"]), summary["losses"]
        assert math.isfinite(summary["train_loss"])
    assert multi_losses["initial_erm"] == pytest.approx(single_losses["initial_erm"], rel=1e-4)
    assert multi_losses["losses"][0] == pytest.approx(single_losses["losses"][0], rel=0.15)


@pytest.mark.parametrize("name", ["single_gpu", "multi_gpu", "fsdp", "deepspeed_zero2", "cpu_ddp"])
def test_accelerate_config_files_load(name: str) -> None:
    """Every shipped config is a valid accelerate ClusterConfig with the settings its comments promise."""
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(CONFIGS / f"{name}.yaml"))
    expected = {"single_gpu": ("NO", "bf16", 1), "multi_gpu": ("MULTI_GPU", "bf16", 4), "fsdp": ("FSDP", "bf16", 4),
                "deepspeed_zero2": ("DEEPSPEED", "bf16", 4), "cpu_ddp": ("MULTI_GPU", "no", 2)}[name]
    assert (str(config.distributed_type).split(".")[-1], str(config.mixed_precision).split(".")[-1],
            config.num_processes) == expected
    if name == "fsdp":
        assert config.fsdp_config["fsdp_transformer_layer_cls_to_wrap"] == "T5Block"
    if name == "deepspeed_zero2":
        assert config.deepspeed_config["zero_stage"] == 2
