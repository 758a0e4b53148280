"""Isometry of Gram matrices (metrics M1, M1a, M1b, M2; Meterez et al. 2024 and Joudaki et al. 2023).

Leading dimensions are batch dimensions (e.g. independent runs or layers). Everything is computed in float64
by default; ``dtype`` is the ``metric_dtype`` switch metrics M1 [I] asks to keep (pass ``torch.float32``
to mimic the originals, which computed in float32).
"""

from __future__ import annotations

import torch

from ._tensor import METRIC_DTYPE, as_metric_tensor, square_matrices, symmetric_eigenvalues


def gram(H: torch.Tensor, samples_first: bool = True) -> torch.Tensor:
    """The sample Gram of H: H Hᵀ for H (..., n, features), or HᵀH for H (..., d, n) if not ``samples_first``.

    Samples-first is the layout of network activations and of weights W (out, in), whose Gram W Wᵀ is the one
    metrics M1a uses; samples-as-columns is the layout of B.0. For PII heat maps
    (A.1.2), ``gram(W)`` is "Gram_row" = W Wᵀ and ``gram(W, samples_first=False)`` is
    "Gram_column" = WᵀW.
    """
    H = as_metric_tensor(H, "H", min_ndim=2)
    return H @ H.mT if samples_first else H.mT @ H


def isometry_gap(G: torch.Tensor, eps: float = 0.0, dtype: torch.dtype = METRIC_DTYPE) -> torch.Tensor:
    """−log I(G) = log(mean λ) − mean(log λ) over the eigenvalues λ of G (..., n, n), each shifted by ``eps``.

    metrics M1: ε = 0 for Meterez et al. and Joudaki et al.'s simulator and GPT-2 probe, ε = 1e-8 in
    Joudaki et al.'s training code (see :func:`training_isometry_gap`). With ε = 0 a zero eigenvalue gives
    +inf and a negative one (rounding of a singular Gram) gives NaN; this is deliberate: the originals plot
    such points as missing and the reproduction must too (metrics M1). A G with a non-finite entry
    gives NaN.
    """
    G = square_matrices(G, "G", dtype=dtype)
    eigenvalues = symmetric_eigenvalues(G) + eps
    return eigenvalues.mean(dim=-1).log() - eigenvalues.log().mean(dim=-1)


def isometry(G: torch.Tensor, eps: float = 0.0, dtype: torch.dtype = METRIC_DTYPE) -> torch.Tensor:
    """I(G) = geomean(λ)/mean(λ) = exp(−isometry_gap(G)), in [0, 1] with 1 iff G ∝ I (metrics M1)."""
    return torch.exp(-isometry_gap(G, eps=eps, dtype=dtype))


def weight_isometry_gap(W: torch.Tensor, eps: float = 0.0, dtype: torch.dtype = METRIC_DTYPE) -> torch.Tensor:
    """φ(W) of a weight W (..., out, in) on the Gram W Wᵀ (out × out), as Meterez et al. (metrics M1a)."""
    W = as_metric_tensor(W, "W", min_ndim=2, dtype=dtype)
    return isometry_gap(gram(W), eps=eps, dtype=dtype)


def training_isometry_gap(
    h: torch.Tensor,
    reduce_mean: bool,
    eps: float = 1e-8,
    sample_dim: int = 0,
    dtype: torch.dtype = METRIC_DTYPE,
) -> torch.Tensor:
    """Joudaki et al.'s training-time gap of a module output h (metrics M1b).

    h is flattened to (n × features) with samples along ``sample_dim`` (earlier dimensions are batch
    dimensions); with ``reduce_mean`` each sample's mean over its features is subtracted first (the
    "centred Gram" of the final Fig. 2 code, decision D1); then G = h hᵀ and ε = 1e-8 (the value
    of their training code, metrics M1b). "Isometry" in their plots is exp(−gap).
    """
    h = as_metric_tensor(h, "h", min_ndim=2, dtype=dtype)
    if not 0 <= sample_dim < h.ndim - 1:
        raise ValueError(
            f"sample_dim={sample_dim} leaves no feature dimension in h of shape {tuple(h.shape)}; "
            "it must index a dimension before the last one (0 for an unbatched output (n, ...))"
        )
    flat = h.flatten(start_dim=sample_dim + 1)
    if reduce_mean:
        flat = flat - flat.mean(dim=-1, keepdim=True)
    return isometry_gap(gram(flat), eps=eps, dtype=dtype)


def lyapunov_potential(G: torch.Tensor) -> torch.Tensor:
    """γ(G) = max_{i≠j} G̃_ij/(1 − G̃_ij) with G̃_ij = |G_ij|/√(G_ii G_jj) (metrics M2, Joudaki Def. 4).

    The absolute value is taken before normalising and only off-diagonal entries enter the maximum, as in
    the original code. γ = 0 for an orthogonal G and +inf when two samples are collinear; G̃ is clamped to
    1 because rounding can push it just above its Cauchy–Schwarz bound, which would flip the ratio's sign.
    """
    G = square_matrices(G, "G")
    n = G.shape[-1]
    if n < 2:
        raise ValueError(f"γ compares pairs of samples, so G needs n ≥ 2, got shape {tuple(G.shape)}")
    diagonal = G.diagonal(dim1=-2, dim2=-1)
    normalised = (G.abs() / torch.sqrt(diagonal[..., :, None] * diagonal[..., None, :])).clamp(max=1.0)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=G.device)
    ratios = normalised[..., off_diagonal] / (1.0 - normalised[..., off_diagonal])
    return ratios.amax(dim=-1)
