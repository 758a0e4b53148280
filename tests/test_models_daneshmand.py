"""Networks and SVD initialisations of daneshmand2021 (daneshmand2021-appfig6a, daneshmand2021-appfig6b, daneshmand2021-fig5, daneshmand2021-appfig7a/b)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from isonorm.models.alexnet_deep import alexnet_deep
from isonorm.models.orthogonal_init import conv_svd_init_, iterative_orthogonal_init_
from isonorm.models.random_profile_nets import layer_inputs, profile_convnet, profile_mlp

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def seeded(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def plain_mlp(in_features: int, width: int, linears: int, classes: int, seed: int = 0) -> nn.Sequential:
    """Linear(no bias)/ReLU stack, last layer bare, Xavier-uniform gain √2 (daneshmand2021-fig4a)."""
    sizes = [in_features] + [width] * (linears - 1) + [classes]
    modules: list[nn.Module] = []
    for index, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        linear = nn.Linear(fan_in, fan_out, bias=False)
        nn.init.xavier_uniform_(linear.weight, gain=math.sqrt(2.0), generator=seeded(seed + index))
        modules += [linear, nn.ReLU()]
    return nn.Sequential(*modules[:-1])


# ---------------------------------------------------------------- daneshmand2021-appfig6a/daneshmand2021-appfig6b profile nets


@pytest.mark.parametrize("norm", ["batchnorm", "none"])
def test_profile_mlp_shapes_and_layer_structure(norm: str) -> None:
    net = profile_mlp(in_features=12, width=16, layers=4, norm=norm, generator=seeded())
    assert len(net) == 4
    for block in net:
        relu, linear, normaliser = block
        assert isinstance(relu, nn.ReLU) and isinstance(linear, nn.Linear) and linear.bias is None
        assert isinstance(normaliser, nn.BatchNorm1d if norm == "batchnorm" else nn.Identity)
    assert net[0][1].in_features == 12 and net[1][1].in_features == 16
    assert net(torch.randn(8, 12)).shape == (8, 16)


@pytest.mark.parametrize("norm", ["batchnorm", "none"])
def test_profile_convnet_shapes_and_layer_structure(norm: str) -> None:
    net = profile_convnet(in_channels=3, channels=8, layers=3, norm=norm, generator=seeded())
    for block in net:
        relu, conv, normaliser = block
        assert isinstance(relu, nn.ReLU) and conv.bias is None and conv.padding_mode == "reflect"
        assert conv.kernel_size == (3, 3) and conv.stride == (1, 1) and conv.padding == (1, 1)
        assert isinstance(normaliser, nn.BatchNorm2d if norm == "batchnorm" else nn.Identity)
    assert net(torch.randn(4, 3, 8, 8)).shape == (4, 8, 8, 8)


def test_profile_nets_use_xavier_normal_with_the_spec_gains() -> None:
    # std of Xavier-normal = gain·sqrt(2 / (fan_in + fan_out)); MLP gain √2, conv gain 1.
    mlp_weight = profile_mlp(layers=1, generator=seeded())[0][1].weight
    assert mlp_weight.std().item() == pytest.approx(math.sqrt(2.0) * math.sqrt(2 / (3072 + 100)), rel=0.02)
    assert mlp_weight.mean().item() == pytest.approx(0.0, abs=5e-4)
    conv_weight = profile_convnet(channels=100, layers=1, generator=seeded())[0][1].weight
    assert conv_weight.std().item() == pytest.approx(math.sqrt(2 / (3 * 9 + 100 * 9)), rel=0.08)


@pytest.mark.parametrize("build", [profile_mlp, profile_convnet])
def test_same_generator_seed_gives_same_network(build) -> None:
    first, second = build(layers=2, generator=seeded(3)), build(layers=2, generator=seeded(3))
    other = build(layers=2, generator=seeded(4))
    assert torch.equal(first[1][1].weight, second[1][1].weight)
    assert not torch.equal(first[1][1].weight, other[1][1].weight)


def test_layer_inputs_start_with_raw_data_and_chain_the_blocks() -> None:
    net = profile_mlp(in_features=12, width=16, layers=5, generator=seeded())
    x = torch.randn(8, 12)
    inputs = layer_inputs(net, x)
    assert len(inputs) == 5
    assert inputs[0] is x
    for block, before, after in zip(net, inputs[:-1], inputs[1:]):
        torch.testing.assert_close(after, block(before))
    assert not any(t.requires_grad for t in inputs[1:])


def test_layer_inputs_of_convnet_keep_the_image_layout() -> None:
    net = profile_convnet(channels=8, layers=3, generator=seeded())
    x = torch.randn(4, 3, 8, 8)
    shapes = [tuple(t.shape) for t in layer_inputs(net, x)]
    assert shapes == [(4, 3, 8, 8), (4, 8, 8, 8), (4, 8, 8, 8)]


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_batchnorm_layer_inputs_are_standardised_over_the_batch(mode: str) -> None:
    # BN with batch statistics (daneshmand2021-appfig6a/daneshmand2021-appfig6b: training mode), in either module mode: every layer input from
    # ℓ = 2 on (before its ReLU) has per-feature batch mean 0 and biased variance v/(v + eps) ≈ 1.
    mlp = profile_mlp(in_features=12, width=16, layers=4, generator=seeded())
    convnet = profile_convnet(channels=8, layers=3, generator=seeded())
    getattr(mlp, mode)()
    getattr(convnet, mode)()
    for h in layer_inputs(mlp, torch.randn(8, 12) + 3.0)[1:]:
        torch.testing.assert_close(h.mean(0), torch.zeros(16), atol=1e-5, rtol=0)
        torch.testing.assert_close(h.var(0, unbiased=False), torch.ones(16), atol=1e-3, rtol=0)
    for h in layer_inputs(convnet, torch.randn(4, 3, 8, 8) + 3.0)[1:]:
        torch.testing.assert_close(h.mean((0, 2, 3)), torch.zeros(8), atol=1e-5, rtol=0)
        torch.testing.assert_close(h.var((0, 2, 3), unbiased=False), torch.ones(8), atol=1e-3, rtol=0)


def test_vanilla_layer_inputs_are_not_standardised() -> None:
    net = profile_mlp(in_features=12, width=16, layers=3, norm="none", generator=seeded())
    h = layer_inputs(net, torch.randn(8, 12) + 3.0)[1]
    assert h.mean(0).abs().max() > 0.1


def test_profile_nets_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="norm must be"):
        profile_mlp(norm="layernorm")
    with pytest.raises(ValueError, match="width must be a positive"):
        profile_mlp(width=0)
    with pytest.raises(ValueError, match="flatten the images"):
        layer_inputs(profile_mlp(in_features=12, width=4, layers=2), torch.randn(2, 3, 2, 2))
    with pytest.raises(TypeError, match="nn.Sequential"):
        layer_inputs(nn.Linear(2, 2), torch.randn(2, 2))


# ---------------------------------------------------------------- daneshmand2021-appfig7a/b network


@pytest.mark.parametrize("extra_layers", [1, 2])
def test_alexnet_deep_maps_cifar_images_to_logits(extra_layers: int) -> None:
    net = alexnet_deep(extra_layers, generator=seeded())
    net.eval()
    assert net(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    convs = [m for m in net.features if isinstance(m, nn.Conv2d)]
    assert len(convs) == 5 + extra_layers
    assert [(c.in_channels, c.out_channels) for c in convs[-extra_layers:]] == [(256, 256)] * extra_layers
    assert torch.flatten(net.features(torch.rand(2, 3, 32, 32)), 1).shape == (2, 1024)


def test_alexnet_deep_init_is_xavier_uniform_gain_sqrt2_with_zero_bias() -> None:
    net = alexnet_deep(1, num_classes=7, generator=seeded())
    assert net.classifier[-1].out_features == 7
    for module in net.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(module.weight)
            bound = math.sqrt(2.0) * math.sqrt(6.0 / (fan_in + fan_out))
            assert module.weight.abs().max().item() <= bound
            assert module.weight.abs().max().item() > 0.9 * bound
            assert torch.count_nonzero(module.bias) == 0


def test_alexnet_deep_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="extra_layers"):
        alexnet_deep(-1)
    with pytest.raises(ValueError, match="CIFAR-sized"):
        alexnet_deep(0)(torch.rand(2, 3, 64, 64))


# ---------------------------------------------------------------- Fig. 5 iterative init (MLP)


def hidden_pre_activations(mlp: nn.Sequential, x: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(H_prev, H_prev Wᵀ) for every hidden Linear, propagating ``x`` through the network as it is."""
    linears = [m for m in mlp if isinstance(m, nn.Linear)]
    pairs, h = [], x
    for module in mlp:
        out = module(h)
        if any(module is layer for layer in linears[1:-1]):
            pairs.append((h, out))
        h = out
    return pairs


