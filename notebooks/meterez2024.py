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
# # Meterez, Joudaki, Orabona, Immer, Rätsch, Daneshmand (ICLR 2024): Towards Training Without Depth Limits: Batch Normalization Without Gradient Explosion
#
# Every figure and table of the paper, drawn from this run's Parquet results (`results/meterez2024/`),
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`meterez2024:`), named in each
# caption as this run used them; decisions: `docs/decisions/meterez2024.md`. Bands are seeded bootstrap
# CIs over the runs, at the level each caption states. The paper text lost its numbers: the reported values are
# read off the arXiv v1 PDF (source tag [PDF], docs/decisions/README.md).

# %% tags=["parameters"]
run = {}  # the run the notebook rule passes: results and report folders, preset, config section

# %%
import math

import matplotlib.pyplot as plt
import seaborn as sns

from isonorm.metrics.gradients import EXPLOSION_RATE_GAP
from isonorm.report.notebook import CI, NOT_RUN, open_paper
from isonorm.report.pages import meterez2024 as pm

page = open_paper("meterez2024", run)
cfg, render, load = page

# %% [markdown]
# ## At initialisation: Figures 1, 2, 3, 5, G5, G6, E1, E2 and Table D1
#
# Fresh `MLPWithBatchNorm` networks in train mode (batch statistics), float32, on one seeded training batch of
# the configured data set (each caption names it), shared by every run and depth (C12); runs differ only in their
# weight seeds (C13). Points that overflowed in float32 are left out of the plots and counted in each caption
# (C11).

# %%
from isonorm.experiments.meterez2024 import at_init_summaries as m24s

TRANSFORM = cfg["at_init"]["transform"]  # of the shared input batch; no at-init item overrides it

# %% [markdown]
# ### Figure 1 — isometry gap vs depth, with the Theorem 1 prediction

# %%
df = load("fig1/*.parquet", "meterez2024-fig1")
if df is not None:
    fig, axes = pm.sns_fig(4.0)
    ax, curves, palette = axes[0, 0], m24s.fig1_curves(df), sns.color_palette("tab10")
    for i, width in enumerate(sorted(df.width.unique())):
        emp = df[(df.width == width) & (df.source == "empirical")].dropna(subset=["value"])
        sns.lineplot(data=emp, x="layer", y="value", color=palette[i], label=str(width), ax=ax, **CI)
        th = curves[(curves.width == width) & (curves.source == "theory")]
        ax.plot(th.layer, th["mean"], ls="--", color=palette[i], label=f"{width} (theory)")
    ax.set(yscale="log", xlabel=r"$\ell$", ylabel=r"$\phi(X_\ell)$")
    ax.set_ylim(bottom=1e-6)
    pm.legend_right(ax, "Width")
    c = df.theory_constant.iloc[0]
    render.figure(
        fig, "meterez2024-fig1",
        f"Isometry gap φ of the fc_ℓ outputs (ℓ = 0..{int(df.layer.max())}) of the "
        f"{pm.model_text(cfg['fig1']['model'])}, on X_0 = (1−f)I + f·uvᵀ, f = {df.f.iloc[0]:g}, n = d, drawn once "
        f"per width; solid: {pm.runs_text(df)}, dashed: φ(X_0)·exp(−ℓ/k), k = C d²(1 + d φ(X_0)) with "
        f"C = {c:g}. {pm.dropped(m24s.nonfinite_count(df))}",
        deviations=f"C16: the constant C = {c:g} is the authors' code's; the paper says only 'absolute constant'. "
                   "C14: mathtext instead of LaTeX.",
    )

# %% [markdown]
# ### Figure 2 — gradient log-norm at init: degenerate vs non-degenerate inputs

