"""Parameters independence index (PII) of weight matrices (Lu et al. 2024; A.1.1, A.1.2).

A weight W is stored as PyTorch does, (..., out, in); leading dimensions are batch dimensions.
``dim="columns"`` takes the ``in`` column vectors W[:, j] (length ``out``; the paper's convention, Gram WᵀW,
and the orientation its tables report, A.1.1); ``dim="rows"`` takes the ``out`` row vectors
W[i, :] (length ``in``; Gram WWᵀ).
"""

from __future__ import annotations

from typing import Literal

import torch

from ._tensor import METRIC_DTYPE, as_metric_tensor

Orientation = Literal["rows", "columns"]


def _vectors(W: torch.Tensor, dim: Orientation, dtype: torch.dtype = METRIC_DTYPE) -> torch.Tensor:
    """The vectors of W as the rows of a (..., k, length) tensor of ``dtype`` (a view when W has it)."""
    W = as_metric_tensor(W, "W", min_ndim=2, dtype=dtype)
    if dim == "rows":
        return W
    if dim == "columns":
        return W.mT
    raise ValueError(f"dim must be 'rows' or 'columns', got {dim!r}")


def cosine_similarity_matrix(W: torch.Tensor, dim: Orientation = "columns") -> torch.Tensor:
    """C_ij = |cos(w_i, w_j)| over the rows or columns of W: (..., k, k), unit diagonal (A.1.1).

    This is the "cos_sim_row"/"cos_sim_column" heat map of Lu et al. Fig. 1 and Fig. 2 (A.1.2).
    A zero vector has no direction: its row and column of C are NaN, as scipy's cosine distance gives in
    the original code.
    """
    vectors = _vectors(W, dim)
    unit = vectors / vectors.norm(dim=-1, keepdim=True)
    return (unit @ unit.mT).abs()


def pii(W: torch.Tensor, dim: Orientation = "columns") -> torch.Tensor:
    """PII = (1/(k(k−1))) Σ_{i≠j} C_ij, the mean absolute cosine over ordered pairs of distinct vectors.

    A.1.1: in [0, 1]; 0 for mutually orthogonal vectors, 1 when all are collinear (e.g. a
    constant-initialised layer). It equals the original |(mean(C) − 1/k)·k/(k−1)| because C_ii = 1.
    Invariant to rescaling (or negating) individual vectors and to their order.
    """
    similarity = cosine_similarity_matrix(W, dim)
    k = similarity.shape[-1]
    if k < 2:
        raise ValueError(
            f"PII needs at least two {dim} vectors, got W of shape {tuple(W.shape)}; "
            "choose the other orientation (dim='rows' or 'columns') or a larger layer"
        )
    off_diagonal = similarity.sum(dim=(-2, -1)) - similarity.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return off_diagonal / (k * (k - 1))


def conv_centre_tap(weight: torch.Tensor) -> torch.Tensor:
    """The centre tap weight[..., :, :, kh//2, kw//2] of a conv weight (..., out, in, kh, kw): (..., out, in).

    Lu et al. take this slice (``weight[:, :, 1, 1]`` of 3×3 kernels), not the reshaped out × (in·kh·kw)
    matrix, as a conv layer's parameter matrix (A.1.1). Kernels with an even side have no
    centre and are rejected.
    """
    weight = as_metric_tensor(weight, "weight", min_ndim=4)
    height, width = weight.shape[-2:]
    if height % 2 == 0 or width % 2 == 0:
        raise ValueError(
            f"a {height}×{width} kernel has no centre tap; PII of conv layers is defined for odd kernel "
            "sizes (Lu et al. use 3×3)"
        )
    return weight[..., height // 2, width // 2]


def pii_chunked(
    W: torch.Tensor,
    dim: Orientation = "columns",
    *,
    block_size: int = 1024,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """:func:`pii` of one matrix W (out, in) without ever holding its k×k similarity matrix.

    For the 4096×11008 matrices of 7B LLMs (A.1.1, lu2024-table5 (c)) the dense C would be 11008² float64 values
    (~1 GB). Here the vectors are multiplied one block of ``block_size`` rows at a time against the vectors
    from the block's start onwards (C is symmetric: every block right of the diagonal counts twice), and each
    block of dot products is scaled by the vectors' inverse norms in place, so besides W in ``dtype`` at most
    block_size × k values exist at once (no normalised copy of W) and half the products are skipped.
    ``dtype`` is the precision of W and of the products (float64 by default, architecture §6; float32 takes about
    0.6× the time and half the memory, benchmarks/README.md); sums are always float64. Returns a 0-dim float64 tensor on W's device; zero vectors
    give NaN, as in :func:`pii`.
    """
    if block_size < 1:
        raise ValueError(f"block_size must be a positive number of vectors, got {block_size}")
    vectors = _vectors(W, dim, dtype)  # a view of W in ``dtype``: matmul reads transposed strides as they are
    if vectors.ndim != 2:
        raise ValueError(f"pii_chunked takes one matrix (out, in), got shape {tuple(vectors.shape)}; use pii for "
                         "batches")
    k = vectors.shape[0]
    if k < 2:
        raise ValueError(
            f"PII needs at least two {dim} vectors, got W of shape {tuple(W.shape)}; "
            "choose the other orientation (dim='rows' or 'columns') or a larger layer"
        )
    inverse_norm = torch.linalg.vector_norm(vectors, dim=-1).reciprocal()  # inf for a zero vector: NaN below
    total = torch.zeros((), dtype=torch.float64, device=W.device)
    for start in range(0, k, block_size):
        stop = min(start + block_size, k)
        similarity = vectors[start:stop] @ vectors[start:].mT  # (b, k − start): diagonal block, then right
        similarity.mul_(inverse_norm[start:stop, None]).mul_(inverse_norm[start:]).abs_()
        width = stop - start
        diagonal_block = similarity[:, :width]
        total += diagonal_block.sum(dtype=torch.float64) - diagonal_block.diagonal().sum(dtype=torch.float64)
        total += 2 * similarity[:, width:].sum(dtype=torch.float64)
    return total / (k * (k - 1))
