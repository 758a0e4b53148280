"""The plain fully connected network: Linear layers with an activation after every layer but the last.

Defaults are the MLP of daneshmand2021 Fig. 4a/4b/5 (daneshmand2021-fig4a setup): no bias,
ReLU after every layer except the last, Xavier-uniform init with gain √2 (``calculate_gain('relu')``).
Widths include the input and the output, e.g. ``[3072] + [800] * 18 + [10]`` is the 20-layer CIFAR-10 net.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import torch
from torch import nn

# Activations by the names configs use; each maps to a torch.nn class (D.0 (B): "a torch.nn
# class by name"; lu2024 Table 3 varies Sigmoid/Tanh/ReLU/GELU).
ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "gelu": nn.GELU,
    "identity": nn.Identity,
}

# Normalisations placed between a hidden Linear and its activation (the Linear → norm → activation order of
# a standard BN-MLP). Papers that use another order (e.g. joudaki2023's LayerNorm before each Linear) build
# their own model.
NORMS: dict[str, type[nn.Module]] = {
    "batch": nn.BatchNorm1d,
    "layer": nn.LayerNorm,
}

INITS = ("xavier_uniform", "xavier_normal", "torch_default")


def check_choice(what: str, value: object, choices: Collection[object]) -> None:
    """A setting of a model that must be one of ``choices``: a ValueError that lists them otherwise."""
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose one of {list(choices)}")


def check_model(variant: str, variants: Collection[str], activation: str, model: str, **sizes: int) -> None:
    """The variant, activation and sizes of one of lu2024's models (``model`` names it in the error), each checked."""
    check_choice(f"{model} variant", variant, variants)
    check_choice("activation", activation, sorted(ACTIVATIONS))
    if min(sizes.values()) < 1:
        raise ValueError(f"{', '.join(sizes)} of {model} must all be ≥ 1; got {sizes}")


def _initialise(linear: nn.Linear, init: str, gain: float, generator: torch.Generator | None) -> None:
    """Re-draw a Linear layer's weight (biases, when present, start at zero with a non-default init)."""
    if init == "torch_default":
        return  # nn.Linear's own Kaiming-uniform draw, already done by its constructor
    if init == "xavier_uniform":
        nn.init.xavier_uniform_(linear.weight, gain=gain, generator=generator)
    else:
        nn.init.xavier_normal_(linear.weight, gain=gain, generator=generator)
    if linear.bias is not None:
        nn.init.zeros_(linear.bias)


def mlp(
    widths: list[int],
    activation: str = "relu",
    bias: bool = False,
    init: str = "xavier_uniform",
    gain: float = math.sqrt(2.0),
    norm: str | None = None,
    *,
    generator: torch.Generator | None = None,
) -> nn.Sequential:
    """An ``nn.Sequential`` of ``len(widths) - 1`` Linear layers, activation after all but the last.

    - ``activation="relu"``: daneshmand2021 Fig. 4a setup, "ReLU after every layer except the last".
    - ``bias=False``: same setup, "no bias".
    - ``init="xavier_uniform"``, ``gain=√2``: same setup, "Xavier-uniform init with gain √2
      (calculate_gain('relu'))". ``"xavier_normal"`` is the draw of daneshmand2021 App. Fig. 6;
      ``"torch_default"`` keeps nn.Linear's own initialisation (``gain`` is then unused).
    - ``norm=None``: the Fig. 4a net has "no BN"; ``"batch"`` / ``"layer"`` insert BatchNorm1d / LayerNorm
      (default affine, eps 1e-5) after every hidden Linear, before its activation.
    - ``generator``: draws the initial weights from this generator instead of the global RNG, so each run of
      a stacked training can be initialised from its own seed (``runtime.generator(experiment, variant,
      run)``). Only the Xavier inits honour it.
    """
    if len(widths) < 2 or any(int(w) < 1 for w in widths):
        raise ValueError(f"mlp widths must list at least an input and an output width, all ≥ 1; got {widths}")
    check_choice("activation", activation, sorted(ACTIVATIONS))
    check_choice("init", init, INITS)
    if norm is not None and norm not in NORMS:
        raise ValueError(f"unknown norm {norm!r}; choose None or one of {sorted(NORMS)}")
    if init == "torch_default" and generator is not None:
        raise ValueError("init='torch_default' draws from the global RNG; use a Xavier init to pass a generator")

    layers: list[nn.Module] = []
    n_linear = len(widths) - 1
    for index, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:])):
        linear = nn.Linear(fan_in, fan_out, bias=bias)
        _initialise(linear, init, gain, generator)
        layers.append(linear)
        if index < n_linear - 1:  # the last layer stays bare: it outputs the logits
            if norm is not None:
                layers.append(NORMS[norm](fan_out))
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)
