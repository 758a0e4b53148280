"""Orthogonality gap V(H), |cos| and the spectral training-time gap (B.0)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from isonorm.metrics import (
    abs_cosine,
    max_orthogonality_gap,
    orthogonality_gap,
    orthogonality_gap_samples_first,
    spectral_orthogonality_gap,
)


def _orthonormal_columns(d: int, n: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, n, generator=generator, dtype=torch.float64))
    return q


def _random_orthogonal(d: int, seed: int) -> torch.Tensor:
    return _orthonormal_columns(d, d, seed)


def test_orthogonal_equal_norm_samples_have_zero_gap():
    H = 3.7 * _orthonormal_columns(16, 5, seed=0)
    assert orthogonality_gap(H).item() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 8, 33])
def test_rank_one_batch_attains_the_maximum(n):
    generator = torch.Generator().manual_seed(n)
    u = torch.randn(12, 1, generator=generator)
    v = torch.randn(1, n, generator=generator)
    assert orthogonality_gap(u @ v).item() == pytest.approx(max_orthogonality_gap(n), rel=1e-6)
    assert max_orthogonality_gap(n) == pytest.approx(math.sqrt(1 - 1 / n))


def test_gap_is_invariant_to_scaling_and_to_left_orthogonal_maps():
    H = torch.randn(10, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    Q = _random_orthogonal(10, seed=2)
    reference = orthogonality_gap(H)
    torch.testing.assert_close(orthogonality_gap(0.01 * H), reference)
    torch.testing.assert_close(orthogonality_gap(Q @ H), reference)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 7), st.integers(1, 7)), elements=st.floats(-10, 10)))
def test_gap_lies_between_zero_and_its_maximum(H):
    assume(np.linalg.norm(H) > 1e-3)
    gap = orthogonality_gap(H).item()
    assert -1e-12 <= gap <= max_orthogonality_gap(H.shape[1]) + 1e-12


def test_batched_call_equals_loop_of_single_calls():
    H = torch.randn(3, 4, 9, 5, generator=torch.Generator().manual_seed(3))
    batched = orthogonality_gap(H)
    assert batched.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            torch.testing.assert_close(batched[i, j], orthogonality_gap(H[i, j]))


def test_computes_in_float64_from_float32_input():
    H = torch.randn(8, 4, generator=torch.Generator().manual_seed(4), dtype=torch.float32)
    gap = orthogonality_gap(H)
    assert gap.dtype == torch.float64
    torch.testing.assert_close(gap, orthogonality_gap(H.double()))


def test_zero_representation_gives_nan_without_spoiling_the_batch():
    H = torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(5))
    H[0] = 0.0
    gap = orthogonality_gap(H)
    assert math.isnan(gap[0].item()) and math.isfinite(gap[1].item())


def test_samples_first_flattens_features_and_matches_the_columns_convention():
    X = torch.randn(6, 3, 4, 4, generator=torch.Generator().manual_seed(6))  # (n, C, H, W) activation
    expected = orthogonality_gap(X.reshape(6, -1).T)
    torch.testing.assert_close(orthogonality_gap_samples_first(X), expected)
    batched = torch.stack([X, 2 * X.flip(0) + 1])
    result = orthogonality_gap_samples_first(batched, sample_dim=1)
    torch.testing.assert_close(result[0], expected)
    torch.testing.assert_close(result[1], orthogonality_gap_samples_first(batched[1]))


def test_samples_first_rejects_a_sample_dim_without_features():
    with pytest.raises(ValueError, match="sample_dim"):
        orthogonality_gap_samples_first(torch.ones(4, 5), sample_dim=1)


def test_abs_cosine_of_two_columns():
    H = torch.tensor([[1.0, -1.0], [0.0, 1.0], [0.0, 0.0]])
    assert abs_cosine(H).item() == pytest.approx(1 / math.sqrt(2))
    assert abs_cosine(torch.eye(3)[:, :2]).item() == 0.0
    batch = torch.randn(5, 7, 2, generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(abs_cosine(batch), torch.stack([abs_cosine(h) for h in batch]))


def test_abs_cosine_needs_exactly_two_samples():
    with pytest.raises(ValueError, match="two samples"):
        abs_cosine(torch.ones(4, 3))


def test_spectral_gap_is_zero_for_orthonormal_columns_and_maximal_for_rank_one():
    k = 10
    assert spectral_orthogonality_gap(5.0 * _orthonormal_columns(500, k, seed=8)).item() == pytest.approx(
        0.0, abs=1e-12
    )
    rank_one = torch.ones(50, 1) @ torch.arange(1.0, k + 1).reshape(1, k)
    assert spectral_orthogonality_gap(rank_one).item() == pytest.approx(math.sqrt(2 - 2 / math.sqrt(k)))


def test_spectral_gap_batched_equals_loop_and_is_scale_invariant():
    logits = torch.randn(4, 64, 10, generator=torch.Generator().manual_seed(9))
    batched = spectral_orthogonality_gap(logits)
    torch.testing.assert_close(batched, torch.stack([spectral_orthogonality_gap(x) for x in logits]))
    torch.testing.assert_close(spectral_orthogonality_gap(30 * logits), batched)


def test_bad_inputs_are_rejected_with_the_cause():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        orthogonality_gap(torch.ones(5))
    with pytest.raises(ValueError, match="real"):
        orthogonality_gap(torch.ones(3, 2, dtype=torch.complex64))
    with pytest.raises(ValueError, match="at least 1"):
        max_orthogonality_gap(0)
