# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Joudaki, Daneshmand, Bach (NeurIPS 2023): On the impact of activation and normalization in obtaining isometric embeddings at initialization
#
# Every figure and table of the paper, drawn from this run's Parquet results (`results/joudaki2023/`),
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`joudaki2023:`),
# decisions: `docs/decisions/joudaki2023.md`. Bands are seeded bootstrap confidence intervals, at the
# level each caption names, unless a caption says otherwise.

# %% tags=["parameters"]
run = {}  # the run the notebook rule passes: results and report folders, preset, config section

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from isonorm.report.notebook import CI, NOT_RUN, open_paper
from isonorm.report.pages.joudaki2023 import listed, strength_table

# The originals' look (D.0 (A) "Plot helpers"): whitegrid, context "paper", font scale 1.5.
page = open_paper("joudaki2023", run)
cfg, render, load = page

# %% [markdown]
# ## Figure 1 — the geometric reading of isometry

# %%
from isonorm.experiments.joudaki2023.schematic import isometry_schematic

render.figure(
    isometry_schematic(), "joudaki2023-fig1",
    "Isometry I(G) = det(G)^{1/n}/(tr G/n) of n = 2 and n = 3 vectors: the normalised volume of the "
    "parallelogram / parallelepiped they span. Top: small angles and unequal lengths (low I); bottom: "
    "orthogonal vectors of equal length (I = 1). Each I is computed from the drawn vectors.",
    deviations="A new drawing: the paper's schematic has no code (D11). For n = 2 the value is "
               "ab·sinθ/((a²+b²)/2), Definition 1; the paper's text omits the factor 2 (D11).",
)

# %% [markdown]
# ## Table 1 — building blocks

# %%
building_blocks = pd.DataFrame(
    [
        ["d", "width (number of features)"],
        ["n", "batch size (number of samples)"],
        ["L", "depth"],
        ["x ∈ R^d", "one input"],
        ["X ∈ R^{n×d}", "a batch of inputs, one row per sample"],
        ["W ∈ R^{d×d}", "Gaussian weights, entries N(0, 1)"],
        ["σ", "activation, applied elementwise"],
        ["x − x̄", "centering: subtract the mean over features, x̄ = (1/d) Σ_i x_i"],
        ["LN(x)", "x / sqrt((1/d) Σ_{i=1}^{d} x_i²)"],
        ["BN(X)_ij", "X_ij / sqrt((1/n) Σ_{k=1}^{n} X_kj²)"],
    ],
    columns=["Symbol", "Meaning"],
)
render.table(building_blocks, "joudaki2023-table1", "Notation and building blocks of the networks studied.",
             deviations="BN normalises over the n samples of a column: the paper prints the sum as Σ_k^d, a "
                        "typo (D12).")

# %% [markdown]
# ## Table 2 — closed-form isometry strengths

# %%
df = load("strengths/table2.parquet", "joudaki2023-table2")
if df is not None:
    render.table(
        strength_table(df, with_gain=False), "joudaki2023-table2",
        "Isometry strength β_σ = 2 − c₁²/Σ_{k≥1} c_k² (Definition 3) of the paper's activations: the closed "
        "forms of Table 2, split Gauss–Legendre quadrature, and a seeded Monte Carlo estimate as in the "
        "original code.", float_format=".6f",
        deviations="Quadrature is the primary numeric value (D8); the originals used unseeded Monte Carlo.",
    )

# %% [markdown]
# ## Table B.1 — β as a function of the gain α

# %%
df = load("strengths/tableb1.parquet", "joudaki2023-tableb1")
if df is not None:
    render.table(
        strength_table(df, with_gain=True), "joudaki2023-tableb1",
        f"β of σ(αx) for {listed(df.activation)}: the closed forms of Table B.1 next to quadrature and Monte "
        "Carlo. ReLU's β does not depend on α (positive homogeneity).", float_format=".6f",
    )

# %% [markdown]
# ## Figure B.1 — β vs gain α

# %%
df = load("strengths/figb1.parquet", "joudaki2023-figb1")
if df is not None:
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for activation, g in df.groupby("activation", sort=False):
        line, = ax.plot(g.gain, g.beta, label=activation)
        ax.plot(g.gain, g.monte_carlo, ls=":", color=line.get_color())
    ax.set(xlabel="alpha", ylabel="β_σ")
    ax.legend()
    render.figure(
        fig, "joudaki2023-figb1",
        f"β of σ(αx) for α = {df.gain.min():g}, …, {df.gain.max():g}: solid lines exact (closed form where one "
        "exists, quadrature otherwise), dotted the seeded Monte Carlo estimate on "
        f"{df.monte_carlo_samples.iloc[0]:.0e} samples as in the original.",
        deviations=["The y label is β_σ (the original's axis says β_0 for the same quantity, D17).",
                    "Exact values instead of the original's Monte Carlo curve (D8); exp uses its closed form "
                    "where float64 quadrature would overflow."],
    )