# %%
df = load("at_init/fig2.parquet", "meterez2024-fig2")
if df is not None:
    fig = pm.depth_figure(df, "input", ["batch", "degenerate"], {"batch": "Non-degenerate", "degenerate": "Degenerate"},
                          "Inputs")
    degenerate = page.settings("at_init/fig2.parquet")["degenerate"]  # as the job ran: at_init with fig2 over it
    render.figure(
        fig, "meterez2024-fig2",
        f"{pm.grad_text(df)} at init vs depth, {pm.model_text(df.iloc[0])}; {pm.sample_text(df)}. Non-degenerate: "
        f"the seeded batch; degenerate: its first {degenerate['distinct']} images each repeated "
        f"{degenerate['repeats']} times.",
        method=pm.at_init_note(df, TRANSFORM, m24s.nonfinite_count(df)),
        deviations="No code exists for this figure: the setup of this caption is reconstructed (C2).",
    )

# %% [markdown]
# ### Figure 3 — orthogonal vs Gaussian weights

# %%
df = load("at_init/fig3.parquet", "meterez2024-fig3")
if df is not None:
    fig = pm.depth_figure(df, "init", ["orthogonal", "xavier_normal"],
                          {"orthogonal": "Orthogonal", "xavier_normal": "Normal"}, "Initialization")
    inits = pm.listing(pm.INITS[init] for init in dict.fromkeys(df.init))
    render.figure(
        fig, "meterez2024-fig3",
        f"{pm.grad_text(df)} at init vs depth for {inits} weights; {pm.model_text(df.iloc[0], skip=['init'])}; "
        f"{pm.sample_text(df)}.",
        method=pm.at_init_note(df, TRANSFORM, m24s.nonfinite_count(df)),
        deviations="None beyond C11–C14 (setup of the authors' Gradients.ipynb).",
    )

# %% [markdown]
# ### Figure 5 — effect of the gain

# %%
fig5 = load("at_init/fig5.parquet", feeds=["meterez2024-fig5", "meterez2024-figg5"])  # G5: the same runs
if fig5 is None:
    render.not_run("meterez2024-fig5", NOT_RUN)
else:
    grads = fig5[fig5.metric == "log_grad"]
    fig, axes = pm.sns_fig(6.5, ncols=2)
    without_gain, with_gain = grads[grads.gain_exponent == 0], grads[grads.gain_exponent != 0]
    for ax, title, part in zip(axes[0], ["Without gain", "With gain"], [without_gain, with_gain]):
        pm.depth_plot(ax, part, "activation", legend_title="Activation")
        ax.set_title(title)
    axes[0, 0].get_legend().remove()
    axes[0, 1].set_ylabel("")
    fig.tight_layout()
    exponent = float(with_gain.gain_exponent.iloc[0]) if len(with_gain) else math.nan
    render.figure(
        fig, "meterez2024-fig5",
        f"{pm.grad_text(fig5)} at init vs depth for {pm.listing(dict.fromkeys(fig5.activation))}; the "
        f"{pm.model_text(fig5.iloc[0], skip=['activation'])} (BN in train mode); {pm.sample_text(fig5)}; left "
        f"without gain, right with α_ℓ = (ℓ+1)^−{exponent:g}.",
        method=f"{pm.at_init_note(fig5, TRANSFORM)} Without gain: {m24s.nonfinite_count(without_gain)}, with gain: "
               f"{m24s.nonfinite_count(with_gain)} non-finite value(s) left out (C11; the PDF has no points for sin "
               "at 500/1000 and tanh at 1000).",
        deviations="None beyond C11–C14 (setup of the authors' Gain effect.ipynb).",
    )

# %% [markdown]
# ### Figure G5 — non-linearities without shaping (the runs of Figure 5)

# %%
if fig5 is None:
    render.not_run("meterez2024-figg5", NOT_RUN)
