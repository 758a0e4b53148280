"""The meterez2024 grid's evaluation passes on a GPU: what one pass launches and moves at an eval batch size, and the
grid's pass hours projected from the shapes preset's own H100 timing (issue 31: the paper run in one night).

After every epoch a grid job evaluates its runs on the 10,000-image test set in eval mode and takes the measurement
batch's train-mode forward (``training_grid.GridMeasure``, a non-recorded epoch). The shapes preset timed these
passes on the H100 at the config's eval batch of 1000 then: 1.9 GPU-hours over the grid's 6 jobs × 1001 passes, a
pass at depth 1000 taking 1.6–2.3 s for about 80,000 operators, as launch-bound as the training step. In eval mode
BatchNorm uses its running statistics, so a sample's outputs do not depend on the batch it is in and the number of
test batches is free. Per job (one stack of the config's, its six runs) and depth this script counts, on the CPU
with a split of one and of two test batches (a pass is a fixed part, the measurement, plus a part per test batch):

- the ATen operators of the pass (``op_count.OpCounter``), each a kernel launch on the GPU, and the bytes they read
  and write (the same counter's: every tensor argument and result, once per operator, the traffic of unfused
  kernels);
- the FLOP of its products (``FlopCounterMode``).

It then projects each job's pass at other eval batch sizes: its host time, the operators at the row's own seconds
per operator (the shapes row's seconds per pass / its operators at 1000), against its device time, the FLOP at
half the card's float32 peak plus the bytes at its memory bandwidth (H100 SXM data sheet: 67 TFLOP/s, 3.35 TB/s);
an eager pass overlaps the two, so it takes the larger. With one job per depth (config ``stacks``) one pass serves
all 12 runs: the two rows' passes become one of as many operators, at the slower row's seconds per operator, moving
both rows' bytes. With ``--device cuda`` (a step of ``gpu_acceptance.py``) it also times each job's pass on the GPU
at each eval batch size, over a random test split of the real size, and adds the grid's measured pass hours. Usage:

    OMP_NUM_THREADS=1 python benchmarks/meterez_passes.py    # ~1 min on a CPU
    python benchmarks/meterez_passes.py --device cuda         # ~2 min on an H100
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
from pathlib import Path

import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

from cpu_limits import best_of, synced  # benchmarks/, beside it
from meterez_engine import ACTS, BATCH, GRID_CFG, GRID_DEPTHS, STACKS
from op_count import OpCounter

from isonorm.atomic import write_text_atomically
from isonorm.data import dataset_spec
from isonorm.experiments.meterez2024.training_grid import GridMeasure, StackedSplit, grid_training
from isonorm.provenance import provenance

RESULTS = Path(__file__).resolve().parent / "results"
SHAPES_CUDA = RESULTS / "shapes-cuda-2026-11-24-partial.csv"
SHAPES_EVAL_BATCH = 1000  # config.yaml's eval_batch_size when the shapes preset ran on the H100 (2026-11-24)
TEST_SAMPLES = 10_000  # the test split of every grid data set (CIFAR-10/100, MNIST, Fashion-MNIST)
H100_FLOPS = 0.5 * 67e12  # half the H100 SXM's dense float32 peak: products of 100-wide layers reach no more
H100_BYTES_PER_S = 3.35e12  # H100 SXM HBM3 bandwidth


def random_split(stack: tuple[str, ...], samples: int, generator: torch.Generator,
                 device: torch.device = torch.device("cpu")) -> StackedSplit:
    """Random inputs and labels of the shapes of ``stack``'s data sets (the widest input, as a stack pads them),
    ``samples`` per data set, on ``device``."""
    features = max(math.prod(dataset_spec(name).image_shape) for name in stack)
    x = torch.randn(len(stack), samples, features, generator=generator)
    y = torch.stack([torch.randint(0, dataset_spec(name).num_classes, (samples,), generator=generator)
                     for name in stack])
    return StackedSplit(x.to(device), y.to(device), [samples] * len(stack), [features] * len(stack))


def grid_job(stack: tuple[str, ...], depth: int, generator: torch.Generator, device: torch.device):
    """The grid job of ``stack`` at ``depth`` (``grid_training``) on a random training split of two batches."""
    train = random_split(stack, 2 * BATCH, generator, device)
    return grid_training({**GRID_CFG, "measure_epochs": []}, stack, ACTS, depth, train.x, train.y)


def grid_measure(job, test: StackedSplit, eval_batch: int) -> GridMeasure:
    """The job's per-epoch pass over ``test`` at ``eval_batch``; calling it with a non-recorded epoch runs one."""
    return GridMeasure.for_job({**GRID_CFG, "eval_batch_size": eval_batch, "measure_epochs": []}, job, test)


