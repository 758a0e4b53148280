"""benchmarks/lu2024_bounds.py: its counts are those of the jobs' own steps, it finds each job's H100 row, and its
verdict follows the floors (a verdict that cannot say "arithmetic" or "neither" would say nothing)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from conftest import REPO, script_module


@pytest.fixture(scope="module")
def bounds():
    return script_module(REPO / "benchmarks" / "lu2024_bounds.py")


def test_the_fnn_step_counts_its_products_and_finds_its_h100_row(bounds):
    lu = bounds.lu2024_config()
    rule, wildcards, build = bounds.image_jobs(lu, torch.device("cpu"))["FNN, Table 1 (norm_res, GELU, Adam)"]
    counted = bounds.count(build().step, repeats=1, device=torch.device("cpu"))
    fnn = lu["fnn"]
    width, blocks, batch = fnn["width"], fnn["blocks"], fnn["batch_size"]
    weights = 784 * width + blocks * width * width + width * 10  # model (F) on MNIST: in, hidden blocks, out
    # forward, the backward's two products per layer, but none for the gradient of the images
    assert counted["flop"] == 2 * batch * (3 * weights - 784 * width)
    assert 0 < counted["ops"] < 1000
    row = bounds.shapes_row(pd.read_csv(bounds.SHAPES_CUDA), rule, wildcards)
    assert row is not None and row.rule == "lu2024_table1" and row.seconds_per_step > 0
    assert bounds.shapes_row(pd.read_csv(bounds.SHAPES_CUDA), "lu2024_simple_cnn", {"item": "table2",
                                                                                     "optimizer": "adam"}) is None


def test_the_verdict_follows_the_floors(bounds):
    flop, ops = 1e12, 1000
    floor = flop / (bounds.PEAK_TFLOPS["float32"] * 1e12)
    assert bounds.bounds(flop, ops, "float32", floor * 2)["verdict"] == "arithmetic"
    eager = ops * bounds.EAGER_SECONDS_PER_OP_H100
    small = bounds.bounds(1e6, ops, "float32", eager)
    assert small["verdict"] == "launches and their host work" and small["us_per_op"] == pytest.approx(eager / ops * 1e6)
    assert bounds.bounds(1e6, ops, "float32", 10 * eager)["verdict"].startswith("neither")
    unmeasured = bounds.bounds(flop, ops, "tf32", None)
    assert unmeasured["verdict"] == "not measured on a GPU" and math.isclose(
        unmeasured["launch_floor_s"], ops * bounds.SECONDS_PER_KERNEL_H100)


def test_the_unmeasured_jobs_are_projected_at_the_measured_jobs_median_time_per_operator(bounds):
    rows = [{"us_per_op": us, "paper_steps": 100, "gpu_s_per_step": 1.0} for us in (20.0, 30.0, 40.0)]
    rows.append({"us_per_op": 500.0, "gpu_s_per_step": 1.0})  # a micro-batch row without paper steps: not an image job
    todo = {"ops": 1000, "paper_steps": 7200, "jobs": 2, "gpu_s_per_step": None}
    summary = bounds.project_unmeasured([*rows, todo])
    assert summary["us_per_op"] == 30.0 and summary["jobs"] == 2
    assert todo["projected_s_per_step"] == pytest.approx(0.03)
    assert summary["hours"] == pytest.approx(0.03 * 7200 * 2 / 3600)


def test_the_lora_profile_runs_a_micro_batch_and_a_whole_step_of_the_job_model(bounds, monkeypatch):
    """The GPU step's LoRA profile, on a narrow model of the same structure on the CPU (no kernels to count here)."""
    full = bounds.lora_model
    monkeypatch.setattr(bounds, "lora_model", lambda layers, narrow, *rest, **kw: full(layers, True, *rest, **kw))
    lu = bounds.lu2024_config()
    profiled = bounds.lora_profile(lu, 8, torch.device("cpu"))
    assert profiled["wall_s"] > 0 and profiled["cuda_kernels"] == 0 and profiled["cuda_kernel_s"] == 0
    # what held the host: the operators' own seconds, the largest first, the products among them
    assert 0 < profiled["host_op_s"] and profiled["top_device_ops"] == []
    host = profiled["top_host_ops"]
    assert len(host) == 12 and host == sorted(host, key=lambda op: op["self_cpu_ms"], reverse=True)
    assert any(op["name"] in ("aten::mm", "aten::addmm") for op in host) and all(op["calls"] >= 1 for op in host)
    # one optimizer step of the job's own LoraStep: all its micro-batches, so longer than one
    assert profiled["micro_batches_per_step"] == lu["table5"]["lora"]["grad_accumulation"] > 1
    assert profiled["step_s"] > profiled["wall_s"]
    assert profiled["step_overhead_s"] == pytest.approx(profiled["step_s"] - 16 * profiled["wall_s"])


def test_the_lora_counts_extrapolate_from_one_and_two_layers(bounds, monkeypatch):
    """Counted on narrow models only here (full width needs 8 GB): FLOP, operators and the narrow micro-batch's host
    seconds, each at 32 layers from its one- and two-layer values."""
    full = bounds.lora_model
    monkeypatch.setattr(bounds, "lora_model", lambda layers, narrow, *rest, **kw: full(layers, True, *rest, **kw))
    counts = bounds.lora_counts(bounds.lu2024_config(), 8)
    for key in ("flop", "ops", "narrow_s"):
        assert counts[key] == pytest.approx(counts[f"{key}_2_layers"] + 30 * counts[f"{key}_per_layer"])
    assert counts["ops_per_layer"] > 0 and counts["narrow_s_2_layers"] > 0


def test_the_lora_model_is_wrapped_as_the_job_wraps_it(bounds):
    cfg = bounds.lu2024_config()["table5"]["lora"]
    model = bounds.lora_model(1, True, cfg)
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in name for name in trainable)  # the base frozen, adapters on the targets
    assert {name.split(".")[-4] for name in trainable} == set(cfg["targets"]["qwen2"])
    assert model.base_model.model.is_gradient_checkpointing is cfg["gradient_checkpointing"]


def test_the_lora_tokens_are_those_of_the_shapes_presets_examples(bounds):
    """The synthetic instructions through the stand-in's byte-level tokenizer: longer than their words, at most
    max_length; what the micro-batches the shapes preset timed held."""
    lu = bounds.lu2024_config()
    tokens = bounds.shapes_example_tokens(lu, n_examples=3)
    shortest = min(len(bounds.synthetic_examples(3)[k]["instruction"].split()) for k in range(3))
    assert shortest < tokens <= lu["table5"]["lora"]["max_length"]
    assert tokens == bounds.shapes_example_tokens(lu, n_examples=3)  # deterministic