else:
    without = fig5[fig5.gain_exponent == 0]
    fig, axes = pm.sns_fig(6.5, ncols=2)
    pm.depth_plot(axes[0, 0], without[without.metric == "log_grad"], "activation", legend_title="Activation")
    pm.depth_plot(axes[0, 1], without[without.metric == "last_isogap"], "activation", y_label=r"$\phi(X_L)$",
                  log_y=True, legend_title="Activation")
    axes[0, 0].get_legend().remove()
    fig.tight_layout()
    render.figure(
        fig, "meterez2024-figg5",
        f"Without gain: left {pm.grad_text(without)} (the data of Fig. 5 left), right φ of the fc_(L−1) output vs "
        f"depth; {pm.listing(dict.fromkeys(without.activation))}, the "
        f"{pm.model_text(without.iloc[0], skip=['activation'])}; {pm.sample_text(without)}.",
        method=pm.at_init_note(without, TRANSFORM, m24s.nonfinite_count(without)),
        deviations="C8: φ(X_L) is taken from the torch-BN runs of Fig. 5 (the caption's 'standard modules'); "
                   "the only code that records it (Gradients.ipynb) used the custom BN.",
    )

# %% [markdown]
# ### Figure G6 — influence of mean reduction

# %%
df = load("at_init/figg6.parquet", "meterez2024-figg6")
if df is not None:
    fig = pm.depth_figure(df, "mean_reduction", [True, False], {True: "With", False: "Without"}, "Mean reduction",
                          y_label=r"$\log\|\nabla_{W_0}\mathcal{L}\|_F$")
    with_mean, without_mean = (df[df.mean_reduction == flag].iloc[0] for flag in (True, False))
    n = int(df.batch_size.iloc[0])
    render.figure(
        fig, "meterez2024-figg6",
        f"{pm.grad_text(df)} at init vs depth, {pm.model_text(df.iloc[0], skip=['norm'])}: with mean reduction, "
        f"{pm.norm_text(with_mean)} (blue), vs without, {pm.norm_text(without_mean)} (orange); {pm.sample_text(df)}.",
        method=pm.at_init_note(df, TRANSFORM, m24s.nonfinite_count(df)),
        deviations=f"C9: the gradient of fc_{int(df.layer.iloc[0])} here (as the authors' code), "
                   f"fc_{cfg['at_init']['grad_layers'][0]} in Figs. 2, 3, 5. The offset between the curves comes "
                   f"mostly from f = √{n} (log {math.sqrt(n):g} ≈ {math.log(math.sqrt(n)):.1f}).",
    )

# %% [markdown]
# ### Figure E1 — explosion rate vs a constant gain α

# %%
df = load("at_init/fige1.parquet", "meterez2024-fige1")
if df is not None:
    rates = df[df.metric == "rate"].assign(ell=lambda f: f.layer.map(str))
    fits = m24s.explosion_fit(df).set_index("activation")
    fig = pm.rate_panels(rates, "gain", "ell", r"$\alpha$", r"$R(\ell)$", r"$\ell$", fits=fits)
    fit_text = "; ".join(f"{a}: c1 = {fits.loc[a, 'c1']:.3g}, c2 = {fits.loc[a, 'c2']:.3g}"
                         for a in dict.fromkeys(rates.activation))
    render.figure(
        fig, "meterez2024-fige1",
        f"Rate of explosion {pm.rate_text(EXPLOSION_RATE_GAP)} at ℓ ∈ {sorted(map(int, rates.layer.unique()))} vs "
        f"a constant gain α on every layer, depth {int(df.depth.iloc[0])}; the "
        f"{pm.model_text(df.iloc[0], skip=['activation'])}; {pm.sample_text(df)}. Black: least-squares fit of log R "
        f"on log α pooled over ℓ ({fit_text}).",
        method=f"The fit leaves out R ≤ 0. {pm.at_init_note(df, TRANSFORM, m24s.nonfinite_count(df))}",
        deviations="No code exists for this figure. C6: R with ℓ counted from the input (positive while "
                   "gradients grow toward the input); one fit per activation. C7: the Gain-effect config and "
                   "a constant-gain option of the model (α_ℓ = α for all ℓ).",
    )

# %% [markdown]
# ### Figure E2 — explosion rate vs the gain exponent