def test_iterative_init_gives_the_formula_output_on_the_init_batch() -> None:
    # H = U S Vᵀ, W = U_d S⁻¹ Vᵀ / c  ⇒  H Wᵀ = U U_dᵀ / ‖U_d‖_F (U_d = first d rows of U): unit Frobenius
    # norm, first d rows symmetric PSD, column Gram U_d U_dᵀ / ‖U_d‖_F².
    mlp = plain_mlp(12, 16, linears=5, classes=5).double()
    first, last = mlp[0].weight.clone(), mlp[-1].weight.clone()
    x = torch.randn(48, 12, generator=seeded(1), dtype=torch.float64)
    assert iterative_orthogonal_init_(mlp, x) is mlp
    assert torch.equal(mlp[0].weight, first) and torch.equal(mlp[-1].weight, last)
    pairs = hidden_pre_activations(mlp, x)
    assert len(pairs) == 3
    for h_prev, z in pairs:
        assert torch.linalg.matrix_norm(z).item() == pytest.approx(1.0, abs=1e-10)
        u = torch.linalg.svd(h_prev, full_matrices=False).U
        u_d = u[:16]
        torch.testing.assert_close(z, u @ u_d.T / torch.linalg.matrix_norm(u_d), atol=1e-10, rtol=0)
        torch.testing.assert_close(z[:16], z[:16].T, atol=1e-10, rtol=0)
        assert torch.linalg.eigvalsh(z[:16]).min() > -1e-10
        torch.testing.assert_close(z.T @ z, u_d @ u_d.T / (u_d**2).sum(), atol=1e-10, rtol=0)


