"""The synthetic mean-field simulator of Joudaki, Daneshmand, Bach (2023), batched over runs.

D.0 (A) (the originals' ``run_experiments`` with ``create_input`` and ``calc_stats``). For
each run: an input X ∈ R^{n×d} (rows are samples) with one inflated singular value, recorded as layer 0
``input``; rows scaled to unit RMS (not recorded); then for l = 1..L with a fresh W ~ N(0, 1)·gain/√d

    activation first:  X ← σ(X W + bias)      otherwise:  X ← σ(X) W + bias

recorded as ``pre_norm``, then centering and normalisation, recorded as ``post_norm``. The statistics are the
isometry gap (metrics M1, ε = 0) and the Lyapunov potential γ (metrics M2) of G = X Xᵀ. Tensors have shape
(runs, n, d); every run draws from its own generator, so a run's numbers do not depend on how many runs
(or which other configurations) are simulated with it.

Numerics. The simulation runs in float32 by default, like the originals (torch's default dtype): where a
configuration diverges, the layer at which values overflow, underflow or lose all relative precision — the
points the published figures show as missing, e.g. Fig. 5 sigmoid without normalisation — depends on it.
Non-finite values never raise: they propagate as NaN through the remaining layers of that run only, and
are logged, as the originals' swallowed exceptions left those points out.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache

import numpy as np
import pandas as pd
import torch

from ..metrics import (
    GaussianMoments,
    NonFiniteActivationError,
    gaussian_moments,
    get_activation,
    isometry_gap,
    lyapunov_potential,
)
from ..runtime import generator
from .chains import SAMPLERS, gaussian_product

log = logging.getLogger(__name__)

CENTERINGS = ("none", "layer", "batch", "mf")
"""Subtract nothing, each row's mean, each column's mean, or the mean-field constant c0 = E σ (D.0 (A))."""

NORMALIZATIONS = ("none", "layer", "batch", "mf")
"""Divide by nothing, each row's RMS, each column's RMS, or √(E σ² − c0²) (D.0 (A))."""

STAGES = ("input", "pre_norm", "post_norm")

CONSTANT_METHODS = ("quadrature", "monte_carlo", "printed")

PRINTED_CONSTANTS = {
    "relu": GaussianMoments(c0=0.3992559611797333, c1=0.5008248090744019, second_moment=0.5008248090744019),
}
"""The originals' own Monte Carlo constants (c0, c1, E σ²) where their notebook printed them: ``act_info('relu')``
in R-D validations.ipynb cell 4 (stored output, execution count 3). Its samples were drawn once, unseeded, and the
later cells of that session (execution counts up to 67, no restart between) read the cached values, so these are the
constants of the Fig. 9 stored in that notebook, a later run than the paper's figure, whose draw was not printed
(decision D23). Exact: c0 = 1/√(2π) = 0.398942, E σ² = 1/2."""

ACT_INFO_SAMPLES = 2 * 10**6
"""The originals' ``act_info`` averaged over one fixed set of 2·10⁶ N(0, 1) samples (D.0 (A))."""

DTYPES = {"float32": torch.float32, "float64": torch.float64}

# torch.nn.init.calculate_gain knows σ by these names; identity is its "linear".
_CALCULATE_GAIN_NAMES = {"identity": "linear", "relu": "relu", "tanh": "tanh", "sigmoid": "sigmoid",
                         "selu": "selu", "leaky_relu": "leaky_relu"}


@dataclass(frozen=True)
class MeanFieldNetwork:
    """One configuration of the simulator (one row of the originals' configuration grid).

    Defaults are the originals' (D.0 (A)): activation first (eq. 1), gain 1, scalar bias 0, n = 10,
    d = 1000, L = 30. ``gain`` is a number or ``"xavier"`` (= ``torch.nn.init.calculate_gain(activation)``,
    leaky ReLU slope 0.01). ``degeneracy`` multiplies the input's largest singular value.
    """

    activation: str
    centering: str = "layer"
    normalization: str = "layer"
    activation_first: bool = True
    gain: float | str = 1.0
    bias: float = 0.0
    degeneracy: float = 1.0
    batch: int = 10
    width: int = 1000
    depth: int = 30

    def __post_init__(self) -> None:
        get_activation(self.activation)  # raises with the list of known names
        if self.centering not in CENTERINGS:
            raise ValueError(f"centering {self.centering!r} is not one of {CENTERINGS}")
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization {self.normalization!r} is not one of {NORMALIZATIONS}")
        if self.batch < 2 or self.width < 1 or self.depth < 1:
            raise ValueError(
                f"need batch ≥ 2 (γ compares pairs of samples), width ≥ 1 and depth ≥ 1; got batch={self.batch}, "
                f"width={self.width}, depth={self.depth}"
            )
        if not self.degeneracy > 0:
            raise ValueError(f"degeneracy multiplies a singular value and must be > 0, got {self.degeneracy}")
        resolve_gain(self.gain, self.activation)  # fail at construction, not half-way through a grid

    @property
    def gain_value(self) -> float:
        return resolve_gain(self.gain, self.activation)


