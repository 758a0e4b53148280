"""Stacked BatchNorm runs where torch's kernel cannot under vmap (isonorm.train.stackable_norm).

On CUDA, ``F.batch_norm`` of a (B, C, H, W) input inside vmap stops with "NYI: querying is_contiguous inside of
vmap ..." (seen on an H100, benchmarks/README.md). This machine has no GPU, so the tests fake that restriction:
``torch.batch_norm`` raises the same error for inputs of three or more dimensions, and a stacked SimpleCNN must
still train. The stackable modules must also give torch's BatchNorm numbers."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from isonorm.models.simple_cnn import SimpleCNN
from isonorm.train.stackable_norm import make_stackable
from isonorm.train.stacking import StackedModels

CUDA_ERROR = "NYI: querying is_contiguous inside of vmap for memory_format other than torch.contiguous_format"


@pytest.fixture
def cuda_like_batch_norm(monkeypatch):
    """``torch.batch_norm`` as it behaves under vmap on CUDA: no input with spatial dimensions."""
    native = torch.batch_norm

    def refusing(input, *args, **kwargs):
        if input.dim() > 2:
            raise RuntimeError(CUDA_ERROR)
        return native(input, *args, **kwargs)

    monkeypatch.setattr(torch, "batch_norm", refusing)


CASES = [  # (module, input shape)
    (lambda: nn.BatchNorm1d(3), (6, 3, 5)),
    (lambda: nn.BatchNorm2d(4), (5, 4, 3, 3)),
    (lambda: nn.BatchNorm2d(4, affine=False), (5, 4, 3, 3)),
    (lambda: nn.BatchNorm2d(4, momentum=None), (5, 4, 3, 3)),
    (lambda: nn.BatchNorm2d(4, track_running_stats=False), (5, 4, 3, 3)),
    (lambda: nn.BatchNorm3d(2, eps=1e-3, momentum=0.3), (4, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("make, shape", CASES)
def test_a_stackable_batch_norm_gives_torch_batch_norm_numbers(make, shape):
    torch.manual_seed(0)
    reference, stackable = make(), make_stackable(make())
    if reference.affine:
        with torch.no_grad():
            for module in (reference, stackable):
                module.weight.copy_(torch.linspace(0.5, 2.0, module.num_features))
                module.bias.copy_(torch.linspace(-1.0, 1.0, module.num_features))
    for step in range(3):  # training steps: outputs, gradients and running statistics
        x = (torch.randn(shape, dtype=torch.float64) * 3 + step).requires_grad_()
        x_ref = x.detach().clone().requires_grad_()
        out, out_ref = stackable.double()(x), reference.double()(x_ref)
        torch.testing.assert_close(out, out_ref)
        (out * torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        (out_ref * torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad)
        if reference.affine:
            torch.testing.assert_close(stackable.weight.grad, reference.weight.grad)
            torch.testing.assert_close(stackable.bias.grad, reference.bias.grad)
    for mine, theirs in zip(stackable.buffers(), reference.buffers()):
        torch.testing.assert_close(mine, theirs)
    stackable.eval(), reference.eval()
    x = torch.randn(shape, dtype=torch.float64)
    torch.testing.assert_close(stackable(x), reference(x))


def test_making_stackable_keeps_class_checks_and_state_names():
    model = SimpleCNN(width=4, fc_width=8)
    names = list(model.state_dict())
    make_stackable(model)
    assert isinstance(model.bn1, nn.BatchNorm2d) and type(model.bn1) is not nn.BatchNorm2d
    assert list(model.state_dict()) == names


def test_a_batch_norm_subclass_of_its_own_is_refused():
    class Custom(nn.BatchNorm2d):
        pass

    with pytest.raises(TypeError, match="Custom cannot be stacked"):
        make_stackable(nn.Sequential(Custom(2)))


def test_a_stacked_cnn_trains_where_the_native_kernel_refuses_vmap(cuda_like_batch_norm):
    torch.manual_seed(1)
    runs = [SimpleCNN(num_classes=3, width=2, fc_width=4, image_size=8) for _ in range(2)]
    alone = [SimpleCNN(num_classes=3, width=2, fc_width=4, image_size=8) for _ in range(2)]
    for run, copy in zip(runs, alone):
        copy.load_state_dict(run.state_dict())
    x = torch.randn(2, 6, 3, 8, 8)
    with pytest.raises(RuntimeError, match="NYI"):  # the fake refuses what CUDA refuses
        torch.func.vmap(lambda xi: nn.functional.batch_norm(xi, None, None, training=True))(x)

    stacked = StackedModels(runs).train()
    out = stacked(x)  # (R, B, classes)
    out.square().sum().backward()
    for r, model in enumerate(alone):
        model.train()
        reference = make_stackable(model)(x[r])  # one run alone, the same arithmetic outside vmap
        torch.testing.assert_close(out[r], reference, rtol=1e-5, atol=1e-6)
        reference.square().sum().backward()
        for name, parameter in model.named_parameters():
            torch.testing.assert_close(stacked.params[name].grad[r], parameter.grad, rtol=1e-4, atol=1e-6)
        for name, buffer in model.named_buffers():
            torch.testing.assert_close(stacked.buffers[name][r], buffer)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_stacked_cnn_with_batch_norm_trains_on_cuda_as_on_the_cpu():
    """What the H100 shapes run found broken: stacked BatchNorm2d under vmap on CUDA."""
    torch.manual_seed(2)
    runs = [SimpleCNN(num_classes=3, width=4, fc_width=8, image_size=8) for _ in range(3)]
    x = torch.randn(3, 16, 3, 8, 8)
    outputs = {}
    for device in ("cpu", "cuda"):
        stacked = StackedModels([SimpleCNN(num_classes=3, width=4, fc_width=8, image_size=8) for _ in runs], device)
        stacked.load_state({"params": {k: torch.stack([dict(r.named_parameters())[k].detach() for r in runs])
                                       for k in stacked.params},
                            "buffers": {k: torch.stack([dict(r.named_buffers())[k] for r in runs])
                                        for k in stacked.buffers}})
        out = stacked.train()(x.to(device))
        out.square().sum().backward()
        outputs[device] = (out.cpu(), {k: v.grad.cpu() for k, v in stacked.params.items()},
                           {k: v.cpu() for k, v in stacked.buffers.items()})
    (out_cpu, grads_cpu, buffers_cpu), (out_gpu, grads_gpu, buffers_gpu) = outputs["cpu"], outputs["cuda"]
    torch.testing.assert_close(out_gpu, out_cpu, rtol=1e-4, atol=1e-5)
    for name in grads_cpu:
        torch.testing.assert_close(grads_gpu[name], grads_cpu[name], rtol=1e-3, atol=1e-4)
    for name in buffers_cpu:
        torch.testing.assert_close(buffers_gpu[name], buffers_cpu[name], rtol=1e-4, atol=1e-5)