# %% [markdown]
# ## The mean-field simulator: Figures 4, 5, 6, 8, 9, A.1, B.2, B.3
#
# Synthetic inputs (n samples of width d, the largest singular value inflated by a "degeneracy" factor)
# through L random layers with fresh Gaussian weights (D.0 (A)). The originals' `plot_line_graph`
# does not filter by stage: each point at ℓ ≥ 1 is the mean over the pre-normalization AND the
# post-normalization rows of every run, and ℓ = 0 is the input (decision D4). The curves below keep that
# ("faithful"); a table at the end of the page compares them with the post-normalization-only means. Bands: seeded
# bootstrap CI over those rows. Missing points are NaN/inf values (overflow, or Gram matrices singular at the
# eigenvalue precision each item's method names), dropped as seaborn dropped them in the originals. Each caption
# gives its grid (n, d, L, degeneracy, runs), and its folded method the numerics, from this run's results and config.

# %%
from IPython.display import display

from isonorm.experiments.joudaki2023 import simulation_summaries as sims
from isonorm.experiments.joudaki2023.simulations import reading_config
from isonorm.report.pages.joudaki2023 import (D4_NOTE, LABELS, draw_spread, fig5_6_caption, fig5_6_method,
                                              gain_panels, grid_note, in_words, layer_chain, line_graph, runs_of,
                                              sim_method, sim_note)

# %% [markdown]
# ### Figure 4 — layer centering vs mean-field centering

# %%
df = load("simulations/fig4.parquet", "joudaki2023-fig4")
if df is not None:
    acts = list(dict.fromkeys(df.activation))
    g = line_graph(sims.line_rows(df), *sims.PLOTTED["joudaki2023-fig4"], LABELS["centering"], col_order=acts)
    unplotted = (" The run without centering is simulated too (as in the original) but not drawn."
                 if "none" in set(df.centering) else "")
    render.figure(
        g.figure, "joudaki2023-fig4",
        f"−log I(G^ℓ) with {in_words(df, 'normalization')} after layer centering (a − ā) or mean-field centering "
        f"(a − c0), for {', '.join(acts)}: {grid_note(df, gain=True, bias=True)}.",
        method=sim_method(page.settings("simulations/fig4.parquet")),
        deviations="D10: colours follow the caption (MF blue, layer orange; the original's seaborn order gave "
                   "the reverse)." + unplotted,
    )

# %% [markdown]
# ### Figures 5 and 6 — no normalization vs LayerNorm vs mean-field normalization (one grid)
#
# Both figures come from one grid, as in the original; each draws one reading beside the default (decisions
# D20 and D21).

# %%
def fig5_reading(df, mc_constants, sim):
    """Decision D20: where the sigmoid curve without normalization stops, with the exact and the Monte Carlo c0
    (``sim``: the reading's settings)."""
    def last_drawn(frame):
        return sims.last_finite_layer(sims.plotted_curve(frame, activation="sigmoid", normalization="none"))

    offset = mc_constants.query("activation == 'sigmoid'").c0.iloc[0] - 0.5
    return (
        f" Dashed (decision D20): the curves without normalization with c0, c1, Eσ² from the originals' act_info "
        f"(a Monte Carlo mean over {sim['monte_carlo_samples']:,} seeded samples; sigmoid's c0 is off from 1/2 by "
        f"{offset:.1e}), on the same inputs and weights. The sigmoid curve stops at ℓ = {last_drawn(df):g} with "
        f"the exact c0 ({sim['dtype']} can no longer resolve σ near 1/2) and at ℓ = {last_drawn(mc_constants):g} "
        f"with the Monte Carlo c0, whose offset leaves the rows nearly identical and the gap climbing: the "
        f"published figure shows the latter. The default keeps the exact constants (decision D8): the paper "
        f"defines c0 = Eσ, and the originals' sample was never recorded.")


