"""The daneshmand2021 page's helpers (isonorm.report.pages.daneshmand2021) and the Fig. 3 reductions it draws
(paper_summaries.a1_image, a1_curve_pixels): captions take their settings from the config and the results, each item
is rendered under the id the notebook names, and the paper's curve lands on the right pixels."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

import isonorm.report.notebook as notebook
from isonorm.experiments.daneshmand2021 import paper_summaries
from isonorm.report.notebook import CI, ItemRenderer
from isonorm.report.pages import daneshmand2021 as page


@pytest.fixture
def render(tmp_path, monkeypatch):
    monkeypatch.setattr(notebook, "display", lambda obj: None)
    return ItemRenderer("daneshmand2021", tmp_path, None, None, preset="quick")


def test_mean_ci_states_the_bands_level():
    assert page.mean_ci(4) == f"Mean and {CI['errorbar'].keywords['level']:g}% CI of 4 runs."
    assert "95%" in page.mean_ci(4)


def test_appfig7_panels_take_their_extra_layers_from_the_results_and_lr_batch_from_the_config(render):
    losses = pd.DataFrame([
        {"run": run, "epoch": epoch, "train_loss": 2.0 - 0.1 * epoch, "init": init, "extra_layers": extra}
        for run in (0, 1) for epoch in (1, 2) for init in ("xavier", "svd") for extra in (1, 2)
    ])
    cfg = {"lr": 0.125, "batch_size": 17, "transform": "to_tensor"}
    page.appfig7_item(render, "daneshmand2021-appfig7a", losses[losses.extra_layers == 2], 0, cfg)
    page.appfig7_item(render, "daneshmand2021-appfig7b", losses[losses.extra_layers == 2], 1, cfg)
    html = render.rendered["daneshmand2021-appfig7a"]
    assert "with 2 extra same-width conv layers" in html and "of 2 runs" in html
    assert "SGD lr 0.125, batch 17" in html and "`to_tensor`" in html
    assert 'class="item not-run"' in render.rendered["daneshmand2021-appfig7b"]  # one panel only: 7b not run


def test_appfig6_items_split_the_results_by_architecture(render):
    layers = pd.DataFrame([
        {"arch": "mlp", "norm": norm, "batch": batch, "layer": layer, "orthogonality_gap": 0.5}
        for norm in ("batchnorm", "none") for batch in range(3) for layer in (1, 2, 3)
    ])
    cfg = {"batch_size": 8, "transform": "mnist_constants", "padding_mode": "reflect"}
    page.appfig6_item(render, "daneshmand2021-appfig6a", layers, "mlp", "MLP", cfg)
    page.appfig6_item(render, "daneshmand2021-appfig6b", layers, "convnet", "ConvNet", cfg)
    html = render.rendered["daneshmand2021-appfig6a"]
    assert "over 3 batches of 8 CIFAR-10 images" in html and "reflect padding" in html
    assert 'class="item not-run"' in render.rendered["daneshmand2021-appfig6b"]


def test_a1_image_puts_wide_rows_first_and_leaves_unsimulated_labels_empty():
    grid = pd.DataFrame([
        {"batch": n, "width": d, "run": run, "holds": d >= 2 * n}
        for n in (4, 6) for d in (8, 16) for run in (0, 1)
    ])
    image = paper_summaries.a1_image(grid, batch_offset=2, batches=[4, 6, 8])  # simulated 4, 6 shown as 6, 8
    assert list(image.index) == [16, 8] and list(image.columns) == [4, 6, 8]
    assert image[4].isna().all()  # 4 - 2 = 2 was not simulated: grey
    assert image.loc[8, 6] and not image.loc[8, 8]


def test_the_paper_curve_in_pixels_follows_its_formula():
    widths = [2 ** k for k in range(5, 13)]
    image = pd.DataFrame(True, index=widths[::-1], columns=list(range(30, 91, 4)))
    col, row = paper_summaries.a1_curve_pixels(image)
    assert col.size and np.all(np.diff(col) > 0) and np.all(np.diff(row) < 0)  # rises to the top as n grows
    # back from pixels to (n, d): every point lies on d = (n - 28)^1.8
    n = np.interp(col, range(image.shape[1]), image.columns)
    d = 2.0 ** np.interp(image.shape[0] - 1 - row, range(len(widths)), np.log2(widths))
    np.testing.assert_allclose(d, paper_summaries.a1_curve(n), rtol=1e-9)
    assert paper_summaries.A1_CURVE_LABEL == "d = (n − 28)^1.8"
