"""Named scalar activations σ for isometry-strength computations (metrics M5; D.0 (A)).

Each entry is an :class:`Activation`, callable on torch tensors and on NumPy arrays (returning the same
kind), so that the same σ serves quadrature, Monte Carlo and the simulators. The set is the union of the
activations of the reference table of metrics M5 and of Joudaki et al.'s simulator (D.0 (A):
``rbf`` = exp(x − 2), ``heK`` = un-normalised probabilists' Hermite polynomials).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

LEAKY_RELU_SLOPE = 0.01
"""Negative slope of ``leaky_relu``: torch's default, as in Joudaki et al.'s simulator (D.0 (A))."""

PRELU_INIT_SLOPE = 0.25
"""Negative slope of ``prelu``: ``nn.PReLU``'s initial value (metrics M5 reference table, "PReLU init 0.25")."""


@dataclass(frozen=True)
class Activation:
    """An elementwise function σ defined on torch tensors, also callable on NumPy arrays."""

    name: str
    function: Callable[[torch.Tensor], torch.Tensor]

    def __call__(self, x: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
        if isinstance(x, torch.Tensor):
            return self.function(x)
        return self.function(torch.as_tensor(np.asarray(x, dtype=np.float64))).numpy()


def leaky_relu(negative_slope: float) -> Activation:
    """max(x, 0) + s·min(x, 0) for any slope s (metrics M5 also tabulates s = 0.5)."""
    return Activation(f"leaky_relu({negative_slope:g})", lambda x: F.leaky_relu(x, negative_slope))


def _hermite(degree: int) -> Activation:
    return Activation(f"he{degree}", lambda x: torch.special.hermite_polynomial_he(x, degree))


def _step(x: torch.Tensor) -> torch.Tensor:
    return (x > 0).to(x.dtype)


ACTIVATIONS: dict[str, Activation] = {
    activation.name: activation
    for activation in (
        Activation("identity", lambda x: x),
        Activation("relu", torch.relu),
        Activation("tanh", torch.tanh),
        Activation("sigmoid", torch.sigmoid),
        Activation("selu", torch.selu),
        Activation("elu", F.elu),
        Activation("silu", F.silu),
        Activation("gelu", F.gelu),  # exact erf form, torch's default (metrics M5 "GELU (erf)")
        Activation("leaky_relu", lambda x: F.leaky_relu(x, LEAKY_RELU_SLOPE)),
        Activation("prelu", lambda x: F.leaky_relu(x, PRELU_INIT_SLOPE)),
        Activation("sin", torch.sin),
        Activation("exp", torch.exp),
        Activation("rbf", lambda x: torch.exp(x - 2.0)),
        Activation("step", _step),
        _hermite(1),
        _hermite(2),
        _hermite(3),
    )
}


def get_activation(name: str) -> Activation:
    """The registered activation ``name``; a clear error listing the known names otherwise."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; use one of {sorted(ACTIVATIONS)}") from None