def pass_counts(stack: tuple[str, ...], depth: int) -> dict[str, float]:
    """Operators, FLOP and bytes of one evaluation pass of the grid job of ``stack`` at ``depth`` (a non-recorded
    epoch of ``GridMeasure``), as a fixed part (the measurement batch) and a part per test batch (operators) or per
    test sample (FLOP, bytes): counted with test splits of one and of two batches of ``BATCH`` samples."""
    generator = torch.Generator().manual_seed(0)
    job = grid_job(stack, depth, generator, torch.device("cpu"))
    test = random_split(stack, 2 * BATCH, generator)
    counts = {}
    for batches in (1, 2):
        part = StackedSplit(test.x[:, :batches * BATCH], test.y[:, :batches * BATCH], [batches * BATCH] * len(stack),
                            test.dims)
        measure = grid_measure(job, part, BATCH)
        measure(job.step.model, 1)  # warm-up
        with OpCounter() as ops:
            measure(job.step.model, 1)
        with FlopCounterMode(display=False) as flops:
            measure(job.step.model, 1)
        counts[batches] = (ops.total, flops.get_total_flops(), ops.bytes)
    (ops1, flop1, bytes1), (ops2, flop2, bytes2) = counts[1], counts[2]
    return {"ops_fixed": 2 * ops1 - ops2, "ops_per_batch": ops2 - ops1, "flop_fixed": 2 * flop1 - flop2,
            "flop_per_sample": (flop2 - flop1) / BATCH, "bytes_fixed": 2 * bytes1 - bytes2,
            "bytes_per_sample": (bytes2 - bytes1) / BATCH}


def timed_pass(stack: tuple[str, ...], depth: int, eval_batches: list[int], device: torch.device,
               repeats: int = 3) -> dict[int, float]:
    """Seconds of one evaluation pass (a non-recorded epoch of ``GridMeasure``) of the grid job of ``stack`` at
    ``depth`` on ``device``, over a random test split of ``TEST_SAMPLES`` per data set, at each eval batch size: the
    minimum of ``repeats`` passes after a warm-up one."""
    generator = torch.Generator().manual_seed(0)
    job = grid_job(stack, depth, generator, device)
    test = random_split(stack, TEST_SAMPLES, generator, device)
    return {batch: best_of(repeats, synced(lambda measure=grid_measure(job, test, batch): measure(job.step.model, 1),
                                           device))
            for batch in eval_batches}


def pass_at(counts: dict[str, float], eval_batch: int) -> dict[str, float]:
    """One pass over the test set at ``eval_batch``: its operators, FLOP and bytes."""
    return {"ops": counts["ops_fixed"] + math.ceil(TEST_SAMPLES / eval_batch) * counts["ops_per_batch"],
            "flop": counts["flop_fixed"] + TEST_SAMPLES * counts["flop_per_sample"],
            "bytes": counts["bytes_fixed"] + TEST_SAMPLES * counts["bytes_per_sample"]}


def device_seconds(flop: float, moved: float) -> float:
    return flop / H100_FLOPS + moved / H100_BYTES_PER_S


