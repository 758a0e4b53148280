"""What bounds the lu2024 trainings on a GPU: arithmetic, kernel launches, or neither (issue 31).

For each lu2024 training job family at the paper configuration (config.yaml `lu2024:`), one training step as the
job runs it, built by the project's own code (the model factories of ``isonorm.experiments.lu2024``, the engine's
step ``isonorm.train.stacked_step`` with the job's optimizer and on-device augmentation; the Table-5
Transformer's ``build_models``; the LoRA job's micro-batch on a Qwen-shaped model). Counted on this CPU, per
optimizer step:

- the FLOP of its forward, backward and update (``FlopCounterMode``: matrix products
  and convolutions, which are what a GPU's peak rates bound);
- the ATen operators it dispatches (``op_count.OpCounter``): a device-independent count of its kernel launches.

Set against the H100's seconds per step that the shapes preset measured for the same jobs
(``results/shapes-cuda-2026-11-24-partial.csv``, torch's defaults: float32 matrix products on the CUDA cores,
convolutions in TF32 through cuDNN's default ``allow_tf32``, the LoRA job in bfloat16), that gives two floors
and the verdict:

- *arithmetic floor*: the FLOP at the card's peak rate for the job's precision (H100 SXM data sheet: 67 TFLOP/s
  float32, 495 TF32 and 989 bfloat16 dense);
- *launch floor*: the operators at 3.85 µs each, what the meterez2024 engine's CUDA graph takes per kernel on
  the same card (``results/meterez-cuda-2026-11-24.json``); an eager step pays its Python and dispatch on top;
- *implied µs per operator*: measured seconds / operators. A job whose time is many times its arithmetic floor
  and whose implied time per operator is that of an eager PyTorch step on that machine (the eager meterez2024
  step there: 37 µs per operator, 444 ms for 12,013) is bound by launches and their host work, and CUDA graphs
  or more runs per kernel are what would help it; one near its arithmetic floor is bound by arithmetic.

The LoRA job's model is Qwen-7B at full width (``isonorm.checkpoints.full_size``); FLOP are counted on a
one- and a two-layer model at full width (linear in depth: the 152k-token output layer once, each decoder layer
alike) and extrapolated to 32 layers; operators likewise on a narrow model of the same structure (their count
does not depend on width). Its micro-batches hold one example (the job's batch size) of as many tokens as the
shapes preset's examples hold on average (``shapes_example_tokens``: its synthetic instructions through the
job's tokenization and its Qwen stand-in's tokenizer; ``--lora-tokens`` sets another count).

With ``--device cuda`` (a step of ``gpu_acceptance.py``) every step is timed on the GPU itself instead of read
from the shapes table, and the LoRA job is profiled: a micro-batch's wall time, the time its CUDA kernels ran and
their count, which say whether it waits on the host, on launches or on arithmetic, and one whole optimizer step
of the job's ``LoraStep`` (its 16 micro-batches, the clip, AdamW), whose excess over 16 micro-batches is what the
step adds to them. Usage:

    OMP_NUM_THREADS=2 python benchmarks/lu2024_bounds.py            # ~3 min on a 2-core CPU, ~7 GB of memory
    python benchmarks/lu2024_bounds.py --device cuda               # ~2 min on an H100
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import torch
import yaml
from torch.utils.flop_counter import FlopCounterMode

from cpu_limits import best_of, synced  # benchmarks/cpu_limits.py and op_count.py, beside it
from op_count import OpCounter

from isonorm.atomic import write_text_atomically
from isonorm.checkpoints.full_size import FULL_DTYPES, full_sizes
from isonorm.checkpoints.random_weights import build_config, write_tokenizer
from isonorm.checkpoints.registry import CHECKPOINTS
from isonorm.data import dataset_spec
from isonorm.data.augment import crop_flip_augment, padding_fill
from isonorm.data.instructions import synthetic_examples
from isonorm.data.preprocess import resolve_normalization
from isonorm.data.texts import shipped_texts
from isonorm.experiments.lu2024.lora import LoraStep, lora_optimizer, tokenize_example, with_lora
from isonorm.experiments.lu2024.trained_nets import fnn_factory, optimizer_config, seeded_model
from isonorm.experiments.lu2024.wikitext_transformer import build_models
from isonorm.experiments.lu2024.wikitext_transformer import optimizer_config as transformer_optimizer
from isonorm.models.resnet18 import ResNet18
from isonorm.models.simple_cnn import SimpleCNN
from isonorm.provenance import provenance
from isonorm.train import TrainConfig, stacked_step

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
SHAPES_CUDA = RESULTS / "shapes-cuda-2026-11-24-partial.csv"
PEAK_TFLOPS = {"float32": 67.0, "tf32": 494.7, "bfloat16": 989.4}  # H100 SXM5 data sheet, dense
SECONDS_PER_KERNEL_H100 = 57.8e-3 / 15_018  # the meterez2024 engine's CUDA graph, depth 1000 (same card)
EAGER_SECONDS_PER_OP_H100 = 1 / 2.25 / 12_013  # the eager meterez2024 step on that card: 2.25 steps/s, 12,013 ops


@dataclass
class Built:
    """One training step ready to count: ``step(index)``, the precision its products run in on the GPU, the
    optimizer steps of the job's full run, and how many of the grid's jobs it stands for (its optimizers and data
    sets of the same shapes)."""

    step: Callable[[], None]
    precision: str  # "float32" (matrix products only), "tf32" (convolutions too), "bfloat16"
    paper_steps: int = 0
    jobs: int = 1


def paper_steps(cfg: dict) -> int:
    """Optimizer steps of an image job's full run: its epochs × the batches of its training split."""
    return int(cfg["epochs"]) * math.ceil(dataset_spec(cfg["dataset"]).split_sizes["train"] / int(cfg["batch_size"]))


