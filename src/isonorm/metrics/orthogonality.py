"""Orthogonality of a batch of representations (Daneshmand et al. 2021; B.0).

Conventions: leading dimensions are batch dimensions (e.g. independent runs), so one call measures many runs.
All results are float64 tensors.
"""

from __future__ import annotations

import math

import torch

from ._tensor import as_metric_tensor


def orthogonality_gap(H: torch.Tensor) -> torch.Tensor:
    """V(H) = ‖HᵀH/‖H‖_F² − I_n/n‖_F for H of shape (..., d, n), samples as columns (B.0).

    V is 0 exactly when the n samples are orthogonal with equal norms and at most √(1 − 1/n) (rank-1 H).
    An all-zero H has no direction; its gap is NaN rather than an error, so that one degenerate run does
    not stop a batched measurement.
    """
    H = as_metric_tensor(H, "H", min_ndim=2)
    return orthogonality_gap_of_gram(H.mT @ H)


def orthogonality_gap_samples_first(X: torch.Tensor, sample_dim: int = 0) -> torch.Tensor:
    """V for samples along ``sample_dim`` and all later dimensions flattened into features.

    This is the layout of a network activation (n, C, H, W) or (n, features): daneshmand2021-appfig6a/daneshmand2021-appfig6b
    flattens each layer input to (n × features) and takes C = XXᵀ/tr(XXᵀ), V = ‖C − I_n/n‖_F, which equals
    :func:`orthogonality_gap` of Xᵀ. Dimensions before ``sample_dim`` are batch dimensions.
    """
    X = as_metric_tensor(X, "X", min_ndim=2)
    if not 0 <= sample_dim < X.ndim - 1:
        raise ValueError(
            f"sample_dim={sample_dim} leaves no feature dimension in X of shape {tuple(X.shape)}; "
            "it must index a dimension before the last one (0 for an unbatched activation (n, ...))"
        )
    flat = X.flatten(start_dim=sample_dim + 1)
    return orthogonality_gap_of_gram(flat @ flat.mT)


def orthogonality_gap_of_gram(gram: torch.Tensor) -> torch.Tensor:
    """V from the Gram matrix HᵀH (..., n, n) of the samples: ‖G/tr G − I_n/n‖_F (B.0)."""
    gram = as_metric_tensor(gram, "gram", min_ndim=2)
    n = gram.shape[-1]
    trace = gram.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    eye = torch.eye(n, dtype=gram.dtype, device=gram.device)
    return torch.linalg.matrix_norm(gram / trace[..., None, None] - eye / n)


def abs_cosine(H: torch.Tensor) -> torch.Tensor:
    """|⟨h₁, h₂⟩| / (‖h₁‖‖h₂‖) of the two columns of H (..., d, 2) (daneshmand2021-fig1, n = 2)."""
    H = as_metric_tensor(H, "H", min_ndim=2)
    if H.shape[-1] != 2:
        raise ValueError(
            f"abs_cosine compares exactly two samples stored as columns, got H of shape {tuple(H.shape)}; "
            "pass H with last dimension 2 (transpose a samples-first array)"
        )
    first, second = H[..., 0], H[..., 1]
    return (first * second).sum(dim=-1).abs() / (first.norm(dim=-1) * second.norm(dim=-1))


def spectral_orthogonality_gap(logits: torch.Tensor) -> torch.Tensor:
    """Training-time gap ‖s/‖s‖₂ − 1/√k‖₂ on the singular values s of an output batch (..., batch, k).

    B.0 "Training-time orthogonality gap": s are the singular values of the (500 × 10)
    logits of one mini-batch; k is the number of singular values, min(batch, classes), which is the number
    of classes in every configuration of daneshmand2021. The paper reports the mean over the batches of an epoch.
    """
    logits = as_metric_tensor(logits, "logits", min_ndim=2)
    singular_values = torch.linalg.svdvals(logits)
    k = singular_values.shape[-1]
    direction = singular_values / singular_values.norm(dim=-1, keepdim=True)
    return (direction - 1.0 / math.sqrt(k)).norm(dim=-1)


def max_orthogonality_gap(n: int) -> float:
    """√(1 − 1/n): V of a rank-1 batch of n samples, the largest possible value (B.0)."""
    if n < 1:
        raise ValueError(f"the batch size n must be at least 1, got {n}")
    return math.sqrt(1.0 - 1.0 / n)