def projected_hours(rows: list[dict], batches: list[int]) -> dict[str, dict[int, float]]:
    """The grid's pass hours per eval batch size: each job as the shapes preset ran it (``stacks``), and with one job
    per depth (``joint``)."""
    hours: dict[str, dict[int, float]] = {"stacks": {}, "joint": {}}
    for batch in batches:
        stacks = joint = 0.0
        for depth in sorted({row["depth"] for row in rows}):
            at_depth = [row for row in rows if row["depth"] == depth]
            passes = [pass_at(row["counts"], batch) for row in at_depth]
            host = [p["ops"] * row["s_per_op"] for p, row in zip(passes, at_depth)]
            device = [device_seconds(p["flop"], p["bytes"]) for p in passes]
            stacks += sum(row["paper_passes"] * max(h, d) for row, h, d in zip(at_depth, host, device))
            slowest = max(row["s_per_op"] for row in at_depth)
            one = max(max(p["ops"] for p in passes) * slowest, sum(device))
            joint += max(row["paper_passes"] for row in at_depth) * one
        hours["stacks"][batch], hours["joint"][batch] = stacks / 3600, joint / 3600
    return hours


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=list(GRID_DEPTHS))
    parser.add_argument("--eval-batches", type=int, nargs="+", default=[1000, 2000, 5000, 10_000])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: also time each job's pass on the GPU at every eval batch size")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_arguments()
    device = torch.device(args.device)
    torch.set_num_threads(1)
    table = pd.read_csv(SHAPES_CUDA)
    table = table[table.rule == "meterez2024_training"]
    rows = []
    for stack in STACKS:
        for depth in args.depths:
            shapes = table[table.wildcards == f"stack={'+'.join(stack)},depth={depth}"].iloc[0]
            counts = pass_counts(stack, depth)
            measured = pass_at(counts, SHAPES_EVAL_BATCH)
            rows.append({"stack": "+".join(stack), "depth": depth, "counts": counts,
                         "shapes_s_per_pass": float(shapes.seconds_per_pass), "paper_passes": int(shapes.paper_passes),
                         "s_per_op": float(shapes.seconds_per_pass) / measured["ops"],
                         "per_eval_batch": {b: pass_at(counts, b) for b in args.eval_batches}})
            row = rows[-1]
            if device.type == "cuda":
                row["measured_s_per_pass"] = timed_pass(stack, depth, args.eval_batches, device)
                print(f"{row['stack']} depth {depth} on {torch.cuda.get_device_name(device)}: " + ", ".join(
                    f"{s:.3f} s per pass at {b}" for b, s in row["measured_s_per_pass"].items()))
            print(f"{row['stack']} depth {depth}: {measured['ops']} ops per pass at {SHAPES_EVAL_BATCH} "
                  f"({counts['ops_per_batch']} per test batch, {counts['ops_fixed']} for the measurement), "
                  f"{row['shapes_s_per_pass']:.2f} s on the H100: {row['s_per_op'] * 1e6:.1f} µs per op; "
                  f"{measured['flop'] / 1e12:.2f} TFLOP, {measured['bytes'] / 1e9:.1f} GB moved")
    hours = projected_hours(rows, args.eval_batches)
    if device.type == "cuda":  # the two-stack grid's passes at the measured seconds
        hours["measured_stacks"] = {b: sum(row["paper_passes"] * row["measured_s_per_pass"][b] for row in rows) / 3600
                                    for b in args.eval_batches}
    for kind, per_batch in hours.items():
        print(f"grid passes, {kind}: " + ", ".join(f"eval batch {b}: {h:.2f} h" for b, h in per_batch.items()))
    out = RESULTS / f"meterez-passes-{device.type}-{dt.date.today().isoformat()}.json"
    write_text_atomically(out, json.dumps({
        "benchmark": "meterez_passes", "date": dt.date.today().isoformat(), "args": vars(args),
        "shapes": f"{SHAPES_CUDA.name} (NVIDIA H100 80GB HBM3, eval batch {SHAPES_EVAL_BATCH})",
        "h100_flops": H100_FLOPS, "h100_bytes_per_s": H100_BYTES_PER_S, "results": rows,
        "measured": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "projected_pass_hours": hours, "provenance": provenance(device.type)}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
