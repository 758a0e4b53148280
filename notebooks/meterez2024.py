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
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`meterez2024:`),
# decisions: `docs/decisions/meterez2024.md` (C1–C17). Bands are seeded bootstrap 95 % CIs over the runs unless a
# caption says otherwise. The paper text lost its numbers: the reported values are read off the arXiv v1 PDF
# (source tag [PDF], docs/decisions/README.md).

# %% tags=["parameters"]
results_dir = "results/meterez2024"
report_dir = "report"
preset = "paper"
config_json = "{}"

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from isonorm.report.notebook import CI, NOT_RUN, open_paper

# The originals' look (C.0 "Plot style"): darkgrid with dotted grid lines, context "paper", black axes
# edges, ticks on all four sides pointing in, tab10; mathtext instead of usetex (decision C14).
STYLE = dict(style="darkgrid", context="paper", palette="tab10", rc={
    "grid.linestyle": ":", "axes.edgecolor": "black", "xtick.direction": "in", "ytick.direction": "in",
    "xtick.top": True, "ytick.right": True, "xtick.bottom": True, "ytick.left": True, "font.family": "serif",
    "figure.dpi": 200,
})
page = open_paper("meterez2024", results_dir=results_dir, report_dir=report_dir, preset=preset,
                  config_json=config_json, style=STYLE)
cfg, render, load = page.cfg, page.render, page.load

# %% [markdown]
# ## At initialisation: Figures 1, 2, 3, 5, G5, G6, E1, E2 and Table D1
#
# Fresh `MLPWithBatchNorm` networks in train mode (batch statistics), float32, on one seeded CIFAR-10
# training batch shared by every run and depth (C12); runs differ only in their weight seeds (C13).
# Points that overflowed in float32 are left out of the plots and counted in each caption (C11).

# %%
from isonorm.experiments.meterez2024 import at_init_summaries as m24s

INIT_STYLE = {"grid.linestyle": ":", "axes.edgecolor": "black", "xtick.direction": "in", "ytick.direction": "in",
              "xtick.top": True, "ytick.right": True}  # C.0 "Plot style" (darkgrid, ':' grid, ticks in)
GRAD_LABEL = r"$\log\|\nabla_{W_1}\mathcal{L}\|_F$"  # C.0 "Axis label"; mathtext, not LaTeX (C14)
AT_INIT_NOTE = ("One seeded CIFAR-10 train batch (ToTensor + Normalize with the CIFAR-10 statistics) shared by "
                "all runs and depths (C12); weights reseeded per run (C13); float32 networks (C11).")


def init_frame(item: str):
    """Results of one at-init item (``at_init/<item>.parquet``), or None when not run."""
    return load(f"at_init/{item}.parquet")


def run_count(frame) -> int:
    return int(frame["run"].max()) + 1


def dropped(frame) -> str:
    n = m24s.nonfinite_count(frame)
    return f"{n} non-finite value(s) (float32 overflow or singular Gram) left out (C11)." if n else "No non-finite values."


def depth_plot(ax, frame, hue, order=None, labels=None, y_label=GRAD_LABEL, log_y=False, legend_title=None):
    """Mean ± 95 % CI over runs vs depth (log x, as the PDF), one line per ``hue`` value, marker '.'."""
    data = frame.dropna(subset=["value"]).copy()
    data["curve"] = data[hue].map(labels) if labels else data[hue].astype(str)
    order = [labels[h] if labels else str(h) for h in (order or list(dict.fromkeys(frame[hue])))]
    with sns.axes_style("darkgrid", INIT_STYLE):
        sns.lineplot(data=data, x="depth", y="value", hue="curve", hue_order=order, marker=".", ax=ax,
                     palette="tab10", **CI)
    ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("Depth")
    ax.set_ylabel(y_label)
    if ax.get_legend() is not None:
        ax.legend(title=legend_title, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))


def sns_fig(width, height=2.0, ncols=1):
    with sns.axes_style("darkgrid", INIT_STYLE):
        return plt.subplots(1, ncols, figsize=(width, height), dpi=200, squeeze=False)


# %% [markdown]
# ### Figure 1 — isometry gap vs depth, with the Theorem 1 prediction

# %%
df = load("fig1/*.parquet")
if df is None:
    render.not_run("meterez2024-fig1", NOT_RUN)
