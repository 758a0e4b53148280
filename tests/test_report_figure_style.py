"""One figure style (isonorm.report.figure_style): every figure ends at the page column's width, its text readable."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from isonorm.report.figure_style import COLUMN_IN, MAX_HEIGHT_IN, MIN_TEXT_SCALE, fit_to_column


def labelled(width: float, height: float):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("depth", fontsize=10)
    return fig, ax


def test_a_narrow_figure_is_widened_with_its_text_unchanged():
    fig, ax = labelled(4.0, 2.0)
    assert fit_to_column(fig) == pytest.approx(COLUMN_IN / 4.0)
    width, height = fig.get_size_inches()
    assert width == pytest.approx(COLUMN_IN) and height == pytest.approx(COLUMN_IN / 2)  # grows with it
    assert ax.xaxis.label.get_fontsize() == 10
    plt.close(fig)
    tall, _ = labelled(4.0, 4.0)
    fit_to_column(tall)
    assert tall.get_size_inches()[1] == pytest.approx(MAX_HEIGHT_IN)  # up to the cap, never shorter than drawn
    plt.close(tall)


def test_a_wide_figure_is_narrowed_and_its_text_scaled_no_further_than_the_floor():
    fig, ax = labelled(15.0, 4.0)
    fit_to_column(fig)
    width, height = fig.get_size_inches()
    assert width == pytest.approx(COLUMN_IN) and height == pytest.approx(2.0)
    assert ax.xaxis.label.get_fontsize() == pytest.approx(10 * MIN_TEXT_SCALE)
    plt.close(fig)
    fig, ax = labelled(COLUMN_IN / 0.9, 3.0)
    fit_to_column(fig)
    assert ax.xaxis.label.get_fontsize() == pytest.approx(9.0)  # the drawn proportions, above the floor
    plt.close(fig)


def test_the_axes_are_packed_again_inside_the_new_size():
    fig, ax = labelled(15.0, 4.0)
    fig.subplots_adjust(left=0.0, bottom=0.0)  # a layout that cuts the labels off
    fit_to_column(fig)
    fig.canvas.draw()
    label = ax.xaxis.label.get_window_extent()
    assert label.y0 >= 0 and ax.get_position().y0 > 0.05
    plt.close(fig)
