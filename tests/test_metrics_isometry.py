"""Isometry, isometry gap and Lyapunov potential of Gram matrices (metrics M1, M1a, M1b, M2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from isonorm.metrics import (
    gram,
    isometry,
    isometry_gap,
    lyapunov_potential,
    orthogonality_gap,
    pii,
    training_isometry_gap,
    weight_isometry_gap,
)

_samples = arrays(
    np.float64, st.tuples(st.integers(2, 6), st.integers(1, 8)), elements=st.floats(-5, 5)
)


def _random(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_identity_is_perfectly_isometric():
    G = torch.eye(7)
    assert isometry(G).item() == pytest.approx(1.0)
    assert isometry_gap(G).item() == pytest.approx(0.0, abs=1e-14)
    assert lyapunov_potential(G).item() == 0.0


@settings(max_examples=60, deadline=None)
@given(_samples)
def test_isometry_lies_in_unit_interval_and_gap_is_minus_its_log(H):
    G = gram(H)
    assume(torch.linalg.eigvalsh(G).min() > 1e-6 * G.diagonal().max())
    value = isometry(G).item()
    assert 0.0 <= value <= 1.0 + 1e-12
    assert isometry_gap(G).item() == pytest.approx(-math.log(value), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_samples)
def test_normalising_samples_never_decreases_isometry(H):
    # Hadamard + AM–GM: the unit-diagonal Gram has det(G)/Π G_ii ≥ det(G)/(tr G/n)ⁿ (Joudaki et al.).
    G = gram(H)
    assume(torch.linalg.eigvalsh(G).min() > 1e-6 * G.diagonal().max())
    normalised = gram(H / np.linalg.norm(H, axis=1, keepdims=True))
    assert isometry(normalised).item() >= isometry(G).item() - 1e-12


def test_gap_matches_trace_and_log_determinant():
    G = gram(_random(6, 20, seed=1))
    _, logdet = torch.linalg.slogdet(G)
    expected = torch.log(G.trace() / 6) - logdet / 6
    torch.testing.assert_close(isometry_gap(G), expected)


def test_isometry_is_scale_invariant_and_batched_equals_loop():
    G = gram(_random(3, 5, 9, seed=2))
    batched = isometry_gap(G)
    assert batched.shape == (3,)
    torch.testing.assert_close(isometry_gap(1e-3 * G), batched)
    torch.testing.assert_close(batched, torch.stack([isometry_gap(g) for g in G]))


def test_eps_zero_keeps_degenerate_points_non_finite_as_the_spec_requires():
    assert isometry_gap(torch.diag(torch.tensor([1.0, 0.0]))).item() == math.inf
    assert math.isnan(isometry_gap(torch.diag(torch.tensor([1.0, -1e-3]))).item())
    assert math.isfinite(isometry_gap(torch.diag(torch.tensor([1.0, 0.0])), eps=1e-8).item())


def test_non_finite_gram_gives_nan_only_for_its_own_batch_entry():
    G = torch.eye(3).repeat(2, 1, 1)
    G[0, 1, 1] = math.inf
    gap = isometry_gap(G)
    assert math.isnan(gap[0].item()) and gap[1].item() == pytest.approx(0.0, abs=1e-14)


def test_float32_metric_dtype_switch():
    G = gram(_random(4, 10, seed=3))
    assert isometry_gap(G, dtype=torch.float32).dtype == torch.float32
    assert isometry_gap(G.float()).dtype == torch.float64


def test_gram_orientations():
    H = _random(4, 7, seed=4)
    torch.testing.assert_close(gram(H), H @ H.T)
    torch.testing.assert_close(gram(H, samples_first=False), H.T @ H)


def test_weight_isometry_gap_uses_w_w_transpose():
    W = _random(5, 12, seed=5)
    torch.testing.assert_close(weight_isometry_gap(W), isometry_gap(W @ W.T))
    q, _ = torch.linalg.qr(_random(12, 5, seed=6))
    assert weight_isometry_gap(q.T).item() == pytest.approx(0.0, abs=1e-12)


def test_training_gap_flattens_centres_and_adds_eps():
    h = _random(6, 3, 4, seed=7)  # (n, C, L) module output
    flat = h.reshape(6, -1)
    centred = flat - flat.mean(dim=1, keepdim=True)
    torch.testing.assert_close(
        training_isometry_gap(h, reduce_mean=True), isometry_gap(centred @ centred.T + 1e-8 * torch.eye(6))
    )
    shifted = h + torch.arange(6.0).reshape(6, 1, 1)  # a per-sample constant is removed by the centring
    torch.testing.assert_close(
        training_isometry_gap(shifted, reduce_mean=True), training_isometry_gap(h, reduce_mean=True)
    )
    torch.testing.assert_close(
        training_isometry_gap(h, reduce_mean=False, eps=0.0), isometry_gap(flat @ flat.T)
    )
    batched = training_isometry_gap(torch.stack([h, 2 * h]), reduce_mean=False, sample_dim=1)
    torch.testing.assert_close(batched[0], training_isometry_gap(h, reduce_mean=False))


def test_lyapunov_potential_of_two_samples():
    rho = -0.6
    G = torch.tensor([[4.0, 2 * 3 * rho], [2 * 3 * rho, 9.0]])  # correlation rho, norms 2 and 3
    assert lyapunov_potential(G).item() == pytest.approx(abs(rho) / (1 - abs(rho)))


def test_lyapunov_potential_invariances_and_collinear_limit():
    H = _random(2, 5, 8, seed=8)
    G = gram(H)
    scales = torch.tensor([0.5, 2.0, 3.0, 7.0, 0.1], dtype=torch.float64)
    potential = lyapunov_potential(G)
    torch.testing.assert_close(lyapunov_potential(gram(scales[:, None] * H)), potential)
    torch.testing.assert_close(potential, torch.stack([lyapunov_potential(g) for g in G]))
    collinear = gram(torch.tensor([[1.0, 2.0], [-2.0, -4.0], [0.0, 1.0]]))
    assert lyapunov_potential(collinear).item() == math.inf


def test_bad_gram_inputs_are_rejected_with_the_fix():
    with pytest.raises(ValueError, match="square"):
        isometry_gap(torch.ones(3, 4))
    with pytest.raises(ValueError, match="not symmetric"):
        isometry_gap(torch.tensor([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="n ≥ 2"):
        lyapunov_potential(torch.ones(1, 1))
    with pytest.raises(ValueError, match="sample_dim"):
        training_isometry_gap(torch.ones(3, 4), reduce_mean=False, sample_dim=1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_metrics_on_cuda_match_cpu():
    H = _random(4, 32, 8, seed=9)
    W = _random(4, 64, 48, seed=10)
    for metric in (orthogonality_gap, lambda x: isometry_gap(gram(x, samples_first=False)), pii):
        source = W if metric is pii else H
        on_gpu = metric(source.float().cuda())
        assert on_gpu.device.type == "cuda" and on_gpu.dtype == torch.float64
        torch.testing.assert_close(on_gpu.cpu(), metric(source.float()))