def lu2024_config() -> dict[str, Any]:
    return yaml.safe_load((REPO / "config.yaml").read_text())["lu2024"]


def one_step(models: list[torch.nn.Module], x: torch.Tensor, y: torch.Tensor, config: TrainConfig,
             augment: Any = None, running_accuracy: bool = False) -> Callable[[], None]:
    """One step of the engine's own ``train_stacked`` step (``isonorm.train.stacked_step``) on all of (x, y)."""
    step = stacked_step(models, x, y, config, augment, running_accuracy)
    index = torch.arange(len(x), device=step.device).view(1, -1)

    def one() -> None:
        with step.epoch(1):
            step(index)
    return one


def image_step(factory: Callable[[], torch.nn.Module], cfg: dict, optimizer: str, dataset: str, flatten: bool,
               augment: bool, running_accuracy: bool, device: torch.device) -> Callable[[], None]:
    """The engine's step of one seed (the paper's [42]) on a random batch of the data set's shape."""
    spec = dataset_spec(dataset)
    batch = int(cfg["batch_size"])
    shape = (math.prod(spec.image_shape),) if flatten else (spec.channels, *spec.image_shape[:2])
    x, y = torch.randn(batch, *shape), torch.randint(0, spec.num_classes, (batch,))
    config = TrainConfig("bounds", dataset, epochs=1, batch_size=batch,
                         optimizer=optimizer_config(cfg, optimizer, "bounds"), device=device)
    hook = None
    if augment:
        hook = crop_flip_augment(fill=padding_fill(resolve_normalization(cfg["transform"], dataset)),
                                 padding=int(cfg["crop_padding"]))
    return one_step([seeded_model(factory, 42)], x, y, config, hook, running_accuracy)