def test_iterative_init_with_square_batch_makes_columns_exactly_orthogonal() -> None:
    # n = d: U_d = U is orthogonal, so H Wᵀ = I/√d — Gram exactly I/d, every hidden layer.
    mlp = plain_mlp(12, 16, linears=4, classes=5).double()
    x = torch.randn(16, 12, generator=seeded(2), dtype=torch.float64)
    iterative_orthogonal_init_(mlp, x)
    for _, z in hidden_pre_activations(mlp, x):
        torch.testing.assert_close(z, torch.eye(16, dtype=torch.float64) / 4.0, atol=1e-9, rtol=0)


def test_iterative_init_casts_to_the_parameter_dtype() -> None:
    mlp = plain_mlp(12, 16, linears=4, classes=5)
    x = torch.randn(48, 12, generator=seeded(1))
    iterative_orthogonal_init_(mlp, x)
    assert all(p.dtype == torch.float32 for p in mlp.parameters())
    for _, z in hidden_pre_activations(mlp, x):
        assert torch.linalg.matrix_norm(z).item() == pytest.approx(1.0, rel=1e-4)


def test_iterative_init_rejects_unsuitable_networks_and_batches() -> None:
    x = torch.randn(48, 12)
    with pytest.raises(ValueError, match="n >= d"):
        iterative_orthogonal_init_(plain_mlp(12, 16, 4, 5), torch.randn(8, 12))
    with pytest.raises(ValueError, match="shape"):
        iterative_orthogonal_init_(plain_mlp(12, 16, 4, 5), torch.randn(48, 13))
    with pytest.raises(ValueError, match="rank"):
        iterative_orthogonal_init_(plain_mlp(12, 16, 4, 5), torch.zeros(48, 12))
    with pytest.raises(ValueError, match="bias"):
        iterative_orthogonal_init_(nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                                                 nn.Linear(16, 5)), x)
    with pytest.raises(ValueError, match="square"):
        iterative_orthogonal_init_(nn.Sequential(nn.Linear(12, 16, bias=False), nn.Linear(16, 8, bias=False),
                                                 nn.Linear(8, 5, bias=False)), x)
    with pytest.raises(TypeError, match="has parameters"):
        iterative_orthogonal_init_(nn.Sequential(nn.Linear(12, 16, bias=False), nn.LayerNorm(16),
                                                 nn.Linear(16, 16, bias=False), nn.Linear(16, 5, bias=False)), x)


