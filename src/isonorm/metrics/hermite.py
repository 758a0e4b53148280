"""Normalised Hermite coefficients and the isometry strength β_σ (metrics M5; Joudaki et al. Def. 3).

c_k = E_{x∼N(0,1)}[σ(gain·x) He_k(x)] with the orthonormal probabilists' Hermite polynomials
He_k = (k!)^{−1/2} He_k^{prob}, and β_σ = 2 − c_1²/Σ_{k≥1} c_k² = 2 − (E[xσ])²/Var σ (Parseval), in [1, 2].

Two estimators of the Gaussian expectations, both in float64:

* ``"quadrature"`` (default, decision D8): Gauss–Legendre panels on [−40, 0] and [0, 40] against the
  Gaussian density. Plain Gauss–Hermite (``hermegauss``) converges only like 1/n for σ with a kink or a jump
  at 0 (ReLU, leaky ReLU, ELU, SELU, step: error 1.4e-3 for ReLU's β with 200 nodes); splitting at 0 makes
  every registered σ smooth on each panel, so the rule is exact to about 1e-15. Tails beyond |x| = 40 weigh
  below 1e-300. A σ with a kink away from 0 is still integrated, only less accurately.
* ``"monte_carlo"``: the originals' estimator, here seeded: ``compute_beta`` draws 10⁶ fresh N(0,1) samples
  per call (the default ``n_samples``); ``act_info`` reuses one set of 2·10⁶ (``n_samples=2 * 10**6`` with
  a fixed ``seed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import torch
from numpy.polynomial.legendre import leggauss

from .activations import LEAKY_RELU_SLOPE, PRELU_INIT_SLOPE, Activation, get_activation

Method = Literal["quadrature", "monte_carlo"]
Sigma = str | Activation | Callable[[torch.Tensor], torch.Tensor]

MONTE_CARLO_SAMPLES = 10**6
"""Sample count of the originals' ``compute_beta`` (metrics M5)."""

# Split quadrature: 80 panels of 16 Gauss–Legendre nodes on each half-line [0, ±40]; panels of width 0.5
# resolve the Gaussian (scale 1) to machine precision, and the density beyond |x| = 40 is below 1e-300.
QUADRATURE_HALF_WIDTH = 40.0
QUADRATURE_PANELS = 80
QUADRATURE_PANEL_NODES = 16


@lru_cache(maxsize=1)
def _quadrature_rule() -> tuple[torch.Tensor, torch.Tensor]:
    """Nodes and square-rooted weights of the split Gauss–Legendre rule for E_{N(0,1)}."""
    reference_nodes, reference_weights = leggauss(QUADRATURE_PANEL_NODES)
    edges = np.linspace(0.0, QUADRATURE_HALF_WIDTH, QUADRATURE_PANELS + 1)
    left, right = edges[:-1, None], edges[1:, None]
    half = (right - left) / 2
    positive = (half * reference_nodes + (left + right) / 2).ravel()
    weights = (half * reference_weights).ravel() * np.exp(-positive**2 / 2) / math.sqrt(2 * math.pi)
    nodes = np.concatenate([-positive[::-1], positive])
    weights = np.concatenate([weights[::-1], weights])
    return torch.from_numpy(nodes), torch.from_numpy(np.sqrt(weights))


class NonFiniteActivationError(ValueError):
    """σ(gain·x) overflows float64 at the integration points (e.g. exp at large gains); β may still exist in
    closed form. A ``ValueError``, so callers that only want to fail need not know it."""


