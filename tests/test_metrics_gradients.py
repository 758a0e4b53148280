"""Gradient log-norms (metrics M3) and the rate of explosion (metrics M4, decision C6)."""

from __future__ import annotations

import math

import pytest
import torch

from isonorm.metrics import explosion_rate, grad_log_norm


def test_grad_log_norm_is_log_frobenius_norm_per_batch_entry():
    grads = torch.randn(3, 5, 4, generator=torch.Generator().manual_seed(0))
    result = grad_log_norm(grads)
    assert result.dtype == torch.float64 and result.shape == (3,)
    for grad, value in zip(grads, result):
        assert value.item() == pytest.approx(math.log(math.sqrt(float((grad.double() ** 2).sum()))))
    assert grad_log_norm(torch.zeros(2, 2)).item() == -math.inf


def test_rate_recovers_the_slope_of_gradients_growing_toward_the_input():
    slope, depth = 0.03, 60
    layers = torch.arange(depth, dtype=torch.float64)
    log_norms = 5.0 - slope * layers  # fc_0 (input side) has the largest gradient
    rates = explosion_rate(log_norms)
    assert rates.shape == log_norms.shape
    assert torch.isnan(rates[:10]).all()
    torch.testing.assert_close(rates[10:], torch.full((depth - 10,), slope, dtype=torch.float64))
    assert (explosion_rate(-log_norms)[10:] < 0).all()  # shrinking toward the input: negative rate


def test_rate_uses_the_requested_gap_and_batches():
    log_norms = torch.randn(4, 30, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    rates = explosion_rate(log_norms, gap=3)
    assert rates[2, 7].item() == pytest.approx((log_norms[2, 4] - log_norms[2, 7]).item() / 3)
    looped = torch.stack([explosion_rate(row, gap=3) for row in log_norms])
    torch.testing.assert_close(rates, looped, equal_nan=True)


@pytest.mark.parametrize("gap", [0, 10, 11])
def test_rate_rejects_a_gap_without_partner_layers(gap):
    with pytest.raises(ValueError, match="gap"):
        explosion_rate(torch.zeros(10), gap=gap)