def fig6_reading(df, more_runs, pooled, block):
    """Decision D21: where the means of successive blocks of ``block`` runs of exp with MF normalization cross
    the read-off's threshold, and the early spike of the mean over all runs."""
    act, threshold, early_end = more_runs.activation.iloc[0], sims.EXP_MF_THRESHOLD, sims.EARLY_LAST_LAYER
    exp_mf = sims.select(pooled, activation=act, normalization="mf")
    crossings = sims.block_crossings(exp_mf, block, threshold)
    mean = sims.plotted_curve(exp_mf)
    early = sims.early_part(mean).dropna()
    peak = f"{early.max():.1f} (ℓ = {early.idxmax()})" if len(early) else "nowhere (no finite point)"
    return (
        f" Hatched band and dashed line in the {act} panel (decision D21): {runs_of(exp_mf) - runs_of(df)} more "
        f"runs of {act} with MF normalization. Most runs overflow within a few layers and leave the mean, so a "
        f"{block}-run mean crosses {threshold:g} either at the early blow-up or much later, when the few surviving "
        f"runs get there. First crossing per block of {block} runs (this run's own block first): "
        f"{', '.join('never' if np.isnan(c) else f'{c:g}' for c in crossings)} "
        f"({sum(1 for c in crossings if c <= early_end)} of {len(crossings)} by ℓ = {early_end}, like the "
        f"published curve). Over all {runs_of(exp_mf)} runs the early spike (ℓ ≤ {early_end}) peaks at {peak} and "
        f"the first crossing is at ℓ = {sims.first_layer_above(mean, threshold):g}: the threshold of "
        f"{threshold:g} sits at the height of the spike, so the crossing layer is a matter of which runs are "
        f"averaged.")


# %%
df = load("simulations/fig5_6.parquet")
mc_constants = load("simulations/fig5_6--mc_constants.parquet")  # decision D20: the originals' Monte Carlo c0
if df is None:
    render.not_run("joudaki2023-fig5", NOT_RUN)
else:
    acts, sim = list(dict.fromkeys(df.activation)), page.settings("simulations/fig5_6.parquet")
    hue, order = sims.PLOTTED["joudaki2023-fig5"]
    if mc_constants is None:
        g = line_graph(sims.line_rows(df), hue, order, LABELS["joudaki2023-fig5"], col_order=acts)
        beside = reading = ""
    else:
        both = pd.concat([df, mc_constants.assign(normalization="none_mc")], ignore_index=True)
        g = line_graph(sims.line_rows(both), hue, [*order, "none_mc"],
                       {**LABELS["joudaki2023-fig5"], "none_mc": "x ← a − c0, c0 by Monte Carlo"}, col_order=acts,
                       dashed=["none_mc"], ncol=3)
        beside = " Dashed: no normalization with c0, c1, Eσ² by Monte Carlo, as the originals (decision D20)."
        # the reading's settings as its job applied them to the item's (decision D19)
        mc_settings = reading_config(page.settings("simulations/fig5_6--mc_constants.parquet"), "mc_constants",
                                     "fig5_6")
        reading = fig5_reading(df, mc_constants, mc_settings)
    render.figure(
        g.figure, "joudaki2023-fig5",
        fig5_6_caption(df, "no normalization (blue) vs LayerNorm (orange)", beside),
        method=fig5_6_method(sim, reading),
        deviations="Legend added (the original has none). The Monte Carlo reading is drawn beside the default "
                   "(decision D20).",
    )

# %%
df = load("simulations/fig5_6.parquet")
more_runs = load("simulations/fig5_6--more_runs.parquet")  # decision D21: more runs of exp with MF normalization
if df is None:
    render.not_run("joudaki2023-fig6", NOT_RUN)
else:
    g = line_graph(sims.line_rows(df), *sims.PLOTTED["joudaki2023-fig6"], LABELS["joudaki2023-fig6"],
                   col_order=list(dict.fromkeys(df.activation)), ncol=None if more_runs is None else 2)
    beside = reading = ""
    if more_runs is not None:
        pooled, block = sims.pooled_runs(df, more_runs), runs_of(df)
        draw_spread(g, sims.block_bands(pooled, "activation", block), sns.color_palette()[1],
                    f"{listed(more_runs.activation)}, MF normalization", runs_of(pooled), block)
        beside = (f" Hatched and dashed in the {listed(more_runs.activation)} panel: the range of {block}-run means "
                  f"and the mean of all {runs_of(pooled)} runs with MF normalization (decision D21).")
        reading = fig6_reading(df, more_runs, pooled, block)
    render.figure(
        g.figure, "joudaki2023-fig6",
        fig5_6_caption(df, "LayerNorm (blue) vs division by √σ̄(1) = √(Eσ² − c0²) (orange)", beside),
        method=fig5_6_method(page.settings("simulations/fig5_6.parquet"), reading),
        deviations="Legend added (the original has none)." + ("" if more_runs is None else (
            f" The spread of the {listed(more_runs.activation)} curve's means is drawn beside the default "
            "(decision D21).")),
    )

# %% [markdown]
# ### Figure 8 — (a) activations without normalization, (b) order of activation and normalization

