"""Random chains of Daneshmand et al. (2021): BN invariants and the exact-in-distribution sampler."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import ks_2samp

from isonorm.metrics import orthogonality_gap
from isonorm.simulate import batch_normalize, gaussian_product, run_chain, spectrum_chain, standard_normal


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
    w = standard_normal((2, 5, 5), torch.Generator().manual_seed(7), torch.float64)
    torch.testing.assert_close(first, w @ h0)


def test_draws_are_float32_normals_promoted():
    wide = standard_normal((1000,), torch.Generator().manual_seed(5), torch.float64)
    single = torch.randn(1000, generator=torch.Generator().manual_seed(5))
    assert wide.dtype == torch.float64 and torch.equal(wide, single.double())  # the float32 stream, promoted
    assert torch.equal(standard_normal((1000,), torch.Generator().manual_seed(5), torch.float32), single)


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



def _spectra(sampler: str, width: int, seed: int, runs: int = 300, batch: int = 6, layers: int = 8) -> np.ndarray:
    """(layers, runs, batch) Gram spectra of the linear BN chain from one Gaussian start shared by all runs."""
    h0 = torch.randn(1, width, batch, generator=torch.Generator().manual_seed(99), dtype=torch.float64)
    h0 = (h0 / h0.norm()).expand(runs, width, batch).contiguous()
    chain = spectrum_chain(h0, layers, torch.Generator().manual_seed(seed), sampler=sampler)
    return torch.stack(list(chain)).numpy()


@pytest.mark.parametrize("sampler", ["cholesky", "spectrum"])
def test_the_exact_samplers_give_the_direct_chain_in_distribution(sampler):
    """Two-sample Kolmogorov-Smirnov tests, per layer, of what Figs. 2 and 3 plot (sigma_min and V) between
    the direct chain and an exact sampler on independent seeds; fixed seeds keep the test deterministic."""
    direct, other = _spectra("direct", 10, seed=1), _spectra(sampler, 10, seed=2)
    for layer in (0, 3, 7):
        for statistic in (lambda s: s[..., 0], lambda s: ((s / s.sum(-1, keepdims=True) - 1 / 6) ** 2).sum(-1)):
            assert ks_2samp(statistic(direct[layer]), statistic(other[layer])).pvalue > 1e-3, (sampler, layer)
    # the same tests tell a chain of another width apart: they have the power to see a wrong sampler
    wider = _spectra("spectrum", 14, seed=3)
    assert ks_2samp(direct[7][..., 0], wider[7][..., 0]).pvalue < 1e-6


def test_the_spectrum_chain_is_the_cholesky_chain_draw_for_draw():
    # Same draws: cholesky's rows z_i F^T are the spectrum chain's u_i rotated by V^T, so the spectra agree up
    # to the float32 (d, n) arithmetic of the spectrum chain.
    cholesky, spectrum = _spectra("cholesky", 10, seed=4, runs=20), _spectra("spectrum", 10, seed=4, runs=20)
    np.testing.assert_allclose(spectrum, cholesky, rtol=1e-3, atol=1e-6)


def test_the_spectrum_chain_keeps_the_trace_and_the_bn_chain_orthogonalises():
    runs, d, n = 8, 64, 4
    h0 = torch.zeros(runs, d, n, dtype=torch.float64)
    h0[:, 0, 0] = 1.0
    h0[:, torch.arange(1, n), torch.arange(1, n)] = 1e-6
    spectra = list(spectrum_chain(h0, 60, torch.Generator().manual_seed(3)))
    torch.testing.assert_close(spectra[-1].sum(-1), torch.ones(runs, dtype=torch.float64))  # ||H||_F = 1
    gaps = [((s / s.sum(-1, keepdim=True) - 1 / n).square().sum(-1).sqrt()).mean().item() for s in spectra]
    assert gaps[0] > 0.8 * math.sqrt(1 - 1 / n) and sum(gaps[-10:]) / 10 < 0.5 * gaps[0]
    with pytest.raises(ValueError, match="sampler"):
        next(spectrum_chain(h0, 1, torch.Generator(), sampler="gram"))


def test_the_spectrum_chain_draws_layer_by_layer_as_fresh_randn_tensors():
    # The chain reuses one draw buffer across layers: its spectra must be, bit for bit, those of a fresh
    # torch.randn per layer from the same generator, and a spectrum it yielded must not change later.
    runs, d, n, layers = 3, 40, 5, 6
    h0 = torch.randn(runs, d, n, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    chain = list(spectrum_chain(h0, layers, torch.Generator().manual_seed(9)))
    gen, eigvals, fresh = torch.Generator().manual_seed(9), torch.linalg.eigvalsh(h0.mT @ h0), []
    for _ in range(layers):
        u = torch.randn(runs, d, n, generator=gen) * eigvals.clamp_min(0).sqrt().float().unsqueeze(-2)
        u = u / torch.linalg.vector_norm(u, dim=-1, keepdim=True)
        m = (u.mT @ u).double() / d
        eigvals = torch.linalg.eigvalsh((m + m.mT) / 2)
        fresh.append(eigvals)
    assert all(torch.equal(a, b) for a, b in zip(chain, fresh))
