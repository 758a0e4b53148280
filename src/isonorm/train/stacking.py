"""R runs of one architecture as a single batched computation (architecture §8: "seeds stacked ... torch.func").

``torch.func.stack_module_state`` turns R modules into one dict of (R, ...) parameter tensors; ``vmap`` over
``functional_call`` evaluates all R networks in one pass (matmuls become batched matmuls). The runs share no
parameter, so their gradients stay independent. The template's BatchNorm modules are made stackable
(:mod:`isonorm.train.stackable_norm`): torch's own kernel fails under vmap on CUDA for (B, C, H, W) inputs.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Sequence

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from .stackable_norm import make_stackable


def _signature(module: nn.Module) -> list[tuple[str, tuple[int, ...], torch.dtype]]:
    tensors = list(module.named_parameters()) + list(module.named_buffers())
    return [(name, tuple(t.shape), t.dtype) for name, t in tensors]


class StackedModels:
    """R same-architecture networks as stacked parameters and buffers with leading dimension R.

    ``params[name]`` has shape (R, *shape of that parameter), e.g. ``params["0.weight"][r]`` is run r's first
    weight matrix, so a measurement over weights needs no unstacking. ``buffers`` (BatchNorm running stats)
    are stacked the same way and updated in place during training.
    """

    def __init__(self, modules: Sequence[nn.Module], device: torch.device | str = "cpu"):
        if not modules:
            raise ValueError("StackedModels needs at least one module (one per run)")
        reference = _signature(modules[0])
        for index, module in enumerate(modules[1:], start=1):
            if _signature(module) != reference:
                raise ValueError(
                    f"module {index} differs from module 0 in parameter names, shapes or dtypes; "
                    "stacking needs R copies of the same architecture"
                )
        modules = [m.to(device) for m in modules]
        params, buffers = stack_module_state(modules)
        self.params: dict[str, torch.Tensor] = params
        self.buffers: dict[str, torch.Tensor] = buffers
        # A weightless copy that only supplies the forward code; functional_call swaps the tensors in.
        self.template: nn.Module = make_stackable(copy.deepcopy(modules[0]).to("meta"))
        self.n_runs = len(modules)

    @property
    def device(self) -> torch.device:
        return next(iter(self.params.values())).device

    def _call(self, params: dict, buffers: dict, x: torch.Tensor, **kwargs: Any) -> Any:
        return functional_call(self.template, (params, buffers), (x,), kwargs)

    def forward(self, x: torch.Tensor, shared_input: bool = False, **kwargs: Any) -> Any:
        """Outputs of all runs: (R, B, ...) from per-run inputs (R, B, ...) or one input (B, ...) for all.

        Random layers (dropout) draw different masks for different runs (``randomness="different"``).
        Whether BatchNorm/dropout act in training or evaluation mode follows ``train()`` / ``eval()``.
        ``kwargs`` go unchanged to every run's ``forward`` (e.g. ``trace=True`` of
        :class:`isonorm.models.layernorm_mlp.LayerNormMLP`); they are not batched, so they must be the same
        for all runs. A forward that returns a tuple of tensors gives a tuple of (R, ...) tensors.
        """
        in_dims = (0, 0, None if shared_input else 0)
        return vmap(functools.partial(self._call, **kwargs), in_dims=in_dims, randomness="different")(self.params, self.buffers, x)

    __call__ = forward

    def train(self, mode: bool = True) -> "StackedModels":
        self.template.train(mode)
        return self

    def eval(self) -> "StackedModels":
        return self.train(False)

    @property
    def training(self) -> bool:
        return self.template.training

    def run_state_dict(self, run: int) -> dict[str, torch.Tensor]:
        """Run ``run``'s tensors as a plain ``state_dict`` (copies, detached)."""
        if not 0 <= run < self.n_runs:
            raise IndexError(f"run index {run} out of range for {self.n_runs} stacked runs")
        tensors = {**self.params, **self.buffers}
        return {name: t[run].detach().clone() for name, t in tensors.items()}

    def unstack(self) -> list[nn.Module]:
        """R ordinary modules holding copies of each run's current state (for hooks or per-run tools)."""
        modules = []
        for run in range(self.n_runs):
            module = copy.deepcopy(self.template).to_empty(device=self.device)
            module.load_state_dict(self.run_state_dict(run))
            modules.append(module)
        return modules

    def state(self) -> dict[str, dict[str, torch.Tensor]]:
        """Stacked params and buffers, detached, for a checkpoint."""
        return {
            "params": {k: v.detach() for k, v in self.params.items()},
            "buffers": dict(self.buffers),
        }

    def load_state(self, state: dict[str, dict[str, torch.Tensor]]) -> None:
        """Copy a :meth:`state` into this stack in place (the optimizer keeps pointing at the same tensors)."""
        with torch.no_grad():
            for group in ("params", "buffers"):
                mine = getattr(self, group)
                theirs = state[group]
                if set(mine) != set(theirs):
                    raise ValueError(f"stacked {group} differ in names: {sorted(set(mine) ^ set(theirs))}")
                for name, tensor in mine.items():
                    if theirs[name].shape != tensor.shape:
                        raise ValueError(
                            f"stacked {group} {name!r} has shape {tuple(theirs[name].shape)}, "
                            f"expected {tuple(tensor.shape)}"
                        )
                    tensor.copy_(theirs[name])
