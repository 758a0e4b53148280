"""Chains H_{l+1} = (1/sqrt d) BN(W_l act(H_l)) of Daneshmand et al. (2021), batched over runs.

Shapes follow the paper: H has shape (runs, d, n), features in rows, samples in columns
(B.0). BN is the paper's Eq. (1): each row (feature) is scaled to unit norm across the n
samples, no mean subtraction; the 1/sqrt(d) factor makes ||H||_F = 1.

Two samplers for the product W H with i.i.d. N(0, 1) entries of W (the code's ``randn(d, d)``; the paper's
N(0, 1/d) is equivalent because BN is scale invariant):

- ``direct``: draw W and multiply, O(d^2 n) per layer. The reference path, and the only one that can share one
  W between two chains (Fig. 1).
- ``cholesky``: the rows of W H are i.i.d. N(0, H^T H), so W H is sampled exactly in distribution as Z F^T with
  Z ~ N(0, 1)^{d x n} and F F^T = H^T H; O(d n^2) per layer (B.0, "Efficient exact sampler"). F comes from
  an eigendecomposition, not a Cholesky factorisation, so rank-deficient Gram matrices (d < n, or the nearly
  degenerate H0 of Fig. 2) are handled exactly too.

Standard normal draws are made in float32 and promoted: N(0, 1) to 24 bits, and on a CPU about ten times
faster than float64 draws (``standard_normal``).

:func:`spectrum_chain` follows the linear BN chain through the spectra of its Gram matrices H_l^T H_l alone,
exactly in distribution (sampler ``spectrum``): what Figs. 2 and 3 measure, V(H) and sigma_min(H), are
functions of that spectrum.
"""

from __future__ import annotations

from typing import Callable, Iterator

import torch

from ..metrics import get_activation

Activation = Callable[[torch.Tensor], torch.Tensor]

# Activations of the Appendix-G figure (daneshmand2021-appfigg), from the shared registry, except
# that the notebook's "sigmoid" is defined as tanh(x) + 1: kept under that name so the legend reads as the
# paper's.
ACTIVATIONS: dict[str, Activation] = {
    **{name: get_activation(name) for name in ("identity", "relu", "tanh", "sin")},
    "sigmoid": lambda x: torch.tanh(x) + 1.0,
}

SAMPLERS = ("direct", "cholesky")
SPECTRUM_SAMPLERS = (*SAMPLERS, "spectrum")  # spectrum_chain's: the two above through H, or the spectra alone


def standard_normal(shape: tuple[int, ...], generator: torch.Generator, dtype: torch.dtype,
                    device: torch.device | str = "cpu") -> torch.Tensor:
    """i.i.d. N(0, 1) of ``dtype``, drawn in float32 (or the narrower ``dtype``) and promoted."""
    draw = dtype if dtype in (torch.float16, torch.bfloat16, torch.float32) else torch.float32
    return torch.randn(shape, generator=generator, dtype=draw, device=device).to(dtype)


def batch_normalize(m: torch.Tensor, scale: bool = True) -> torch.Tensor:
    """BN of the paper's Eq. (1): unit-norm rows across samples, then 1/sqrt(d) when ``scale``."""
    out = m / m.norm(dim=-1, keepdim=True)
    return out / m.shape[-2] ** 0.5 if scale else out


def _gram_factor(h: torch.Tensor) -> torch.Tensor:
    """F with F F^T = H^T H, batched, via a clamped eigendecomposition (exact for singular Grams)."""
    eigvals, eigvecs = torch.linalg.eigh(h.transpose(-1, -2) @ h)
    return eigvecs * eigvals.clamp_min(0).sqrt().unsqueeze(-2)


