"""BatchNorm that ``torch.func.vmap`` runs on every device, for :class:`isonorm.train.stacking.StackedModels`.

Under ``vmap`` on CUDA, ``F.batch_norm`` of an input with spatial dimensions — (B, C, H, W) after a convolution —
stops with "NYI: querying is_contiguous inside of vmap for memory_format other than torch.contiguous_format":
torch picks its cuDNN kernel for inputs of three or more dimensions and asks the batched input for its memory
format, which vmap cannot answer. On the CPU the same call works, so only a GPU run showed it (the shapes preset
on an H100, torch 2.11 + CUDA 13.0, 2026-11-24: every lu2024 SimpleCNN job and the ResNet-18 ``norm_res`` jobs
failed at their first BatchNorm2d; benchmarks/README.md).

A stacked template therefore swaps each BatchNorm module for a subclass of its own class (``isinstance`` and
``state_dict`` names unchanged) whose forward computes a (B, C, *) input's normalisation from elementwise
primitives, which vmap batches on every device and no native BatchNorm kernel touches. A (B, C) input keeps
torch's own kernel: that path has no memory-format query and ran stacked on the same H100. The numbers are
torch's BatchNorm: the biased batch variance normalises, the unbiased one feeds ``running_var``, ``momentum``
(or the cumulative average when it is None) and ``eps`` as in ``nn.modules.batchnorm._BatchNorm.forward``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm


def batch_norm_from_primitives(norm: _BatchNorm, x: torch.Tensor) -> torch.Tensor:
    """``norm(x)`` for x of shape (B, C, *), as ``_BatchNorm.forward`` computes it, without a BatchNorm kernel."""
    batch_stats = norm.training or norm.running_mean is None
    updates_running = norm.training and norm.track_running_stats and norm.running_mean is not None
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    if batch_stats:
        reduce = [0, *range(2, x.dim())]
        var, mean = torch.var_mean(x, dim=reduce, correction=0)
    else:
        mean, var = norm.running_mean, norm.running_var
    if updates_running:
        with torch.no_grad():
            norm.num_batches_tracked.add_(1)
            # momentum None: cumulative moving average, 1 / batches seen (a tensor: it may be batched by vmap)
            factor = norm.momentum if norm.momentum is not None else 1.0 / norm.num_batches_tracked
            count = x.numel() // x.shape[1]
            unbiased = var.detach() * (count / max(count - 1, 1))
            norm.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
            norm.running_var.mul_(1 - factor).add_(unbiased * factor)
    out = (x - mean.reshape(shape)) * torch.rsqrt(var.reshape(shape) + norm.eps)
    if norm.affine:
        out = out * norm.weight.reshape(shape) + norm.bias.reshape(shape)
    return out


class _Stackable:
    """Mixin: (B, C) through torch's kernel, (B, C, *) through :func:`batch_norm_from_primitives`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            return super().forward(x)  # type: ignore[misc]
        self._check_input_dim(x)  # type: ignore[attr-defined]
        return batch_norm_from_primitives(self, x)  # type: ignore[arg-type]


class StackableBatchNorm1d(_Stackable, nn.BatchNorm1d):
    pass


class StackableBatchNorm2d(_Stackable, nn.BatchNorm2d):
    pass


class StackableBatchNorm3d(_Stackable, nn.BatchNorm3d):
    pass


STACKABLE = {nn.BatchNorm1d: StackableBatchNorm1d, nn.BatchNorm2d: StackableBatchNorm2d,
             nn.BatchNorm3d: StackableBatchNorm3d}


def make_stackable(module: nn.Module) -> nn.Module:
    """Swap, in place, every BatchNorm{1,2,3}d of ``module`` for its stackable subclass; returns ``module``.

    Only the class changes (attributes, parameters and buffers are the module's own), so a checkpoint or a
    ``state_dict`` reads the same. A BatchNorm subclass of the model's own is refused rather than replaced."""
    for name, child in module.named_modules():
        if isinstance(child, _BatchNorm) and not isinstance(child, _Stackable):
            stackable = STACKABLE.get(type(child))
            if stackable is None:
                raise TypeError(f"{name}: {type(child).__name__} cannot be stacked; use nn.BatchNorm1d/2d/3d")
            child.__class__ = stackable
    return module