def test_iterative_init_sets_only_the_layers_the_caller_selects() -> None:
    # select: the first two of four hidden layers (what the engine's sampled picks under a step cap); the batch
    # propagates through the others, which keep their Xavier weights
    mlp, whole = plain_mlp(12, 16, linears=6, classes=5).double(), plain_mlp(12, 16, linears=6, classes=5).double()
    before = [linear.weight.clone() for linear in mlp if isinstance(linear, nn.Linear)]
    x = torch.randn(48, 12, generator=seeded(1), dtype=torch.float64)
    iterative_orthogonal_init_(mlp, x, select=lambda hidden: iter(hidden[:2]))
    iterative_orthogonal_init_(whole, x)
    after = [linear for linear in mlp if isinstance(linear, nn.Linear)]
    set_whole = [linear for linear in whole if isinstance(linear, nn.Linear)]
    for index in (1, 2):  # the selected layers: as when every layer is set
        torch.testing.assert_close(after[index].weight, set_whole[index].weight, atol=1e-12, rtol=0)
    for index in (0, 3, 4, 5):
        assert torch.equal(after[index].weight, before[index])
    with pytest.raises(ValueError, match="in network order"):
        iterative_orthogonal_init_(mlp, x, select=lambda hidden: [hidden[1], hidden[0]])


# ---------------------------------------------------------------- daneshmand2021-appfig7a/b SVD init (ConvNet)


def conv_outputs(features: nn.Sequential, x: torch.Tensor) -> list[tuple[nn.Conv2d, torch.Tensor, torch.Tensor]]:
    """(conv, its input, its output) for every Conv2d, propagating ``x`` through the modules in order."""
    records, h = [], x
    for module in features:
        out = module(h)
        if isinstance(module, nn.Conv2d):
            records.append((module, h, out))
        h = out
    return records


def test_conv_svd_init_changes_only_square_convs_and_normalises_their_output() -> None:
    net = alexnet_deep(1, generator=seeded())
    before = {name: p.clone() for name, p in net.named_parameters()}
    x = torch.rand(32, 3, 32, 32, generator=seeded(5))  # unnormalised images, as in daneshmand2021-appfig7a/b
    assert conv_svd_init_(net, x) is net
    square = 0
    for conv, _, out in conv_outputs(net.features, x):
        if conv.in_channels == conv.out_channels:
            square += 1
            assert torch.linalg.vector_norm(out).item() == pytest.approx(1.0, rel=1e-4)
    assert square == 3  # 192→192, the base 256→256 and the one extra conv
    for name, p in net.named_parameters():
        module = net.get_submodule(name.rsplit(".", 1)[0])
        is_square_weight = name.endswith("weight") and isinstance(module, nn.Conv2d) and \
            module.in_channels == module.out_channels
        assert torch.equal(p, before[name]) != is_square_weight, name


