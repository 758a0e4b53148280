"""Drawing helpers of the daneshmand2021 page (``notebooks/daneshmand2021.py``): the paper's two colours, the line
plots that set variants against each other (Figs. 1, 2a, 5, App. Fig. 7), the gap-and-loss twin axes (Figs. 4a,
4b), the panels of Fig. 3, and the two items each of App. Figs. 6 and 7, which differ only in the part of the
results they show. Captions take every setting from the config section the notebook passes (``page.cfg``) or from
the results' own columns. The notebook passes the results in; nothing here imports ``isonorm.experiments``.
"""

from __future__ import annotations

from typing import Any, Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..notebook import CI, NOT_RUN, ItemRenderer

# The paper's colours [code]: BN, and the orthogonalising inits, red; vanilla and Xavier blue.
BN_RED, VANILLA_BLUE = "tab:red", "tab:blue"
PAPER_CURVE_BLUE = "tab:blue"  # Fig. 3's curve d = (n - 28)^1.8, blue in the paper

# Every line plot of the page is this size but the twin-axis ones, whose right axis needs the room.
SIZE, TWIN_SIZE = (4.5, 3.2), (4.8, 3.2)
# Legend names of the results' variants, as the authors' figures write them (App. Figs. 6 and 7).
NORM_NAMES = {"batchnorm": "batchnorm", "none": "vanilla"}
INIT_NAMES = {"xavier": "xavier", "svd": "orthogonal"}


def mean_ci(runs: int) -> str:
    """The caption's sentence for a curve drawn with the band ``CI``: its level is the library's."""
    return f"Mean and {CI['errorbar'].keywords['level']:g}% CI of {runs} runs."


def variant_lines(data: pd.DataFrame, x: str, y: str, hue: str, palette: Any, markers: Any, xlabel: str,
                  ylabel: str) -> Figure:
    """One curve of ``y`` against ``x`` per value of ``hue`` (colour and marker), mean and band ``CI``."""
    fig, ax = plt.subplots(figsize=SIZE)
    sns.lineplot(data=data, x=x, y=y, hue=hue, style=hue, markers=markers, dashes=False, palette=palette, ax=ax,
                 **CI)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    return fig


def gap_and_loss(gap: pd.DataFrame, loss: pd.DataFrame, x: str, xlabel: str, gap_label: str,
                 loss_label: str) -> Figure:
    """Figs. 4a and 4b: the spectral orthogonality gap (red, left axis) and the training loss (blue, right axis)
    against ``x``, each the mean and band ``CI`` over runs."""
    fig, ax = plt.subplots(figsize=TWIN_SIZE)
    sns.lineplot(data=gap, x=x, y="spectral_gap", marker="o", color=BN_RED, ax=ax, **CI)
    ax.set(xlabel=xlabel, ylabel=gap_label)
    ax.yaxis.label.set_color(BN_RED)
    ax2 = ax.twinx()
    sns.lineplot(data=loss, x=x, y="train_loss", marker="s", color=VANILLA_BLUE, ax=ax2, **CI)
    ax2.set_ylabel(loss_label, color=VANILLA_BLUE)
    ax2.grid(False)
    return fig


def a1_figure(images: Mapping[str, pd.DataFrame], curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
              curve_label: str) -> Figure:
    """Fig. 3: one panel per reading of the batch axis (``images``: title -> image), side by side on one width axis,
    each with the paper's curve (``curves``: title -> its pixel coordinates)."""
    fig, axes = plt.subplots(1, len(images), figsize=(10, 3.8), sharey=True, squeeze=False)
    for ax, (title, image) in zip(axes[0], images.items()):
        a1_panel(ax, image, curves[title], title, curve_label)
    axes[0, 0].set_ylabel("d (width)")
    return fig