@dataclass(frozen=True)
class Numerics:
    """How the simulator computes, as opposed to what it simulates.

    * ``constants``: c0, c1, E σ² by exact quadrature (decision D8), or the originals' Monte Carlo over one
      fixed (here seeded) set of ``monte_carlo_samples`` = 2·10⁶ samples (``act_info``), or the values the
      originals printed from their own draw (``printed``: ReLU only, :data:`PRINTED_CONSTANTS`, decision D23).
    * ``dtype``: the simulation's precision, float32 as in the originals (see the module docstring).
    * ``metric_dtype``: precision of G = X Xᵀ and its eigenvalues. float32 (default) is the originals'
      ``calc_stats``: its negative eigenvalues are the published missing points (Fig. 5: ReLU without
      normalization stops at ℓ ≈ 21, Fig. 6: exp with MF normalization "then NaN"); float64 is metrics
      M1 [I], which keeps those curves going (to a gap of ≈ 19 and ≈ 29 at ℓ = 30).
    * ``sampler``: ``direct`` draws W (O(d²n) per layer, the originals' path); ``cholesky`` samples X W
      exactly in distribution from the Gram of X (O(n²d), for d = 10⁴; ``isonorm.simulate.chains``).
    """

    constants: str = "quadrature"
    monte_carlo_samples: int = ACT_INFO_SAMPLES
    constants_seed: int = 0
    dtype: str = "float32"
    metric_dtype: str = "float32"
    sampler: str = "direct"

    def __post_init__(self) -> None:
        if self.constants not in CONSTANT_METHODS:
            raise ValueError(f"constants method {self.constants!r} is not one of {CONSTANT_METHODS}")
        for key in ("dtype", "metric_dtype"):
            if getattr(self, key) not in DTYPES:
                raise ValueError(f"{key} {getattr(self, key)!r} is not one of {sorted(DTYPES)}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler {self.sampler!r} is not one of {SAMPLERS}")


def resolve_gain(gain: float | str, activation: str) -> float:
    """A numeric gain as a float; ``"xavier"`` as ``torch.nn.init.calculate_gain(activation)``."""
    if isinstance(gain, str):
        if gain != "xavier":
            raise ValueError(f"gain must be a number or 'xavier', got {gain!r}")
        if activation not in _CALCULATE_GAIN_NAMES:
            raise ValueError(
                f"torch.nn.init.calculate_gain has no gain for {activation!r}; 'xavier' works for "
                f"{sorted(_CALCULATE_GAIN_NAMES)}; pass a number instead"
            )
        return float(torch.nn.init.calculate_gain(_CALCULATE_GAIN_NAMES[activation]))
    if isinstance(gain, bool) or not isinstance(gain, (int, float)) or not math.isfinite(gain):
        raise ValueError(f"gain must be a finite number or 'xavier', got {gain!r}")
    return float(gain)


@cache
def activation_constants(
    activation: str, method: str = "quadrature", n_samples: int = ACT_INFO_SAMPLES, seed: int = 0, gain: float = 1.0
) -> GaussianMoments:
    """c0 = E σ, c1 = E[xσ], E σ² of σ(gain·x), x ∼ N(0, 1) (cached; D.0 (A), decision D8).

    The simulator's centering and normalisation use the unscaled σ (gain 1), as the originals' ``act_info``.
    ``method="printed"`` returns the originals' own values (:data:`PRINTED_CONSTANTS`), known for σ at gain 1 only.
    """
    if method == "printed":
        if activation not in PRINTED_CONSTANTS or gain != 1.0:
            raise ValueError(f"the originals printed their constants for {sorted(PRINTED_CONSTANTS)} at gain 1 only, "
                             f"not for {activation!r} at gain {gain:g}; use quadrature or monte_carlo")
        return PRINTED_CONSTANTS[activation]
    return gaussian_moments(activation, method, n_samples=n_samples, seed=seed, gain=gain)


def degenerate_input(
    batch: int, width: int, degeneracy: float, gen: torch.Generator, dtype: torch.dtype, device: torch.device | str
) -> torch.Tensor:
    """X = randn(n, d) with its largest singular value × ``degeneracy``, scaled to mean(X²) = 1 (``create_input``)."""
    x = torch.randn(batch, width, generator=gen, dtype=dtype, device=device)
    u, s, vh = torch.linalg.svd(x, full_matrices=False)
    s = s.clone()
    s[0] = s[0] * degeneracy
    x = (u * s) @ vh
    return x / x.pow(2).mean().sqrt()