# %%
df = load("at_init/fige2.parquet", "meterez2024-fige2")
if df is not None:
    rates = df[df.metric == "rate"].assign(exponent=lambda f: -f.gain_exponent)
    layer = int(rates.layer.iloc[0])
    fig = pm.rate_panels(rates, "exponent", "depth", "Gain exponent", f"$R({layer})$", "Depth")
    render.figure(
        fig, "meterez2024-fige2",
        f"{pm.rate_text(EXPLOSION_RATE_GAP, layer)} vs the exponent of α_ℓ = (ℓ+1)^exponent for depths "
        f"{sorted(map(int, df.depth.unique()))}; the {pm.model_text(df.iloc[0], skip=['activation'])}; "
        f"{pm.sample_text(df)}.",
        method=pm.at_init_note(df, TRANSFORM, m24s.nonfinite_count(df)),
        deviations=f"No code exists for this figure. C6/C7: rate as in Fig. E1, Gain-effect config, exponents "
                   f"{pm.signed(rates.exponent.min())} … {pm.signed(rates.exponent.max())} at the PDF's markers.",
    )

# %% [markdown]
# ### Table D1 — average rank of input-batch Gram matrices

# %%
df = load("tabled1/*.parquet", "meterez2024-tabled1")
if df is not None:
    table = m24s.rank_table_text(df)
    cosines = m24s.largest_n_cosines(df)
    transform = pm.transform_text(df["transform"].iloc[0], "data set's")
    render.table(
        table.rename_axis("Dataset").reset_index(), "meterez2024-tabled1",
        f"Rank (torch.linalg.matrix_rank, default tolerance σ_max·n·eps(float32)) of the float32 Gram X Xᵀ of "
        f"flattened {df['split'].iloc[0]}-split images, mean ± std over {int(df.batch.max()) + 1} batches per n, "
        f"samples drawn without replacement; transform {df['transform'].iloc[0]}; torch "
        f"{', '.join(sorted(df['torch_version'].unique()))} on {', '.join(sorted(df['device'].unique()))}. Mean "
        f"signed off-diagonal cosine at n = {cosines.name}: "
        f"{', '.join(f'{d} {cosines[d]:.2f}' for d in table.index if d in cosines)}.",
        deviations=f"No code exists for this table. C10: {df['split'].iloc[0]} split, {transform} (inferred from "
                   "the printed cosines), float32 Gram; the rank tolerance depends on the torch version.",
    )

# %% [markdown]
# ## Training grid: Figs. 4, 6, F1, F2, G1–G4
# One job per (data-set group, depth) trains every activation on the data sets of one group (config
# `training: stacks`; each run's numbers are those of its own training). Width, batch, learning rate (plain SGD),
# gain exponent and normalisation are named in each caption (decisions C3, C4, C5, C15 faithful). One run per
# configuration, as the paper.

# %%
from isonorm.experiments.meterez2024 import training_summaries as m24t

TRAIN = load("training/*.parquet", feeds=[  # one file per (group, depth); rows carry their own data set
    "meterez2024-fig4", "meterez2024-fig6", "meterez2024-figf1", "meterez2024-figf2", "meterez2024-figg1",
    "meterez2024-figg2", "meterez2024-figg3", "meterez2024-figg4"])
TCFG = cfg["training"]
TRAIN_SETUP = pm.training_setup(TCFG)
STOPPED = pm.stopped_note(0 if TRAIN is None else len(m24t.stopped_runs(TRAIN)))

# %% [markdown]
# ### Figure 4 — training accuracy on CIFAR-10

# %%
curves = m24t.plotted_accuracy(TRAIN, "meterez2024-fig4")
pm.accuracy_item(render, "meterez2024-fig4", curves, ["train_acc"], TCFG["activations"],
                 f"{pm.DATASETS[m24t.ITEM_DATASET['meterez2024-fig4']]} running train accuracy during each epoch (train mode), log epoch axis. {TRAIN_SETUP}; "
                 f"up to {pm.last_epoch(curves)} epochs; {STOPPED}.",
                 deviations=pm.epoch_deviations(pm.last_epoch(curves)))

# %% [markdown]
# ### Figure 6 — implicit orthogonality bias of SGD, the deepest tanh network

# %%
runs = m24t.profile_runs(TRAIN)
if runs.empty:
    render.not_run("meterez2024-fig6", NOT_RUN)
