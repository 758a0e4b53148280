"""The image MLP of Joudaki et al. (2023): LayerNorm before every Linear, activation after it, even on the logits.

D.0 (B) [R-D `training.ipynb` class MLP]: with sizes = [D_in] + hidden_sizes + [C], block i is

    norm-i = LayerNorm(size_i)  →  fc-i = Linear(size_i → size_{i+1})  →  act-i = σ

so "depth 10" (hidden [1000]×10) has 11 Linear layers and 33 modules norm-0, fc-0, act-0, …, act-10. The
activation after the last (logit) Linear is a faithful quirk of the original (decision D9); ``act_on_logits
=False`` drops that last ``act`` module for the ablation.

``forward(x, trace=True)`` returns every module's output in order (``module_names`` names them), the
measurement hook of the original's forward; being a plain tensor function it also runs under
``torch.func.vmap``, i.e. for R stacked runs (``isonorm.train.StackedModels``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

import torch
from torch import nn

# The torch.nn classes the paper's runs use, by their class names as the configs spell them (D.0 (B): "the
# activation (a torch.nn class by name)"; Fig. 2 code list ReLU, PReLU, Tanh, Identity, SELU, SiLU, ELU, GELU
# plus Sigmoid for Figs. 3, 7, B.6, decision D6). Value: the name of the same σ in ``isonorm.metrics`` (for β).
ACTIVATIONS: dict[str, str] = {
    "ReLU": "relu",
    "PReLU": "prelu",  # nn.PReLU's initial slope 0.25 (metrics M5); it is trained like any parameter
    "Tanh": "tanh",
    "Identity": "identity",
    "SELU": "selu",
    "SiLU": "silu",
    "ELU": "elu",
    "GELU": "gelu",
    "Sigmoid": "sigmoid",
}

LAYERNORM_EPS = 1e-5  # nn.LayerNorm's default, which the original used (D.0 (B): "eps 1e-5")


def activation_module(name: str) -> nn.Module:
    """A fresh ``torch.nn.<name>()`` for one of :data:`ACTIVATIONS`."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; use a torch.nn class name from {sorted(ACTIVATIONS)}")
    return getattr(nn, name)()


class LayerNormMLP(nn.Module):
    """norm-i → fc-i → act-i for i = 0..len(hidden_sizes); see the module docstring.

    - ``input_features``: D_in of the flattened image (784 for MNIST, 3072 for CIFAR-10); inputs of any
      shape (B, ...) are flattened to (B, D_in), as the original's ``x.view(x.size(0), -1)``.
    - ``hidden_sizes``: widths of the hidden layers, e.g. ``[1000] * 10`` (Fig. 2) or the profiles of Fig. B.4.
    - ``num_classes``: width of the logits.
    - ``activation``: a torch.nn class name from :data:`ACTIVATIONS`.
    - ``act_on_logits=True``: faithful (decision D9); False leaves the logits bare (no last ``act`` module).
    - ``generator``: draws every random initial value (weights and biases) from this generator, so a run is
      reproducible from its seed (``isonorm.runtime.generator(experiment, variant, run)``); None uses torch's
      global RNG. Draws happen on the CPU; move the model to a device afterwards.

    Initialisation [D.0 (B)]: fc weights ~ N(0, 1/fan_in); fc biases keep PyTorch's default
    U(−1/√fan_in, 1/√fan_in); LayerNorm affine weight 1, bias 0; PReLU slope 0.25.
    """

    def __init__(
        self,
        input_features: int,
        hidden_sizes: Sequence[int],
        num_classes: int,
        activation: str = "ReLU",
        act_on_logits: bool = True,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        sizes = [int(input_features), *(int(h) for h in hidden_sizes), int(num_classes)]
        if any(size < 1 for size in sizes):
            raise ValueError(f"input_features, hidden_sizes and num_classes must all be ≥ 1; got sizes {sizes}")
        activation_module(activation)  # validates the name before anything is built
        self.activation = activation
        self.act_on_logits = act_on_logits
        self.sizes = sizes
        layers = nn.Sequential()
        last = len(sizes) - 2
        for i, (fan_in, fan_out) in enumerate(pairwise(sizes)):
            # Built on the meta device: nn.Linear's own (discarded) Kaiming draw would cost as much as ours.
            layers.add_module(f"norm-{i}", nn.LayerNorm(fan_in, eps=LAYERNORM_EPS, device="meta"))
            layers.add_module(f"fc-{i}", nn.Linear(fan_in, fan_out, device="meta"))
            if i < last or act_on_logits:
                layers.add_module(f"act-{i}", activation_module(activation).to("meta"))
        self.layers = layers.to_empty(device="cpu")
        self.module_names: list[str] = [name for name, _ in self.layers.named_children()]
        self._initialise(generator)

    @torch.no_grad()
    def _initialise(self, generator: torch.Generator | None) -> None:
        for module in self.layers:
            if isinstance(module, nn.Linear):
                bound = 1.0 / math.sqrt(module.in_features)
                nn.init.normal_(module.weight, mean=0.0, std=bound, generator=generator)  # N(0, 1/fan_in)
                nn.init.uniform_(module.bias, -bound, bound, generator=generator)  # torch's default bias draw
            elif hasattr(module, "reset_parameters"):  # LayerNorm (1, 0), PReLU (0.25): deterministic
                module.reset_parameters()

    def forward(self, x: torch.Tensor, trace: bool = False) -> torch.Tensor | tuple[torch.Tensor, ...]:
        """The network's output, or with ``trace`` the outputs of all modules in ``module_names`` order
        (the last of which is the output)."""
        h = x.flatten(start_dim=1)
        if not trace:
            return self.layers(h)
        outputs = []
        for module in self.layers:
            h = module(h)
            outputs.append(h)
        return tuple(outputs)

    def extra_repr(self) -> str:
        return f"sizes={self.sizes}, activation={self.activation}, act_on_logits={self.act_on_logits}"


def module_kind(name: str) -> str:
    """'norm', 'fc' or 'act' of a module name such as 'norm-3'."""
    return name.split("-", 1)[0]


def module_index(name: str) -> int:
    """The block index ℓ of a module name such as 'norm-3' (the x axis of Figs. 3 and B.7)."""
    return int(name.split("-", 1)[1])