# %%
def fig8a_curves(df, narrow):
    """The rows, hue order, palette and dashed curves of Fig. 8a: the default, and the narrower reading beside it
    in the same colours, dashed (decision D22)."""
    acts = list(dict.fromkeys(df.activation))
    if narrow is None:
        return df.assign(series=df.activation), acts, None, []
    tag = {act: f"{act}, d = {narrow.width.iloc[0]}" for act in acts}
    colors = dict(zip(acts, sns.color_palette(n_colors=len(acts))))
    frame = pd.concat([df.assign(series=df.activation), narrow.assign(series=narrow.activation.map(tag))],
                      ignore_index=True)
    return frame, [*acts, *tag.values()], {**colors, **{tag[a]: colors[a] for a in acts}}, list(tag.values())


def fig8a_reading(df, narrow):
    """Decision D22: what the narrower reading shows beside the configured width."""
    width, narrow_width = df.width.iloc[0], narrow.width.iloc[0]
    return (
        f" Dashed (decision D22): the same at d = {narrow_width}, to show how far a narrower network lies from the "
        f"published curves; read off the authors' vector file, those agree with the configured d = {width}.")


# %%
df = load("simulations/fig8a.parquet")
narrow = load("simulations/fig8a--narrow.parquet")  # decision D22: the same configurations at a narrower width
if df is None:
    render.not_run("joudaki2023-fig8a", NOT_RUN)
else:
    frame, order, palette, dashed = fig8a_curves(df, narrow)
    g = line_graph(sims.line_rows(frame.assign(panel="")), "series", order, col="panel", height=3.5, aspect=1.2,
                   palette=palette, dashed=dashed, ncol=df.activation.nunique())
    render.figure(
        g.figure, "joudaki2023-fig8a",
        f"−log I(G^ℓ) with {in_words(df, 'centering')} and {in_words(df, 'normalization')} for "
        f"{listed(df.activation)}: {grid_note(df)}."
        + ("" if narrow is None else f" Dashed: the same at d = {narrow.width.iloc[0]} (decision D22)."),
        method=sim_method(page.settings("simulations/fig8a.parquet"))
        + ("" if narrow is None else fig8a_reading(df, narrow)),
        deviations="D5: the final notebook never recomputed this figure (its recompute line is commented out; the "
                   "saved plot came from an earlier in-memory table, an older version also ran LayerNorm). We run "
                   f"the stated configs ({in_words(df, 'normalization')}, degeneracy {df.degeneracy.iloc[0]:g}, "
                   f"{runs_of(df)} runs); the text's claim (ReLU needs LN, tanh and SeLU do not) does not clearly "
                   "match the published figure. A narrower network is drawn beside it (decision D22).",
    )

# %%
df = load("simulations/fig8b.parquet", "joudaki2023-fig8b")
if df is not None:
    g = line_graph(sims.line_rows(df.assign(panel="")), *sims.PLOTTED["joudaki2023-fig8b"], LABELS["joudaki2023-fig8b"],
                   col="panel", height=3.5, aspect=1.2)
    render.figure(
        g.figure, "joudaki2023-fig8b",
        f"−log I(G^ℓ) of {listed(df.activation)} networks with {layer_chain(df)} after (LN(σ(Wx)), eq. 1) or "
        f"before (σ(LN(Wx))) the activation: {grid_note(df)}.",
        method=sim_method(page.settings("simulations/fig8b.parquet")),
    )

# %% [markdown]
# ### Figure 9 — LayerNorm keeps mean-field predictions accurate through depth (ReLU)

# %%
def fig9_reading(df, pooled, bands, block):
    """Decision D23: how far the means of successive blocks of ``block`` runs of the MF curves lie apart at the
    last layer, per width, against the mean over all runs."""
    depth = int(df.depth.iloc[0])
    at_depth = "; ".join(
        f"d = {width}: {band['min'].get(depth, np.nan):.2f}–{band['max'].get(depth, np.nan):.2f}, "
        f"{runs_of(sims.select(pooled, width=width))} runs {band['mean'].get(depth, np.nan):.2f}"
        for width, band in sorted(bands.items()))
    return (
        f" Hatched band and dashed line (decision D23): {runs_of(pooled) - runs_of(df)} more runs of the MF "
        f"curves. With MF normalization the runs drift apart with depth, so a mean of {block} runs at ℓ = {depth} "
        f"varies between independent blocks; gap at ℓ = {depth}, range of the {runs_of(pooled) // block} block "
        f"means and mean of all runs: {at_depth}. The default keeps the configured {block} runs (the paper's "
        f"protocol at paper settings).")


# %%
df = load("simulations/fig9.parquet")
more_runs = load("simulations/fig9--more_runs.parquet")  # decision D23: more runs of the MF curves
if df is None:
    render.not_run("joudaki2023-fig9", NOT_RUN)
