"""Helpers of ``notebooks/meterez2024.py`` that several of its items share: the depth plots of the at-init items, the accuracy and per-layer panels
of the training grid, and the caption parts that describe a network, its inputs and its runs.

Every setting a caption names is read from ``cfg``, the run's ``meterez2024:`` section of config.yaml, or from the
results' own columns, never written here as a number; what stays written out is the paper's own text (and its
epoch count, ``PAPER_EPOCHS``, which a test checks against config.yaml) and fixed properties of this project's
code. The summaries (``isonorm.experiments.meterez2024``) stay in the notebook, which passes their counts and
frames in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..notebook import CI, NOT_RUN, ItemRenderer

Config = Mapping[str, Any]

GRAD_LABEL = r"$\log\|\nabla_{W_1}\mathcal{L}\|_F$"  # C.0 "Axis label"; mathtext, not LaTeX (C14)
CI_LEVEL = CI["errorbar"].keywords["level"]  # the level of every band (isonorm.report.notebook.CI)
# The paper trains every network for 10³ epochs (meterez2024-fig4, decision C5); a run with fewer says so.
# tests/test_report_pages_meterez2024.py checks it against config.yaml's default, the paper preset.
PAPER_EPOCHS = 1000

# Display names of the config's values (a name not listed is shown as written).
DATASETS = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "mnist": "MNIST", "fashionmnist": "FashionMNIST"}
TRANSFORMS = {"to_tensor": "ToTensor without Normalize",  # isonorm.data.preprocess
              "dataset_constants": "ToTensor + Normalize with the {dataset} statistics"}
INITS = {"orthogonal": "orthogonal", "xavier_normal": "Xavier-normal (torch's gain for the activation)"}


def first(frame: pd.DataFrame, column: str) -> Any:
    return frame[column].iloc[0]


def run_count(frame: pd.DataFrame) -> int:
    return int(frame["run"].max()) + 1


def runs_text(frame: pd.DataFrame) -> str:
    """"mean and 95 % CI of 10 runs": the band of every at-init curve."""
    return f"mean and {CI_LEVEL:g} % CI of {run_count(frame)} runs"


def dropped(nonfinite: int) -> str:
    """The caption's count of the values left out of a plot (decision C11)."""
    if nonfinite:
        return f"{nonfinite} non-finite value(s) (float32 overflow or singular Gram) left out (C11)."
    return "No non-finite values."