else:
    fig, axes = sns_fig(4.0)
    ax = axes[0, 0]
    curves = m24s.fig1_curves(df)
    palette = sns.color_palette("tab10")
    for i, width in enumerate(sorted(df.width.unique())):
        emp = df[(df.width == width) & (df.source == "empirical")].dropna(subset=["value"])
        with sns.axes_style("darkgrid", INIT_STYLE):
            sns.lineplot(data=emp, x="layer", y="value", color=palette[i], label=str(width), ax=ax, **CI)
        th = curves[(curves.width == width) & (curves.source == "theory")]
        ax.plot(th.layer, th["mean"], ls="--", color=palette[i], label=f"{width} (theory)")
    ax.set_yscale("log")
    ax.set_ylim(bottom=1e-6)
    ax.set_xlabel(r"$\ell$")
    ax.set_ylabel(r"$\phi(X_\ell)$")
    ax.legend(title="Width", frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    c = df.theory_constant.iloc[0]
    render.figure(
        fig, "meterez2024-fig1",
        f"Isometry gap φ of the fc_ℓ outputs (ℓ = 0..{int(df.layer.max())}) of linear BN-MLPs with orthogonal "
        f"weights and the paper's Bn (eq. 4: no mean reduction, force factor 1), on X_0 = (1−f)I + f·uvᵀ, "
        f"f = {df.f.iloc[0]:g}, n = d, drawn once per width; solid: mean and 95 % CI of {run_count(df)} runs, "
        f"dashed: φ(X_0)·exp(−ℓ/k), k = C d²(1 + d φ(X_0)) with C = {c:g}. {dropped(df)}",
        deviations=f"C16: the constant C = {c:g} is the authors' code's; the paper says only 'absolute constant'. "
                   "C14: mathtext instead of LaTeX.",
    )

# %% [markdown]
# ### Figure 2 — gradient log-norm at init: degenerate vs non-degenerate inputs

# %%
df = init_frame("fig2")
if df is None:
    render.not_run("meterez2024-fig2", NOT_RUN)
else:
    fig, axes = sns_fig(4.0)
    depth_plot(axes[0, 0], df[df.metric == "log_grad"], "input", ["batch", "degenerate"],
               {"batch": "Non-degenerate", "degenerate": "Degenerate"}, legend_title="Inputs")
    deg = {**cfg["at_init"], **cfg["fig2"]}["degenerate"]
    render.figure(
        fig, "meterez2024-fig2",
        f"log‖∇W_1 L‖_F (fc_1) at init vs depth, linear BN-MLP (width {df.width.iloc[0]}, batch "
        f"{df.batch_size.iloc[0]}, orthogonal weights, the paper's Bn with force factor 1, no bias), mean and "
        f"95 % CI of {run_count(df)} runs. Non-degenerate: the seeded batch; degenerate: its first "
        f"{deg['distinct']} images each repeated {deg['repeats']} times. {AT_INIT_NOTE} {dropped(df)}",
        deviations="No code exists for this figure; setup reconstructed (C2: d = n = 100, paper Bn with f = 1, "
                   "identity, gradient of fc_1, degenerate batch = 10 distinct CIFAR-10 train images × 10 repeats).",
    )

# %% [markdown]
# ### Figure 3 — orthogonal vs Gaussian weights

# %%
df = init_frame("fig3")
if df is None:
    render.not_run("meterez2024-fig3", NOT_RUN)
else:
    fig, axes = sns_fig(4.0)
    depth_plot(axes[0, 0], df[df.metric == "log_grad"], "init", ["orthogonal", "xavier_normal"],
               {"orthogonal": "Orthogonal", "xavier_normal": "Normal"}, legend_title="Initialization")
    render.figure(
        fig, "meterez2024-fig3",
        f"log‖∇W_1 L‖_F (fc_1) at init vs depth for orthogonal and Xavier-normal (gain 1) weights; linear "
        f"BN-MLP, custom BN without mean reduction and with f = √n, no bias, width {df.width.iloc[0]}, batch "
        f"{df.batch_size.iloc[0]}; mean and 95 % CI of {run_count(df)} runs. {AT_INIT_NOTE} {dropped(df)}",
        deviations="None beyond C11–C14 (setup of the authors' Gradients.ipynb).",
    )

# %% [markdown]
# ### Figure 5 — effect of the gain; Figure G5 — non-linearities without shaping (same runs)

# %%
df = init_frame("fig5")
if df is None:
    render.not_run("meterez2024-fig5", NOT_RUN)
    render.not_run("meterez2024-figg5", NOT_RUN)
else:
    grads = df[df.metric == "log_grad"]
    acts = [a for a in ("identity", "sin", "tanh") if a in set(df.activation)]
    fig, axes = sns_fig(6.5, ncols=2)
    for ax, (title, a) in zip(axes[0], (("Without gain", 0.0), ("With gain", None))):
        part = grads[grads.gain_exponent == 0] if a == 0.0 else grads[grads.gain_exponent != 0]
        depth_plot(ax, part, "activation", acts, legend_title="Activation")
        ax.set_title(title)
    axes[0, 0].get_legend().remove()
    axes[0, 1].set_ylabel("")
    fig.tight_layout()
    exponent = float(grads[grads.gain_exponent != 0].gain_exponent.iloc[0]) if (grads.gain_exponent != 0).any() else float("nan")
    render.figure(
        fig, "meterez2024-fig5",
        f"log‖∇W_1 L‖_F (fc_1) at init vs depth for identity, sin and tanh; orthogonal weights, torch "
        f"BatchNorm1d (train mode) and Linear biases, width {df.width.iloc[0]}, batch {df.batch_size.iloc[0]}; "
        f"left without gain, right with α_ℓ = (ℓ+1)^−{exponent:g}; mean and 95 % CI of {run_count(df)} runs. "
        f"{AT_INIT_NOTE} Without gain: {m24s.nonfinite_count(grads[grads.gain_exponent == 0])}, with gain: "
        f"{m24s.nonfinite_count(grads[grads.gain_exponent != 0])} non-finite value(s) left out (C11; the PDF "
        f"has no points for sin at 500/1000 and tanh at 1000).",
        deviations="None beyond C11–C14 (setup of the authors' Gain effect.ipynb).",
    )
    without = df[df.gain_exponent == 0]
    fig, axes = sns_fig(6.5, ncols=2)
    depth_plot(axes[0, 0], without[without.metric == "log_grad"], "activation", acts, legend_title="Activation")
    depth_plot(axes[0, 1], without[without.metric == "last_isogap"], "activation", acts,
               y_label=r"$\phi(X_L)$", log_y=True, legend_title="Activation")
    axes[0, 0].get_legend().remove()
    fig.tight_layout()
    render.figure(
        fig, "meterez2024-figg5",
        f"Without gain: left log‖∇W_1 L‖_F (the data of Fig. 5 left), right φ of the fc_(L−1) output vs depth; "
        f"identity, sin and tanh, orthogonal weights, torch BatchNorm1d with biases, width "
        f"{df.width.iloc[0]}, batch {df.batch_size.iloc[0]}, {run_count(df)} runs (mean, 95 % CI). "
        f"{AT_INIT_NOTE} {dropped(without)}",
        deviations="C8: φ(X_L) is taken from the torch-BN runs of Fig. 5 (the caption's 'standard modules'); "
                   "the only code that records it (Gradients.ipynb) used the custom BN.",
    )

# %% [markdown]
# ### Figure G6 — influence of mean reduction

# %%
df = init_frame("figg6")
if df is None:
    render.not_run("meterez2024-figg6", NOT_RUN)
else:
    fig, axes = sns_fig(4.0)
    depth_plot(axes[0, 0], df[df.metric == "log_grad"], "mean_reduction", [True, False],
               {True: "With", False: "Without"}, y_label=r"$\log\|\nabla_{W_0}\mathcal{L}\|_F$",
               legend_title="Mean reduction")
    render.figure(
        fig, "meterez2024-figg6",
        f"log‖∇W_0 L‖_F (fc_0) at init vs depth, linear BN-MLP with orthogonal weights, no bias: with mean "
        f"reduction and f = √n (blue) vs the paper's Bn without mean reduction, f = 1 (orange); width "
        f"{df.width.iloc[0]}, batch {df.batch_size.iloc[0]}, {run_count(df)} runs (mean, 95 % CI). "
        f"{AT_INIT_NOTE} {dropped(df)}",
        deviations="C9: the gradient of fc_0 here (as the authors' code), fc_1 in Figs. 2, 3, 5. The offset "
                   "between the curves comes mostly from f = √100 (log 10 ≈ 2.3).",
    )

# %% [markdown]
# ### Figure E1 — explosion rate vs a constant gain α

# %%
df = init_frame("fige1")
if df is None:
    render.not_run("meterez2024-fige1", NOT_RUN)
else:
    rates = df[df.metric == "rate"]
    fits = m24s.explosion_fit(df).set_index("activation")
    acts = [a for a in ("sin", "tanh") if a in set(df.activation)]
    fig, axes = sns_fig(6.5, ncols=len(acts))
    for ax, act in zip(axes[0], acts):
        part = rates[rates.activation == act].dropna(subset=["value"]).assign(ell=lambda f: f.layer.map(lambda l: f"{l}"))
        with sns.axes_style("darkgrid", INIT_STYLE):
            sns.lineplot(data=part, x="gain", y="value", hue="ell", marker=".", palette="tab10", ax=ax, **CI)
        alphas = np.array(sorted(part.gain.unique()), dtype=float)
        c1, c2 = fits.loc[act, "c1"], fits.loc[act, "c2"]
        ax.plot(alphas, c1 * alphas**c2, "k--.", label=r"$c_1\alpha^{c_2}$")
        ax.set_title(act)
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel(r"$R(\ell)$")
        ax.legend(title=r"$\ell$", frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    for ax in axes[0][:-1]:
        ax.get_legend().remove()
    fig.tight_layout()
    fit_text = "; ".join(f"{a}: c1 = {fits.loc[a, 'c1']:.3g}, c2 = {fits.loc[a, 'c2']:.3g}" for a in acts)
    render.figure(
        fig, "meterez2024-fige1",
        f"Rate of explosion R(ℓ) = (log‖∇W_(ℓ−10)‖ − log‖∇W_ℓ‖)/10 at ℓ ∈ {sorted(rates.layer.unique())} vs a "
        f"constant gain α on every layer, depth {int(df.depth.iloc[0])}; orthogonal weights, torch "
        f"BatchNorm1d with biases, width {df.width.iloc[0]}, batch {df.batch_size.iloc[0]}, {run_count(df)} runs "
        f"(mean, 95 % CI). Black: least-squares fit of log R on log α pooled over ℓ, R ≤ 0 excluded ({fit_text}). "
        f"{AT_INIT_NOTE} {dropped(df)}",
        deviations="No code exists for this figure. C6: R with ℓ counted from the input (positive while "
                   "gradients grow toward the input); one fit per activation. C7: the Gain-effect config and "
                   "a constant-gain option of the model (α_ℓ = α for all ℓ).",
    )

# %% [markdown]
# ### Figure E2 — explosion rate at ℓ = 10 vs the gain exponent

# %%
df = init_frame("fige2")
if df is None:
    render.not_run("meterez2024-fige2", NOT_RUN)
else:
    rates = df[df.metric == "rate"].assign(exponent=lambda f: -f.gain_exponent)
    acts = [a for a in ("sin", "tanh") if a in set(df.activation)]
    fig, axes = sns_fig(6.5, ncols=len(acts))
    for ax, act in zip(axes[0], acts):
        part = rates[rates.activation == act].dropna(subset=["value"])
        with sns.axes_style("darkgrid", INIT_STYLE):
            sns.lineplot(data=part, x="exponent", y="value", hue="depth", marker=".", palette="tab10", ax=ax, **CI)
        ax.set_title(act)
        ax.set_xlabel("Gain exponent")
        ax.set_ylabel(r"$R(10)$")
        ax.legend(title="Depth", frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    for ax in axes[0][:-1]:
        ax.get_legend().remove()
    fig.tight_layout()
    render.figure(
        fig, "meterez2024-fige2",
        f"R(10) = (log‖∇W_0‖ − log‖∇W_10‖)/10 vs the exponent of α_ℓ = (ℓ+1)^exponent for depths "
        f"{sorted(df.depth.unique())}; orthogonal weights, torch BatchNorm1d with biases, width "
        f"{df.width.iloc[0]}, batch {df.batch_size.iloc[0]}, {run_count(df)} runs (mean, 95 % CI). "
        f"{AT_INIT_NOTE} {dropped(df)}",
        deviations="No code exists for this figure. C6/C7: rate as in Fig. E1, Gain-effect config, exponents "
                   "−1.0 … −0.1 at the PDF's markers.",
    )

# %% [markdown]
# ### Table D1 — average rank of input-batch Gram matrices

# %%
df = load("tabled1/*.parquet")
if df is None:
    render.not_run("meterez2024-tabled1", NOT_RUN)
else:
    table = m24s.rank_table_text(df)
    summary = m24s.rank_summary(df)
    largest = summary[summary.n == summary.n.max()].set_index("dataset")["mean_cosine_mean"]
    cosines = ", ".join(f"{d} {largest[d]:.2f}" for d in table.index if d in largest)
    render.table(
        table.rename_axis("Dataset").reset_index(), "meterez2024-tabled1",
        f"Rank (torch.linalg.matrix_rank, default tolerance σ_max·n·eps(float32)) of the float32 Gram X Xᵀ of "
        f"flattened {df['split'].iloc[0]}-split images, mean ± std over {int(df.batch.max()) + 1} batches per n, "
        f"samples drawn without replacement; transform {df['transform'].iloc[0]}; torch "
        f"{', '.join(sorted(df['torch_version'].unique()))} on {', '.join(sorted(df['device'].unique()))}. Mean "
        f"signed off-diagonal cosine at n = {int(summary.n.max())}: {cosines}.",
        deviations="No code exists for this table. C10: training split, ToTensor without Normalize (inferred "
                   "from the printed cosines), float32 Gram; the rank tolerance depends on the torch version.",
    )

# %% [markdown]
# ## Training grid: Figs. 4, 6, F1, F2, G1–G4
# One job per (data-set stack, depth) trains sin, tanh and identity of cifar10+cifar100 or mnist+fashionmnist
# stacked (config `stacks`; each run's numbers are those of its own training): torch BN + bias, orthogonal init,
# gain exponent 0.4, width 100, batch 100, plain SGD lr 0.001 (decisions C3, C4, C5, C15 faithful). One run per
# configuration, as the paper.

# %%
from isonorm.experiments.meterez2024 import training_summaries as m24t

TRAIN = load("training/*.parquet")  # one file per (stack, depth); rows carry their own data set
TCFG = cfg["training"]
TRAIN_SETUP = (f"width {TCFG['width']}, batch {TCFG['batch_size']}, SGD lr {TCFG['lr']}, torch BN + bias (C4), "
               f"orthogonal init, gain exponent {TCFG['gain_exponent']} (C3), BN running stats updated by the "
               f"measurement (C15 faithful: {not TCFG['measure_on_copy']}); one run per configuration")


def _stopped_note(frame):
    stopped = m24t.stopped_runs(frame)
    return f"{len(stopped)} run(s) stopped on a non-finite loss (C11)" if len(stopped) else "no run stopped on a non-finite loss"


def _acc_panels(dataset, metric, item, caption):
    curves = m24t.accuracy_curves(TRAIN)
    curves = curves[(curves.dataset == dataset) & (curves.epoch >= 1)]
    if curves.empty:
        render.not_run(item, NOT_RUN)
        return
    fig, axes = plt.subplots(1, 3, figsize=(6.5, 2), sharey=True)
    for ax, act in zip(axes, ["sin", "tanh", "identity"]):
        for depth, part in curves[curves.activation == act].groupby("depth"):
            ax.plot(part.epoch, part[metric], label=str(depth))
        ax.set_xscale("log"); ax.set_title(act); ax.set_xlabel("Epoch")
    axes[0].set_ylabel(metric.replace("_acc", " accuracy").capitalize())
    axes[-1].legend(title="Depth", frameon=False, bbox_to_anchor=(1, 1), loc="upper left")
    epochs = int(curves.epoch.max())
    render.figure(fig, item, f"{caption} {TRAIN_SETUP}; up to {epochs} epochs; {_stopped_note(TRAIN)}.",
                  deviations=["epochs per preset (C5): plots show whatever epochs exist"] if epochs < 1000 else [])


if TRAIN is None:
    for item in ["fig4", "fig6", "figf1", "figf2", "figg1", "figg2", "figg3", "figg4"]:
        render.not_run(f"meterez2024-{item}", NOT_RUN)
else:
    _acc_panels("cifar10", "train_acc", "meterez2024-fig4", "CIFAR-10 running train accuracy during each epoch (train mode), log epoch axis.")

# %%
def _profile_grid(metric, item, ylabel, caption, depths=None, acts=("sin", "tanh")):
    prof = m24t.layer_profiles(TRAIN, metric)
    prof = prof[prof.dataset == "cifar10"]
    depths = sorted(prof.depth.unique()) if depths is None else depths
    if prof.empty or not len(depths):
        render.not_run(item, NOT_RUN)
        return
    fig, axes = plt.subplots(len(depths), len(acts), figsize=(6.5, 2 * len(depths)), squeeze=False)
    for i, depth in enumerate(depths):
        for j, act in enumerate(acts):
            ax = axes[i][j]
            for epoch, part in prof[(prof.depth == depth) & (prof.activation == act)].groupby("epoch"):
                ax.plot(part.layer, part.value, label=str(epoch))
            ax.set_yscale("log"); ax.set_title(f"{act}, depth {depth}"); ax.set_xlabel(r"$\ell$"); ax.set_ylabel(ylabel)
    axes[0][-1].legend(title="Epoch", frameon=False, bbox_to_anchor=(1, 1), loc="upper left")
    dropped = int((~np.isfinite(TRAIN[(TRAIN.metric == metric)].value)).sum())
    render.figure(fig, item, f"{caption} {TRAIN_SETUP}; measured on the fixed batch of 100 training images after "
                  f"each epoch; {dropped} non-finite point(s) dropped (C11).")


if TRAIN is not None:
    deepest = int(TRAIN[TRAIN.dataset == "cifar10"].depth.max()) if (TRAIN.dataset == "cifar10").any() else None
    if deepest is None:
        render.not_run("meterez2024-fig6", NOT_RUN)
    else:
        prof = {m: m24t.layer_profiles(TRAIN, m) for m in ("weight_isogap", "grad_fro_norm")}
        fig, axes = plt.subplots(1, 2, figsize=(6.5, 2))
        for ax, (metric, title) in zip(axes, [("weight_isogap", "(a) Isometry gap"), ("grad_fro_norm", "(b) Gradient norm")]):
            p = prof[metric]
            p = p[(p.dataset == "cifar10") & (p.depth == deepest) & (p.activation == "tanh")]
            for epoch, part in p.groupby("epoch"):
                ax.plot(part.layer, part.value, label=str(epoch))
            ax.set_yscale("log"); ax.set_title(title); ax.set_xlabel(r"$\ell$")
        axes[-1].legend(title="Epoch", frameon=False, bbox_to_anchor=(1, 1), loc="upper left")
        render.figure(fig, "meterez2024-fig6", f"φ(W_ℓ) and ‖∇W_ℓ L‖_F per layer, CIFAR-10, tanh, depth {deepest}. {TRAIN_SETUP}.")
    _profile_grid("weight_isogap", "meterez2024-figf1", r"$\phi(W_\ell)$", "Weight isometry gap per layer, CIFAR-10.")
    _profile_grid("grad_fro_norm", "meterez2024-figf2", r"$\|\nabla_{W_\ell} L\|_F$", "Gradient Frobenius norm per layer, CIFAR-10.")

# %%
if TRAIN is not None:
    for item, dataset, name in [("figg1", "mnist", "MNIST"), ("figg2", "fashionmnist", "FashionMNIST"), ("figg3", "cifar100", "CIFAR-100")]:
        curves = m24t.accuracy_curves(TRAIN)
        curves = curves[(curves.dataset == dataset) & (curves.epoch >= 1)]
        if curves.empty:
            render.not_run(f"meterez2024-{item}", NOT_RUN)
            continue
        fig, axes = plt.subplots(2, 3, figsize=(6.5, 4), sharex=True)
        for row, metric in enumerate(["train_acc", "test_acc"]):
            for ax, act in zip(axes[row], ["sin", "tanh", "identity"]):
                for depth, part in curves[curves.activation == act].groupby("depth"):
                    ax.plot(part.epoch, part[metric], label=str(depth))
                ax.set_xscale("log"); ax.set_title(act if row == 0 else "")
            axes[row][0].set_ylabel("Train accuracy" if row == 0 else "Test accuracy")
        axes[0][-1].legend(title="Depth", frameon=False, bbox_to_anchor=(1, 1), loc="upper left")
        render.figure(fig, f"meterez2024-{item}", f"{name}: running train accuracy (top) and eval-mode test accuracy "
                      f"(bottom, BN running statistics). {TRAIN_SETUP}; {_stopped_note(TRAIN)}. The identity "
                      "test-accuracy collapse at depth ≥ 500 is expected (C17) and not masked.")
    _acc_panels("cifar10", "test_acc", "meterez2024-figg4", "CIFAR-10 eval-mode test accuracy (G4 shows only the test row; the train row is Fig. 4).")
