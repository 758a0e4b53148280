"""The fast stacked SGD step (train/fast_step.py) equals plain per-run eager training with torch.optim.SGD, with the
model's eager layers and with its fused block (StackedBNMLP.fuse_norm_act: norm, gain and activation compiled)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from isonorm.models.bn_mlp import FUSED_LAYERS, BNMLPConfig, StackedBNMLP, single_run_reference
from isonorm.runtime import generator
from isonorm.train.fast_step import StackedSGDStep

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # op_count: benchmark code, not src
from op_count import OpCounter  # noqa: E402

CONFIG = BNMLPConfig(in_features=12, width=10, out_features=4, depth=5, norm="torch_bn", bias=True,
                     gain_exponent=0.4)  # the training architecture of meterez2024-fig4 at tiny size
ACTS = ["sin", "tanh", "identity"]


def _gens() -> list[torch.Generator]:
    return [generator("native_stack_test", a) for a in ACTS]


def _data(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(60, 12, generator=g), torch.randint(0, 4, (60,), generator=g)
    order = torch.stack([torch.randperm(60, generator=g) for _ in ACTS])
    return x.to(device), y.to(device), order.to(device)


def _train_stacked_fast(device: str, cuda_graph: bool | None, fused: bool = False,
                        config: BNMLPConfig = CONFIG, span: int = FUSED_LAYERS) -> tuple[StackedBNMLP, StackedSGDStep]:
    x, y, order = _data(device)
    model = StackedBNMLP(config, _gens(), activations=ACTS).to(device)
    if fused:
        model.fuse_norm_act(span)
    step = StackedSGDStep(model, x, y, len(ACTS), batch_size=15, lr=0.05, cuda_graph=cuda_graph)
    for start in range(0, 60, 15):
        step(order[:, start:start + 15])
    return model, step


@pytest.mark.parametrize("fused", [False, True], ids=["eager", "fused"])
def test_fast_step_equals_eager_single_runs_with_torch_sgd(fused: bool) -> None:
    model, step = _train_stacked_fast("cpu", cuda_graph=False, fused=fused)
    x, y, order = _data()
    for r, (g, act) in enumerate(zip(_gens(), ACTS)):
        ref = single_run_reference(CONFIG, g, act)
        opt = torch.optim.SGD(ref.parameters(), lr=0.05)
        loss_sum, correct = 0.0, 0
        for start in range(0, 60, 15):
            idx = order[r, start:start + 15]
            logits = ref(x[idx])
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            correct += int((logits.argmax(-1) == y[idx]).sum())
        assert step.loss_sum[r].item() == pytest.approx(loss_sum, rel=1e-5)
        assert step.correct[r].item() == correct
        torch.testing.assert_close(model.fc[2].weight[r], ref[8].weight, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(model.norm[1].running_var[r], ref[5].running_var, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(model.fc[-1].bias[r], ref[-1].bias, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("norm, bias, span", [("bn", True, FUSED_LAYERS), ("none", True, FUSED_LAYERS),
                                              ("torch_bn", False, FUSED_LAYERS), ("torch_bn", True, 2)],
                         ids=["bn", "none", "torch_bn-no-bias", "spans-of-2"])
def test_the_fused_block_trains_as_the_eager_layers_for_every_norm(norm: str, bias: bool, span: int) -> None:
    """The paper's custom BN (mean reduction, no ε), no norm, and torch BN without the fc's bias (the block adds
    the bias when there is one); torch BN with bias is the test above, in one span of the five layers, and here in
    spans of two: two full spans and a shorter last one (a second compiled graph), the products between a span's
    blocks inside it and those between spans outside. Evaluation and traces stay on the eager layers, so eval-mode
    logits of the two models agree too."""
    from dataclasses import replace

    config = replace(CONFIG, norm=norm, mean_reduction=True, bias=bias)
    eager, eager_step = _train_stacked_fast("cpu", cuda_graph=False, config=config)
    fused, fused_step = _train_stacked_fast("cpu", cuda_graph=False, fused=True, config=config, span=span)
    assert fused.fused_span is not None and eager.fused_span is None and fused.span_layers == span
    torch.testing.assert_close(fused_step.loss_sum, eager_step.loss_sum, rtol=1e-5, atol=1e-6)
    for (name, a), b in zip(eager.state_dict().items(), fused.state_dict().values()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6, msg=name)
    x, _, _ = _data()
    torch.testing.assert_close(fused.eval()(x), eager.eval()(x), rtol=1e-5, atol=1e-6)


def test_a_fused_span_of_no_layers_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one layer"):
        StackedBNMLP(CONFIG, _gens(), activations=ACTS).fuse_norm_act(0)


def test_short_last_batch_and_reset() -> None:
    x, y, order = _data()
    model = StackedBNMLP(CONFIG, _gens(), activations=ACTS)
    step = StackedSGDStep(model, x, y, 3, batch_size=25, lr=0.01, cuda_graph=False)
    for start in range(0, 60, 25):  # 25, 25, 10
        step(order[:, start:start + 25])
    assert int(step.correct.sum()) <= 3 * 60
    step.reset()
    assert step.loss_sum.abs().sum() == 0 and step.correct.sum() == 0


def test_bad_arguments() -> None:
    x, y, _ = _data()
    model = StackedBNMLP(CONFIG, _gens(), activations=ACTS)
    with pytest.raises(ValueError, match="lr"):
        StackedSGDStep(model, x, y, 3, 15, lr=0.0)
    with pytest.raises(ValueError, match="CUDA"):
        StackedSGDStep(model, x, y, 3, 15, lr=0.1, cuda_graph=True)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("fused", [False, True], ids=["eager", "fused"])
def test_cuda_graph_step_equals_eager_step(fused: bool) -> None:
    """One graph replay per step, with the eager layers or with the fused block (Triton) inside the graph."""
    eager, eager_step = _train_stacked_fast("cuda", cuda_graph=False)
    graphed, graph_step = _train_stacked_fast("cuda", cuda_graph=True, fused=fused)
    assert graph_step.graph is not None
    torch.testing.assert_close(graph_step.loss_sum, eager_step.loss_sum, rtol=1e-5, atol=1e-6)
    assert torch.equal(graph_step.correct, eager_step.correct)
    for (name, a), b in zip(eager.state_dict().items(), graphed.state_dict().values()):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5, msg=name)


def _ops_per_step(depth: int) -> tuple[int, int]:
    """ATen ops of one engine step (3 activations × 2 data sets stacked) and of one eager single-run step."""
    config = BNMLPConfig(in_features=12, width=10, out_features=4, depth=depth, norm="torch_bn", bias=True,
                         gain_exponent=0.4)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(2, 60, 12, generator=g), torch.randint(0, 4, (2, 60), generator=g)
    acts = [a for a in ACTS for _ in range(2)]
    model = StackedBNMLP(config, [generator("ops", r) for r in range(6)], activations=acts, classes=[4, 3] * 3)
    step = StackedSGDStep(model, x, y, 6, 15, 0.01, cuda_graph=False, run_data=torch.tensor([0, 1] * 3))
    index = torch.randint(0, 60, (6, 15), generator=g)
    with OpCounter() as engine:
        step(index)
    ref = single_run_reference(config, generator("ops", 0), "sin")
    opt = torch.optim.SGD(ref.parameters(), lr=0.01, foreach=True)  # foreach: one update op, as on CUDA
    with OpCounter() as eager:
        loss = F.cross_entropy(ref(x[0, :15]), y[0, :15])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return engine.total, eager.total


def test_stacked_step_keeps_the_launch_budget() -> None:
    """The launch budget (issue meterez2024 "Speed"): a GPU step is bound by kernel launches, so per layer
    the engine's six stacked runs (three activations × two data sets) dispatch ≤ 16 operators — fc, one
    native BN, gain, split activations and their backward — at least 4× fewer per run than plain eager runs
    (12 per layer for one run)."""
    engine4, eager4 = _ops_per_step(4)
    engine8, eager8 = _ops_per_step(8)
    engine_per_layer, eager_per_layer = (engine8 - engine4) / 4, (eager8 - eager4) / 4
    assert engine_per_layer <= 16, (engine4, engine8)
    assert 6 * eager_per_layer / engine_per_layer >= 4, (engine_per_layer, eager_per_layer)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_graph_step_equals_eager_step_for_a_data_set_stack() -> None:
    """The grid's stack on CUDA: two data sets (4 and 3 classes, per-run gather, −inf logit mask) × 3
    activations, one graph replay per step vs eager."""
    def train(cuda_graph: bool) -> tuple[StackedBNMLP, StackedSGDStep]:
        g = torch.Generator().manual_seed(5)
        x, y = torch.randn(2, 60, 12, generator=g), torch.randint(0, 3, (2, 60), generator=g)
        acts = [a for a in ACTS for _ in range(2)]
        model = StackedBNMLP(CONFIG, [generator("graph_stack", r) for r in range(6)], activations=acts,
                             classes=[4, 3] * 3).cuda()
        step = StackedSGDStep(model, x.cuda(), y.cuda(), 6, 15, 0.05, cuda_graph=cuda_graph,
                              run_data=torch.tensor([0, 1] * 3))
        order = torch.stack([torch.randperm(60, generator=g) for _ in range(6)]).cuda()
        for start in range(0, 60, 15):
            step(order[:, start:start + 15])
        return model, step

    eager, eager_step = train(False)
    graphed, graph_step = train(True)
    assert graph_step.graph is not None
    torch.testing.assert_close(graph_step.loss_sum, eager_step.loss_sum, rtol=1e-5, atol=1e-6)
    for (name, a), b in zip(eager.state_dict().items(), graphed.state_dict().values()):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5, msg=name)


def _ragged_stack(device: str, cuda_graph: bool, fused: bool = False) -> tuple[StackedBNMLP, StackedSGDStep, list]:
    """Two data sets of 60 and 45 samples (the second padded to 60 rows, 8 of its 12 features used) × 3
    activations, one epoch in batches of 15: the runs of the second sit out the fourth step."""
    g = torch.Generator().manual_seed(9)
    x, y = torch.randn(2, 60, 12, generator=g), torch.randint(0, 4, (2, 60), generator=g)
    x[1, 45:], x[1, :, 8:], y[1, 45:] = 0.0, 0.0, 0
    acts = [a for a in ACTS for _ in range(2)]
    model = StackedBNMLP(CONFIG, [generator("ragged", r) for r in range(6)], activations=acts,
                         inputs=[12, 8] * 3).to(device)
    if fused:
        model.fuse_norm_act()
    step = StackedSGDStep(model, x.to(device), y.to(device), 6, 15, 0.05, cuda_graph=cuda_graph,
                          run_data=torch.tensor([0, 1] * 3), run_samples=[60, 45] * 3)
    order = torch.stack([torch.randperm(60 if r % 2 == 0 else 45, generator=g).repeat(2)[:60] for r in range(6)])
    states = [{k: v.clone() for k, v in model.state_dict().items()}]
    for k, start in enumerate(range(0, 60, 15)):
        active = None if k < 3 else torch.tensor([True, False] * 3, device=device)
        step(order[:, start:start + 15].to(device), active)
        states.append({k: v.clone() for k, v in model.state_dict().items()})
    return model, step, states


@pytest.mark.parametrize("fused", [False, True], ids=["eager", "fused"])
def test_runs_sitting_out_a_step_keep_everything(fused: bool) -> None:
    """EpochPlan's idle steps: an inactive run's parameters, BatchNorm running statistics, loss and counts stay as
    they are, bit for bit; the active runs step as usual; a run's padding columns of fc_0 stay zero."""
    model, step, states = _ragged_stack("cpu", cuda_graph=False, fused=fused)
    before, after = states[3], states[4]
    changed = {name for name in after if not torch.equal(after[name], before[name])}
    assert any("running_mean" in name for name in changed) and any(".weight" in name for name in changed)
    for name, tensor in after.items():
        if tensor.dim() and tensor.shape[0] == 6:
            assert torch.equal(tensor[1::2], before[name][1::2]), name  # the sitting-out runs
            if name in changed:
                assert not torch.equal(tensor[0::2], before[name][0::2]), name
    assert torch.count_nonzero(model.fc[0].weight[1::2, :, 8:]) == 0
    assert model.run_weight(0, 1).shape == (CONFIG.width, 8)
    stats = step.epoch_stats(torch.tensor([4.0, 3.0] * 3, dtype=torch.float64),
                             torch.tensor([60.0, 45.0] * 3, dtype=torch.float64))
    assert (stats["train_acc"] <= 1).all() and torch.isfinite(stats["train_loss"]).all()