else:
    widths = sorted(df.width.unique())
    g = line_graph(sims.line_rows(df), *sims.PLOTTED["joudaki2023-fig9"], LABELS["joudaki2023-fig9"], col="width",
                   col_order=widths, col_titles="d={col_name}", ncol=None if more_runs is None else 2)
    beside = reading = ""
    if more_runs is not None:
        pooled, block = sims.pooled_runs(df, more_runs), runs_of(df)
        bands = sims.block_bands(pooled, "width", block)
        draw_spread(g, bands, sns.color_palette()[0], "MF normalization", runs_of(pooled), block)
        beside = (f" Hatched and dashed: the range of {block}-run means and the mean of all {runs_of(pooled)} runs "
                  "with MF normalization (decision D23).")
        reading = fig9_reading(df, pooled, bands, block)
    render.figure(
        g.figure, "joudaki2023-fig9",
        f"−log I(G^ℓ) of {listed(df.activation)} networks with {in_words(df, 'centering')}, then mean-field "
        f"normalization (blue) or LayerNorm (orange), for d ∈ {{{', '.join(map(str, widths))}}}: "
        f"{grid_note(df, width=False)}.{beside}",
        method=sim_method(page.settings("simulations/fig9.parquet")) + reading,
        deviations="Legend added (the original has none)."
                   + (" The spread of the runs' means is drawn beside the default (decision D23)." if reading else ""),
    )

# %% [markdown]
# ### Figure A.1 — Lyapunov potential γ vs depth, against γ(G¹)·β^{−ℓ}

# %%
df = load("simulations/figa1.parquet", "joudaki2023-figa1")
if df is not None:
    acts, rows = list(dict.fromkeys(df.activation)), sims.theory_rows(df)
    sim = page.settings("simulations/figa1.parquet")
    g = sns.FacetGrid(rows, col="activation", col_order=acts, height=3.2)
    g.map_dataframe(sns.lineplot, x="layer", y="gamma_theory", linestyle="dashed", color="k", label="theory", **CI)
    g.map_dataframe(sns.lineplot, x="layer", y="gamma", linestyle="solid", label="empirical", **CI)
    g.set(yscale="log")
    g.set_axis_labels("ℓ", "γ(G^ℓ)")
    g.set_titles(col_template="{col_name}")
    g.add_legend()
    betas = ", ".join(f"{a}: β = {rows[rows.activation == a].beta.iloc[0]:.4f}" for a in acts)
    render.figure(
        g.figure, "joudaki2023-figa1",
        f"Lyapunov potential γ(G^ℓ) of the LayerNorm outputs against the theory γ(G¹)·β^{{−ℓ}} "
        f"(dashed; {betas}): {layer_chain(df)}, {grid_note(df)}.",
        method=f"Post-normalization rows only, as the original's plot_line; the theory takes γ(G¹) per run, and β "
               f"by {sim['constants']} (D8). {sim_note(sim)}",
        deviations=f"D2: d = {df.width.iloc[0]} (the code's value; the caption says d = 10000, available by "
                   "setting figa1.widths to [10000], best with sampler: cholesky). The theory line is the code's "
                   "γ0/β^ℓ with γ0 = γ(G¹), i.e. it starts one factor β below the empirical curve at ℓ = 1.",
    )

# %% [markdown]
# ### Figure B.2 — the gain α and isometry

# %%
df = load("simulations/figb2.parquet", "joudaki2023-figb2")
if df is not None:
    acts, gains = list(dict.fromkeys(df.activation)), sorted(df.gain.unique())
    sim = page.settings("simulations/figb2.parquet")
    factor = float(cfg["figb2"]["prediction_factor"])
    tanh = sims.gain_prediction(df[df.activation == "tanh"], factor) if "tanh" in acts else None
    render.figure(
        gain_panels(sims.line_rows(df), tanh, acts, gains), "joudaki2023-figb2",
        f"Top: −log I(G^ℓ) for {', '.join(acts)} with W scaled by α ∈ {{{', '.join(f'{a:g}' for a in gains)}}} "
        f"('rocket' hue); {layer_chain(df)}, {grid_note(df)}. Bottom: tanh post-normalization gap vs the "
        f"prediction {factor:g}·iso_gap0/β(α)^ℓ (dashed).",
        method=f"The top row is the figure (D13); the bottom row is an extra, the original's second panel. {D4_NOTE} "
               f"β(α) = β of tanh(αx) by {sim['constants']} (D8; the original used Monte Carlo). {sim_note(sim)}",
        deviations="D13: the paper text does not say which of the original's two plots is Figure B.2; the "
                   "3-activation gain plot is taken as the figure and the tanh prediction panel is shown below "
                   "it as an extra.",
    )

# %% [markdown]
# ### Figure B.3 — mean-field centering and normalization vs Xavier's gain

