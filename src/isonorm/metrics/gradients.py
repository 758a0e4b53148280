"""Gradient log-norms and the rate of explosion (metrics M3, M4; decision C6)."""

from __future__ import annotations

import torch

from ._tensor import as_metric_tensor

EXPLOSION_RATE_GAP = 10
"""Layer gap of the rate (Meterez et al. App. E eq. 165: "to capture the true behaviour instead of the
noise")."""


def grad_log_norm(weight_grad: torch.Tensor) -> torch.Tensor:
    """log ‖∇_W L‖_F over the last two dimensions of a weight gradient (..., out, in) (metrics M3).

    Leading dimensions are batch dimensions (e.g. stacked runs). A zero gradient gives −inf, an overflowed
    one +inf or NaN; these points are dropped downstream, as in the originals (decision C11).
    """
    weight_grad = as_metric_tensor(weight_grad, "weight_grad", min_ndim=2)
    return torch.linalg.matrix_norm(weight_grad).log()


def explosion_rate(log_norms: torch.Tensor, gap: int = EXPLOSION_RATE_GAP) -> torch.Tensor:
    """R(ℓ) = (log‖∇W_{ℓ−gap}‖ − log‖∇W_ℓ‖)/gap along the last dimension, ℓ indexing fc_ℓ from the input.

    metrics M4 with decision C6: with fc_0 the input projection, R is positive while gradients grow
    toward the input (it equals the printed eq. 165 with layers counted from the output). The result has
    the shape of ``log_norms`` so that entry ℓ is R(ℓ); entries ℓ < ``gap`` have no partner layer and are NaN.
    """
    log_norms = as_metric_tensor(log_norms, "log_norms", min_ndim=1)
    depth = log_norms.shape[-1]
    if gap < 1 or gap >= depth:
        raise ValueError(
            f"explosion_rate needs 1 ≤ gap < number of layers; got gap={gap} for {depth} layers "
            "(log_norms' last dimension must run over the layers fc_0, fc_1, ...)"
        )
    rates = torch.full_like(log_norms, float("nan"))
    rates[..., gap:] = (log_norms[..., :-gap] - log_norms[..., gap:]) / gap
    return rates