def image_jobs(lu: dict, device: torch.device) -> dict[str, tuple[str, dict[str, str], Callable[[], Built]]]:
    """name → (rule, wildcards of its shapes row, builder), one job per model family, batch size and variant."""
    fnn, cnn, res = lu["fnn"], lu["simple_cnn"], lu["resnet18"]

    def job(family: dict, item: str, make: Callable[[dict], Callable[[], torch.nn.Module]], optimizer: str,
            images: bool, jobs: int = 1) -> Callable[[], Built]:
        """A job of ``family`` (config section) for ``item``: flattened MNIST for the FNN, or augmented images in
        TF32 convolutions (ResNet-18 also counts its running accuracy, config `train_accuracy`)."""
        cfg = {**family, **lu[item]}
        augment, accuracy = images and bool(cfg.get("augment")), bool(cfg.get("train_accuracy"))
        return lambda: Built(image_step(make(cfg), cfg, optimizer, cfg["dataset"], not images, augment, accuracy,
                                        device), "tf32" if images else "float32", paper_steps(cfg), jobs)

    def fnn_job(item: str, variant: str, activation: str, optimizer: str) -> Callable[[], Built]:
        return job(fnn, item, lambda cfg: fnn_factory(cfg, variant, activation, cfg["dataset"]), optimizer, False)

    def classes(cfg: dict) -> int:
        return dataset_spec(cfg["dataset"]).num_classes

    def cnn_job(item: str, optimizer: str, jobs: int) -> Callable[[], Built]:
        return job(cnn, item, lambda cfg: partial(SimpleCNN, classes(cfg), int(cfg["width"]), int(cfg["fc_width"])),
                   optimizer, True, jobs)

    def resnet_job(item: str, variant: str, optimizer: str, jobs: int = 1) -> Callable[[], Built]:
        return job(res, item, lambda cfg: partial(ResNet18, variant, cfg["activation"], classes(cfg),
                                                  int(cfg["width"])), optimizer, True, jobs)

    cnn_jobs = len(cnn["optimizers"]) * 2  # Table 2 (CIFAR-10) and App. Table 2 (CIFAR-100), every optimizer
    resnets = {}
    for item, title in (("table4", "Table 4"), ("apptable3", "App. Table 3")):
        for variant in res["variants"]:  # the original ran on the H100; norm_res (both optimizers) did not
            jobs = 1 if variant == "original" else len(lu[item]["runs"])
            resnets[f"ResNet-18, {title} ({variant}, Adam, batch {lu[item]['batch_size']})"] = (
                "lu2024_resnet18", {"item": item, "variant": variant, "optimizer": "adam"},
                resnet_job(item, variant, "adam", jobs))

    return {
        "FNN, Table 1 (norm_res, GELU, Adam)": ("lu2024_table1", {"optimizer": "adam"},
                                                fnn_job("table1", "norm_res", "gelu", "adam")),
        "FNN, Table 3 (original, GELU, Adam)": ("lu2024_table3", {"variant": "original", "activation": "gelu",
                                                                  "optimizer": "adam"},
                                                fnn_job("table3", "original", "gelu", "adam")),
        "SimpleCNN, Table 2 (Adam)": ("lu2024_simple_cnn", {"item": "table2", "optimizer": "adam"},
                                      cnn_job("table2", "adam", cnn_jobs)),
        **resnets,
    }


WIKITEXT2_VOCAB = 33_278  # the word vocabulary of WikiText-2 (config.yaml data: corpora: wikitext2)


def transformer_job(lu: dict, device: torch.device) -> Callable[[], Built]:
    """The Table-5 Transformer's step: one seed, a batch of ``batch_size`` windows of ``bptt`` tokens, Adam."""
    cfg = lu["table5_transformer"]

    def build() -> Built:
        batch, bptt = int(cfg["batch_size"]), int(cfg["bptt"])
        x = torch.randint(0, WIKITEXT2_VOCAB, (batch, bptt))
        config = TrainConfig("bounds", "transformer", epochs=1, batch_size=batch,
                             optimizer=transformer_optimizer(cfg["optimizer"]), device=device)
        return Built(one_step(build_models({**cfg, "seeds": [42]}, WIKITEXT2_VOCAB), x, x.roll(-1, 1), config),
                     "float32")
    return build


