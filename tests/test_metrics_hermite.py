"""Hermite coefficients and the isometry strength β (metrics M5; joudaki2023-tableb1).

Targets are the closed forms and float64 quadrature values of metrics M5's reference table (mathematical
values, not paper-reported numbers), tolerance 1e-4 as metrics M5 states.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from isonorm.metrics import (
    ACTIVATIONS,
    CLOSED_FORMS,
    NonFiniteActivationError,
    hermite_coefficients,
    isometry_strength,
    isometry_strength_closed_form,
    leaky_relu,
)

E = math.e
# (σ, β, c0, c1, Var σ) — metrics M5 reference table; None where the table leaves a cell empty.
REFERENCE_TABLE = [
    ("identity", 1.0, 0.0, 1.0, 1.0),
    ("he1", 1.0, 0.0, 1.0, 1.0),
    ("he2", 2.0, 0.0, 0.0, 2.0),
    ("he3", 2.0, 0.0, 0.0, 6.0),
    ("sin", 2 - 2 * E / (E**2 - 1), 0.0, 0.606531, 0.432332),
    ("exp", 2 - 1 / (E - 1), None, None, None),
    ("rbf", 2 - 1 / (E - 1), None, None, None),
    ("step", 2 - 2 / math.pi, 0.5, 0.398942, 0.25),
    ("relu", (3 * math.pi - 4) / (2 * math.pi - 2), 0.398942, 0.5, 0.340845),
    ("tanh", 1.069530, 0.0, 0.605706, 0.394294),
    ("sigmoid", 1.015833, 0.5, 0.206621, 0.043379),
    ("selu", 1.029320, 0.0, 0.985231, 1.0),
    ("elu", 1.063273, 0.160521, 0.761578, 0.619179),
    ("silu", 1.201490, 0.206621, 0.5, 0.313083),
    ("gelu", 1.276712, 0.282095, 0.5, 0.345644),
    ("leaky_relu", 1.258782, 0.394953, 0.505, 0.344062),
    ("prelu", 1.115684, None, None, None),
]
TOLERANCE = 1e-4

HERMITE_TABLE = {
    "relu": [0.39894, 0.5, 0.28209, 0.0, -0.08143, 0.0, 0.04460],
    "tanh": [0.0, 0.60571, 0.0, -0.14844, 0.0, 0.06255, 0.0],
    "sin": [0.0, 0.60653, 0.0, -0.24762, 0.0, 0.05537, 0.0],
}


@pytest.mark.parametrize("name, beta, c0, c1, variance", REFERENCE_TABLE)
def test_quadrature_matches_the_reference_table(name, beta, c0, c1, variance):
    strength = isometry_strength(name)
    assert strength == pytest.approx(beta, abs=TOLERANCE)
    coefficients = hermite_coefficients(name, k_max=1)
    if c0 is not None:
        assert coefficients[0] == pytest.approx(c0, abs=TOLERANCE)
        assert coefficients[1] == pytest.approx(c1, abs=TOLERANCE)
    if variance is not None and c1 != 0.0:
        assert coefficients[1] ** 2 / (2 - strength) == pytest.approx(variance, abs=TOLERANCE)


def test_leaky_relu_with_slope_one_half_matches_the_table():
    assert isometry_strength(leaky_relu(0.5)) == pytest.approx(1.038809, abs=TOLERANCE)


@pytest.mark.parametrize("name, beta", [row[:2] for row in REFERENCE_TABLE if row[0] in CLOSED_FORMS])
def test_closed_forms_match_the_reference_table(name, beta):
    assert isometry_strength_closed_form(name) == pytest.approx(beta, abs=TOLERANCE)


def test_relu_strength_is_exactly_the_closed_form():
    assert isometry_strength("relu") == pytest.approx((3 * math.pi - 4) / (2 * math.pi - 2), rel=1e-12)


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
@pytest.mark.parametrize("gain", [0.5, 1.0, 2.0, -1.5, 5.0])
def test_closed_forms_agree_with_quadrature_at_every_gain(name, gain):
    assert isometry_strength_closed_form(name, gain) == pytest.approx(
        isometry_strength(name, gain=gain), abs=1e-9
    )


@pytest.mark.parametrize("name", sorted(HERMITE_TABLE))
def test_hermite_coefficients_match_the_reference_table(name):
    np.testing.assert_allclose(hermite_coefficients(name, k_max=6), HERMITE_TABLE[name], atol=TOLERANCE)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_hermite_polynomials_have_a_single_normalised_coefficient(degree):
    # He_k^{prob} = √(k!) · He_k (orthonormal), so its only coefficient is c_k = √(k!).
    expected = np.zeros(6)
    expected[degree] = math.sqrt(math.factorial(degree))
    np.testing.assert_allclose(hermite_coefficients(f"he{degree}", k_max=5), expected, atol=1e-10)


def test_parseval_the_coefficients_sum_to_the_variance():
    coefficients = hermite_coefficients("sin", k_max=30)
    variance = coefficients[1] ** 2 / (2 - isometry_strength("sin"))
    assert (coefficients[1:] ** 2).sum() == pytest.approx(variance, rel=1e-10)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_strength_lies_between_one_and_two(name):
    assert 1.0 - 1e-12 <= isometry_strength(name) <= 2.0 + 1e-12


@pytest.mark.parametrize("gain", [0.5, 2.0, 7.0])
def test_sigmoid_is_an_affine_tanh_at_half_the_gain(gain):
    assert isometry_strength("sigmoid", gain=gain) == pytest.approx(isometry_strength("tanh", gain=gain / 2))


@pytest.mark.parametrize("name", ["relu", "tanh", "sin"])
def test_monte_carlo_agrees_with_quadrature_within_its_standard_error(name):
    seeds, n_samples = range(12), 50_000
    betas = np.array(
        [isometry_strength(name, method="monte_carlo", n_samples=n_samples, seed=s) for s in seeds]
    )
    c1 = np.array(
        [hermite_coefficients(name, 1, method="monte_carlo", n_samples=n_samples, seed=s)[1] for s in seeds]
    )
    for estimates, exact in ((betas, isometry_strength(name)), (c1, hermite_coefficients(name, 1)[1])):
        standard_error = estimates.std(ddof=1) / math.sqrt(len(estimates))
        assert abs(estimates.mean() - exact) < 4 * standard_error + 1e-12


def test_monte_carlo_is_reproducible_per_seed():
    first = isometry_strength("tanh", method="monte_carlo", n_samples=10_000, seed=3)
    assert isometry_strength("tanh", method="monte_carlo", n_samples=10_000, seed=3) == first
    assert isometry_strength("tanh", method="monte_carlo", n_samples=10_000, seed=4) != first


def test_accepts_numpy_and_torch_callables():
    assert isometry_strength(np.tanh) == pytest.approx(isometry_strength("tanh"), abs=1e-14)
    assert isometry_strength(torch.tanh) == pytest.approx(isometry_strength("tanh"), abs=1e-14)


def test_registry_activations_work_on_numpy_and_torch():
    x = np.linspace(-3, 3, 13)
    for activation in ACTIVATIONS.values():
        from_numpy = activation(x)
        assert isinstance(from_numpy, np.ndarray)
        np.testing.assert_allclose(from_numpy, activation(torch.from_numpy(x)).numpy())
    np.testing.assert_array_equal(ACTIVATIONS["step"](np.array([-1.0, 0.0, 2.0])), [0.0, 0.0, 1.0])


def test_bad_inputs_are_rejected_with_the_cause():
    with pytest.raises(ValueError, match="unknown activation"):
        isometry_strength("swish2")
    with pytest.raises(ValueError, match="unknown method"):
        isometry_strength("relu", method="simpson")
    with pytest.raises(ValueError, match="constant"):
        isometry_strength("relu", gain=0.0)
    with pytest.raises(ValueError, match="gain 0"):
        isometry_strength_closed_form("relu", gain=0.0)
    with pytest.raises(ValueError, match="no closed form"):
        isometry_strength_closed_form("tanh")
    with pytest.raises(NonFiniteActivationError, match="not finite"):
        isometry_strength("exp", gain=30.0)
    with pytest.raises(ValueError, match="elementwise"):
        isometry_strength(lambda x: x.sum())
    with pytest.raises(ValueError, match="k_max"):
        hermite_coefficients("relu", k_max=-1)
