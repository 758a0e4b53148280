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
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`daneshmand2021:`),
# decisions: `docs/decisions/daneshmand2021.md`. Bands are bootstrap 95 % CIs over runs (seeded, 1000
# resamples) unless a caption says otherwise.

# %% tags=["parameters"]
results_dir = "results/daneshmand2021"
report_dir = "report"
preset = "paper"
config_json = "{}"

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from isonorm.experiments.daneshmand2021 import summaries as s
from isonorm.report.notebook import CI, NOT_RUN, open_paper

STYLE = dict(style="whitegrid", context="paper")
page = open_paper("daneshmand2021", results_dir=results_dir, report_dir=report_dir, preset=preset,
                  config_json=config_json, style=STYLE)
cfg, render, load = page.cfg, page.render, page.load
BN_RED, VANILLA_BLUE = "tab:red", "tab:blue"

# %% [markdown]
# ## Figure 1 — |cos| of two samples across layers, BN vs vanilla

# %%
df = load("fig1/*.parquet")
if df is None:
    render.not_run("daneshmand2021-fig1", NOT_RUN)
else:
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=df, x="layer", y="abs_cosine", hue="network", style="network", markers=["o", "s"],
                 dashes=False, palette={"BN": BN_RED, "Vanilla": VANILLA_BLUE}, ax=ax, **CI)
    ax.set(xlabel="Layer", ylabel="Absolute Cosine Similarity")
    render.figure(
        fig, "daneshmand2021-fig1",
        f"|cos| between two samples (d = {df.width.iloc[0]}); BN chain from almost aligned, vanilla from "
        f"orthogonal inputs, the same W in both. Mean and 95% CI of {df.run.nunique()} runs. Layer 1 is the input.",
    )

# %% [markdown]
# ## Figure 2 — orthogonality gap vs depth (a) and width (b)

# %%
df = load("fig2a/*.parquet")
if df is None:
    render.not_run("daneshmand2021-fig2a", NOT_RUN)
else:
    df = df.assign(log_gap=np.log(df.orthogonality_gap), d=df.width.map(lambda w: f"d={w}"))
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=df, x="layer", y="log_gap", hue="d", style="d", markers=["o", "s"], dashes=False,
                 palette=[VANILLA_BLUE, BN_RED], ax=ax, **CI)
    ax.set(xlabel="Layer ℓ", ylabel="log V(H_ℓ)")
    render.figure(
        fig, "daneshmand2021-fig2a",
        f"log V(H_ℓ) of the BN chain from a diagonal H0 (n = 4). Mean and 95% CI of {df.run.nunique()} runs.",
        deviations=["The y axis is labelled log V (the code's label says 'Orthogonality Gap' for the same "
                    "values, decision B2); x counts layers applied, from 1 (the code's axis starts at 0).",
                    f"Sampler {cfg['fig2a']['sampler']}: exact in distribution, the code draws W (decision B14)."],
    )

# %%
df = load("fig2b/*.parquet")
if df is None:
    render.not_run("daneshmand2021-fig2b", NOT_RUN)
else:
    f2b = cfg["fig2b"]
    caption = s.window_average(df, tuple(f2b["caption_window"])).assign(version="caption: layers %d–%d" % tuple(f2b["caption_window"]))
    code = s.window_average(df, tuple(f2b["code_window"]), code_offset=True).assign(
        version="code: layers %d–%d, −ln(runs)" % tuple(f2b["code_window"]))
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, part, color in zip(axes, (caption, code), (VANILLA_BLUE, "tab:gray")):
        sns.lineplot(data=part, x="log_width", y="log_avg_gap", marker="o", color=color, ax=ax, **CI)
        slope = s.slope(part.log_width, part.log_avg_gap)
        ax.set(xlabel="Log(width)", ylabel="Log(avg. orthogonality gap)", title=f"{part.version.iloc[0]} (slope {slope:.2f})")
    render.figure(
        fig, "daneshmand2021-fig2b",
        f"ln of the layer-averaged V(H_ℓ) vs ln d (n = 4). Mean and 95% CI of {df.run.nunique()} runs.",
        deviations="Left (primary, decision B1): the caption's average over layers "
                   f"{f2b['caption_window'][0]}–{f2b['caption_window'][1]}. Right (secondary): the authors' "
                   "code, which averages layers 1–500 and divides every run by the number of runs. "
                   f"Sampler {f2b['sampler']}: exact in distribution, the code draws W (decision B14).",
    )

# %% [markdown]
# ## Figure 3 — validation of Assumption A1 over (n, d)

# %%
df = load("fig3/*.parquet")
if df is None:
    render.not_run("daneshmand2021-fig3", NOT_RUN)