def gaussian_product(h: torch.Tensor, sampler: str, generator: torch.Generator) -> torch.Tensor:
    """A draw of W H, W with i.i.d. N(0, 1) entries of shape (d, d), independently for each run."""
    runs, d, n = h.shape
    if sampler == "direct":
        return standard_normal((runs, d, d), generator, h.dtype, h.device) @ h
    if sampler == "cholesky":
        return standard_normal((runs, d, n), generator, h.dtype, h.device) @ _gram_factor(h).transpose(-1, -2)
    raise ValueError(f"unknown sampler {sampler!r}; use one of {SAMPLERS}")


def run_chain(
    h0: torch.Tensor,
    layers: int,
    generator: torch.Generator,
    *,
    batch_norm: bool = True,
    activation: str = "identity",
    sampler: str = "direct",
    scale: bool = True,
) -> Iterator[torch.Tensor]:
    """Yield H_1, ..., H_layers of the chain started at ``h0`` (runs, d, n).

    ``batch_norm=False`` gives the vanilla chain H_{l+1} = W_l act(H_l). ``scale=False`` drops the 1/sqrt(d)
    factor (the Appendix-G notebook scales rows to unit norm only).
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; use one of {sorted(ACTIVATIONS)}")
    act = ACTIVATIONS[activation]
    h = h0
    for _ in range(layers):
        h = gaussian_product(act(h), sampler, generator)
        if batch_norm:
            h = batch_normalize(h, scale=scale)
        yield h


def spectrum_chain(
    h0: torch.Tensor, layers: int, generator: torch.Generator, *, sampler: str = "spectrum"
) -> Iterator[torch.Tensor]:
    """Yield the eigenvalues (ascending) of G_l = H_l^T H_l for l = 1..layers of the linear BN chain
    H_{l+1} = BN(W_l H_l)/sqrt(d) started at ``h0`` (runs, d, n): the chain of Figs. 2 and 3, whose measures
    V(H) and sigma_min(H) are functions of this spectrum.

    ``direct``/``cholesky`` run :func:`run_chain` and take the spectra of its Grams. ``spectrum`` never forms
    H: in the eigenbasis of G_l = V diag(lam) V^T the rows of W H_l are u_i = z_i * sqrt(lam), z_i ~ N(0, I_n),
    BN divides row i by ||u_i|| sqrt(d), so G_{l+1} = V M V^T with M = sum_i u_i^T u_i / (||u_i||^2 d). M depends
    on G_l only through lam (z is rotation invariant), so the spectra follow exactly the same chain: each layer
    costs a (d, n) draw, one (n, d) x (d, n) product in float32 and the eigenvalues of an n x n matrix in h0's
    dtype.
    tests/test_simulate_chains.py compares the samplers' distributions.
    """
    if sampler not in SPECTRUM_SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; use one of {SPECTRUM_SAMPLERS}")
    if sampler != "spectrum":
        for h in run_chain(h0, layers, generator, sampler=sampler):
            yield torch.linalg.eigvalsh(h.transpose(-1, -2) @ h)
        return
    runs, d, n = h0.shape
    eigvals = torch.linalg.eigvalsh(h0.transpose(-1, -2) @ h0)
    # One draw buffer and one product buffer for every layer: the draws are bit for bit torch.randn's, and a fresh
    # (runs, d, n) tensor per layer took a fifth to two fifths more time at the largest cells (benchmarks/README.md).
    u = torch.empty((runs, d, n), dtype=torch.float32, device=h0.device)
    product = torch.empty((runs, n, n), dtype=torch.float32, device=h0.device)
    for _ in range(layers):
        scale = eigvals.clamp_min(0).sqrt().to(torch.float32)
        u.normal_(generator=generator).mul_(scale.unsqueeze(-2))
        u.div_(torch.linalg.vector_norm(u, dim=-1, keepdim=True))  # BN: every row to unit norm
        m = torch.bmm(u.transpose(-1, -2), u, out=product).to(h0.dtype) / d  # M, in the eigenbasis of G_l
        eigvals = torch.linalg.eigvalsh((m + m.transpose(-1, -2)) / 2)  # symmetrised against round-off
        yield eigvals