def _expectation_points(method: Method, n_samples: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Points x and square-rooted weights r with E[f(x) g(x)] ≈ Σ (r f)(r g); weights sum to 1.

    Square-rooted weights keep σ² finite where σ alone is huge (e.g. exp(9.9x) at x = 40).
    """
    if method == "quadrature":
        return _quadrature_rule()
    if method == "monte_carlo":
        if n_samples < 2:
            raise ValueError(f"monte_carlo needs n_samples ≥ 2, got {n_samples}")
        return _monte_carlo_points(n_samples, seed)
    raise ValueError(f"unknown method {method!r}; use 'quadrature' or 'monte_carlo'")


@lru_cache(maxsize=4)
def _monte_carlo_points(n_samples: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The seeded sample set (cached: a β curve over a hundred gains reuses the same samples, as the
    originals' ``act_info`` reuses its one set; callers never modify the tensors)."""
    generator = torch.Generator().manual_seed(seed)
    samples = torch.randn(n_samples, generator=generator, dtype=torch.float64)
    return samples, torch.full_like(samples, 1.0 / math.sqrt(n_samples))


def _weighted_values(sigma: Sigma, gain: float, x: torch.Tensor, root_weights: torch.Tensor) -> torch.Tensor:
    function = get_activation(sigma) if isinstance(sigma, str) else sigma
    points = gain * x
    # NumPy ufuncs (np.tanh, ...) get an array: applying them to a tensor is deprecated in NumPy 2.
    raw = function(points.numpy()) if isinstance(function, np.ufunc) else function(points)
    values = torch.as_tensor(raw, dtype=torch.float64)
    if values.shape != x.shape:
        raise ValueError(
            f"σ must act elementwise; it mapped {tuple(x.shape)} points to shape {tuple(values.shape)}"
        )
    weighted = root_weights * values
    if not bool(torch.isfinite(weighted).all()):
        raise NonFiniteActivationError(
            f"σ(gain·x) with gain={gain} is not finite in float64 at the integration points (|x| ≤ 40); "
            "use isometry_strength_closed_form for exp/rbf at large gains, or a smaller gain"
        )
    return weighted


def hermite_coefficients(
    sigma: Sigma,
    k_max: int,
    method: Method = "quadrature",
    n_samples: int = MONTE_CARLO_SAMPLES,
    seed: int = 0,
    gain: float = 1.0,
) -> np.ndarray:
    """c_0..c_{k_max} of σ(gain·x) in the orthonormal probabilists' Hermite basis (metrics M5).

    ``sigma`` is a registered name (see ``ACTIVATIONS``), a callable on float64 torch tensors or a NumPy
    ufunc. The originals' un-normalised a_k = E[σ He_k^{prob}]/k! relate by c_k = a_k·√(k!); only c_k is
    exposed (decision D18). ``n_samples`` and ``seed`` apply to ``method="monte_carlo"`` only.
    """
    if k_max < 0:
        raise ValueError(f"k_max must be ≥ 0, got {k_max}")
    x, root_weights = _expectation_points(method, n_samples, seed)
    weighted = _weighted_values(sigma, gain, x, root_weights)
    previous, current = torch.zeros_like(x), root_weights.clone()  # r·He_{-1}, r·He_0
    coefficients = []
    for k in range(k_max + 1):
        coefficients.append(float((weighted * current).sum()))
        # Orthonormal recurrence: He_{k+1} = (x He_k − √k He_{k−1}) / √(k+1).
        previous, current = current, (x * current - math.sqrt(k) * previous) / math.sqrt(k + 1)
    return np.array(coefficients)


@dataclass(frozen=True)
class GaussianMoments:
    """E σ, E[xσ] and E σ² of σ(gain·x) for x ∼ N(0, 1): the mean-field constants c0, c1 and Σ_k c_k².

    c0 and c1 are the first two orthonormal Hermite coefficients; Parseval gives E σ² = Σ_{k≥0} c_k². These are
    the quantities of the originals' ``act_info`` (D.0 (A)).
    """

    c0: float
    c1: float
    second_moment: float

    @property
    def variance(self) -> float:
        """Var σ = E σ² − c0² = Σ_{k≥1} c_k² (the mean-field normalisation constant squared)."""
        return self.second_moment - self.c0**2

    @property
    def strength(self) -> float:
        """β_σ = 2 − c1²/Var σ (metrics M5), NaN for a constant σ."""
        return 2.0 - self.c1**2 / self.variance if self.variance > 0 else math.nan


def gaussian_moments(
    sigma: Sigma,
    method: Method = "quadrature",
    n_samples: int = MONTE_CARLO_SAMPLES,
    seed: int = 0,
    gain: float = 1.0,
) -> GaussianMoments:
    """c0 = E σ(gain·x), c1 = E[x σ(gain·x)] and E σ(gain·x)² under x ∼ N(0, 1), in float64.

    Same estimators as :func:`isometry_strength`: ``"quadrature"`` (exact, D8) or the seeded ``"monte_carlo"``
    (the originals' ``act_info`` used one fixed set of 2·10⁶ samples: pass ``n_samples=2 * 10**6``).
    """
    x, root_weights = _expectation_points(method, n_samples, seed)
    weighted = _weighted_values(sigma, gain, x, root_weights)
    return GaussianMoments(
        c0=float((weighted * root_weights).sum()),
        c1=float((weighted * root_weights * x).sum()),
        second_moment=float((weighted**2).sum()),
    )


def isometry_strength(
    sigma: Sigma,
    method: Method = "quadrature",
    n_samples: int = MONTE_CARLO_SAMPLES,
    seed: int = 0,
    gain: float = 1.0,
) -> float:
    """β_σ = 2 − (E[xσ(gain·x)])²/Var σ(gain·x) (metrics M5), the isometry strength of Joudaki Def. 3.

    Σ_{k≥1} c_k² = Var σ by Parseval, so no truncation of the Hermite series is involved. A constant σ has
    no β (0/0) and raises ``ValueError``.
    """
    moments = gaussian_moments(sigma, method, n_samples, seed, gain)
    if not moments.variance > 1e-12 * moments.second_moment:
        raise ValueError(
            f"σ(gain·x) with gain={gain} is constant under N(0,1) (variance {moments.variance:.3g}), "
            "so β is undefined; pass a non-constant σ and a non-zero gain"
        )
    return moments.strength


def _leaky_relu_strength(slope: float) -> float:
    """σ = s·x + (1−s)·relu(x): E[xσ] = (1+s)/2, Var σ = (1+s²)/2 − (1−s)²/(2π)."""
    first = (1 + slope) / 2
    variance = (1 + slope**2) / 2 - (1 - slope) ** 2 / (2 * math.pi)
    return 2.0 - first**2 / variance


def _sin_strength(gain: float) -> float:
    """joudaki2023-tableb1: 2 − 2α²e^{α²}/(e^{2α²} − 1), with expm1 so that large α stays finite."""
    a2 = gain * gain
    return 2.0 - 2.0 * a2 * math.exp(-a2) / -math.expm1(-2.0 * a2)


def _exp_strength(gain: float) -> float:
    """joudaki2023-tableb1: 2 − α²/(e^{α²} − 1); a shift (rbf = exp(x − 2)) only rescales σ."""
    a2 = gain * gain
    return 2.0 - a2 / math.expm1(a2)


def _he3_strength(gain: float) -> float:
    """σ = α³x³ − 3αx: E[xσ] = 3α(α² − 1), Var σ = 15α⁶ − 18α⁴ + 9α² (Gaussian moments 1, 3, 15)."""
    a2 = gain * gain
    return 2.0 - 9.0 * (a2 - 1.0) ** 2 / (15.0 * a2 * a2 - 18.0 * a2 + 9.0)


_RELU_STRENGTH = (3 * math.pi - 4) / (2 * math.pi - 2)

CLOSED_FORMS: dict[str, Callable[[float], float]] = {
    # Positively homogeneous σ: β is invariant to the gain's size, and to its sign by x → −x symmetry.
    "identity": lambda gain: 1.0,
    "he1": lambda gain: 1.0,
    "relu": lambda gain: _RELU_STRENGTH,
    "leaky_relu": lambda gain: _leaky_relu_strength(LEAKY_RELU_SLOPE),
    "prelu": lambda gain: _leaky_relu_strength(PRELU_INIT_SLOPE),
    "step": lambda gain: 2.0 - 2.0 / math.pi,
    "he2": lambda gain: 2.0,  # even: E[xσ] = 0
    "he3": _he3_strength,
    "sin": _sin_strength,
    "exp": _exp_strength,
    "rbf": _exp_strength,
}
"""β of σ(gain·x) in closed form for the activations that have one (metrics M5, joudaki2023-tableb1)."""


def isometry_strength_closed_form(name: str, gain: float = 1.0) -> float:
    """β of σ(gain·x) for a named activation with a closed form (see ``CLOSED_FORMS``)."""
    if name not in CLOSED_FORMS:
        raise ValueError(
            f"no closed form for {name!r}; closed forms exist for {sorted(CLOSED_FORMS)}; "
            "use isometry_strength(name) (quadrature) for the others"
        )
    if gain == 0:
        raise ValueError("gain 0 makes σ(gain·x) constant, so β is undefined; pass a non-zero gain")
    return CLOSED_FORMS[name](gain)
