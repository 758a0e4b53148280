"""Random chains of Daneshmand et al. (2021): BN invariants and the exact-in-distribution sampler."""

import math

import pytest
import torch

from isonorm.metrics import orthogonality_gap
from isonorm.simulate import batch_normalize, gaussian_product, run_chain


def test_batch_normalize_gives_unit_rows_and_unit_frobenius_norm():
    m = torch.randn(3, 16, 5, dtype=torch.float64)
    h = batch_normalize(m)
    torch.testing.assert_close(h.norm(dim=-1), torch.full((3, 16), 1 / 4.0, dtype=torch.float64))
    torch.testing.assert_close(h.flatten(1).norm(dim=1), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize("sampler", ["direct", "cholesky"])
def test_both_samplers_have_the_gram_of_w_h_in_expectation(sampler):
    # Rows of W H are i.i.d. N(0, HᵀH), so E[(WH)ᵀ(WH)] = d HᵀH for both samplers.
    gen = torch.Generator().manual_seed(0)
    d, n, runs = 8, 3, 4000
    h = torch.randn(1, d, n, generator=gen, dtype=torch.float64).expand(runs, d, n).contiguous()
    product = gaussian_product(h, sampler, gen)
    empirical = (product.transpose(-1, -2) @ product).mean(dim=0)
    expected = d * h[0].T @ h[0]
    assert torch.allclose(empirical, expected, atol=0.1 * expected.abs().max())


def test_cholesky_sampler_handles_rank_deficient_gram():
    gen = torch.Generator().manual_seed(1)
    h = torch.zeros(2, 4, 6, dtype=torch.float64)  # d < n: HᵀH has rank ≤ 4
    h[:, :, :4] = torch.eye(4)
    product = gaussian_product(h, "cholesky", gen)
    assert torch.isfinite(product).all()
    assert torch.linalg.matrix_rank(product[0]) <= 4


def test_unknown_sampler_and_activation_are_rejected():
    gen = torch.Generator()
    with pytest.raises(ValueError, match="sampler"):
        gaussian_product(torch.ones(1, 2, 2), "qr", gen)
    with pytest.raises(ValueError, match="activation"):
        next(run_chain(torch.ones(1, 2, 2), 1, gen, activation="swish"))


def test_vanilla_chain_is_the_plain_product():
    h0 = torch.randn(2, 5, 3, dtype=torch.float64)
    first = next(run_chain(h0, 1, torch.Generator().manual_seed(7), batch_norm=False))
    w = torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    torch.testing.assert_close(first, w @ h0)


@pytest.mark.parametrize("sampler", ["direct", "cholesky"])
def test_bn_chain_orthogonalises_a_nearly_degenerate_batch(sampler):
    # Theorem 1 of the paper: V(H_l) falls from near its maximum to O(1/sqrt d).
    runs, d, n = 8, 64, 4
    h0 = torch.zeros(runs, d, n, dtype=torch.float64)
    h0[:, 0, 0] = 1.0
    h0[:, torch.arange(1, n), torch.arange(1, n)] = 1e-6
    gaps = [orthogonality_gap(h).mean().item() for h in run_chain(h0, 60, torch.Generator().manual_seed(3), sampler=sampler)]
    assert gaps[0] > 0.8 * math.sqrt(1 - 1 / n)
    assert sum(gaps[-10:]) / 10 < 0.5 * gaps[0]