else:
    # Two readings of the batch axis, one simulation (decision B15): left the literal one (the default), right
    # the offset one, where the column labelled n shows the chains of batch size n - batch_offset.
    f3 = cfg["fig3"]
    offset = f3["batch_offset"]
    readings = {"literal reading (default)": 0, f"offset reading: chains of batch n − {offset}": offset}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    empty = []
    for ax, (title, shift) in zip(axes, readings.items()):
        grid = (s.a1_grid(df, shift, f3["batch_sizes"]).pivot(index="width", columns="batch", values="holds")
                .reindex(columns=f3["batch_sizes"]).sort_index(ascending=False))
        empty += [n for n in grid.columns if grid[n].isna().all()]
        cells = np.ma.masked_invalid(grid.to_numpy(dtype=float))  # grey: n - batch_offset < 1, not simulated
        ax.imshow(cells, cmap=plt.get_cmap("gray").with_extremes(bad="tab:gray"), vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(grid.shape[1]), grid.columns, rotation=90)
        ax.set_yticks(range(grid.shape[0]), grid.index)
        ax.grid(False)
        # The blue curve in pixel coordinates (columns linear in n, rows log2-spaced widths), where it is on the grid.
        widths = grid.index.to_numpy()[::-1]
        n = np.linspace(grid.columns.min(), grid.columns.max(), 200)
        d = s.a1_curve(n)
        inside = (d >= widths.min()) & (d <= widths.max())
        col = np.interp(n[inside], grid.columns, range(grid.shape[1]))
        row = grid.shape[0] - 1 - np.interp(np.log2(d[inside]), np.log2(widths), range(len(widths)))
        ax.plot(col, row, color="tab:blue", lw=2, label="d = (n − 28)^1.8")
        ax.set(xlabel="n (batch size)", title=title)
        ax.legend(loc="lower right", fontsize=7)
    axes[0].set_ylabel("d (width)")
    render.figure(
        fig, "daneshmand2021-fig3",
        f"Black: A1({f3['threshold']}·α0, {f3['layers']}) failed in at least one of {df.run.nunique()} runs; "
        "white: held in all. α0 = σ_min(H0). Blue: the paper's curve. Left, the default: n is the simulated batch "
        "size, as the paper's caption says; the boundary grows like the curve but lies above it, the more so the "
        f"smaller n. Right: the same chains, the column labelled n showing batch size n − {offset}, the reading "
        "that puts the boundary just under the paper's curve; it is not the default because nothing in the paper "
        "supports the offset (decision B15)."
        + (f" Grey: n − {offset} < 1, nothing to show ({', '.join(map(str, sorted(set(empty))))})." if empty else ""),
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

# %%
df = load("depth_training/*.parquet")
if df is None:
    for item in ("daneshmand2021-fig4a", "daneshmand2021-fig5"):
        render.not_run(item, NOT_RUN)
else:
    xavier = df[df.init == "xavier"]
    loss = s.final_epoch_loss(xavier, ["depth"])
    gap = s.initial_gap(xavier, ["depth"])
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    sns.lineplot(data=gap, x="depth", y="spectral_gap", marker="o", color=BN_RED, ax=ax, **CI)
    ax.set(xlabel="Depth (Linear layers)", ylabel="Orthogonality gap at init")
    ax.yaxis.label.set_color(BN_RED)
    ax2 = ax.twinx()
    sns.lineplot(data=loss, x="depth", y="train_loss", marker="s", color=VANILLA_BLUE, ax=ax2, **CI)
    ax2.set_ylabel(f"Training loss after {int(df.epoch.max())} epochs", color=VANILLA_BLUE)
    ax2.grid(False)
    render.figure(
        fig, "daneshmand2021-fig4a",
        f"Vanilla ReLU MLP (width {cfg['depth_training']['width']}, Xavier init): spectral orthogonality gap of "
        f"the logits at initialisation (red) and training loss of the last epoch (blue) vs depth. Mean and 95% "
        f"CI of {df.run.nunique()} runs.",
        deviations="Decision B4: the gap is measured on the freshly initialised network (the code never did) "
                   "and the loss is logged every epoch (the code logged every 5th).",
    )
    both = s.final_epoch_loss(df, ["init", "depth"])
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=both, x="depth", y="train_loss", hue="init", style="init", markers=True, dashes=False,
                 palette={"xavier": VANILLA_BLUE, "iterative": BN_RED}, ax=ax, **CI)
    ax.set(xlabel="Depth", ylabel=f"Training loss after {int(df.epoch.max())} epochs")
    render.figure(
        fig, "daneshmand2021-fig5",
        f"Training loss after {int(df.epoch.max())} epochs: Xavier (blue) vs iterative orthogonalisation "
        f"(red). Mean and 95% CI of {df.run.nunique()} runs.",
        deviations="Decision B6: the init formula of the authors' code (W = U Σ^−1 Vᵀ, then unit-norm outputs "
                   "on an init batch of 3·width images), not the paper's Eq. (6).",
    )

