"""joudaki2023 Tables 2, B.1, Fig. B.1 (β estimators side by side) and the Fig. 1 schematic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from isonorm.experiments.joudaki2023 import schematic, strengths, strengths_summaries

SMALL = {"monte_carlo_samples": 20_000, "seed": 0}


def test_table2_puts_closed_form_quadrature_and_monte_carlo_side_by_side():
    frame = strengths.isometry_strengths({**SMALL, "activations": ["he1", "he2", "sin", "rbf", "step", "relu"],
                                          "gains": [1.0]})
    assert list(frame.activation) == ["he1", "he2", "sin", "rbf", "step", "relu"]
    assert np.allclose(frame.closed_form, frame.quadrature, atol=1e-9)
    assert (frame.beta == frame.closed_form).all()
    # 20k samples: the Monte Carlo estimate is within a few standard errors, not exact
    assert np.allclose(frame.monte_carlo, frame.closed_form, atol=0.1)
    assert (frame.beta.between(1, 2)).all()


def test_activation_without_closed_form_falls_back_to_quadrature():
    frame = strengths.isometry_strengths({**SMALL, "activations": ["tanh"], "gains": [0.5, 2.0]})
    assert frame.closed_form.isna().all()
    assert (frame.beta == frame.quadrature).all()
    assert frame.beta.iloc[0] < frame.beta.iloc[1]  # a larger gain makes tanh less linear


def test_figb1_gain_grid_hits_the_printed_gains_exactly():
    frame = strengths.isometry_strengths({**SMALL, "monte_carlo_samples": 1000, "activations": ["relu"],
                                          "gains": {"start": 0.1, "stop": 10.0, "step": 0.1}})
    assert len(frame) == 99
    assert {0.5, 1.0, 2.0, 3.0, 5.0, 9.9} <= set(frame.gain)
    assert np.allclose(frame.beta, frame.beta.iloc[0])  # ReLU is positively homogeneous


def test_strength_claims_name_activation_and_gain(tmp_path):
    frame = strengths.isometry_strengths({**SMALL, "activations": ["sin", "relu"], "gains": [0.5, 1.0]})
    path = tmp_path / "tableb1.parquet"
    frame.to_parquet(path)
    out = strengths_summaries.claims({"tableb1": [str(path)]}, {})
    assert set(out["joudaki2023-tableb1"]) == {"beta_sin_a0.5", "beta_sin_a1", "beta_relu_a0.5", "beta_relu_a1",
                                   "closed_form_equals_quadrature"}
    assert out["joudaki2023-tableb1"]["closed_form_equals_quadrature"] == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_two_vector_isometry_is_the_normalised_parallelogram_area(seed):
    a, b = np.random.default_rng(seed).normal(size=(2, 2))
    la, lb = np.linalg.norm(a), np.linalg.norm(b)
    area = abs(a[0] * b[1] - a[1] * b[0])  # = la·lb·sinθ
    assert math.isclose(schematic.vectors_isometry(np.stack([a, b])), area / ((la**2 + lb**2) / 2), rel_tol=1e-9)


def test_schematic_rows_are_low_and_perfect_isometry():
    for vectors in (schematic.PLANE_VECTORS, schematic.SPACE_VECTORS):
        assert schematic.vectors_isometry(vectors["low"]) < 0.5
        assert math.isclose(schematic.vectors_isometry(vectors["high"]), 1.0)
    fig = schematic.isometry_schematic()
    assert len(fig.axes) == 4