def _row_rms(x: torch.Tensor) -> torch.Tensor:
    return x.pow(2).mean(dim=-1, keepdim=True).sqrt()


def center(x: torch.Tensor, centering: str, c0: float) -> torch.Tensor:
    """Subtract c0, each row's mean or each column's mean (rows are samples), or nothing."""
    if centering == "mf":
        return x - c0
    if centering == "layer":
        return x - x.mean(dim=-1, keepdim=True)
    if centering == "batch":
        return x - x.mean(dim=-2, keepdim=True)
    if centering == "none":
        return x
    raise ValueError(f"centering {centering!r} is not one of {CENTERINGS}")


def normalize(x: torch.Tensor, normalization: str, variance: float) -> torch.Tensor:
    """Divide by √Var σ, each row's RMS (LN of Table 1), each column's RMS (BN over the n samples), or nothing."""
    if normalization == "mf":
        return x / math.sqrt(variance)
    if normalization == "layer":
        return x / _row_rms(x)
    if normalization == "batch":
        return x / x.pow(2).mean(dim=-2, keepdim=True).sqrt()
    if normalization == "none":
        return x
    raise ValueError(f"normalization {normalization!r} is not one of {NORMALIZATIONS}")


def _stats(x: torch.Tensor, metric_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(iso gap with ε = 0, γ) of G = X Xᵀ per run; NaN where G is not finite or eigvalsh fails."""
    xm = x.to(metric_dtype)
    g = xm @ xm.mT
    try:
        gap = isometry_gap(g, eps=0.0, dtype=metric_dtype)
    except torch.linalg.LinAlgError:  # one ill-conditioned run must not cost the others their values
        gap = torch.stack([_gap_or_nan(g_run, metric_dtype) for g_run in g])
    return gap.double().cpu(), lyapunov_potential(g).cpu()


def _gap_or_nan(g: torch.Tensor, metric_dtype: torch.dtype) -> torch.Tensor:
    try:
        return isometry_gap(g, eps=0.0, dtype=metric_dtype)
    except torch.linalg.LinAlgError:
        log.info("eigvalsh failed on one Gram matrix; its isometry gap is recorded as NaN")
        return torch.tensor(float("nan"), dtype=metric_dtype, device=g.device)


def _gaussian_layer(x: torch.Tensor, gens: Sequence[torch.Generator], sampler: str) -> torch.Tensor:
    """X W with W ~ N(0, 1)^{d×d} drawn per run from that run's generator; NaN rows stay NaN.

    ``gaussian_product`` works features first: given H = Xᵀ it returns W Xᵀ = (X Wᵀ)ᵀ, and Wᵀ ~ W.
    A non-finite run is fed zeros (so that the Gram factorisation of ``cholesky`` cannot fail) and its output
    is set to NaN afterwards; its W is still drawn, which keeps its random stream aligned.
    """
    finite = torch.isfinite(x).flatten(1).all(dim=1)
    safe = torch.where(finite[:, None, None], x, torch.zeros_like(x))
    out = torch.cat([gaussian_product(safe[r : r + 1].mT, sampler, gen).mT for r, gen in enumerate(gens)])
    return torch.where(finite[:, None, None], out, torch.full_like(out, float("nan")))


def simulate(
    network: MeanFieldNetwork,
    runs: int,
    seed_parts: Sequence[object],
    numerics: Numerics = Numerics(),
    device: str | torch.device = "cpu",
    first_run: int = 0,
) -> pd.DataFrame:
    """All runs of one configuration as a tidy frame (one row per run, layer and stage).

    Columns: ``run``, ``layer`` (l = 0 for the input), ``stage`` (input, pre_norm, post_norm), ``iso_gap``,
    ``gamma``; the configuration (``activation``, ``centering``, ``normalization``, ``activation_first``,
    ``gain`` (numeric), ``gain_setting`` (as given), ``bias``, ``degeneracy``, ``batch``, ``width``, ``depth``);
    the constants ``c0``, ``c1``, ``second_moment``, ``beta`` (of the unscaled σ) and ``beta_gain`` (β of
    σ(gain·x)); and the derived columns of D.0 (A) ``gamma0``/``iso_gap0`` (post_norm at l = 1 of the run),
    ``gamma_theory`` = γ0/β^l and ``iso_gap_theory`` = 2n·γ0/β^l. Run r is seeded by
    ``runtime.generator(*seed_parts, r)``; the runs are r = ``first_run`` … ``first_run + runs − 1``, so that
    more runs of a configuration continue its first ones: ``runs=10`` then ``runs=40, first_run=10`` give
    exactly the rows of ``runs=50`` (decision D19).
    """
    if runs < 1:
        raise ValueError(f"runs must be ≥ 1, got {runs}")
    if isinstance(first_run, bool) or not isinstance(first_run, int) or first_run < 0:
        raise ValueError(f"first_run must be an integer ≥ 0, got {first_run!r}")
    device = torch.device(device)
    dtype, metric_dtype = DTYPES[numerics.dtype], DTYPES[numerics.metric_dtype]
    constants = activation_constants(
        network.activation, numerics.constants, numerics.monte_carlo_samples, numerics.constants_seed
    )
    sigma = get_activation(network.activation)
    gain = network.gain_value
    scale = gain / math.sqrt(network.width)
    run_ids = list(range(first_run, first_run + runs))
    gens = [generator(*seed_parts, run, device=device) for run in run_ids]

    x = torch.stack([
        degenerate_input(network.batch, network.width, network.degeneracy, gen, dtype, device) for gen in gens
    ])
    gaps, gammas = [], []

    def record(values: torch.Tensor) -> None:
        gap, gamma = _stats(values, metric_dtype)
        gaps.append(gap)
        gammas.append(gamma)

    record(x)
    x = x / _row_rms(x)
    first_nonfinite = torch.full((runs,), -1, dtype=torch.long)
    for layer in range(1, network.depth + 1):
        if network.activation_first:
            x = sigma(_gaussian_layer(x, gens, numerics.sampler) * scale + network.bias)
        else:
            x = _gaussian_layer(sigma(x), gens, numerics.sampler) * scale + network.bias
        record(x)
        x = normalize(center(x, network.centering, constants.c0), network.normalization, constants.variance)
        record(x)
        bad = ~torch.isfinite(x).flatten(1).all(dim=1).cpu()
        first_nonfinite = torch.where(bad & (first_nonfinite < 0), torch.full_like(first_nonfinite, layer),
                                      first_nonfinite)
    _log_divergence(seed_parts, run_ids, first_nonfinite)
    return _tidy(network, run_ids, torch.stack(gaps), torch.stack(gammas), constants, numerics)


def _log_divergence(seed_parts: Sequence[object], run_ids: Sequence[int], first_nonfinite: torch.Tensor) -> None:
    diverged = {run: int(layer) for run, layer in zip(run_ids, first_nonfinite.tolist()) if layer >= 0}
    if diverged:
        log.info(
            "%s: %d of %d runs became non-finite (run: first layer %s); their later values are NaN",
            "/".join(map(str, seed_parts)), len(diverged), len(first_nonfinite), diverged,
        )


def _beta_of_scaled(activation: str, gain: float, numerics: Numerics) -> float:
    """β of σ(gain·x), or NaN where σ(gain·x) overflows float64 at the integration points (exp, large gain)."""
    try:
        return activation_constants(
            activation, numerics.constants, numerics.monte_carlo_samples, numerics.constants_seed, gain
        ).strength
    except NonFiniteActivationError:
        return math.nan


def _tidy(
    network: MeanFieldNetwork,
    run_ids: Sequence[int],
    gaps: torch.Tensor,
    gammas: torch.Tensor,
    constants: GaussianMoments,
    numerics: Numerics,
) -> pd.DataFrame:
    """(2L + 1, runs) statistics -> rows ordered by layer, stage, run; plus configuration and theory columns."""
    depth = network.depth
    layers = np.concatenate([[0], np.repeat(np.arange(1, depth + 1), 2)])
    stages = np.array(["input"] + ["pre_norm", "post_norm"] * depth)
    runs = len(run_ids)
    frame = pd.DataFrame({
        "run": np.tile(np.asarray(run_ids), len(layers)),
        "layer": np.repeat(layers, runs),
        "stage": np.repeat(stages, runs),
        "iso_gap": gaps.reshape(-1).numpy(),
        "gamma": gammas.reshape(-1).numpy(),
    })
    config = asdict(network)
    config["gain_setting"] = str(config.pop("gain"))
    config["gain"] = network.gain_value
    for key, value in config.items():
        frame[key] = value
    frame["c0"], frame["c1"] = constants.c0, constants.c1
    frame["second_moment"], frame["beta"] = constants.second_moment, constants.strength
    frame["beta_gain"] = _beta_of_scaled(network.activation, network.gain_value, numerics)
    first = frame[(frame.stage == "post_norm") & (frame.layer == 1)].set_index("run")
    frame["gamma0"] = frame.run.map(first.gamma)
    frame["iso_gap0"] = frame.run.map(first.iso_gap)
    decay = frame.beta ** frame.layer
    frame["gamma_theory"] = frame.gamma0 / decay
    frame["iso_gap_theory"] = 2 * network.batch * frame.gamma0 / decay
    return frame
