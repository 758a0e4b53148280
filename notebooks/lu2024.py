# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lu, Sun, Yang, Zhou, Lin (IJCAI 2024): The Orthogonality of Weight Vectors: The Key Characteristics of Normalization and Residual Connections
#
# Every figure and table of the paper, drawn from this run's Parquet results (`results/lu2024/`),
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`lu2024:`),
# decisions: `docs/decisions/lu2024.md`. PII is the parameters independence index of the weight
# vectors (A.1.1); tables report column vectors unless a caption says otherwise. Every setting a caption names
# comes from this run's config or results; the helpers several items share are in `isonorm.report.pages.lu2024`.

# %% tags=["parameters"]
run = {}  # the run the notebook rule passes: results and report folders, preset, config section

# %%
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from isonorm.experiments.lu2024 import checkpoint_summaries as t5ck
from isonorm.experiments.lu2024 import lora_summaries as l24_lora
from isonorm.experiments.lu2024 import trained_summaries as lts
from isonorm.experiments.lu2024 import wikitext_summaries as wt
from isonorm.report.notebook import CI, NOT_RUN, open_paper
from isonorm.report.pages import lu2024 as l24

# The paper's style is unknown (decision A15); seaborn's plain white style, colour maps per figure.
cfg, render, load = open_paper("lu2024", run)

# %% [markdown]
# ## Trained networks (Tables 1–4, App. Tables 1–4, Figs. 1–2)
#
# Library: `isonorm.experiments.lu2024.trained_nets` (training) and `.trained_summaries` (reductions).
# PII is over column vectors (decision A1); both orientations are stored in the Parquet files.

# %% [markdown]
# ## Figure 1 — cosine-similarity and Gram matrix of a weight at initialisation

# %%
weights = load("fig1/init_weights.parquet", "lu2024-fig1")
if weights is not None:
    fig1 = cfg["fig1"]
    W = lts.weight_matrix(weights, fig1["layer"], epoch=0)
    maps = lts.heatmap_matrices(W)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    l24.heatmap(axes[0], maps["C_col"], f"|cos| of the columns, PII = {lts.matrix_pii(W):.3f}", fig1["colormap"])
    l24.heatmap(axes[1], maps["G_col"], "Gram WᵀW", fig1["colormap"])
    fig.tight_layout()
    render.figure(
        fig, "lu2024-fig1",
        f"Absolute cosine-similarity matrix (left, unit diagonal) and Gram matrix WᵀW (right) of {fig1['layer']}"
        f".weight ({W.shape[0]}×{W.shape[1]}) of the FNN right after PyTorch's default initialisation "
        f"(U(−1/√k, 1/√k)), seed {int(weights.seed.min())}: the {fig1['variant']} / {fig1['activation']} network "
        "drawn as its Table-3 jobs draw it (the same weights), without data and without training.",
        deviations=[
            f"Layer {fig1['layer']} and the colour map (small values light) are assumptions: the paper names "
            "neither (decision A15).",
            "The paper's default init U(−√k, √k) and its 'strictly diagonally dominant' Gram are not literally "
            "true; shown as computed (decision A16).",
        ],
    )

# %% [markdown]
# ## Table 1 — conformal capability of optimizers, FNN on MNIST

# %%
df = load("table1/*.parquet", "lu2024-table1")
if df is not None:
    table1, layers = cfg["table1"], ", ".join(cfg["table1"]["compared_layers"].values())
    defaults, fitted = l24.split_fitted(table1["runs"])
    optimizers = l24.optimizers_text(cfg["fnn"]["optimizers"], defaults)
    fitted_caption, fitted_method = l24.fitted_text(cfg, table1, fitted)
    render.table(
        l24.init_trained(lts.optimizer_table(df, table1["compared_layers"], table1["runs"]),
                         table1["compared_layers"]), "lu2024-table1",
        f"PII (column vectors) at init / after training and test accuracy (%) per optimizer, FNN with "
        f"{l24.variant_text(table1['variant'], table1['activation'])} blocks; Layer_1..3 = {layers}; "
        f"{l24.constant_init_text(table1['constant_init'])} (PII 1.0 at init, ↑ better), the others ↓ better. "
        f"{l24.seeds_text(cfg['fnn']['seeds'])}; means over runs.{fitted_caption}",
        method=f"{l24.fnn_setup(cfg)}. Optimizers: {optimizers}. {l24.fnn_decisions(cfg)}.{fitted_method}",
        deviations=[
            f"Layer mapping Layer_1..3 = {layers} and the code's architecture (1 input layer + "
            f"{cfg['fnn']['blocks']} blocks) instead of the text's 'three layers' (decision A2).",
            f"Learning rates 'adjusted' in the paper are unknown: {optimizers}, as the authors' MLP.py ships them; "
            "SGD's momentum is the code comment's, not the plain SGD of Theorem 2 (decision A3).",
        ],
    )