def lora_model(layers: int, narrow: bool, cfg: dict, dtype: torch.dtype = torch.float32,
               device: torch.device = torch.device("cpu")) -> torch.nn.Module:
    """Qwen-7B's structure with ``layers`` decoder layers (full width, or narrow for counting operators) in
    ``dtype`` on ``device``, wrapped as the LoRA job wraps its loaded base (``with_lora``: the job's adapters and
    gradient checkpointing), in train mode."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    sizes = full_sizes("qwen", layers)
    if narrow:
        sizes.update(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=4,
                     vocab_size=1000)
    base = Qwen2ForCausalLM(Qwen2Config(**sizes)).to(device=device, dtype=dtype)
    return with_lora(base, cfg, "qwen2").train()


def shapes_example_tokens(lu: dict, n_examples: int = 300) -> float:
    """The mean tokens of an example of the shapes preset's LoRA job, what its timed micro-batches held: its
    synthetic instructions (presets/shapes.yaml) through the job's own ``tokenize_example`` and the tokenizer of
    its Qwen stand-in (the byte-level BPE ``random_weights.write_tokenizer`` learns from the shipped texts at Qwen's
    vocabulary size, as the stand-in's build does). The examples cycle through three kinds, so a few hundred give
    the mean of the 5,000."""
    from transformers import AutoTokenizer

    spec = CHECKPOINTS["qwen"]
    config = build_config(spec.tiny_family, full_sizes(spec.name), FULL_DTYPES[spec.name])
    with tempfile.TemporaryDirectory() as folder:
        write_tokenizer(spec.tiny_family, folder, shipped_texts(), config)  # as write_random makes the stand-in's
        tokenizer = AutoTokenizer.from_pretrained(folder)
        max_length = int(lu["table5"]["lora"]["max_length"])
        lengths = [len(tokenize_example(tokenizer, example, max_length)[0])
                   for example in synthetic_examples(n_examples)]
    return sum(lengths) / len(lengths)


def lora_counts(lu: dict, tokens: int) -> dict[str, float]:
    """FLOP and operators of one LoRA micro-batch (one example of ``tokens`` tokens) for the 32-layer model,
    from one- and two-layer models (linear in depth), and of the 2-layer model the shapes preset timed; and the
    seconds a micro-batch of the narrow model takes on this machine's CPU (``narrow_s``…), where its products are
    small: the host work of the job's Python, peft, checkpointing and operator dispatch, which a GPU does not
    shorten."""
    cfg = lu["table5"]["lora"]
    real = full_sizes("qwen")["num_hidden_layers"]
    flop, ops, narrow_s = {}, {}, {}
    for layers in (1, 2):
        for narrow in (False, True):
            model = lora_model(layers, narrow, cfg)
            ids = torch.randint(0, model.config.vocab_size, (1, tokens))
            model(input_ids=ids, labels=ids).loss.backward()  # warm-up
            if narrow:
                with OpCounter() as counter:
                    model(input_ids=ids, labels=ids).loss.backward()
                ops[layers] = counter.total
                narrow_s[layers] = best_of(5, lambda: model(input_ids=ids, labels=ids).loss.backward())
            else:
                with FlopCounterMode(display=False) as counter:
                    model(input_ids=ids, labels=ids).loss.backward()
                flop[layers] = counter.get_total_flops()
            del model
    at = lambda counts, n: counts[1] + (n - 1) * (counts[2] - counts[1])  # noqa: E731
    return {"flop_2_layers": flop[2], "flop": at(flop, real), "ops_2_layers": ops[2], "ops": at(ops, real),
            "flop_per_layer": flop[2] - flop[1], "ops_per_layer": ops[2] - ops[1],
            "narrow_s_2_layers": narrow_s[2], "narrow_s": at(narrow_s, real),
            "narrow_s_per_layer": narrow_s[2] - narrow_s[1]}


def count(step: Callable[[], None], repeats: int, device: torch.device) -> dict[str, float]:
    """FLOP and operators of one call of ``step`` (after a warm-up call), and its seconds on ``device`` (the
    minimum of ``repeats``)."""
    step()
    with FlopCounterMode(display=False) as flops:
        step()
    with OpCounter() as ops:
        step()
    return {"flop": flops.get_total_flops(), "ops": ops.total, "seconds": best_of(repeats, synced(step, device))}


def lora_profile(lu: dict, tokens: int, device: torch.device) -> dict[str, float]:
    """On a GPU, what the shapes preset timed of the LoRA job (2 of Qwen-7B's layers at full width, the job's
    bfloat16), in two parts: one micro-batch of ``tokens`` tokens, its wall seconds, the seconds its CUDA kernels
    ran and how many there were, and the seconds its operators held the host (the profiler's), which say whether it
    waits on the host (kernel time ≪ wall ≈ host time), on something outside the operators (both ≪ wall), on launches
    or on arithmetic, with the operators that took the most of each (:func:`top_operators`); and one whole
    optimizer step of the job's own ``LoraStep`` (its grad_accumulation micro-batches, the gradient clip, AdamW, the
    scheduler), whose excess over that many micro-batches is what a step costs beyond them (``step_overhead_s``)."""
    from torch.profiler import ProfilerActivity, profile

    cfg = lu["table5"]["lora"]
    model = lora_model(2, False, cfg, dtype=torch.bfloat16, device=device)
    ids = torch.randint(0, model.config.vocab_size, (1, tokens), device=device)
    micro = synced(lambda: model(input_ids=ids, labels=ids).loss.backward(), device)
    wall = best_of(3, micro)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        micro()
    kernels = sum(1 for event in prof.events() if event.device_type == torch.autograd.DeviceType.CUDA)
    averages = prof.key_averages()
    kernel_us = sum(event.self_device_time_total for event in averages)  # every kernel, once
    model.zero_grad(set_to_none=True)
    accumulation = int(cfg["grad_accumulation"])
    example = (ids[0].tolist(), ids[0].tolist())  # every token labelled: the job's prompt tokens cost the same
    step = LoraStep(model, [example] * accumulation, {**cfg, "max_steps": None}, lora_optimizer(cfg), pad_id=0,
                    device=device, seed=42)
    index = torch.arange(accumulation).view(1, -1)
    with step.epoch(1):
        whole = best_of(2, synced(lambda: step(index), device))
    return {"wall_s": wall, "cuda_kernel_s": kernel_us * 1e-6, "cuda_kernels": kernels,
            "host_op_s": sum(event.self_cpu_time_total for event in averages) * 1e-6, **top_operators(averages),
            "step_s": whole, "micro_batches_per_step": accumulation, "step_overhead_s": whole - accumulation * wall}


def top_operators(averages, n: int = 12) -> dict[str, list[dict[str, Any]]]:
    """The profiler's operators that took the most device time and the most host time (their own, without their
    children's), so that one GPU run says what a micro-batch waits on, not only that it waits."""
    def row(event) -> dict[str, Any]:
        return {"name": event.key, "calls": event.count, "self_cpu_ms": event.self_cpu_time_total * 1e-3,
                "self_device_ms": event.self_device_time_total * 1e-3}

    by = lambda key: [row(e) for e in sorted(averages, key=key, reverse=True)[:n]]  # noqa: E731
    return {"top_device_ops": [r for r in by(lambda e: e.self_device_time_total) if r["self_device_ms"] > 0],
            "top_host_ops": by(lambda e: e.self_cpu_time_total)}


def shapes_row(table: pd.DataFrame, rule: str, wildcards: dict[str, str]) -> pd.Series | None:
    """The shapes preset's H100 row of the job (None: the job did not run there)."""
    key = ",".join(f"{k}={v}" for k, v in wildcards.items())
    rows = table[(table.rule == rule) & (table.wildcards.fillna("") == key)]
    return rows.iloc[0] if len(rows) else None


def bounds(flop: float, ops: float, precision: str, seconds: float | None) -> dict[str, Any]:
    """The floors of a step on the H100 and, when its seconds were measured there, what they imply."""
    row: dict[str, Any] = {
        "arithmetic_floor_s": flop / (PEAK_TFLOPS[precision] * 1e12), "launch_floor_s": ops * SECONDS_PER_KERNEL_H100,
        "eager_dispatch_s": ops * EAGER_SECONDS_PER_OP_H100, "gpu_s_per_step": seconds,
    }
    if seconds is None or not math.isfinite(seconds):
        row["verdict"] = "not measured on a GPU"
        return row
    row["fraction_of_peak"] = row["arithmetic_floor_s"] / seconds
    row["us_per_op"] = seconds / ops * 1e6
    if row["fraction_of_peak"] >= 0.3:
        row["verdict"] = "arithmetic"
    elif seconds <= 2 * row["eager_dispatch_s"]:
        row["verdict"] = "launches and their host work"
    else:
        row["verdict"] = "neither floor: a GPU profile is needed"
    return row


def project_unmeasured(rows: list[dict]) -> dict[str, Any]:
    """The image jobs the H100 did not run (their CUDA failure, fixed since), projected from their operators at the
    median µs per operator of the image jobs it did run (all bound by launches and their host work): seconds per
    step, each row's hours for the jobs it stands for, and their sum. Training steps only, like the measured ones'
    ``seconds_per_step``."""
    measured = [row["us_per_op"] for row in rows if "us_per_op" in row and row.get("paper_steps")]
    todo = [row for row in rows if row.get("gpu_s_per_step") is None and row.get("paper_steps")]
    if not measured or not todo:
        return {}
    us = float(pd.Series(measured).median())
    for row in todo:
        row["projected_s_per_step"] = row["ops"] * us * 1e-6
        row["projected_hours"] = row["projected_s_per_step"] * row["paper_steps"] * row["jobs"] / 3600
    return {"us_per_op": us, "jobs": sum(row["jobs"] for row in todo),
            "hours": sum(row["projected_hours"] for row in todo)}


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--lora-tokens", type=int, default=None,
                        help="tokens of a LoRA micro-batch (default: the mean of the shapes preset's examples, "
                             "shapes_example_tokens)")
    parser.add_argument("--skip-lora", action="store_true")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: time every step on the GPU instead of reading the shapes table, and profile the "
                             "LoRA micro-batch (a step of gpu_acceptance.py)")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_arguments()
    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    lu = lu2024_config()
    table = pd.read_csv(SHAPES_CUDA)
    rows = []
    jobs = {**image_jobs(lu, device),
            "Transformer, Table 5 (a)": ("lu2024_table5_transformer", {}, transformer_job(lu, device))}
    for name, (rule, wildcards, build) in jobs.items():
        built = build()
        counted = count(built.step, args.repeats, device)
        measured = shapes_row(table, rule, wildcards)
        seconds = counted["seconds"] if on_gpu else None if measured is None else float(measured.seconds_per_step)
        rows.append({"job": name, "rule": rule, "wildcards": wildcards, "precision": built.precision, **counted,
                     "paper_steps": built.paper_steps, "jobs": built.jobs,
                     **bounds(counted["flop"], counted["ops"], built.precision, seconds)})
        print(f"{name}: {counted['flop'] / 1e9:.2f} GFLOP, {counted['ops']} ops per step; " + ", ".join(
            f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()
            if k in ("arithmetic_floor_s", "launch_floor_s", "gpu_s_per_step", "us_per_op", "verdict")))
    unmeasured = project_unmeasured(rows)
    if unmeasured:
        print(f"the image jobs the H100 did not run: {unmeasured['hours']:.2f} GPU-hours for {unmeasured['jobs']} jobs "
              f"at {unmeasured['us_per_op']:.1f} µs per operator")
    tokens = None
    if not args.skip_lora:
        tokens = args.lora_tokens or round(shapes_example_tokens(lu))
        lora = lora_counts(lu, tokens)
        micro = int(lu["table5"]["lora"]["grad_accumulation"])
        measured = shapes_row(table, "lu2024_table5_lora", {})
        seconds = None if measured is None else float(measured.seconds_per_step) / micro  # per micro-batch
        if on_gpu:
            lora |= lora_profile(lu, tokens, device)
            seconds = lora["wall_s"]
        # the shapes row timed the 2-layer model: its floors are the 2-layer counts'
        rows.append({"job": f"LoRA, Table 5 (d), one micro-batch of {tokens} tokens, 2 of 32 layers",
                     "rule": "lu2024_table5_lora", "precision": "bfloat16", **lora,
                     **bounds(lora["flop_2_layers"], lora["ops_2_layers"], "bfloat16", seconds)})
        rows[-1] |= {"floor_32_layers": bounds(lora["flop"], lora["ops"], "bfloat16", None)}
        print(f"LoRA micro-batch: {lora['flop_2_layers'] / 1e12:.3f} TFLOP and {lora['ops_2_layers']} ops at 2 "
              f"layers, {lora['flop'] / 1e12:.3f} TFLOP and {lora['ops']} ops at 32; " + ", ".join(
                  f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()
                  if k in ("arithmetic_floor_s", "launch_floor_s", "gpu_s_per_step", "us_per_op", "verdict")))
        print(f"  host work of a narrow micro-batch on this CPU: {lora['narrow_s_2_layers'] * 1e3:.1f} ms at 2 layers, "
              f"{lora['narrow_s_per_layer'] * 1e3:.1f} ms per layer, {lora['narrow_s'] * 1e3:.0f} ms at 32")
    out = RESULTS / f"lu2024-bounds-{device.type}-{dt.date.today().isoformat()}.json"
    write_text_atomically(out, json.dumps({
        "benchmark": "lu2024_bounds", "date": dt.date.today().isoformat(), "args": vars(args), "lora_tokens": tokens,
        "peak_tflops_h100": PEAK_TFLOPS, "seconds_per_kernel_h100": SECONDS_PER_KERNEL_H100,
        "eager_seconds_per_op_h100": EAGER_SECONDS_PER_OP_H100,
        "measured": torch.cuda.get_device_name(device) if on_gpu else f"{SHAPES_CUDA.name} (NVIDIA H100 80GB HBM3)",
        "threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "results": rows, "unmeasured_image_jobs": unmeasured, "provenance": provenance(device.type)}, indent=1,
        default=str) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