def test_conv_svd_init_gives_the_formula_output_on_the_init_batch() -> None:
    # P = U S Vᵀ (patch matrix), W = U_CC S_C^{-1/2} V_Cᵀ / c  ⇒  conv(x) as (N·L)×C = U_{:,C} S_C^{1/2} U_CCᵀ / c.
    net = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1)).double()
    nn.init.zeros_(net[2].bias)
    x = torch.rand(4, 3, 5, 5, generator=seeded(6), dtype=torch.float64)
    conv_svd_init_(net, x)
    _, h, out = conv_outputs(net, x)[1]
    z = out.permute(0, 2, 3, 1).reshape(-1, 6)  # rows: sample-major positions
    patches = F.unfold(h, 3, padding=1).transpose(1, 2).reshape(-1, 6 * 9)
    u, s, _ = torch.linalg.svd(patches, full_matrices=False)
    expected = u[:, :6] @ (s[:6].sqrt()[:, None] * u[:6, :6].T)
    torch.testing.assert_close(z, expected / torch.linalg.matrix_norm(expected), atol=1e-10, rtol=0)


def test_conv_svd_init_sets_only_the_convs_the_caller_selects() -> None:
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(4, 4, 3, padding=1))
    before = [module.weight.clone() for module in net if isinstance(module, nn.Conv2d)]
    x = torch.rand(4, 3, 5, 5, generator=seeded(5))
    conv_svd_init_(net, x, select=lambda square: square[:1])  # the first of the two square convs
    assert [torch.equal(net[i].weight, weight) for i, weight in zip((0, 2, 4), before)] == [True, False, True]
    with pytest.raises(ValueError, match="square convs, in network order"):
        conv_svd_init_(net, x, select=lambda convs: [nn.Conv2d(3, 3, 3)])


def test_conv_svd_init_rejects_unsuitable_networks_and_batches() -> None:
    with pytest.raises(ValueError, match="at least as many patches"):
        conv_svd_init_(nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.Conv2d(64, 64, 3, padding=1)),
                       torch.rand(1, 3, 4, 4))
    with pytest.raises(ValueError, match="zero padding"):
        conv_svd_init_(nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, groups=2)), torch.rand(2, 4, 4, 4))
    with pytest.raises(ValueError, match="images of shape"):
        conv_svd_init_(nn.Sequential(nn.Conv2d(3, 3, 3, padding=1)), torch.rand(2, 4, 4, 4))
    with pytest.raises(TypeError, match="has parameters"):
        conv_svd_init_(nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3)), torch.rand(2, 3, 4, 4))
    with pytest.raises(TypeError, match="features"):
        conv_svd_init_(nn.Linear(3, 3), torch.rand(2, 3, 4, 4))


# ---------------------------------------------------------------- GPU


@pytest.mark.gpu
@needs_cuda
def test_inits_on_cuda_match_cpu() -> None:
    mlp_cpu = plain_mlp(12, 16, linears=4, classes=5)
    mlp_gpu = plain_mlp(12, 16, linears=4, classes=5).cuda()
    x = torch.randn(48, 12, generator=seeded(1))
    iterative_orthogonal_init_(mlp_cpu, x)
    iterative_orthogonal_init_(mlp_gpu, x.cuda())
    for cpu_p, gpu_p in zip(mlp_cpu.parameters(), mlp_gpu.parameters()):
        torch.testing.assert_close(gpu_p.cpu(), cpu_p, atol=1e-5, rtol=1e-4)

    conv_cpu, conv_gpu = alexnet_deep(1, generator=seeded()), alexnet_deep(1, generator=seeded()).cuda()
    images = torch.rand(32, 3, 32, 32, generator=seeded(5))
    conv_svd_init_(conv_cpu, images)
    conv_svd_init_(conv_gpu, images.cuda())
    for cpu_p, gpu_p in zip(conv_cpu.features.parameters(), conv_gpu.features.parameters()):
        torch.testing.assert_close(gpu_p.cpu(), cpu_p, atol=1e-5, rtol=1e-4)
    assert conv_gpu(images.cuda()).shape == (32, 10)