# %% [markdown]
# ## Table 2 — conformal capability of optimizers, SimpleCNN on CIFAR-10

# %%
df = load("table2/*.parquet")
table2 = None if df is None else lts.optimizer_table(df, cfg["table2"]["compared_layers"], cfg["table2"]["runs"])
l24.cnn_table(render, cfg, "lu2024-table2", table2)

# %% [markdown]
# ## Figure 2 — cosine-similarity and Gram matrices after training, Original vs Norm_Res

# %%
variants, fig2 = ("original", "norm_res"), cfg["fig2"]
frames = {v: load(f"table3_weights/{v}-{fig2['run']}.parquet") for v in variants}
if any(f is None for f in frames.values()):
    render.not_run("lu2024-fig2", NOT_RUN)
else:
    trained = {v: lts.weight_matrix(frames[v], fig2["layer"]) for v in variants}
    maps = {v: lts.heatmap_matrices(W) for v, W in trained.items()}
    fig, axes = plt.subplots(2, 4, figsize=(18, 8.5))
    letters = iter("abcdefgh")
    for col, (kind, orientation) in enumerate([("C_row", "rows"), ("C_col", "columns"), ("G_row", None),
                                               ("G_col", None)]):
        for row, v in enumerate(variants):
            pii = f", PII = {lts.matrix_pii(trained[v], orientation):.3f}" if orientation else ""
            l24.heatmap(axes[row, col], maps[v][kind], f"({next(letters)}) {kind} {v}{pii}", fig2["colormap"])
    fig.tight_layout()
    render.figure(
        fig, "lu2024-fig2",
        f"|cos| matrices over rows (C_row) and columns (C_col) and Grams WWᵀ (G_row), WᵀW (G_col) of "
        f"{fig2['layer']}.weight after training; top: Original (no BN, no residual), bottom: Norm_Res. The Table-3 "
        f"{fig2['run']} runs (no extra training), first seed.",
        method=f"{l24.fnn_setup(cfg)}; {l24.fnn_decisions(cfg)}.",
        deviations=[f"Layer {fig2['layer']}, panel order and colour map are assumptions (decision A15); "
                    f"{l24.constant_init_text(cfg['table3']['constant_init'])} (decision A4)."],
    )

# %% [markdown]
# ## Table 3 — Norm+Res vs Original, FNN on MNIST

# %%
df = load("table3/*.parquet", "lu2024-table3")
if df is not None:
    table3 = cfg["table3"]
    combos = [tuple(run.split("-", 1)) for run in table3["runs"]]  # activation-optimizer (-fitted)
    defaults, fitted = l24.split_fitted(optimizer for _, optimizer in combos)
    optimizers = l24.optimizers_text(cfg["fnn"]["optimizers"], defaults)
    fitted_caption, fitted_method = l24.fitted_text(cfg, table3, fitted)
    render.table(
        lts.variant_table(df, table3["headline_layer"], combos, table3["variants"]).round(4), "lu2024-table3",
        f"PII (column vectors) of {table3['headline_layer']} after training and test accuracy (%) of the FNN "
        f"without (Original) and with Norm_Res blocks, per activation/optimizer; "
        f"{l24.constant_init_text(table3['constant_init'])}. {l24.seeds_text(cfg['fnn']['seeds'])}; means over runs."
        f"{fitted_caption}",
        method=f"{l24.fnn_setup(cfg)}; {optimizers}. {l24.fnn_decisions(cfg)}.{fitted_method}",
        deviations=[
            f"The paper does not say which layer: {table3['headline_layer']} shown, all layers stored; "
            f"{l24.constant_init_text(table3['constant_init'])}; {optimizers} (decision A4).",
        ],
    )

# %% [markdown]
# ## Table 4 — Norm+Res vs Original, ResNet-18 on CIFAR-10

# %%
df = load("table4/*.parquet")
table4 = None if df is None else lts.resnet_variant_table(df, cfg, "table4")
l24.resnet_table(render, cfg, "lu2024-table4", table4, compared=lts.COMPARED_ACCURACY["lu2024-table4"])

