"""Contracts of the natively stacked MLPWithBatchNorm (C.0)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from isonorm.models.bn_mlp import BNMLPConfig, StackedBNMLP, paper_batch_norm, single_run_reference
from isonorm.runtime import generator


def _gens(n: int, tag: str = "t") -> list[torch.Generator]:
    return [generator("bn_mlp_test", tag, r) for r in range(n)]


def _config(**overrides) -> BNMLPConfig:
    base = dict(in_features=12, width=8, out_features=5, depth=4)
    return BNMLPConfig(**{**base, **overrides})


@pytest.mark.parametrize("norm", ["bn", "torch_bn", "none"])
@pytest.mark.parametrize("bias", [False, True])
def test_stacked_equals_single_reference_forward_and_grad(norm: str, bias: bool) -> None:
    config = _config(norm=norm, bias=bias, activation="tanh", gain_exponent=0.4)
    stacked = StackedBNMLP(config, _gens(3))
    x = torch.randn(3, 10, 12, generator=torch.Generator().manual_seed(0))
    out = stacked(x)
    out.sum().backward()
    for r, g in enumerate(_gens(3)):
        ref = single_run_reference(config, g)
        ref_out = ref(x[r])
        torch.testing.assert_close(out[r], ref_out, rtol=1e-5, atol=1e-5)
        ref_out.sum().backward()
        torch.testing.assert_close(stacked.fc[1].weight.grad[r], ref[4].weight.grad, rtol=1e-4, atol=1e-5)
        if norm == "torch_bn":
            torch.testing.assert_close(stacked.norm[0].running_var[r], ref[1].running_var, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(stacked.norm[0].running_mean[r], ref[1].running_mean, rtol=1e-5, atol=1e-6)


def test_eval_mode_uses_running_statistics_like_torch() -> None:
    config = _config(norm="torch_bn", bias=True, activation="sin", gain_exponent=0.4)
    stacked = StackedBNMLP(config, _gens(2))
    ref = [single_run_reference(config, g) for g in _gens(2)]
    x = torch.randn(2, 10, 12)
    stacked(x)  # one train-mode pass updates the running statistics
    for r in range(2):
        ref[r](x[r])
    stacked.eval()
    y = torch.randn(7, 12)
    out = stacked(y)
    for r in range(2):
        torch.testing.assert_close(out[r], ref[r].eval()(y), rtol=1e-5, atol=1e-5)


def test_run_weights_depend_only_on_own_generator() -> None:
    config = _config(bias=True)
    three = StackedBNMLP(config, _gens(3))
    alone = StackedBNMLP(config, _gens(3)[2:])
    for name, tensor in three.state_dict().items():
        torch.testing.assert_close(tensor[2], alone.state_dict()[name][0])


def test_orthogonal_init_rows_orthonormal_and_gain_schedule() -> None:
    config = _config(gain_exponent=0.4, gain=2.0)
    stacked = StackedBNMLP(config, _gens(1))
    w = stacked.fc[1].weight[0]
    torch.testing.assert_close(w @ w.T, torch.eye(8), atol=1e-5, rtol=0)
    w0 = stacked.fc[0].weight[0]  # 8×12: orthonormal rows
    torch.testing.assert_close(w0 @ w0.T, torch.eye(8), atol=1e-5, rtol=0)
    assert config.gains() == pytest.approx([2.0 * (l + 1) ** -0.4 for l in range(4)])


def test_paper_bn_unit_column_norms() -> None:
    h = torch.randn(6, 4, dtype=torch.float64)
    z = paper_batch_norm(h, mean_reduction=False, force_factor=1.0)  # paper eq. 4: unit columns
    torch.testing.assert_close(z.norm(dim=0), torch.ones(4, dtype=torch.float64))
    z = paper_batch_norm(h, mean_reduction=True, force_factor=None)  # f = sqrt(n): unit variance, zero mean
    torch.testing.assert_close(z.mean(dim=0), torch.zeros(4, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close((z**2).mean(dim=0), torch.ones(4, dtype=torch.float64))


def test_per_run_activations_match_single_runs_and_trace_shapes() -> None:
    config = _config(norm="torch_bn", bias=True, gain_exponent=0.4)
    acts = ["sin", "sin", "tanh", "identity"]
    stacked = StackedBNMLP(config, _gens(4), activations=acts)
    x = torch.randn(10, 12)  # shared input
    logits, trace = stacked(x, trace=True)
    assert logits.shape == (4, 10, 5)
    assert [len(trace[k]) for k in ("fc", "norm", "act")] == [4, 4, 4]
    assert trace["act"][0].shape == (4, 10, 8)
    for r, (g, a) in enumerate(zip(_gens(4), acts)):
        torch.testing.assert_close(logits[r], single_run_reference(config, g, a)(x), rtol=1e-5, atol=1e-5)


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown norm"):
        _config(norm="ln")
    with pytest.raises(ValueError, match="contiguous"):
        StackedBNMLP(_config(), _gens(3), activations=["sin", "tanh", "sin"])
    with pytest.raises(ValueError, match="flatten"):
        StackedBNMLP(_config(), _gens(1))(torch.randn(1, 10, 3, 4))


def test_runs_of_fewer_classes_equal_their_own_networks() -> None:
    """A CIFAR-10 run stacked with CIFAR-100 runs: padded fc_L, −inf logits, same numbers as alone."""
    config = _config(norm="torch_bn", bias=True, out_features=7, gain_exponent=0.4)
    stacked = StackedBNMLP(config, _gens(2), activations=["sin", "sin"], classes=[3, 7])
    x = torch.randn(2, 10, 12)
    y = torch.tensor([[0, 1, 2, 0, 1, 2, 0, 1, 2, 0], [6, 5, 4, 3, 2, 1, 0, 6, 5, 4]])
    logits = stacked(x)
    assert torch.isinf(logits[0, :, 3:]).all() and torch.isfinite(logits[0, :, :3]).all()
    loss = torch.nn.functional.cross_entropy(logits.mT, y, reduction="none").mean(dim=1).sum()
    loss.backward()
    assert torch.isfinite(loss)
    assert (stacked.fc[-1].weight.grad[0, 3:] == 0).all() and (stacked.fc[-1].bias.grad[0, 3:] == 0).all()
    for r, (g, c) in enumerate(zip(_gens(2), [3, 7])):
        ref = single_run_reference(replace(config, out_features=c), g, "sin")
        ref_out = ref(x[r])
        torch.testing.assert_close(logits[r, :, :c], ref_out, rtol=1e-5, atol=1e-5)
        torch.nn.functional.cross_entropy(ref_out, y[r]).backward()
        torch.testing.assert_close(stacked.fc[-1].weight.grad[r, :c], ref[-1].weight.grad, rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(stacked.run_weight(4, r), ref[-1].weight)
    with pytest.raises(ValueError, match="classes"):
        StackedBNMLP(config, _gens(2), classes=[3, 8])
