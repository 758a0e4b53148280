"""Input handling shared by the metric modules: all metrics compute in float64 (architecture §6, metrics M1 [I]).

Networks run in float32 (or fp16 for large checkpoints); casting to float64 before any Gram matrix,
eigenvalue or logarithm avoids spurious inf/NaN that are artefacts of the metric rather than of the network.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

METRIC_DTYPE = torch.float64


def as_metric_tensor(x: Any, name: str, min_ndim: int, dtype: torch.dtype = METRIC_DTYPE) -> torch.Tensor:
    """``x`` (torch tensor, NumPy array or nested list) as a real tensor of ``dtype`` on its own device.

    Raises ``ValueError`` naming ``name`` when ``x`` is complex or has fewer than ``min_ndim`` dimensions.
    """
    tensor = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))
    if tensor.is_complex():
        raise ValueError(f"{name} must be real, got {tensor.dtype}; pass the real part or the magnitude")
    if tensor.ndim < min_ndim:
        raise ValueError(
            f"{name} needs at least {min_ndim} dimensions, got shape {tuple(tensor.shape)}; "
            "leading dimensions are batch dimensions, so add the missing ones (e.g. with unsqueeze)"
        )
    return tensor.detach().to(dtype)


def square_matrices(G: Any, name: str, dtype: torch.dtype = METRIC_DTYPE) -> torch.Tensor:
    """``G`` of shape (..., n, n) as a tensor of ``dtype``; a clear error if the last two dims differ."""
    G = as_metric_tensor(G, name, min_ndim=2, dtype=dtype)
    if G.shape[-1] != G.shape[-2]:
        raise ValueError(
            f"{name} must be square in its last two dimensions, got shape {tuple(G.shape)}; "
            "build it with isonorm.metrics.gram(H) first"
        )
    return G


def symmetric_eigenvalues(G: torch.Tensor) -> torch.Tensor:
    """Eigenvalues (ascending) of symmetric matrices (..., n, n) via ``eigvalsh`` (never a determinant).

    A matrix with a non-finite entry gets all-NaN eigenvalues instead of an exception, so that one overflowed
    run in a batch does not stop the others: the originals leave such points missing (metrics M1,
    decision C11). ``eigvalsh`` reads only the lower triangle; an asymmetric input is rejected, because it
    almost always means a non-Gram matrix was passed by mistake (tolerance 1e-4 of the largest entry,
    because float32 matmuls of wide layers are symmetric only up to rounding).
    """
    finite = torch.isfinite(G).all(dim=-1).all(dim=-1)
    scale = torch.where(torch.isfinite(G), G.abs(), torch.zeros_like(G)).amax(dim=(-2, -1))
    asymmetry = torch.where(finite[..., None, None], (G - G.mT).abs(), torch.zeros_like(G)).amax(dim=(-2, -1))
    if bool((asymmetry > 1e-4 * scale).any()):
        raise ValueError(
            "the Gram matrix is not symmetric (relative asymmetry above 1e-4); pass a Gram matrix "
            "such as isonorm.metrics.gram(H), not the representation H itself"
        )
    eye = torch.eye(G.shape[-1], dtype=G.dtype, device=G.device)
    eigenvalues = torch.linalg.eigvalsh(torch.where(finite[..., None, None], G, eye))
    return torch.where(finite[..., None], eigenvalues, torch.full_like(eigenvalues, float("nan")))
