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
# # Daneshmand, Joudaki, Bach (NeurIPS 2021): Batch Normalization Orthogonalizes Representations in Deep Random Networks
#
# Every figure and table of the paper, drawn from this run's Parquet results (`results/daneshmand2021/`),
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`daneshmand2021:`), each
# caption quoting the ones this run used; decisions: `docs/decisions/daneshmand2021.md`. Bands are seeded
# bootstrap confidence intervals of the mean over runs (`isonorm.report.notebook.CI`, the level in each caption)
# unless a caption says otherwise.

# %% tags=["parameters"]
run = {}  # the run the notebook rule passes: results and report folders, preset, config section

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from isonorm.experiments.daneshmand2021 import paper_summaries as s
from isonorm.report.notebook import CI, NOT_RUN, open_paper
from isonorm.report.pages import daneshmand2021 as p
from isonorm.report.pages.daneshmand2021 import BN_RED, VANILLA_BLUE

cfg, render, load = open_paper("daneshmand2021", run)

# %% [markdown]
# ## Figure 1 — |cos| of two samples across layers, BN vs vanilla

# %%
df = load("fig1/*.parquet", "daneshmand2021-fig1")
if df is not None:
    fig = p.variant_lines(df, "layer", "abs_cosine", "network", markers=["o", "s"],
                          palette={"BN": BN_RED, "Vanilla": VANILLA_BLUE}, xlabel="Layer",
                          ylabel="Absolute Cosine Similarity")
    render.figure(
        fig, "daneshmand2021-fig1",
        f"|cos| between two samples (d = {df.width.iloc[0]}); BN chain from almost aligned, vanilla from "
        f"orthogonal inputs, the same W in both. {p.mean_ci(df.run.nunique())} Layer 1 is the input.",
    )

# %% [markdown]
# ## Figure 2 — orthogonality gap vs depth (a) and width (b)

# %%
df = load("fig2a/*.parquet", "daneshmand2021-fig2a")
if df is not None:
    df = df.assign(log_gap=np.log(df.orthogonality_gap), d=df.width.map(lambda w: f"d={w}"))
    fig = p.variant_lines(df, "layer", "log_gap", "d", markers=["o", "s"], palette=[VANILLA_BLUE, BN_RED],
                          xlabel="Layer ℓ", ylabel="log V(H_ℓ)")
    render.figure(
        fig, "daneshmand2021-fig2a",
        f"log V(H_ℓ) of the BN chain from a diagonal H0 (n = {cfg['fig2a']['batch']}). "
        f"{p.mean_ci(df.run.nunique())}",
        deviations=["The y axis is labelled log V (the code's label says 'Orthogonality Gap' for the same "
                    "values, decision B2); x counts layers applied, from 1 (the code's axis starts at 0).",
                    f"Sampler {cfg['fig2a']['sampler']}: exact in distribution, the code draws W (decision B14)."],
    )

# %%
df = load("fig2b/*.parquet", "daneshmand2021-fig2b")
if df is not None:
    f2b = cfg["fig2b"]
    (c0, c1), (k0, k1) = f2b["caption_window"], f2b["code_window"]
    caption = s.window_average(df, (c0, c1)).assign(version=f"caption: layers {c0}–{c1}")
    code = s.window_average(df, (k0, k1), code_offset=True).assign(version=f"code: layers {k0}–{k1}, −ln(runs)")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, part, color in zip(axes, (caption, code), (VANILLA_BLUE, "tab:gray")):
        sns.lineplot(data=part, x="log_width", y="log_avg_gap", marker="o", color=color, ax=ax, **CI)
        slope = s.slope(part.log_width, part.log_avg_gap)
        ax.set(xlabel="Log(width)", ylabel="Log(avg. orthogonality gap)",
               title=f"{part.version.iloc[0]} (slope {slope:.2f})")
    render.figure(
        fig, "daneshmand2021-fig2b",
        f"ln of the layer-averaged V(H_ℓ) vs ln d (n = {f2b['batch']}). {p.mean_ci(df.run.nunique())}",
        deviations=f"Left (primary, decision B1): the caption's average over layers {c0}–{c1}. Right (secondary): "
                   f"the authors' code's version, which averages layers {k0}–{k1} and divides every run by the "
                   f"number of runs. Sampler {f2b['sampler']}: exact in distribution, the code draws W (decision B14).",
    )

# %% [markdown]
# ## Figure 3 — validation of Assumption A1 over (n, d)

