"""Helpers of ``notebooks/joudaki2023.py``: what several of its items share (the β tables of Tables 2 and B.1;
the mean-field simulator's line graphs and caption notes, Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2, B.3, decision D4;
the spread of a reading with more runs, decisions D19, D21, D23; the image-MLP panels and notes, Figs. 2, 3, 7,
B.4, B.6, B.7), and the drawing of the items whose panels would make their cell long (Figs. 3, B.2, B.4, B.5).

Every setting a caption names is read from ``cfg``, the run's ``joudaki2023:`` section of config.yaml, from the
settings an item's results were computed with (``PaperPage.settings``: the shared section with the item's own over
it, as its job got them), or from the results' own columns, never written here as a number; what stays written out is the paper's own text and fixed
properties of this project's code. The summaries (``isonorm.experiments.joudaki2023``) stay in the notebook, which
passes their rows, bands and labels in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..notebook import CI

Config = Mapping[str, Any]

CI_TEXT = f"{CI['errorbar'].keywords['level']:g}% CI"
"""How a caption names the band of every line plot (``isonorm.report.notebook.CI``)."""

_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(count: float) -> str:
    """``2000000`` → ``"2·10⁶"`` (a count written as the paper writes it; a count that is not a digit times a
    power of ten is written out with thousands separators)."""
    mantissa, exponent = f"{count:e}".split("e")
    if float(mantissa) != int(float(mantissa)) or int(exponent) < 1:
        return f"{count:,.0f}"
    head = "" if int(float(mantissa)) == 1 else f"{int(float(mantissa))}·"
    return f"{head}10{str(int(exponent)).translate(_SUPERSCRIPTS)}"


def listed(values: Iterable[Any]) -> str:
    """``["relu", "tanh"]`` → ``"relu, tanh"``, in first-seen order."""
    return ", ".join(str(v) for v in dict.fromkeys(values))


# --- Tables 2 and B.1 -------------------------------------------------------------------------------------

STRENGTH_LABELS = {"he1": "He1 = x", "he2": "He2 = x²−1", "sin": "sin(x)", "rbf": "exp(x−2)",
                   "step": "step 1[x>0]", "relu": "ReLU max(x,0)", "exp": "exp(αx)"}


def strength_table(df: pd.DataFrame, with_gain: bool) -> pd.DataFrame:
    """β per activation (and gain): closed form, quadrature and Monte Carlo with its sample count (decision D8)."""
    out = pd.DataFrame({"σ": df.activation.map(lambda a: STRENGTH_LABELS.get(a, a))})
    if with_gain:
        out["α"] = df.gain
    out["β closed form"] = df.closed_form
    out["β quadrature"] = df.quadrature
    out[f"β Monte Carlo ({df.monte_carlo_samples.iloc[0]:.0e} samples)"] = df.monte_carlo
    return out


# --- the mean-field simulator ----------------------------------------------------------------------------

D4_NOTE = ("Each point at ℓ ≥ 1 is the mean over pre- and post-normalization rows of all runs (decision D4, as "
           "plot_line_graph).")
# Legend labels of the hue levels (the figures' own formulas): of the centering column, and of one item's hue.
LABELS = {
    "centering": {"layer": "layer: x ← LN(a − ā)", "mf": "MF: x ← LN(a − c0)", "none": "none"},
    "joudaki2023-fig5": {"none": "x ← a − c0 (no normalization)", "layer": "x ← LN(a − c0)"},
    "joudaki2023-fig6": {"layer": "x ← LN(a − c0)", "mf": "x ← (a − c0)/√σ̄(1)"},
    "joudaki2023-fig9": {"mf": "MF normalization", "layer": "LayerNorm"},
    "joudaki2023-fig8b": {True: "LN(σ(Wx))", False: "σ(LN(Wx))"},
}
CENTERINGS = {"layer": "layer centering", "mf": "mean-field centering", "batch": "batch centering",
              "none": "no centering"}
NORMALIZATIONS = {"layer": "LayerNorm", "mf": "mean-field normalization", "batch": "BatchNorm",
                  "none": "no normalization"}


def sim_note(sim: Config) -> str:
    """The numerics of a simulator item from its settings (``PaperPage.settings`` of its results): precisions and
    constants."""
    return (f"Simulation in {sim['dtype']} with Gram eigenvalues in {sim['metric_dtype']} (the originals' float32: "
            f"it decides where diverging curves stop); c0, c1, Eσ² by {sim['constants']} (decision D8; the "
            f"originals used Monte Carlo over {power_of_ten(sim['monte_carlo_samples'])} samples).")


def sim_method(sim: Config) -> str:
    """The method of a line graph of the simulator, folded under its caption: the averaging (D4), then
    ``sim_note``."""
    return f"{D4_NOTE} {sim_note(sim)}"


def runs_of(frame: pd.DataFrame) -> int:
    return int(frame.run.nunique())


def in_words(frame: pd.DataFrame, column: str) -> str:
    """The centerings or normalizations of the results, in words: "layer centering", "LayerNorm or BatchNorm"."""
    words = {"centering": CENTERINGS, "normalization": NORMALIZATIONS}[column]
    return " or ".join(words.get(value, value) for value in dict.fromkeys(frame[column]))


def layer_chain(frame: pd.DataFrame) -> str:
    """What each layer applies after the activation, from the results: "layer centering + LayerNorm"."""
    return f"{in_words(frame, 'centering')} + {in_words(frame, 'normalization')}"


def grid_note(frame: pd.DataFrame, *, width: bool = True, gain: bool = False, bias: bool = False) -> str:
    """The grid of a simulator item, from its results: "n = 10, d = 1000, L = 30, degeneracy 100, 10 runs"."""
    row = frame.iloc[0]
    parts = [f"n = {row.batch}", *([f"d = {row.width}"] if width else []), f"L = {row.depth}",
             f"degeneracy {row.degeneracy:g}", *([f"gain {row.gain:g}"] if gain else []),
             *([f"bias {row.bias:g}"] if bias else []), f"{runs_of(frame)} runs"]
    return ", ".join(parts)


def line_graph(rows, hue, hue_order, labels=None, col="activation", col_order=None, palette=None,
               height=3.0, aspect=1.0, col_titles=None, legend_title="", dashed=(), ncol=None):
    """The originals' plot_line_graph: FacetGrid, lineplot(ℓ, iso gap, marker 'o'), log y, of the ``rows`` a
    line graph averages (``simulation_summaries.line_rows``, decision D4). Hue levels in ``dashed`` (an
    alternative reading, decision D19) are drawn dashed with 'X' markers."""
    rows = rows[rows[hue].isin(hue_order)].copy()
    labels = labels or {h: str(h) for h in hue_order}
    rows["curve"] = rows[hue].map(labels)
    order = [labels[h] for h in hue_order]
    hue_kws = {"linestyle": ["--" if h in dashed else "-" for h in hue_order],
               "marker": ["X" if h in dashed else "o" for h in hue_order],
               "zorder": [1.5 if h in dashed else 2 for h in hue_order]} if dashed else {}  # default on top
    g = sns.FacetGrid(rows, col=col, col_order=col_order, hue="curve", hue_order=order, palette=palette,
                      height=height, aspect=aspect, hue_kws=hue_kws)
    g.map_dataframe(sns.lineplot, x="layer", y="iso_gap", marker="o", **CI)
    g.set(yscale="log")
    g.set_axis_labels("ℓ", "−log I(G^ℓ)")
    g.set_titles(col_template=col_titles or "{col_name}")
    # Below the panels, anchored at the figure's bottom edge, so that the report's layout of the figure keeps it
    # clear of the axes (isonorm.report.figure_style.fit_to_column): one row, or rows of ``ncol`` (a reading
    # beside the default, D19).
    g.tight_layout()
    g.figure.legend([g._legend_data[label] for label in order], order, title=legend_title or None,
                    loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol or len(order), frameon=False)
    return g


def draw_spread(g, bands: Mapping[Any, pd.DataFrame], color, label: str, runs: int, block: int) -> None:
    """Decision D19: a reading's extra runs pooled with the default's. On each panel whose value ``bands`` holds
    (``simulation_summaries.block_bands``): a hatched band over the means of successive blocks of ``block`` runs
    and the mean over all ``runs``, dashed; both named in the legend below the panels (``line_graph(…, ncol=…)``)."""
    for value, ax in g.axes_dict.items():
        band = bands.get(value)
        if band is None:
            continue
        ax.fill_between(band.index, band["min"], band["max"], facecolor="none", edgecolor=color, hatch="////",
                        lw=0, alpha=0.6)  # hatched: not to be confused with the default's bootstrap CI
        ax.plot(band.index, band["mean"].to_numpy(), ls="--", color=color, lw=1.5)
    handles = [Patch(facecolor="none", edgecolor=color, hatch="////", lw=0, alpha=0.6),
               Line2D([], [], ls="--", color=color)]
    names = [f"{label}: range of {runs // block} means of {block} runs", f"{label}: mean of {runs} runs"]
    old = g.figure.legends[0]
    entries = [*old.legend_handles, *handles], [*(t.get_text() for t in old.get_texts()), *names]
    old.remove()
    g.figure.legend(*entries, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False)


def fig5_6_caption(frame: pd.DataFrame, what: str, beside: str = "") -> str:
    """The caption of Figs. 5 and 6 (what is drawn, with the grid's settings); ``what`` the normalizations
    compared, ``beside`` a short sentence naming the reading drawn beside the default ("" where none is)."""
    return (f"−log I(G^ℓ) after {in_words(frame, 'centering')} x ← a − c0, then {what}: "
            f"{grid_note(frame, gain=True)}.{beside}")


def fig5_6_method(sim: Config, reading: str) -> str:
    """The method of Figs. 5 and 6, folded under the caption: the averaging (D4), what missing points are, the
    numerics of ``sim`` and ``reading``, the text of the reading drawn beside the default (decisions D20, D21)."""
    return (f"Figs. 5 and 6 come from one grid, as in the original. {D4_NOTE} Missing points: runs that overflowed "
            f"or whose Gram matrix became singular in {sim['metric_dtype']}. {sim_note(sim)}{reading}")


def gain_panels(rows: pd.DataFrame, prediction: pd.DataFrame | None, activations: Sequence[str],
                gains: Sequence[float]) -> Figure:
    """Fig. B.2 (decision D13). Top: the gap of ``rows`` (``line_rows``) per activation, one curve per gain
    ('rocket'); bottom, the original's extra panel: tanh's post-normalization gap against its ``prediction``
    (``simulation_summaries.gain_prediction``; None: not drawn), one column per gain."""
    palette = dict(zip([f"α={a:g}" for a in gains], sns.color_palette("rocket", len(gains))))
    fig, axes = plt.subplots(2, len(activations), figsize=(3.4 * len(activations), 6.4), squeeze=False)
    rows = rows.assign(alpha=lambda f: f.gain.map(lambda a: f"α={a:g}"))
    for ax, act in zip(axes[0], activations):
        sns.lineplot(rows[rows.activation == act], x="layer", y="iso_gap", hue="alpha", palette=palette,
                     marker="o", ax=ax, legend=act == activations[-1], **CI)
        ax.set(yscale="log", title=act, xlabel="ℓ", ylabel="−log I(G^ℓ)" if act == activations[0] else "")
    for ax, alpha in zip(axes[1], gains):
        if prediction is None:
            ax.set_visible(False)
            continue
        part = prediction[np.isclose(prediction.gain, alpha)]
        sns.lineplot(part, x="layer", y="prediction", linestyle="dashed", color="k", label="theory", ax=ax, **CI)
        sns.lineplot(part, x="layer", y="iso_gap", label="empirical", ax=ax, **CI)
        ax.set(yscale="log", title=f"tanh, α={alpha:g}, β = {part.beta_gain.iloc[0]:.3f}", xlabel="ℓ",
               ylabel="−log I(G^ℓ)" if alpha == gains[0] else "")
    for ax in axes[1][len(gains):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


# --- image MLPs --------------------------------------------------------------------------------------------

NORM_BLUE, ACT_GREEN = "tab:blue", "tab:green"
BETA_METHODS = {"quadrature": "exact quadrature", "monte_carlo": "Monte Carlo, as the originals"}


def runs_note(frame: pd.DataFrame) -> str:
    """"5 runs × 6 batches of 100": what a mean of an image-MLP figure is over, from its results."""
    return f"{frame.run.nunique()} runs × {frame.batch.nunique()} batches of {frame.batch_size.iloc[0]}"


def gap_eps(mlp: Config) -> str:
    """The ε of an image-MLP item's gap, from its settings (``PaperPage.settings`` of its results; metrics M1b)."""
    return f"ε = {mlp['eps']:g} (M1b)"


def beta_note(mlp: Config) -> str:
    """How an image-MLP item's β_σ is computed (decision D8), from its settings' ``beta_method``."""
    method = mlp["beta_method"]
    return f"D8: β_σ by {BETA_METHODS.get(method, method)}"


def logits_note(frame: pd.DataFrame, consequence: str = "") -> str:
    """Decision D9, from the results: whether the activation is applied to the logits (and what it implies)."""
    if frame.act_on_logits.all():
        return f"D9: the activation is applied to the logits{consequence}"
    return "D9 ablation: no activation on the logits"


def skipped_test_pass(frame: pd.DataFrame) -> list[str]:
    """The skipped test pass of an at-init item whose stages hold no test rows (joudaki2023-fig3, joudaki2023-figb4)."""
    return [] if "test" in set(frame.stage) else ["the unused full test-set accuracy pass is skipped"]


def module_order(frame: pd.DataFrame) -> list[str]:
    return frame.drop_duplicates("position").sort_values("position").module.tolist()


def shade_modules(ax: Axes, names: Sequence[str]) -> None:
    """The originals' shading: [l − 1, l] of each LayerNorm (blue) and activation (green) module, α 0.2."""
    labelled = set()
    for position, name in enumerate(names):
        kind = name.split("-")[0]
        if kind in ("norm", "act"):
            label = {"norm": "normalization", "act": "activation"}[kind]
            ax.axvspan(position - 1, position, color=NORM_BLUE if kind == "norm" else ACT_GREEN, alpha=0.2,
                       label=None if label in labelled else label, lw=0)
            labelled.add(label)
    ax.set_xticks(range(len(names)), names, rotation=90)
    ax.set_xlim(-1, len(names) - 0.5)


def module_panels(rows: pd.DataFrame, last: int, **line: Any) -> Figure:
    """Figs. 2 and B.6: isometry of every module output at initialisation (left) and epoch ``last`` (right),
    LayerNorm and activation modules shaded; ``line`` goes to seaborn's lineplot (colour or hue)."""
    names = module_order(rows)
    fig, axes = plt.subplots(1, 2, figsize=(2 * 6.4, 4), sharey=True)
    for ax, epoch, title in zip(axes, (0, last), ("initialization", f"epoch {last}")):
        sns.lineplot(data=rows[rows.epoch == epoch], x="position", y="isometry", marker="o", ax=ax,
                     legend="auto" if ax is axes[-1] else False, **line, **CI)
        shade_modules(ax, names)
        ax.set(title=title, xlabel="", ylabel="isometry I(G)")
    axes[-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=9)
    return fig


def hot_hue(rows: pd.DataFrame, labels: Mapping[str, str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Figs. 7, B.6, B.7: ``rows`` with an ``act`` column of the legend ``labels`` (activation → "Act, β_σ = …",
    in β order) and seaborn's 'hot' palette over them."""
    palette = dict(zip(labels.values(), sns.color_palette("hot", len(labels))))
    return rows.assign(act=rows.activation.map(labels)), palette


def hot_lines(rows: pd.DataFrame, palette: Mapping[str, Any], x: str, y: str, xlabel: str, ylabel: str,
              **line: Any) -> Figure:
    """Figs. 7 and B.7: ``y`` against ``x`` per activation in the 'hot' palette, mean ± sd, legend outside."""
    fig, ax = plt.subplots(figsize=(5, 4))
    sns.lineplot(data=rows, x=x, y=y, hue="act", hue_order=list(palette), palette=palette, marker="o",
                 errorbar="sd", ax=ax, **line)
    ax.set(xlabel=xlabel, ylabel=ylabel, xticks=sorted(rows[x].unique()))
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9)
    return fig


def theory_panels(gaps: pd.DataFrame, beta: pd.Series, first: Sequence[str], theory: Callable[[float, Any], Any],
                  title: Callable[[str, float], str]) -> Figure:
    """Fig. 3: one panel per activation (those in ``first`` first) of the LayerNorm outputs' gap against the
    ``theory`` line of its β (decision D3), titled ``title(activation, β)``."""
    order = [*(a for a in first if a in beta.index), *(a for a in beta.index if a not in first)]
    layers = np.arange(gaps.layer.max() + 1)
    fig, axes = plt.subplots(1, len(order), figsize=(3 * 1.1 * len(order), 3), sharey=True, squeeze=False)
    for ax, activation in zip(axes[0], order):
        sns.lineplot(data=gaps[gaps.activation == activation], x="layer", y="iso_gap", color="tab:blue",
                     label="empirical", ax=ax, **CI)
        ax.plot(layers, theory(beta[activation], layers), ls="--", color="tab:orange", label="theory")
        ax.set(title=title(activation, beta[activation]), xlabel="layer ℓ", ylabel="−log I(G^ℓ)", xticks=layers)
        ax.legend(title="Trace", fontsize=8)
    return fig


def profile_panels(rows: pd.DataFrame, legend: Mapping[str, str]) -> Figure:
    """Fig. B.4: one panel per data set (MNIST first), the gap of every module, one curve per width profile
    (``legend``: profile → its hidden sizes, the ``hidden`` column of ``rows``)."""
    datasets = [d for d in ("mnist", "cifar10") if d in set(rows.dataset)]
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * 1.5 * len(datasets), 4), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        part = rows[rows.dataset == dataset]
        sns.lineplot(data=part, x="position", y="iso_gap", hue="hidden", hue_order=list(legend.values()),
                     palette="tab10", marker="o", ax=ax, legend="auto" if ax is axes[0][-1] else False, **CI)
        names = module_order(part)
        ax.set_xticks(range(len(names)), names, rotation=90)
        ax.set(title={"mnist": "MNIST", "cifar10": "CIFAR10"}[dataset], xlabel="", ylabel="isometry gap")
    axes[0][-1].legend(title="hidden dimensions", fontsize=8, loc="upper right")
    return fig


# --- GPT-2 ---------------------------------------------------------------------------------------------------


def entry_panels(df: pd.DataFrame, means: Mapping[str, pd.DataFrame]) -> Figure:
    """Fig. B.5, one panel per mode as the original plot (joudaki2023-figb5): x = running entry index, ticks at li − 0.5
    named after the modules (``means``: mode → ``gpt2_summaries.entry_means``) and rotated 90 degrees, red shading
    over [li − 1, li] for every LayerNorm entry, marker 's'."""
    # 17 x 2.5 in per panel as the original (+ room for the names); the panels share the module axis (named once).
    fig, axes = plt.subplots(len(means), 1, figsize=(17, 2.5 * len(means) + 1.5), sharex=True, squeeze=False)
    for ax, (mode, entries) in zip(axes[:, 0], means.items()):
        sns.lineplot(data=df[df["mode"] == mode], x="li", y="iso_gap", marker="s", color="black", ax=ax, **CI)
        for i, li in enumerate(entries.loc[entries.layernorm, "li"]):
            ax.axvspan(li - 1, li, color="red", alpha=0.15, label="LayerNorm" if i == 0 else None)
        ax.set_xticks(entries.li - 0.5, entries.module, rotation=90)
        ax.set_xlim(entries.li.min() - 1, entries.li.max() + 0.5)
        ax.set(xlabel="", ylabel="Isometry Gap")
        ax.legend(loc="upper left")
        title = "GPT2, last 6 layers, wiki (simple english)"  # the original's title
        ax.set_title(title if mode == "train" else f"{title} — eval mode (no dropout, decision D7)")
    fig.tight_layout()
    return fig