else:
    deepest = int(runs.depth.max())
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 2))
    for ax, metric, title in zip(axes, ["weight_isogap", "grad_fro_norm"], ["(a) Isometry gap", "(b) Gradient norm"]):
        profile = m24t.layer_profiles(runs, metric)
        pm.profile_axes(ax, profile[(profile.depth == deepest) & (profile.activation == "tanh")], title)
    pm.legend_right(axes[-1], "Epoch", top=True)
    render.figure(fig, "meterez2024-fig6",
                  f"φ(W_ℓ) and ‖∇W_ℓ L‖_F per layer, {pm.DATASETS[m24t.PROFILE_DATASET]}, tanh, depth {deepest}. "
                  f"{TRAIN_SETUP}.")

# %% [markdown]
# ### Figure F1 — weight isometry gap during training

# %%
pm.profile_item(render, "meterez2024-figf1", m24t.layer_profiles(m24t.profile_runs(TRAIN), "weight_isogap"),
                m24t.SHAPED, r"$\phi(W_\ell)$", f"Weight isometry gap per layer, {pm.DATASETS[m24t.PROFILE_DATASET]}. {TRAIN_SETUP}",
                m24t.nonfinite_points(TRAIN, "weight_isogap"))

# %% [markdown]
# ### Figure F2 — gradient norms during training

# %%
pm.profile_item(render, "meterez2024-figf2", m24t.layer_profiles(m24t.profile_runs(TRAIN), "grad_fro_norm"),
                m24t.SHAPED, r"$\|\nabla_{W_\ell} L\|_F$",
                f"Gradient Frobenius norm per layer, {pm.DATASETS[m24t.PROFILE_DATASET]}. {TRAIN_SETUP}",
                m24t.nonfinite_points(TRAIN, "grad_fro_norm"))

# %% [markdown]
# ### Figure G1 — train and test accuracy on MNIST

# %%
pm.accuracy_item(render, "meterez2024-figg1", m24t.plotted_accuracy(TRAIN, "meterez2024-figg1"), ["train_acc", "test_acc"],
                 TCFG["activations"], pm.train_test_caption(m24t.ITEM_DATASET["meterez2024-figg1"], TRAIN_SETUP, STOPPED),
                 method=pm.IDENTITY_COLLAPSE)

# %% [markdown]
# ### Figure G2 — train and test accuracy on FashionMNIST

# %%
pm.accuracy_item(render, "meterez2024-figg2", m24t.plotted_accuracy(TRAIN, "meterez2024-figg2"), ["train_acc", "test_acc"],
                 TCFG["activations"], pm.train_test_caption(m24t.ITEM_DATASET["meterez2024-figg2"], TRAIN_SETUP, STOPPED),
                 method=pm.IDENTITY_COLLAPSE)

# %% [markdown]
# ### Figure G3 — train and test accuracy on CIFAR-100

# %%
pm.accuracy_item(render, "meterez2024-figg3", m24t.plotted_accuracy(TRAIN, "meterez2024-figg3"), ["train_acc", "test_acc"],
                 TCFG["activations"], pm.train_test_caption(m24t.ITEM_DATASET["meterez2024-figg3"], TRAIN_SETUP, STOPPED),
                 method=pm.IDENTITY_COLLAPSE)

# %% [markdown]
# ### Figure G4 — test accuracy on CIFAR-10 (the train row is Figure 4)

# %%
curves = m24t.plotted_accuracy(TRAIN, "meterez2024-figg4")
pm.accuracy_item(render, "meterez2024-figg4", curves, ["test_acc"], TCFG["activations"],
                 f"{pm.DATASETS[m24t.ITEM_DATASET['meterez2024-figg4']]} eval-mode test accuracy (G4 shows only the test row; the train row is Fig. 4). "
                 f"{TRAIN_SETUP}; up to {pm.last_epoch(curves)} epochs; {STOPPED}.",
                 deviations=pm.epoch_deviations(pm.last_epoch(curves)))