# %%
# Two readings of the batch axis, one simulation (decision B15): left the literal one (the default), right the
# offset one, where the column labelled n shows the chains of batch size n - batch_offset.
f3 = cfg["fig3"]
df = load("fig3/*.parquet", "daneshmand2021-fig3")
if df is not None:
    offset = f3["batch_offset"]
    images = {"literal reading (default)": s.a1_image(df, 0, f3["batch_sizes"]),
              f"offset reading: chains of batch n − {offset}": s.a1_image(df, offset, f3["batch_sizes"])}
    fig = p.a1_figure(images, {title: s.a1_curve_pixels(image) for title, image in images.items()}, s.A1_CURVE_LABEL)
    empty = sorted({n for image in images.values() for n in image.columns if image[n].isna().all()})  # n − offset < 1
    render.figure(
        fig, "daneshmand2021-fig3",
        f"Black: A1({f3['threshold']}·α0, {f3['layers']}) failed in at least one of {df.run.nunique()} runs; "
        "white: held in all; α0 = σ_min(H0). Blue: the paper's curve. Left (default): n is the simulated batch "
        f"size; right: the same chains, the column labelled n showing batch size n − {offset} (decision B15)."
        + (f" Grey: n − {offset} < 1, nothing to show ({', '.join(map(str, empty))})." if empty else ""),
        method="The left panel reads n as the paper's caption does, the simulated batch size. The right panel is "
               "an offset reading of the batch axis, drawn to set the boundary beside the paper's curve; it is not "
               "the default because nothing in the paper supports the offset (decision B15).",
        deviations=["Decision B3: the paper gives no code; H0 is Gaussian scaled to unit Frobenius norm before "
                    f"α0 is taken; grid n × d as configured; sampler: {f3['sampler']} (exact in distribution, "
                    "decision B14). Where d < n no representation has full rank and A1 fails.",
                    "Decision B15: no convention of A1 (scale of H0, last layer, most runs, the constant) moves the "
                    "boundary onto the paper's curve; the right panel is the offset reading, scored as "
                    "`…_offset`."],
        paper_points="a heat map of held/failed cells cannot carry them",
    )

# %% [markdown]
# ## Table 1 — Gaussian approximation of representations (static)

# %%
table1 = pd.DataFrame(
    [
        ["Vanilla MLP", "infinite", "finite", "Converges to Gaussian as width → ∞"],
        ["Vanilla Convnet", "infinite", "finite", "Converges to Gaussian as width → ∞"],
        ["BN MLP (Cor. 3)", "(in)finite", "(in)finite", "In a O(width^{−1/4})-W2 ball around Gaussian"],
    ],
    columns=["Network", "Width", "Depth", "Distribution of outputs"],
)
render.table(table1, "daneshmand2021-table1",
             "Distribution of representations in random vanilla and BN networks (static, from the paper's text). "
             "For the convnet, width is the number of channels.")

# %% [markdown]
# ## Figure 4 and Figure 5 — orthogonality and optimisation (CIFAR-10 MLPs)
#
# Figs. 4a and 5 share their training runs; Fig. 4b has its own.

# %%
depth_runs = load("depth_training/*.parquet", feeds=["daneshmand2021-fig4a", "daneshmand2021-fig5"])
dt = cfg["depth_training"]

# %%
if depth_runs is None:
    render.not_run("daneshmand2021-fig4a", NOT_RUN)
else:
    xavier = depth_runs[depth_runs.init == "xavier"]
    epochs = int(depth_runs.epoch.max())
    fig = p.gap_and_loss(s.initial_gap(xavier, ["depth"]), s.final_epoch_loss(xavier, ["depth"]), "depth",
                         "Depth (Linear layers)", "Orthogonality gap at init", f"Training loss after {epochs} epochs")
    render.figure(
        fig, "daneshmand2021-fig4a",
        f"Vanilla ReLU MLP (width {dt['width']}, Xavier init): spectral orthogonality gap of the logits at "
        f"initialisation (red) and training loss of the last epoch (blue) vs depth. "
        f"{p.mean_ci(depth_runs.run.nunique())}",
        deviations="Decision B4: the gap is measured on the freshly initialised network (the code never did) "
                   "and the loss is logged every epoch (the code logged every 5th).",
    )

# %%
if depth_runs is None:
    render.not_run("daneshmand2021-fig5", NOT_RUN)
else:
    epochs = int(depth_runs.epoch.max())
    fig = p.variant_lines(s.final_epoch_loss(depth_runs, ["init", "depth"]), "depth", "train_loss", "init",
                          markers=True, palette={"xavier": VANILLA_BLUE, "iterative": BN_RED}, xlabel="Depth",
                          ylabel=f"Training loss after {epochs} epochs")
    render.figure(
        fig, "daneshmand2021-fig5",
        f"Training loss after {epochs} epochs: Xavier (blue) vs iterative orthogonalisation (red). "
        f"{p.mean_ci(depth_runs.run.nunique())}",
        deviations="Decision B6: the init formula of the authors' code (W = U Σ^−1 Vᵀ, then unit-norm outputs "
                   f"on an init batch of {dt['init_batch_factor']}·width images), not the paper's Eq. (6).",
    )