# %%
df = load("fig4b/*.parquet")
if df is None:
    render.not_run("daneshmand2021-fig4b", NOT_RUN)
else:
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    sns.lineplot(data=df, x="epoch", y="spectral_gap", marker="o", color=BN_RED, ax=ax, **CI)
    ax.set(xlabel="Epoch", ylabel="Orthogonality gap of the output")
    ax.yaxis.label.set_color(BN_RED)
    ax2 = ax.twinx()
    sns.lineplot(data=df[df.epoch >= 1], x="epoch", y="train_loss", marker="s", color=VANILLA_BLUE, ax=ax2, **CI)
    ax2.set_ylabel("Training loss", color=VANILLA_BLUE)
    ax2.grid(False)
    f4b = cfg["fig4b"]
    render.figure(
        fig, "daneshmand2021-fig4b",
        f"{f4b['depth']}-layer ReLU MLP (width {f4b['width']}): spectral orthogonality gap of the logits (red) "
        f"and training loss (blue) per epoch; epoch 0 is the initialisation. Mean and 95% CI of "
        f"{df.run.nunique()} runs.",
        deviations="Decision B5: width 800, 4 runs, every epoch, 50 epochs as the paper says (the code used "
                   "width 1000, 5 runs, every 5th epoch).",
    )

# %% [markdown]
# ## Appendix Figure 6 — orthogonality gap through random BN and vanilla networks

# %%
df = load("appfig6/*.parquet")
for arch, item, title in (("mlp", "daneshmand2021-appfig6a", "MLP"), ("convnet", "daneshmand2021-appfig6b", "ConvNet")):
    sub = None if df is None else df[df.arch == arch]
    if sub is None or sub.empty:
        render.not_run(item, NOT_RUN)
        continue
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=sub.assign(Normalization=sub.norm.map({"batchnorm": "batchnorm", "none": "vanilla"})),
                 x="layer", y="orthogonality_gap", hue="Normalization", errorbar="sd", ax=ax)
    ax.set(xlabel="ℓ", ylabel="V(H_ℓ)", ylim=(0, 1.1), xlim=(1, sub.layer.max()), title=f"BN vs. Vanilla in {title}")
    render.figure(
        fig, item,
        f"V at the input of each layer of one random ReLU {title} with and without batch normalization, over "
        f"{sub.batch.nunique()} batches of {cfg['appfig6']['batch_size']} CIFAR-10 images. Band: ±1 SD across batches.",
        deviations="As coded (decision B9): MNIST normalisation constants on CIFAR-10, torch BatchNorm in "
                   "training mode (with mean subtraction), reflect padding for the ConvNet, one network for all batches.",
    )

# %% [markdown]
# ## Appendix Figure 7 — SVD-based initialisation for deep ConvNets

# %%
df = load("appfig7/*.parquet")
extras = [] if df is None else sorted(df.extra_layers.unique())
for item, extra in zip(("daneshmand2021-appfig7a", "daneshmand2021-appfig7b"), extras + [None, None]):
    if extra is None:
        render.not_run(item, NOT_RUN)
        continue
    sub = df[df.extra_layers == extra].assign(init=lambda f: f.init.map({"xavier": "xavier", "svd": "orthogonal"}))
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=sub[sub.epoch >= 1], x="epoch", y="train_loss", hue="init", style="init", markers=["s", "o"],
                 dashes=False, palette={"xavier": VANILLA_BLUE, "orthogonal": BN_RED}, ax=ax, **CI)
    ax.set(xlabel="Epochs", ylabel="Training loss")
    render.figure(
        fig, item,
        f"AlexNet-style CIFAR-10 ConvNet with {extra} extra 256-channel conv layers: Xavier vs SVD-based "
        f"('orthogonal') init. Mean and 95% CI of {sub.run.nunique()} runs.",
        deviations="As coded (decision B10): unnormalised inputs, Σ^−1/2 in the conv init, SGD lr 0.001, batch 30.",
    )

# %% [markdown]
# ## Appendix-G figure — fluctuations of the Gram matrix for non-linear activations

# %%
df = load("appfigg/*.parquet")
if df is None:
    render.not_run("daneshmand2021-appfigg", NOT_RUN)
else:
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for activation, g in df.groupby("activation"):
        ax.plot(np.log(g.width), np.log(g.avg_deviation), marker="o", label=activation)
    ax.set(xlabel="Log(d)", ylabel="Log(avg. L(Q))")
    ax.legend()
    render.figure(
        fig, "daneshmand2021-appfigg",
        "ln of the average deviation ‖M_ℓ − K‖_F of the BN chain's Gram matrix from its long-run mean vs ln d, "
        "for each activation ('sigmoid' is tanh(x) + 1 as in the code). One run.",
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