# %%
df = load("simulations/figb3.parquet", "joudaki2023-figb3")
if df is not None:
    acts, variants, mf = list(dict.fromkeys(df.activation)), list(dict.fromkeys(df.variant)), df[df.variant == "MF"]
    labels = {"MF": f"MF: x ← (a − c0)/√σ̄(1), gain {mf.gain.iloc[0]:g}", "xavier": "xavier: gain = calculate_gain(σ)"}
    g = line_graph(sims.line_rows(df), "variant", variants, {v: labels.get(v, v) for v in variants}, col_order=acts,
                   palette=sns.color_palette("rocket", len(variants)))
    gains = ", ".join(f"{a} {df[(df.activation == a) & (df.variant == 'xavier')].gain.iloc[0]:.4g}"
                      for a in acts if "xavier" in variants)
    render.figure(
        g.figure, "joudaki2023-figb3",
        f"−log I(G^ℓ) with {in_words(mf, 'centering')} and {in_words(mf, 'normalization')} (gain "
        f"{mf.gain.iloc[0]:g}) vs neither, with W scaled by torch's "
        f"calculate_gain ({gains}): {grid_note(df)}.",
        method=sim_method(page.settings("simulations/figb3.parquet")),
    )

# %% [markdown]
# ## Image MLPs — Figures 2, 3, 7, B.4, B.6, B.7
#
# LayerNorm MLPs (norm-i → fc-i → act-i; the originals also apply the activation to the logits, D9) on
# CIFAR-10 / MNIST, preprocessed by the configured `transform` (the originals' Normalize(0.5, 0.5), D14). Every
# module's isometry gap is measured on fresh train batches after every epoch of each run (the original's
# `num_batches=5` loop; each caption counts them), with a small ε added to the eigenvalues (M1b; each caption
# gives it). Modules whose Gram is singular by construction (the 10-dimensional logits against a batch of more
# samples) are NaN and absent, as in the originals. β_σ: as each caption's deviations say (D8).

# %%
from isonorm.experiments.joudaki2023 import image_mlp_summaries as ims
from isonorm.report.pages.joudaki2023 import (CI_TEXT, beta_note, gap_eps, hot_hue, hot_lines, logits_note,
                                              module_panels, profile_panels, runs_note, skipped_test_pass,
                                              theory_panels)

# %% [markdown]
# ### Figure 2 — LayerNorm never decreases isometry (tanh), at initialisation and after training

# %%
runs2 = load("fig2_runs/*.parquet")
fig2_act = cfg["fig2_runs"]["fig2_activation"]
if runs2 is None or fig2_act not in set(runs2.activation):
    render.not_run("joudaki2023-fig2", NOT_RUN)
else:
    rows, mlp = ims.train_stage(runs2[runs2.activation == fig2_act]), page.settings("fig2_runs/*.parquet")
    last, steps = ims.last_epoch(rows), ims.ln_steps(rows)
    held = {e: bool(steps[steps.epoch == e].non_decreasing.all()) for e in (0, last)}
    render.figure(
        module_panels(rows, last, color="black"), "joudaki2023-fig2",
        f"Isometry I = exp(−gap) of every module output, {fig2_act}, hidden {rows.hidden_sizes.iloc[0]}, "
        f"{rows.dataset.iloc[0]} train batches; left at initialisation, right after {last} training epoch(s) of SGD "
        f"(lr {rows.lr.iloc[0]}); {runs_note(rows)}, gap with {gap_eps(mlp)}. LayerNorm modules "
        "shaded blue, activations green.",
        method=f"Each point is the mean over runs and measured batches, with its {CI_TEXT}. Isometry non-decreasing "
               f"at every LN: init {held[0]}, epoch {last} {held[last]}.",
        deviations=[
            f"D1: the final code's settings (batch {rows.batch_size.iloc[0]}, centred Gram: reduce_mean="
            f"{bool(rows.reduce_mean.iloc[0])}, {rows.run.nunique()} runs); the caption says batch 512",
            logits_note(rows),
            "fc/act of the last block are absent (their 10-dimensional outputs give a singular Gram)",
        ],
    )

# %% [markdown]
# ### Figure B.6 — isometry through the layers for many activations, at initialisation and after training

# %%
runs2 = load("fig2_runs/*.parquet")
b6_acts = list(cfg["fig2_runs"]["figb6_activations"])
if runs2 is None or not set(b6_acts) & set(runs2.activation):
    render.not_run("joudaki2023-figb6", NOT_RUN)