# %%
df = load("fig4b/*.parquet", "daneshmand2021-fig4b")
if df is not None:
    fig = p.gap_and_loss(df, df[df.epoch >= 1], "epoch", "Epoch", "Orthogonality gap of the output", "Training loss")
    f4b = cfg["fig4b"]
    render.figure(
        fig, "daneshmand2021-fig4b",
        f"{f4b['depth']}-layer ReLU MLP (width {f4b['width']}): spectral orthogonality gap of the logits (red) "
        f"and training loss (blue) per epoch; epoch 0 is the initialisation. {p.mean_ci(df.run.nunique())}",
        deviations=f"Decision B5: width {f4b['width']}, {f4b['runs']} runs, every epoch, {f4b['epochs']} epochs: "
                   "the paper's width, runs and logging with the code's number of epochs (the code used width "
                   "1000, 5 runs, every 5th epoch).",
    )

# %% [markdown]
# ## Appendix Figure 6 — orthogonality gap through random BN and vanilla networks

# %%
appfig6 = load("appfig6/*.parquet", feeds=["daneshmand2021-appfig6a", "daneshmand2021-appfig6b"])

# %%
p.appfig6_item(render, "daneshmand2021-appfig6a", appfig6, "mlp", "MLP", cfg["appfig6"])

# %%
p.appfig6_item(render, "daneshmand2021-appfig6b", appfig6, "convnet", "ConvNet", cfg["appfig6"])

# %% [markdown]
# ## Appendix Figure 7 — SVD-based initialisation for deep ConvNets
#
# Panel a has the fewer extra layers, panel b the more.

# %%
appfig7 = load("appfig7/*.parquet", feeds=["daneshmand2021-appfig7a", "daneshmand2021-appfig7b"])

# %%
p.appfig7_item(render, "daneshmand2021-appfig7a", appfig7, panel=0, cfg=cfg["appfig7"])

# %%
p.appfig7_item(render, "daneshmand2021-appfig7b", appfig7, panel=1, cfg=cfg["appfig7"])

# %% [markdown]
# ## Appendix-G figure — fluctuations of the Gram matrix for non-linear activations

# %%
df = load("appfigg/*.parquet", "daneshmand2021-appfigg")
if df is not None:
    g_cfg = cfg["appfigg"]
    # Decision B16: each point is the mean of ln avg L(Q) over the runs of its (activation, width).
    levels = (df.assign(ln_dev=np.log(df.avg_deviation)).groupby(["activation", "width"]).ln_dev.mean()
              .reset_index())
    fig, ax = plt.subplots(figsize=p.SIZE)
    for activation, g in levels.groupby("activation"):
        ax.plot(np.log(g.width), g.ln_dev, marker="o", label=activation)
    ax.set(xlabel="Log(d)", ylabel="Log(avg. L(Q))")
    ax.legend()
    render.figure(
        fig, "daneshmand2021-appfigg",
        "ln of the average deviation ‖M_ℓ − K‖_F of the BN chain's Gram matrix from its long-run mean vs ln d, "
        "for each activation ('sigmoid' is tanh(x) + 1 as in the code); each point the mean over "
        f"{df.groupby(['activation', 'width']).size().max()} runs, each chain averaged after a burn-in of "
        f"{g_cfg['burn_in']} layers (decision B16).",
        deviations="Decision B8: the authors' plotting loop drew the last activation (sin) under all four "
                   "labels; here each activation has its own curve. Sampler "
                   f"{cfg['appfigg']['sampler']}: exact in distribution, the code draws W (decision B14).",
    )

# %% [markdown]
# ## Appendix Table 2 — notation

# %%
notation = pd.DataFrame(
    [
        ["n", "batch size (number of samples)"],
        ["d", "width (number of features)"],
        ["H_ℓ ∈ R^{d×n}", "representation after ℓ layers; columns are samples"],
        ["W_ℓ ∈ R^{d×d}", "Gaussian weights of layer ℓ, i.i.d. N(0, 1/d)"],
        ["BN(M)", "diag(M Mᵀ)^{−1/2} M: each feature scaled to unit norm across the batch"],
        ["V(H)", "orthogonality gap ‖HᵀH/‖H‖_F² − I_n/n‖_F"],
        ["α", "lower bound on σ_min of the representations in A1"],
        ["A1(α, ℓ)", "assumption: σ_min(H_k) ≥ α for all k ≤ ℓ"],
    ],
    columns=["Symbol", "Meaning"],
)
render.table(notation, "daneshmand2021-apptable2",
             "Notation (rebuilt from the main text; the supplement with the original table is not available).")

# %% [markdown]
# ## Appendix H — comparison with Brock et al. (2021)

# %%
render.not_reproducible(
    "daneshmand2021-apph",
    "Appendix H compares iterative orthogonalisation with the BN replacement of Brock et al. (2021). The "
    "supplement that describes it is not retrievable and the authors' repository has no code for it, so its "
    "setup cannot be specified (decision B11).",
)