def a1_panel(ax: Axes, image: pd.DataFrame, curve: tuple[np.ndarray, np.ndarray], title: str,
             curve_label: str) -> None:
    """One reading of Fig. 3: white where A1 held in every run, black where it failed, grey where nothing was
    simulated (``image``: widths down, batch labels across), and the paper's curve in pixel coordinates."""
    cells = np.ma.masked_invalid(image.to_numpy(dtype=float))
    ax.imshow(cells, cmap=plt.get_cmap("gray").with_extremes(bad="tab:gray"), vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(image.shape[1]), image.columns, rotation=90)
    ax.set_yticks(range(image.shape[0]), image.index)
    ax.grid(False)
    ax.plot(*curve, color=PAPER_CURVE_BLUE, lw=2, label=curve_label)
    ax.set(xlabel="n (batch size)", title=title)
    ax.legend(loc="lower right", fontsize=7)


def appfig6_item(render: ItemRenderer, item: str, layers: pd.DataFrame | None, arch: str, title: str,
                 cfg: Mapping[str, Any]) -> None:
    """App. Fig. 6a (``arch`` "mlp") or 6b ("convnet"): V at the input of each layer of one random network with
    and without BN, ±1 SD across batches (decision B9); not run when ``layers`` has no row of ``arch``.
    ``cfg``: the ``appfig6`` section."""
    rows = None if layers is None else layers[layers.arch == arch]
    if rows is None or rows.empty:
        render.not_run(item, NOT_RUN)
        return
    fig, ax = plt.subplots(figsize=SIZE)
    sns.lineplot(data=rows.assign(Normalization=rows.norm.map(NORM_NAMES)), x="layer", y="orthogonality_gap",
                 hue="Normalization", errorbar="sd", ax=ax)
    ax.set(xlabel="ℓ", ylabel="V(H_ℓ)", ylim=(0, 1.1), xlim=(1, rows.layer.max()),
           title=f"BN vs. Vanilla in {title}")
    render.figure(
        fig, item,
        f"V at the input of each layer of one random ReLU {title} with and without batch normalization, over "
        f"{rows.batch.nunique()} batches of {cfg['batch_size']} CIFAR-10 images. Band: ±1 SD across batches.",
        deviations=f"As coded (decision B9): transform `{cfg['transform']}` (the code's MNIST normalisation "
                   "constants on CIFAR-10), torch BatchNorm in training mode (with mean subtraction), "
                   f"{cfg['padding_mode']} padding for the ConvNet, one network for all batches.",
    )


def appfig7_item(render: ItemRenderer, item: str, losses: pd.DataFrame | None, panel: int,
                 cfg: Mapping[str, Any]) -> None:
    """App. Fig. 7a (``panel`` 0) or 7b (1): training loss per epoch of the ConvNet with the ``panel``-th smallest
    number of extra layers in ``losses``, Xavier against SVD-based init (decision B10); not run when the results
    have no such panel. ``cfg``: the ``appfig7`` section."""
    extras = [] if losses is None else sorted(losses.extra_layers.unique())
    if panel >= len(extras):
        render.not_run(item, NOT_RUN)
        return
    extra = extras[panel]
    rows = losses[losses.extra_layers == extra].assign(init=lambda f: f.init.map(INIT_NAMES))
    fig = variant_lines(rows[rows.epoch >= 1], "epoch", "train_loss", "init", markers=["s", "o"],
                        palette={"xavier": VANILLA_BLUE, "orthogonal": BN_RED}, xlabel="Epochs",
                        ylabel="Training loss")
    render.figure(
        fig, item,
        f"AlexNet-style CIFAR-10 ConvNet with {extra} extra same-width conv layers: Xavier vs SVD-based "
        f"('orthogonal') init. {mean_ci(rows.run.nunique())}",
        deviations=f"As coded (decision B10): transform `{cfg['transform']}` (the code does not normalise its "
                   f"inputs), Σ^−1/2 in the conv init, SGD lr {cfg['lr']}, batch {cfg['batch_size']}.",
    )
