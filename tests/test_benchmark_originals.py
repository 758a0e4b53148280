"""The stand-ins of benchmarks/originals.py compute what the project computes (speed is never asserted here,
architecture §8): a ratio against a stand-in that computed something else would mean nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import yaml

from conftest import REPO, script_module

SCRIPT = REPO / "benchmarks" / "originals.py"


@pytest.fixture(scope="module")
def originals():
    module = script_module(SCRIPT)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the benchmark runs; small ops on two threads crawl on a loaded 2-core machine
    yield module
    torch.set_num_threads(threads)


def test_the_pair_loop_gives_the_project_pii(originals):
    from isonorm.metrics.pii import pii_chunked

    w = torch.randn(16, 40, generator=torch.Generator().manual_seed(0))
    seconds, value, extrapolated = originals.pii_originals(np.ascontiguousarray(w.T.numpy()), budget_s=60.0)
    assert not extrapolated
    assert value == pytest.approx(float(pii_chunked(w, "columns")), abs=1e-6)


def test_the_bn_chain_reaches_the_width_32_floor(originals):
    gaps = np.array(originals.chain_originals(32, 4, 50, 10, 1e-6, log=True))
    assert gaps[:, 0].mean() == pytest.approx(math.log(math.sqrt(1 - 1 / 4)), abs=1e-3)  # rank one: V = √(1 − 1/n)
    assert -2.0 < gaps[:, 30:].mean() < -1.3  # the d = 32 plateau near ln V ≈ −1.6 (daneshmand2021-fig2a)


def test_the_simulator_records_every_layer_before_and_after_the_norm(originals):
    config = yaml.safe_load((REPO / "config.yaml").read_text())["joudaki2023"]
    cfg = {**config["simulator"], **config["fig4"], "widths": [50], "depth": 3, "runs": 2,
           "monte_carlo_samples": 1000}
    frame = originals.simulator_originals(cfg)
    configs = len(cfg["activations"]) * len(cfg["centerings"])
    assert len(frame) == configs * cfg["runs"] * (1 + 2 * cfg["depth"])
    post = frame[frame.layer == "post_norm"]
    assert post.norm_var.notna().all() and (post.norm_avg > 0).all()


def test_the_named_layer_network_trains_an_epoch(originals):
    torch.manual_seed(0)
    model = originals.NamedLayerMLP(depth=3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    x, y = torch.randn(2 * originals.BATCH, 3072), torch.randint(0, 10, (2 * originals.BATCH,))
    before = model.layers["fc_1"].weight.detach().clone()
    originals.epoch_originals(model, optimizer, x, y)
    assert model(x[:5]).shape == (5, 10)
    assert not torch.equal(before, model.layers["fc_1"].weight)