# %% [markdown]
# ## Appendix Table 1 — notation

# %%
render.table(lts.notation_table(), "lu2024-apptable1", "Notation used in the appendix (static table).")

# %% [markdown]
# ## Appendix Table 2 — conformal capability of optimizers, SimpleCNN on CIFAR-100

# %%
df = load("apptable2/*.parquet")
apptable2 = None if df is None else lts.optimizer_table(df, cfg["apptable2"]["compared_layers"],
                                                        cfg["apptable2"]["runs"], with_accuracy=False)
l24.cnn_table(render, cfg, "lu2024-apptable2", apptable2, deviations=[
    f"No code for CIFAR-100: the CIFAR-10 model with 100 outputs, Table 2's {cfg['simple_cnn']['epochs']} epochs "
    f"and batch {cfg['simple_cnn']['batch_size']} (decision A8)."])

# %% [markdown]
# ## Appendix Table 3 — Norm+Res vs Original, ResNet-18 on CIFAR-100

# %%
df = load("apptable3/*.parquet")
apptable3 = None if df is None else lts.resnet_variant_table(df, cfg, "apptable3")
# the head reads the last stage's pooled features: 8 × width channels (A.1.4 (R))
l24.resnet_table(render, cfg, "lu2024-apptable3", apptable3, compared=lts.COMPARED_ACCURACY["lu2024-apptable3"],
                 deviations=[f"The CIFAR-100 script's Linear(64, 100) crashes; fixed to "
                             f"Linear({8 * cfg['resnet18']['width']}, 100) (decision A7)."])

# %% [markdown]
# ## Appendix Table 4 — normalisation only, residual only, both

# %%
df = load("apptable4/*.parquet", "lu2024-apptable4")
if df is not None:
    app4, layers = cfg["apptable4"], cfg["apptable4"]["compared_layers"]
    table = lts.layer_profile(df, list(layers.values()), app4["variants"])
    setup = (f"{l24.activation_name(app4['activation'])}, "
             f"{l24.optimizers_text(cfg['fnn']['optimizers'], [app4['optimizer']])}")
    render.table(
        table.rename(columns={layer: label for label, layer in layers.items()}).round(4), "lu2024-apptable4",
        f"PII (column vectors) after training of {', '.join(layers.values())} for "
        f"{', '.join(l24.variant_text(variant) for variant in app4['variants'])}; {setup}, "
        f"{l24.constant_init_text(app4['constant_init'])}. {l24.seeds_text(cfg['fnn']['seeds'])}; means over runs.",
        method=f"{l24.fnn_setup(cfg)}. {l24.fnn_decisions(cfg)}.",
        deviations=[f"The appendix states no setup: {l24.dataset_name(cfg['fnn']['dataset'])}, {setup}, layers "
                    f"{', '.join(layers.values())} are decisions (decision A9)."],
    )

# %% [markdown]
# ## Table 5 (a), row "Transformer" — the paper's six Transformers trained on WikiText-2 (lu2024-table5-transformer, decision A10)
#
# The paper gives no code and no setting beyond "six Transformers … trained on WikiText-2" and "the final fully
# connected layer in the last segment did not integrate the combination of normalization and residual
# connections". Built here as PyTorch's word_language_model Transformer (lu2024-table5-transformer proposal). This cell prepares
# the row; the Table 5 cell below renders all parts as one table.

# %%
t5t = load("table5_transformer/*.parquet", feeds=["lu2024-table5-transformer", "lu2024-table5"])
t5t_ppl = None if t5t is None else wt.validation_perplexity(t5t)
table5_transformer = None if t5t is None else l24.Table5Part(
    wt.table5_row(t5t), *l24.transformer_caption(t5t, t5t_ppl), l24.transformer_deviations(t5t))

# %% [markdown]
# Training course of the Transformer row (supplementary to Table 5): PII of the last layer's matrices per epoch
# (epoch 0 = initialisation), PII of every layer after training, and the validation perplexity.

# %%
if t5t is None:
    render.not_run("lu2024-table5-transformer", NOT_RUN)
else:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    sns.lineplot(data=wt.pii_trajectory(t5t), x="epoch", y="value", hue="matrix", hue_order=list(wt.COLUMNS),
                 marker="o", ax=axes[0], **CI)
    axes[0].set(ylabel="PII (columns)", title="last layer, per epoch")
    sns.heatmap(wt.all_layers(t5t), annot=True, fmt=".3f", cmap="YlGnBu", ax=axes[1], cbar=False)
    axes[1].set(title=f"all layers after epoch {int(t5t_ppl['epoch'].max())} (columns)", xlabel="", ylabel="layer")
    sns.lineplot(data=t5t_ppl, x="epoch", y="val_ppl", marker="o", ax=axes[2], **CI)
    axes[2].set(yscale="log", ylabel="validation perplexity", title="validation perplexity")
    for ax in (axes[0], axes[2]):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    render.figure(
        fig, "lu2024-table5-transformer",
        f"Supplementary to Table 5, Transformer row. Left: PII (column vectors) of the six matrices of the last "
        f"encoder layer after each epoch (epoch 0 = initialisation; band: bootstrap 95 % CI over "
        f"{t5t['seed'].nunique()} seed(s)). Middle: PII (columns) of every layer's matrices after training, mean "
        "over seeds. Right: validation perplexity.",
        method=f"Validation perplexity over the whole validation split, chunks of {int(t5t['bptt'].iloc[0])} tokens "
               "without carried context, as the example's evaluate. Row orientation is stored in the results too. "
               + table5_transformer.method,
        deviations=table5_transformer.deviations,
    )

# %% [markdown]
# ## Table 5 (b) PLMs and (c) LLMs — PII of one layer's attention and FFN matrices, read from the checkpoints
#
# No model is built and nothing is trained: each matrix is read alone from the pinned safetensors files and its
# PII computed in blocks, in the precision the caption names (`isonorm.experiments.lu2024.checkpoint_pii`). This
# cell prepares the PLM/LLM rows; the Table 5 cell below renders all parts as one table.

# %%
t5_frames = {name: frame for name, frame in (("PLMs", load("table5/plms.parquet", feeds=["lu2024-table5"])),
                                             ("LLMs", load("table5/llms.parquet", feeds=["lu2024-table5"])))
             if frame is not None}
table5_checkpoints = None if not t5_frames else l24.Table5Part(
    pd.concat([t5ck.table5_rows(f) for f in t5_frames.values()], ignore_index=True),
    *l24.checkpoint_caption(t5_frames, cfg["table5"]["plms"]["dtype"]), l24.checkpoint_deviations(cfg, render.preset))
if t5_frames:
    both = pd.concat([t5ck.both_orientations(f) for f in t5_frames.values()], ignore_index=True)
    print("Both orientations of every cell (decision A1: always stored); `table_uses` = the one in Table 5:")
    print(both.round(4).to_string(index=False))
    plms = t5_frames.get("PLMs")
    if plms is not None and (~plms["in_table"].astype(bool)).any():
        print("\nSupplementary: the real T5 decoder FFN (layer.2.DenseReluDense.wi / .wo), shown as '-' in the paper:")
        print(t5ck.t5_decoder_ffn(plms).round(4).to_string(index=False))

# %% [markdown]
# ## Table 5 (d) — PII before and after LoRA fine-tuning (merged adapter)
#
# The rows "Qwen (before LoRA)" and "LoRA (Qwen after LoRA merge)" of Table 5, plus their per-matrix change.
# This cell prepares the LoRA rows; the Table 5 cell below renders all parts as one table.

# %%
lora_frame = load("table5_lora/*.parquet", feeds=["lu2024-table5"])  # None: not run (data-free, or missing)
table5_lora = None
if lora_frame is not None:
    changes, lora_cfg = l24_lora.pii_changes(lora_frame), cfg["table5"]["lora"]
    table5_lora = l24.Table5Part(
        l24_lora.table5_rows(lora_frame),  # PII_col (decision A1), mean over seeds
        *l24.lora_caption(lora_frame, lora_cfg, changes, l24_lora.training_curve(lora_frame)),
        l24.lora_deviations(lora_frame, lora_cfg))
    print("Per-matrix change (mean over seeds):")
    print(changes.to_string(float_format=lambda v: f"{v:.4g}"))

# %% [markdown]
# ## Table 5 — PII of the attention and FFN matrices: Transformer, PLMs, LLMs, and after LoRA
#
# One table from the four parts above, in the paper's row order; a part that did not run is missing from it.

# %%
table5 = l24.table5({"(a) Transformer": table5_transformer, "(b)/(c) PLMs and LLMs": table5_checkpoints,
                     "(d) LoRA": table5_lora})
if table5 is None:
    render.not_run("lu2024-table5", NOT_RUN)
else:
    render.table(table5.rows, "lu2024-table5", table5.caption, method=table5.method, deviations=table5.deviations,
                 float_format=".3f")