def listing(names: Iterable[Any]) -> str:
    """"identity, sin and tanh"."""
    names = [str(name) for name in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def signed(value: float) -> str:
    """A number with a typographic minus, one decimal: −0.4."""
    return f"{value:.1f}".replace("-", "−")


def transform_text(transform: str, dataset: str) -> str:
    return TRANSFORMS.get(transform, transform).format(dataset=DATASETS.get(dataset, dataset))


def norm_text(spec: Config) -> str:
    """The normalisation of a model's settings (a config ``model`` or a results row), C.0 "Normalisation"."""
    if spec["norm"] == "torch_bn":
        return "torch BatchNorm1d"
    if spec["norm"] != "bn":
        return str(spec["norm"])
    force = spec.get("force_factor")
    f = "√n" if force is None or math.isnan(force) else f"{force:g}"
    mean = "mean reduction" if spec["mean_reduction"] else "no mean reduction"
    if not spec["mean_reduction"] and force == 1:  # eq. 4: X_ij/√(Σ_k X_ik²)
        return f"the paper's Bn (eq. 4: {mean}, f = {f})"
    return f"custom BN ({mean}, f = {f})"


def model_text(spec: Config, skip: Sequence[str] = ()) -> str:
    """"linear BN-MLP with orthogonal weights, the paper's Bn (…) and no bias": the settings of a model (a config
    ``model``, the ``training:`` section or a results row) except those in ``skip``, which vary in the figure."""
    linear = "activation" not in skip and spec["activation"] == "identity"
    parts = []
    if "init" not in skip:
        parts.append(f"{INITS.get(spec['init'], spec['init'])} weights")
    if "norm" not in skip:
        parts.append(norm_text(spec))
    parts.append("biases" if spec["bias"] else "no bias")
    return f"{'linear ' if linear else ''}BN-MLP with {listing(parts)}"


def sample_text(frame: pd.DataFrame) -> str:
    """"width 100, batch 100; mean and 95 % CI of 10 runs": the size of an at-init item's networks and runs."""
    return f"width {first(frame, 'width')}, batch {first(frame, 'batch_size')}; {runs_text(frame)}"


def grad_text(frame: pd.DataFrame) -> str:
    """"log‖∇W_1 L‖_F (fc_1)": the gradient an item records (decision C9), from its rows' ``layer``."""
    layer = int(frame.loc[frame["metric"] == "log_grad", "layer"].iloc[0])
    return f"log‖∇W_{layer} L‖_F (fc_{layer})"


def rate_text(gap: int, layer: int | None = None) -> str:
    """The rate of explosion R (decision C6) over ``gap`` layers, at ``layer`` or as a function of ℓ."""
    if layer is None:
        return f"R(ℓ) = (log‖∇W_(ℓ−{gap})‖ − log‖∇W_ℓ‖)/{gap}"
    return f"R({layer}) = (log‖∇W_{layer - gap}‖ − log‖∇W_{layer}‖)/{gap}"


def at_init_note(frame: pd.DataFrame, transform: str, nonfinite: int | None = None) -> str:
    """The inputs and runs shared by every at-init item (``transform``: the item's ``at_init: transform``), then
    the count of ``nonfinite`` values left out of its plot when given."""
    dataset = first(frame, "dataset")
    note = (f"One seeded {DATASETS.get(dataset, dataset)} train batch ({transform_text(transform, dataset)}) "
            "shared by all runs and depths (C12); weights reseeded per run (C13); float32 networks (C11).")
    return note if nonfinite is None else f"{note} {dropped(nonfinite)}"


def training_setup(training: Config) -> str:
    """The settings of every training-grid run, from the ``training:`` section (C3, C4, C15)."""
    return (f"width {training['width']}, batch {training['batch_size']}, SGD lr {training['lr']:g}, "
            f"{model_text(training, skip=('activation',))} (C4), gain exponent {training['gain_exponent']:g} (C3), "
            f"BN running stats updated by the measurement (C15 faithful: {not training['measure_on_copy']}); "
            "one run per configuration")


def stopped_note(stopped: int) -> str:
    """``stopped``: the runs stopped on a non-finite loss (``training_summaries.stopped_runs``), C11."""
    return f"{stopped} run(s) stopped on a non-finite loss (C11)" if stopped else "no run stopped on a non-finite loss"


def train_test_caption(dataset: str, setup: str, stopped: str) -> str:
    """Figs. G1–G3: ``setup`` from :func:`training_setup`, ``stopped`` from :func:`stopped_note`."""
    return (f"{DATASETS.get(dataset, dataset)}: running train accuracy (top) and eval-mode test accuracy (bottom, "
            f"BN running statistics). {setup}; {stopped}.")


# Figs. G1–G3's method, folded under the caption (C17).
IDENTITY_COLLAPSE = ("The identity networks' test-accuracy collapse at large depth (the paper's at depth ≥ 500) is "
                     "expected (C17) and not masked.")


def epoch_deviations(last_epoch: int) -> list[str]:
    return ["epochs per preset (C5): plots show whatever epochs exist"] if last_epoch < PAPER_EPOCHS else []


# --- figures -------------------------------------------------------------------------------------------------


def sns_fig(width: float, height: float = 2.0, ncols: int = 1) -> tuple[Figure, Any]:
    """A row of ``ncols`` at-init panels, in the originals' proportions (C.0: 4 × 2 in for one panel, 6.5 × 2 in
    for two)."""
    return plt.subplots(1, ncols, figsize=(width, height), squeeze=False)


def legend_right(ax: Axes, title: str | None, top: bool = False) -> None:
    """The originals' frameless legend outside the right edge, centred (at init) or at the top (training)."""
    where = dict(loc="upper left", bbox_to_anchor=(1, 1)) if top else dict(loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.legend(title=title, frameon=False, **where)


def ci_lines(ax: Axes, data: pd.DataFrame, x: str, hue: str, **kwargs: Any) -> None:
    """Mean ± CI over runs of ``value`` against ``x``, one line per ``hue`` value, marker '.'."""
    sns.lineplot(data=data.dropna(subset=["value"]), x=x, y="value", hue=hue, marker=".", palette="tab10", ax=ax,
                 **kwargs, **CI)


def depth_plot(ax: Axes, frame: pd.DataFrame, hue: str, order: Sequence[Any] | None = None,
               labels: Mapping[Any, str] | None = None, y_label: str = GRAD_LABEL, log_y: bool = False,
               legend_title: str | None = None) -> None:
    """Mean ± CI over runs vs depth (log x, as the PDF), one line per ``hue`` value, marker '.'."""
    data = frame.assign(curve=frame[hue].map(labels) if labels else frame[hue].astype(str))
    order = [labels[h] if labels else str(h) for h in (order or list(dict.fromkeys(frame[hue])))]
    ci_lines(ax, data, "depth", "curve", hue_order=order)
    ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("Depth")
    ax.set_ylabel(y_label)
    if ax.get_legend() is not None:
        legend_right(ax, legend_title)


def depth_figure(frame: pd.DataFrame, hue: str, order: Sequence[Any], labels: Mapping[Any, str],
                 legend_title: str, y_label: str = GRAD_LABEL) -> Figure:
    """One panel of :func:`depth_plot`, the log-gradient rows of ``frame`` (Figs. 2, 3, G6)."""
    fig, axes = sns_fig(4.0)
    depth_plot(axes[0, 0], frame[frame["metric"] == "log_grad"], hue, order, labels, y_label=y_label,
               legend_title=legend_title)
    return fig


def rate_panels(rates: pd.DataFrame, x: str, hue: str, x_label: str, y_label: str, legend_title: str,
                fits: pd.DataFrame | None = None) -> Figure:
    """Figs. E1, E2: one panel per activation of the rate rows against ``x``, one line per ``hue`` value;
    ``fits`` (activation → c1, c2) adds the black dashed c1·x^c2 of Fig. E1."""
    acts = list(dict.fromkeys(rates["activation"]))
    fig, axes = sns_fig(6.5, ncols=len(acts))
    for ax, act in zip(axes[0], acts):
        part = rates[rates["activation"] == act].dropna(subset=["value"])
        ci_lines(ax, part, x, hue)
        if fits is not None:
            xs = np.array(sorted(part[x].unique()), dtype=float)
            ax.plot(xs, fits.loc[act, "c1"] * xs ** fits.loc[act, "c2"], "k--.", label=r"$c_1\alpha^{c_2}$")
        ax.set_title(act)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        legend_right(ax, legend_title)
    for ax in axes[0][:-1]:
        ax.get_legend().remove()
    fig.tight_layout()
    return fig


def accuracy_axes(axes: Sequence[Axes], curves: pd.DataFrame, metric: str, activations: Sequence[str]) -> None:
    """One panel per activation: ``metric`` against the epoch (log x), one line per depth."""
    for ax, act in zip(axes, activations):
        for depth, part in curves[curves["activation"] == act].groupby("depth"):
            ax.plot(part["epoch"], part[metric], label=str(depth))
        ax.set_xscale("log")


def accuracy_figure(curves: pd.DataFrame, metrics: Sequence[str], activations: Sequence[str]) -> Figure:
    """Figs. 4, G1–G4: a row of activation panels per metric (``train_acc``, ``test_acc``)."""
    fig, axes = plt.subplots(len(metrics), len(activations), figsize=(6.5, 2 * len(metrics)), squeeze=False,
                             sharey=len(metrics) == 1, sharex=len(metrics) > 1)
    for row, metric in zip(axes, metrics):
        accuracy_axes(row, curves, metric, activations)
        row[0].set_ylabel(metric.replace("_acc", " accuracy").capitalize())
    for ax, act in zip(axes[0], activations):
        ax.set_title(act)
    if len(metrics) == 1:
        for ax in axes[-1]:
            ax.set_xlabel("Epoch")
    legend_right(axes[0][-1], "Depth", top=True)
    return fig


def last_epoch(curves: pd.DataFrame) -> int:
    """The last epoch a figure's curves reach (0 when there are none)."""
    return int(curves["epoch"].max()) if len(curves) else 0


def accuracy_item(render: ItemRenderer, item: str, curves: pd.DataFrame, metrics: Sequence[str],
                  activations: Sequence[str], caption: str, deviations: Sequence[str] = (),
                  method: str | None = None) -> None:
    """Figs. 4, G1–G4: :func:`accuracy_figure` of ``curves`` under ``item``, or "not run" when they are empty."""
    if curves.empty:
        render.not_run(item, NOT_RUN)
    else:
        render.figure(accuracy_figure(curves, metrics, activations), item, caption, deviations=list(deviations),
                      method=method)


def profile_axes(ax: Axes, profile: pd.DataFrame, title: str) -> None:
    """Per-layer values (log y), one line per measured epoch (Figs. 6, F1, F2)."""
    for epoch, part in profile.groupby("epoch"):
        ax.plot(part["layer"], part["value"], label=str(epoch))
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(r"$\ell$")


def profile_item(render: ItemRenderer, item: str, profile: pd.DataFrame, activations: Sequence[str], y_label: str,
                 caption: str, nonfinite: int) -> None:
    """Figs. F1, F2: :func:`profile_grid` of ``profile`` under ``item``, or "not run" when it is empty; the caption
    ends with where the profiles were measured and the ``nonfinite`` values dropped (C11)."""
    if profile.empty:
        render.not_run(item, NOT_RUN)
    else:
        render.figure(profile_grid(profile, activations, y_label), item,
                      f"{caption}; measured on one fixed training batch after each epoch; {nonfinite} non-finite "
                      "point(s) dropped (C11).")


def profile_grid(profile: pd.DataFrame, activations: Sequence[str], y_label: str) -> Figure:
    """Figs. F1, F2: a row per depth of ``profile``, a column per activation."""
    depths = sorted(profile["depth"].unique())
    fig, axes = plt.subplots(len(depths), len(activations), figsize=(6.5, 2 * len(depths)), squeeze=False)
    for row, depth in zip(axes, depths):
        for ax, act in zip(row, activations):
            profile_axes(ax, profile[(profile["depth"] == depth) & (profile["activation"] == act)],
                         f"{act}, depth {depth}")
            ax.set_ylabel(y_label)
    legend_right(axes[0][-1], "Epoch", top=True)
    return fig