def test_an_active_mask_needs_runs_of_unequal_data_sets() -> None:
    x, y, order = _data()
    step = StackedSGDStep(StackedBNMLP(CONFIG, _gens(), activations=ACTS), x, y, 3, 15, 0.05, cuda_graph=False)
    with pytest.raises(ValueError, match="run_samples"):
        step(order[:, :15], torch.tensor([True, False, True]))
    with pytest.raises(ValueError, match="run_samples must give one count"):
        StackedSGDStep(StackedBNMLP(CONFIG, _gens(), activations=ACTS), x, y, 3, 15, 0.05, run_samples=[60, 61, 60])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("fused", [False, True], ids=["eager", "fused"])
def test_cuda_graph_idle_step_equals_eager_step(fused: bool) -> None:
    """Runs of unequal data sets on CUDA: the all-active graph and the idle graph (a run sitting out) against the
    eager steps."""
    eager, eager_step, _ = _ragged_stack("cuda", cuda_graph=False)
    graphed, graph_step, states = _ragged_stack("cuda", cuda_graph=True, fused=fused)
    assert graph_step.graph is not None and graph_step.idle_graph is not None
    for name, tensor in states[4].items():
        if tensor.dim() and tensor.shape[0] == 6:
            assert torch.equal(tensor[1::2], states[3][name][1::2]), name
    torch.testing.assert_close(graph_step.loss_sum, eager_step.loss_sum, rtol=1e-5, atol=1e-6)
    assert torch.equal(graph_step.correct, eager_step.correct)
    for (name, a), b in zip(eager.state_dict().items(), graphed.state_dict().values()):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5, msg=name)