else:
    rows, mlp = ims.train_stage(runs2[runs2.activation.isin(b6_acts)]), page.settings("fig2_runs/*.parquet")
    labels = ims.beta_labels(rows)
    rows, palette = hot_hue(rows, labels)
    last, missing = ims.last_epoch(rows), sorted(set(b6_acts) - set(rows.activation))
    render.figure(
        module_panels(rows, last, hue="act", hue_order=list(palette), palette=palette), "joudaki2023-figb6",
        f"As Figure 2 for the activations {', '.join(labels)} (colour: 'hot' palette ordered by β_σ), "
        f"train batches, epochs 0 and {last}: {runs_note(rows)}, gap with {gap_eps(mlp)}.",
        method=f"Each point is the mean over runs and measured batches, with its {CI_TEXT}.",
        deviations=[
            "D6: the activation set of the rendered legend, not the code's list; Sigmoid was added to the Fig. 2 "
            "run grid",
            "D1 settings as Figure 2", f"{beta_note(mlp)} (the originals printed Monte Carlo values)",
        ] + ([f"not run here: {', '.join(missing)}"] if missing else []),
    )

# %% [markdown]
# ### Figure 3 — validation of Theorem 4 on CIFAR-10 at initialisation

# %%
df3 = load("fig3/*.parquet", "joudaki2023-fig3")
if df3 is not None:
    gaps, mlp = ims.train_stage(df3).query("kind == 'norm'"), page.settings("fig3/*.parquet")
    render.figure(
        theory_panels(gaps, ims.betas(gaps), ims.THREE_ACTIVATIONS, ims.theory_line, ims.beta_label),
        "joudaki2023-fig3",
        f"−log I(G^ℓ) of the LayerNorm outputs norm-ℓ at initialisation, hidden {gaps.hidden_sizes.iloc[0]} "
        f"(n = {gaps.batch_size.iloc[0]}), {gaps.dataset.iloc[0]} train batches: {runs_note(gaps)}, gap with "
        f"{gap_eps(mlp)}. Dashed: theory β_σ^−ℓ (C = 1).",
        method=f"Each point is the mean over runs and measured batches, with its {CI_TEXT}.",
        deviations=[
            "D3: the theory line is β^−ℓ normalised to 1 at ℓ = 0 (code), not the literal Theorem-4 bound",
            f"{beta_note(mlp)} in titles and theory (the originals printed unseeded Monte Carlo "
            "estimates)",
            *skipped_test_pass(df3),
        ],
    )

# %% [markdown]
# ### Figure B.4 — variable-width MLPs at initialisation (ReLU)

# %%
dfb4 = load("figb4/*.parquet", "joudaki2023-figb4")
if dfb4 is not None:
    rows = ims.train_stage(dfb4)
    legend = {p: rows[rows.profile == p].hidden_sizes.iloc[0] for p in dict.fromkeys(rows.profile)}
    rows, networks = rows.assign(hidden=rows.profile.map(legend)), rows.run.nunique()
    render.figure(
        profile_panels(rows, legend), "joudaki2023-figb4",
        f"Isometry gap of every module of random {listed(rows.activation)} LayerNorm MLPs with {len(legend)} width "
        f"profiles ({', '.join(legend)}), batch {rows.batch_size.iloc[0]}: {runs_note(rows)} (train batches), gap "
        f"with {gap_eps(page.settings('figb4/*.parquet'))}.",
        method=f"Each point is the mean over runs and measured batches, with its {CI_TEXT}. The last block's fc/act "
               "outputs (10 features) are absent.",
        deviations=[f"{networks} network{'s' * (networks > 1)} per profile, as coded (joudaki2023-figb4); the CI is over "
                    f"the {rows.batch.nunique()} batches", *skipped_test_pass(dfb4)],
    )

# %% [markdown]
# ### Figure 7 — β_σ and the speed of SGD

# %%
runs7 = load("fig7_runs/*.parquet", "joudaki2023-fig7")
if runs7 is not None:
    rows = runs7[(runs7.stage == "train") & (runs7.kind == "norm")]
    rows, palette = hot_hue(rows, ims.beta_labels(rows))
    render.figure(
        hot_lines(rows, palette, "epoch", "loss", xlabel="epoch", ylabel="training loss"), "joudaki2023-fig7",
        f"Cross-entropy of the measured train batches vs epoch (0 = initialisation), hidden "
        f"{rows.hidden_sizes.iloc[0]}, batch {rows.batch_size.iloc[0]}, SGD lr {rows.lr.iloc[0]}, "
        f"{rows.dataset.iloc[0]}: {runs_note(rows)}. Colour: β_σ ('hot' palette).",
        method="Each point is the mean over runs and measured batches; the band is ± one standard deviation.",
        deviations=[
            f"D15: the loss is that of {rows.batch.nunique()} fresh random train batches after each epoch (as "
            "coded), not the running epoch loss",
            logits_note(rows, ", which bounds Sigmoid's and Tanh's minimal loss"),
            beta_note(page.settings("fig7_runs/*.parquet")),
        ],
    )

