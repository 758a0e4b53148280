"""Parameters independence index and cosine-similarity matrices (A.1.1, A.1.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import cosine
from scipy.special import gammaln

from isonorm.metrics import conv_centre_tap, cosine_similarity_matrix, pii


def _random(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _orthogonal(d: int, seed: int) -> torch.Tensor:
    q, _ = torch.linalg.qr(_random(d, d, seed=seed))
    return q


def test_matches_the_pairwise_scipy_definition():
    W = _random(6, 4, seed=0)  # out=6, in=4
    for dim, vectors in (("rows", W.numpy()), ("columns", W.numpy().T)):
        k = len(vectors)
        C = np.array([[abs(1 - cosine(a, b)) for b in vectors] for a in vectors])
        original = abs((C.mean() - 1 / k) * k / (k - 1))
        assert pii(W, dim=dim).item() == pytest.approx(original, rel=1e-12)
        np.testing.assert_allclose(cosine_similarity_matrix(W, dim=dim).numpy(), C, rtol=1e-12)


def test_orthogonal_vectors_give_zero_and_collinear_vectors_give_one():
    Q = _orthogonal(8, seed=1)
    assert pii(Q, dim="rows").item() == pytest.approx(0.0, abs=1e-12)
    assert pii(Q[:, :5], dim="columns").item() == pytest.approx(0.0, abs=1e-12)
    constant = torch.full((5, 7), 0.1)  # a constant-initialised layer
    assert pii(constant, dim="rows").item() == pytest.approx(1.0)
    assert pii(constant, dim="columns").item() == pytest.approx(1.0)


def test_invariant_to_rescaling_negating_and_reordering_vectors():
    W = _random(6, 9, seed=2)
    scales = torch.tensor([0.5, -2.0, 3.0, -0.1, 7.0, 1.0], dtype=torch.float64)
    order = torch.randperm(6, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(pii(scales[:, None] * W, dim="rows"), pii(W, dim="rows"))
    torch.testing.assert_close(pii(W[order], dim="rows"), pii(W, dim="rows"))
    torch.testing.assert_close(pii(W[:, :6] * scales, dim="columns"), pii(W[:, :6], dim="columns"))


def test_orientation_invariance_to_orthogonal_maps():
    W = _random(7, 5, seed=4)
    torch.testing.assert_close(pii(_orthogonal(7, seed=5) @ W, dim="columns"), pii(W, dim="columns"))
    torch.testing.assert_close(pii(W @ _orthogonal(5, seed=6), dim="rows"), pii(W, dim="rows"))
    torch.testing.assert_close(pii(W, dim="rows"), pii(W.T, dim="columns"))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 6)), elements=st.floats(-5, 5)))
def test_pii_lies_in_unit_interval(W):
    assume((np.linalg.norm(W, axis=0) > 1e-3).all())
    value = pii(W, dim="columns").item()
    assert -1e-12 <= value <= 1.0 + 1e-12


def test_random_gaussian_vectors_match_the_mean_absolute_cosine_on_the_sphere():
    length = 64
    # E|cos| of two independent uniform directions in R^m is Γ(m/2) / (√π Γ((m+1)/2)).
    expected = math.exp(gammaln(length / 2) - gammaln((length + 1) / 2)) / math.sqrt(math.pi)
    value = pii(_random(length, 300, seed=7), dim="columns").item()
    assert value == pytest.approx(expected, rel=0.05)


def test_cosine_matrix_is_symmetric_with_unit_diagonal():
    C = cosine_similarity_matrix(_random(10, 6, seed=8), dim="columns")
    assert C.shape == (6, 6)
    torch.testing.assert_close(C.diagonal(), torch.ones(6, dtype=torch.float64))
    torch.testing.assert_close(C, C.T)
    assert ((C >= 0) & (C <= 1 + 1e-12)).all()


def test_zero_vector_gives_nan_like_the_original():
    W = _random(4, 3, seed=9)
    W[:, 1] = 0.0
    assert math.isnan(pii(W, dim="columns").item())


def test_batched_call_equals_loop_of_single_calls():
    W = _random(3, 8, 5, seed=10)
    for dim in ("rows", "columns"):
        batched = pii(W, dim=dim)
        torch.testing.assert_close(batched, torch.stack([pii(w, dim=dim) for w in W]))


@pytest.mark.parametrize("kernel, centre", [(1, 0), (3, 1), (5, 2)])
def test_conv_centre_tap_takes_the_middle_of_the_kernel(kernel, centre):
    weight = _random(2, 6, 4, kernel, kernel, seed=11)  # (runs, out, in, kh, kw)
    tap = conv_centre_tap(weight)
    assert tap.shape == (2, 6, 4)
    torch.testing.assert_close(tap, weight[:, :, :, centre, centre])


def test_bad_inputs_are_rejected_with_the_fix():
    with pytest.raises(ValueError, match="no centre tap"):
        conv_centre_tap(torch.ones(4, 3, 2, 2))
    with pytest.raises(ValueError, match="at least two"):
        pii(torch.ones(5, 1), dim="columns")
    with pytest.raises(ValueError, match="'rows' or 'columns'"):
        pii(torch.ones(3, 3), dim="cols")