# %% [markdown]
# ### Figure B.7 — the isometry gap changes little during training

# %%
runs7 = load("fig7_runs/*.parquet", "joudaki2023-figb7")
if runs7 is not None:
    rows, mlp = ims.train_stage(runs7), page.settings("fig7_runs/*.parquet")
    rows = rows[rows.kind == "norm"]
    last = ims.last_epoch(rows)
    ends = ["epoch 0", f"epoch {last}"]
    rows = rows[rows.epoch.isin([0, last])].assign(when=lambda f: np.where(f.epoch == 0, *ends))
    rows, palette = hot_hue(rows, ims.beta_labels(rows))
    render.figure(
        hot_lines(rows, palette, "layer", "iso_gap", xlabel="layer ℓ", ylabel="isometry gap of norm-ℓ",
                  style="when", style_order=ends), "joudaki2023-figb7",
        f"Isometry gap of the LayerNorm outputs at epoch 0 (solid) and epoch {last} (dashed), the Figure 7 "
        f"runs: {runs_note(rows)} (train batches), gap with {gap_eps(mlp)}.",
        method="Each point is the mean over runs and measured batches; the band is ± one standard deviation.",
        deviations=["the stage is not stated by the source; train batches are used, as in Figures 2, 3 and 7",
                    beta_note(mlp)],
    )

# %% [markdown]
# ## Figure B.5 — isometry gap across the submodules of pre-trained GPT-2 (last blocks)

# %%
from importlib.metadata import version

from isonorm.experiments.joudaki2023 import gpt2_summaries as g2
from isonorm.experiments.joudaki2023.gpt2_probe import EPS, MODES
from isonorm.report.pages.joudaki2023 import entry_panels

PINNED_PROBE = (
    "decision D7: the texts are frozen from a pinned dataset revision instead of the legacy `wikipedia` loading "
    f"script; transformers {version('transformers')} pinned with attn_implementation='eager'; in this version "
    "attention dropout is applied functionally, so `attn.attn_dropout` fires no hook (it was never plotted: 4-D)")


# %%
df = load("figb5/*.parquet", "joudaki2023-figb5")
if df is not None:
    f5, modes = cfg["figb5"], [m for m in MODES if m in set(df["mode"])]
    tokens, blocks = df.groupby("text").tokens.first(), sorted(df.block.unique())
    panels = ("Top: train mode (dropout on, as published); bottom: eval mode." if len(modes) == 2
              else f"Mode: {modes[0]}.")
    render.figure(
        entry_panels(df, {mode: g2.entry_means(df, mode) for mode in modes}), "joudaki2023-figb5",
        f"Isometry gap (ε = {EPS:g}) after every submodule of GPT-2 blocks h.{blocks[0]}–h.{blocks[-1]}, LayerNorm "
        f"entries shaded red. {panels} Checkpoint: {df.checkpoint.iloc[0]}; {df.text.nunique()} texts of "
        f"{tokens.min()}–{tokens.max()} tokens (first {f5['max_chars']} characters of each).",
        method=f"Each LayerNorm entry is preceded by 'Add', the gap of its input (the residual stream). Each point is "
               f"the mean over the texts (one per forward pass), with its {CI_TEXT}; the token Gram is in double "
               f"precision. Texts: {df.texts_source.iloc[0]}. Tick labels sit half a step left of their points, as in "
               "the original plot.",
        deviations=[
            f"decision D7: dropout is active as in the original (model.train()), but seeded (torch seed "
            f"{f5['seed']}) so the figure is reproducible; the eval-mode variant is added",
            f"decision D7: blocks with index > {f5['min_block']} are kept, as the code does ({len(blocks)} blocks), "
            "although the title says 'last 6 layers'",
            PINNED_PROBE,
        ],
    )

# %% [markdown]
# ## QA (decision D4): the simulator's faithful vs post-normalization-only means at the last layer
#
# Not an item of the paper: the mean-field simulator's curves (Figures 4, 5, 6, 8, 9, B.2, B.3) averaged over
# post-normalization rows only, to show how much the originals' averaging of both stages moves each plotted value.

# %%
# Last on the page: a load after an item's render would name these results as the source of the next item.
qa = [sims.convention_table(frame, hue).assign(experiment=experiment)
      for experiment, hue in (("fig4", "centering"), ("fig5_6", "normalization"), ("fig8a", "activation"),
                              ("fig8b", "activation_first"), ("fig9", "normalization"), ("figb2", "gain"),
                              ("figb3", "variant"))
      if (frame := load(f"simulations/{experiment}.parquet")) is not None]
if qa:
    display(pd.concat(qa, ignore_index=True).set_index(["experiment", "curve"]).round(4))
