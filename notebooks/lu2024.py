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
# # Lu, Sun, Yang, Zhou, Lin (IJCAI 2024): The Orthogonality of Weight Vectors: The Key Characteristics of Normalization and Residual Connections
#
# Every figure and table of the paper, drawn from this run's Parquet results (`results/lu2024/`),
# each under its item id, next to what the paper printed. Settings: `config.yaml` (`lu2024:`),
# decisions: `docs/decisions/lu2024.md` (decisions A1–A17). PII is the parameters independence index of the weight
# vectors (A.1.1); tables report column vectors unless a caption says otherwise.

# %% tags=["parameters"]
results_dir = "results/lu2024"
report_dir = "report"
preset = "paper"
config_json = "{}"

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from isonorm.report.notebook import CI, NOT_RUN, open_paper

# The paper's style is unknown (decision A15); seaborn's plain white style, colour maps per figure.
STYLE = dict(style="white", context="paper")
page = open_paper("lu2024", results_dir=results_dir, report_dir=report_dir, preset=preset,
                  config_json=config_json, style=STYLE)
cfg, render, load = page.cfg, page.render, page.load

# %% [markdown]
# ## Trained networks — shared helpers (Tables 1–4, App. Tables 1–4, Figs. 1–2)
#
# Library: `isonorm.experiments.lu2024.trained_nets` (training) and `.trained_summaries` (reductions).
# PII is over column vectors (decision A1); both orientations are stored in the Parquet files.

# %%
from isonorm.experiments.lu2024 import trained_summaries as lts


def seeds_text(section: str) -> str:
    seeds = cfg[section]["seeds"]
    return f"{len(seeds)} run(s) (seeds {', '.join(str(s) for s in seeds)}; the paper: one run, seed 42)"


def init_trained(table: pd.DataFrame, labels) -> pd.DataFrame:
    """Columns "PII <label> init"/"... trained" → one "init/trained" text column per label, as the paper prints."""
    out = table.copy()
    for label in labels:
        init, trained = out.pop(f"PII {label} init"), out.pop(f"PII {label} trained")
        out[f"PII {label} (init/trained)"] = [f"{a:.3f}/{b:.3f}" for a, b in zip(init, trained)]
    if "ACC %" in out:
        out["ACC %"] = out.pop("ACC %").round(2)
    return out


def heatmap(ax, matrix, title, cmap):
    image = ax.imshow(matrix, cmap=cmap, interpolation="nearest")
    ax.set_title(title, fontsize=10)
    ax.set_xticks([]), ax.set_yticks([])
    plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04)


FNN_SETUP = ("MNIST (ToTensor only), FNN 784→{w}, {b} hidden {w}×{w} blocks linearH.0..{last}, batch {bs}, {ep} "
             "epochs, PyTorch default init").format(
    w=cfg["fnn"]["width"], b=cfg["fnn"]["blocks"], last=cfg["fnn"]["blocks"] - 1, bs=cfg["fnn"]["batch_size"],
    ep=cfg["fnn"]["epochs"])
FNN_DECISIONS = ("one BatchNorm1d shared by all blocks (decision A5); test accuracy in train mode, BN on "
                 "test-batch statistics, as MLP.py (decision A6); cuDNN on, not bit-exact (decision A14)")

# %% [markdown]
# ## Figure 1 — cosine-similarity and Gram matrix of a weight at initialisation

# %%
weights = load("fig1/init_weights.parquet")
if weights is None:
    render.not_run("lu2024-fig1", NOT_RUN)
else:
    W = lts.weight_matrix(weights, cfg["fig1"]["layer"], epoch=0)
    maps = lts.heatmap_matrices(W)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    heatmap(axes[0], maps["C_col"], f"|cos| of the columns, PII = {lts.matrix_pii(W):.3f}", cfg["fig1"]["colormap"])
    heatmap(axes[1], maps["G_col"], "Gram WᵀW", cfg["fig1"]["colormap"])
    fig.tight_layout()
    render.figure(
        fig, "lu2024-fig1",
        f"Absolute cosine-similarity matrix (left, unit diagonal) and Gram matrix WᵀW (right) of "
        f"{cfg['fig1']['layer']}.weight ({W.shape[0]}×{W.shape[1]}) of the FNN right after PyTorch's default "
        f"initialisation (U(−1/√k, 1/√k)), seed {int(weights.seed.min())}: the {cfg['fig1']['variant']} / "
        f"{cfg['fig1']['activation']} network drawn as its Table-3 jobs draw it (the same weights), without data "
        "and without training.",
        deviations=[
            f"Layer {cfg['fig1']['layer']} and the colour map (small values light) are assumptions: the paper "
            "names neither (decision A15).",
            "The paper's default init U(−√k, √k) and its 'strictly diagonally dominant' Gram are not literally "
            "true; shown as computed (decision A16).",
        ],
    )

# %% [markdown]
# ## Table 1 — conformal capability of optimizers, FNN on MNIST

# %%
df = load("table1/*.parquet")
if df is None:
    render.not_run("lu2024-table1", NOT_RUN)
else:
    layers = cfg["table1"]["compared_layers"]
    table = lts.optimizer_table(df, layers, cfg["table1"]["runs"])
    opts = ", ".join(f"{n} lr {o['lr']:g}" + (f" momentum {o['momentum']:g}" if o.get("momentum") else "")
                     for n, o in cfg["fnn"]["optimizers"].items() if n in cfg["table1"]["runs"])
    render.table(
        init_trained(table, layers), "lu2024-table1",
        f"PII (column vectors) at init / after training and test accuracy (%) per optimizer. {FNN_SETUP}; "
        f"Norm_Res blocks BN(GELU(W x) + x), {cfg['table1']['constant_init']['layer']} constant "
        f"{cfg['table1']['constant_init']['value']} (PII 1.0 at init, ↑ better), the others ↓ better. "
        f"Layer_1..3 = {', '.join(layers.values())}. Optimizers: {opts}. {seeds_text('fnn')}; means over runs. "
        f"{FNN_DECISIONS}.",
        deviations=[
            "Layer mapping Layer_1..3 = linearH.1..3 and the code's architecture (1 input layer + 5 blocks) "
            "instead of the text's 'three layers' (decision A2).",
            "Learning rates 'adjusted' in the paper are unknown: lr 1e-3 for all, SGD with momentum 0.9 (the "
            "code comment), not the plain SGD of Theorem 2 (decision A3).",
        ],
    )

# %% [markdown]
# ## Table 2 — conformal capability of optimizers, SimpleCNN on CIFAR-10

# %%
CNN_SETUP = ("SimpleCNN (conv {w}/{w2}/{w4} 3×3 with ReLU, BN after conv1/conv2, max-pool; fc {fc}), conv1 "
             "constant {c}, RandomCrop(32, pad 4) + horizontal flip (on the device), Normalize(0.5, 0.5), "
             "batch {bs}, {ep} epochs").format(
    w=cfg["simple_cnn"]["width"], w2=2 * cfg["simple_cnn"]["width"], w4=4 * cfg["simple_cnn"]["width"],
    fc=cfg["simple_cnn"]["fc_width"], c=cfg["simple_cnn"]["constant_init"]["value"],
    bs=cfg["simple_cnn"]["batch_size"], ep=cfg["simple_cnn"]["epochs"])


def cnn_item(item: str, dataset: str, with_accuracy: bool) -> None:
    df = load(f"{item}/*.parquet")
    if df is None:
        render.not_run(f"lu2024-{item}", NOT_RUN)
        return
    layers = cfg[item]["compared_layers"]
    table = lts.optimizer_table(df, layers, cfg[item]["runs"], with_accuracy=with_accuracy)
    render.table(
        init_trained(table, layers), f"lu2024-{item}",
        f"PII (column vectors of the 3×3 centre taps) at init / after training"
        + (" and test accuracy (%, eval mode)" if with_accuracy else "")
        + f" per optimizer, {dataset}. {CNN_SETUP}. Layer_1..3 = {', '.join(layers.values())}. Optimizers lr 1e-3, "
        f"SGD momentum 0.9. {seeds_text('simple_cnn')}; means over runs. cuDNN on (decision A14).",
        deviations=["Learning rates of the non-AdamW rows unknown: lr 1e-3, SGD momentum 0.9 (decision A3)."]
        + (["No code for CIFAR-100: the CIFAR-10 model with 100 outputs, Table 2's 20 epochs and batch 128 "
            "(decision A8)."] if item == "apptable2" else []),
    )


cnn_item("table2", "CIFAR-10", with_accuracy=True)

# %% [markdown]
# ## Figure 2 — cosine-similarity and Gram matrices after training, Original vs Norm_Res

# %%
variants = ("original", "norm_res")
frames = {v: load(f"table3_weights/{v}-{cfg['fig2']['run']}.parquet") for v in variants}
if any(f is None for f in frames.values()):
    render.not_run("lu2024-fig2", NOT_RUN)
else:
    layer, cmap = cfg["fig2"]["layer"], cfg["fig2"]["colormap"]
    trained = {v: lts.weight_matrix(frames[v], layer) for v in variants}
    maps = {v: lts.heatmap_matrices(W) for v, W in trained.items()}
    panels = [("C_row", "rows"), ("C_col", "columns"), ("G_row", None), ("G_col", None)]
    fig, axes = plt.subplots(2, 4, figsize=(18, 8.5))
    letters = iter("abcdefgh")
    for col, (kind, orientation) in enumerate(panels):
        for row, v in enumerate(variants):
            ax = axes[row, col]
            title = f"({next(letters)}) {kind} {v}"
            if orientation:
                title += f", PII = {lts.matrix_pii(trained[v], orientation):.3f}"
            heatmap(ax, maps[v][kind], title, cmap)
    fig.tight_layout()
    render.figure(
        fig, "lu2024-fig2",
        f"|cos| matrices over rows (C_row) and columns (C_col) and Grams WWᵀ (G_row), WᵀW (G_col) of "
        f"{layer}.weight after training; top: Original (no BN, no residual), bottom: Norm_Res. The Table-3 "
        f"{cfg['fig2']['run']} runs (no extra training), first seed. {FNN_SETUP}; {FNN_DECISIONS}.",
        deviations=[
            f"Layer {layer}, panel order and colour map are assumptions (decision A15); without constant init "
            "(decision A4).",
        ],
    )

# %% [markdown]
# ## Table 3 — Norm+Res vs Original, FNN on MNIST

# %%
df = load("table3/*.parquet")
if df is None:
    render.not_run("lu2024-table3", NOT_RUN)
else:
    combos = [tuple(run.split("-")) for run in cfg["table3"]["runs"]]
    table = lts.variant_table(df, cfg["table3"]["headline_layer"], combos, cfg["table3"]["variants"])
    render.table(
        table.round(4), "lu2024-table3",
        f"PII (column vectors) of {cfg['table3']['headline_layer']} after training and test accuracy (%) of the "
        f"FNN without (Original) and with Norm_Res blocks, per activation/optimizer. {FNN_SETUP}; Adam lr 1e-3, "
        f"SGD lr 1e-3 momentum 0.9; no constant init. {seeds_text('fnn')}; means over runs. {FNN_DECISIONS}.",
        deviations=[
            f"The paper does not say which layer: {cfg['table3']['headline_layer']} shown, all layers stored; "
            "constant init off; SGD with momentum 0.9 (decision A4).",
        ],
    )

# %% [markdown]
# ## Table 4 — Norm+Res vs Original, ResNet-18 on CIFAR-10

# %%
RESNET_SETUP = ("ResNet-18 for CIFAR (width {w}, GELU), Original = every BN replaced by the identity and no "
                "shortcut additions; RandomCrop + flip, Normalize(0.5, 0.5); Adam lr 1e-3, SGD lr 0.1 momentum 0.9 "
                "weight decay 1e-4").format(w=cfg["resnet18"]["width"])


def resnet_item(item: str, dataset: str, compared: str) -> None:
    df = load(f"{item}/*.parquet")
    if df is None:
        render.not_run(f"lu2024-{item}", NOT_RUN)
        return
    combos = [(cfg["resnet18"]["activation"], o) for o in cfg[item]["runs"]]
    table = lts.variant_table(df, cfg["resnet18"]["headline_layer"], combos, cfg["resnet18"]["variants"],
                              accuracies=("train_accuracy", "test_accuracy"))
    render.table(
        table.round(4), f"lu2024-{item}",
        f"PII (column vectors of the 3×3 centre tap) of {cfg['resnet18']['headline_layer']} after training, train "
        f"and test accuracy (%), {dataset}. {RESNET_SETUP}; batch {cfg[item]['batch_size']}, {cfg[item]['epochs']} "
        f"epochs. The paper's accuracy is compared with the {compared} accuracy (decision A7). "
        f"{seeds_text('resnet18')}; means over runs. cuDNN on (decision A14).",
        deviations=[
            "GELU (the table's label; the CIFAR-10 script uses ReLU), SGD hyper-parameters from the commented "
            "line, layer1.0.conv1, and the construction of 'Original' are decisions (decision A7).",
            "Train accuracy is measured after the last epoch on the un-augmented training set in eval mode, "
            "not as the running accuracy over augmented batches the original logged.",
        ] + (["The CIFAR-100 script's Linear(64, 100) crashes; fixed to Linear(512, 100) (decision A7)."]
             if item == "apptable3" else []),
    )


resnet_item("table4", "CIFAR-10", "train")

# %% [markdown]
# ## Appendix Table 1 — notation

# %%
render.table(lts.notation_table(), "lu2024-apptable1", "Notation used in the appendix (static table).")

# %% [markdown]
# ## Appendix Table 2 — conformal capability of optimizers, SimpleCNN on CIFAR-100

# %%
cnn_item("apptable2", "CIFAR-100", with_accuracy=False)

# %% [markdown]
# ## Appendix Table 3 — Norm+Res vs Original, ResNet-18 on CIFAR-100

# %%
resnet_item("apptable3", "CIFAR-100", "test")

# %% [markdown]
# ## Appendix Table 4 — normalisation only, residual only, both

# %%
df = load("apptable4/*.parquet")
if df is None:
    render.not_run("lu2024-apptable4", NOT_RUN)
else:
    layers = cfg["apptable4"]["compared_layers"]
    table = lts.layer_profile(df, list(layers.values()), cfg["apptable4"]["variants"])
    table = table.rename(columns={layer: label for label, layer in layers.items()})
    render.table(
        table.round(4), "lu2024-apptable4",
        f"PII (column vectors) after training of {', '.join(layers.values())} for Original act(Wx), "
        f"Normalization BN(act(Wx)), Residual act(Wx)+x and Norm_Res BN(act(Wx)+x). {FNN_SETUP}; "
        f"{cfg['apptable4']['activation']}, {cfg['apptable4']['optimizer']} lr 1e-3, no constant init. "
        f"{seeds_text('fnn')}; means over runs. {FNN_DECISIONS}.",
        deviations=["The appendix states no setup: MNIST, GELU, Adam, layers linearH.0–2 are decisions (decision A9)."],
    )

# %% [markdown]
# ## Table 5 (a), row "Transformer" — a six-layer Transformer LM trained on WikiText-2 (A-Table5a, decision A10)
#
# The paper gives no code and no setting beyond "six Transformers … trained on WikiText-2" and "the final fully
# connected layer in the last segment did not integrate the combination of normalization and residual
# connections". Built here as PyTorch's word_language_model Transformer (A-Table5a proposal). This cell prepares
# the row; the Table 5 cell below renders all parts as one table.

# %%
from isonorm.experiments.lu2024 import wikitext_summaries as wt

t5t_cfg = cfg["table5_transformer"]
t5t = load("table5_transformer/*.parquet")
table5_transformer_row = table5_transformer_caption = table5_transformer_deviations = None
if t5t is not None:
    table5_transformer_row = wt.table5_row(t5t)
    t5t_ppl = wt.validation_perplexity(t5t)
    t5t_last = int(t5t_ppl["epoch"].max())
    t5t_final_ppl = t5t_ppl[t5t_ppl["epoch"] == t5t_last]["val_ppl"]
    table5_transformer_caption = (
        f"Transformer row: PII of the column vectors (decision A1) of the six matrices of the LAST of "
        f"{int(t5t['n_layers'].iloc[0])} post-norm encoder layers (d_model {int(t5t['d_model'].iloc[0])}, "
        f"{int(t5t['n_heads'].iloc[0])} heads, FFN {int(t5t['d_ff'].iloc[0])}, dropout {t5t['dropout'].iloc[0]:g}; "
        f"Query/Keys/Values = the three row blocks of in_proj_weight), after epoch {t5t_last}, mean over "
        f"{t5t['seed'].nunique()} seed(s) {sorted(t5t['seed'].unique().tolist())}; trained on {t5t['corpus'].iloc[0]} "
        f"(vocabulary {int(t5t['vocab_size'].iloc[0])} words from the training split, {int(t5t['train_tokens'].iloc[0])} "
        f"training tokens) in windows of {int(t5t['bptt'].iloc[0])} tokens, batch {int(t5t['batch_size'].iloc[0])}, "
        f"{t5t['optimizer'].iloc[0]} lr {t5t['lr'].iloc[0]:g}; the last layer's FFN "
        f"{'bypasses' if bool(t5t['last_ffn_bypass'].iloc[0]) else 'does NOT bypass'} residual + LayerNorm. "
        f"Validation perplexity after the last epoch: {t5t_final_ppl.mean():.1f}."
    )
    table5_transformer_deviations = [
        "Transformer row: architecture and training are not given by the paper; the A-Table5a proposal is used "
        "(word_language_model Transformer, 6 layers, d_model 200, 2 heads, FFN 200, dropout 0.2, bptt 35, batch 20)",
        "the last layer's FFN output skips residual and LayerNorm (decision A10: how the paper built its 'last "
        "segment' is unknown)",
        "Adam lr 1e-3 instead of the example's SGD lr 5 with gradient clipping 0.25 (the stacked training engine "
        "has no clipping), constant learning rate (no annealing), shuffled windows instead of the example's "
        "sequential batches",
        "WikiText-2 raw (Salesforce/wikitext wikitext-2-raw-v1), whitespace words + <eos> per line, vocabulary "
        "from train; valid/test words unseen in train -> <unk>",
    ]

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
    layers = wt.all_layers(t5t)
    sns.heatmap(layers, annot=True, fmt=".3f", cmap="YlGnBu", ax=axes[1], cbar=False)
    axes[1].set(title=f"all layers after epoch {t5t_last} (columns)", xlabel="", ylabel="layer")
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
        f"over seeds. Right: validation perplexity (whole validation split, chunks of {int(t5t['bptt'].iloc[0])} "
        "tokens without carried context, as the example's evaluate). Row orientation is stored in the results too.",
        deviations=table5_transformer_deviations,
    )

# %% [markdown]
# ## Table 5 (b) PLMs and (c) LLMs — PII of one layer's attention and FFN matrices, read from the checkpoints
#
# No model is built and nothing is trained: each matrix is read alone from the pinned safetensors files and its
# PII computed in float64 in blocks (`isonorm.experiments.lu2024.checkpoint_pii`). This cell prepares the
# PLM/LLM rows; the Table 5 cell below renders all parts as one table.

# %%
from isonorm.experiments.lu2024 import checkpoint_summaries as t5ck

t5_cfg = cfg["table5"]
t5_plms, t5_llms = load("table5/plms.parquet"), load("table5/llms.parquet")
t5_parts = [f for f in (t5_plms, t5_llms) if f is not None]
table5_ckpt_rows = pd.concat([t5ck.table5_rows(f) for f in t5_parts], ignore_index=True) if t5_parts else None
table5_ckpt_caption, table5_ckpt_deviations = "", []
if t5_parts:
    sources = "; ".join(f"{r.model}: {r.checkpoint}" for r in pd.concat(t5_parts).drop_duplicates("model").itertuples())
    layers = ", ".join(f"{name} layer {f['layer'].iloc[0]}" for name, f in (("PLMs", t5_plms), ("LLMs", t5_llms))
                       if f is not None)
    table5_ckpt_caption = (
        f"PLM/LLM rows: PII of the pre-trained weights ({layers}), one checkpoint each, no training, no seeds "
        f"(deterministic). Cells: PII over columns (the paper's convention, decision A1) except Atten_Output, "
        f"Linear_1, Linear_2 of BERT/RoBERTa (PLM.py computes rows) and, by analogy, GPT-2/T5. GPT-2's Conv1D "
        f"weights are transposed to (out, in) and c_attn split into Q/K/V; Qwen's c_attn (12288×4096) is split "
        f"into three 4096-row blocks. LLaMA: Linear_1 = up_proj, Linear_2 = gate_proj (decision A12); Qwen: w1/w2. "
        f"Metric in {t5_cfg['plms']['dtype']} from fp16/fp32 weights. Checkpoints: {sources}."
    )
    table5_ckpt_deviations = [
        "decision A11: T5 = t5-base and layer 0 for GPT-2/T5 (the paper names neither); T5/Decoder Linear_1/2 are "
        "shown as '-' as published although the decoder has an FFN (layer.2.DenseReluDense, table below)",
        "decision A12: LLaMA = huggyllama/llama-7b, LLaMA 2 = meta-llama/Llama-2-7b-hf, Qwen = Qwen/Qwen-7B, "
        "layer 8 for all (only Qwen's is in the authors' code)",
        "every checkpoint pinned by revision (config.yaml checkpoints: models:); the paper gives none",
    ]
    if preset == "quick":
        table5_ckpt_deviations.append("quick preset: tiny random stand-ins of the same classes, not the real weights")
    both = pd.concat([t5ck.both_orientations(f) for f in t5_parts], ignore_index=True)
    print("Both orientations of every cell (decision A1: always stored); `table_uses` = the one in Table 5:")
    print(both.round(4).to_string(index=False))
    if t5_plms is not None and (~t5_plms["in_table"].astype(bool)).any():
        print("\nSupplementary: the real T5 decoder FFN (layer.2.DenseReluDense.wi / .wo), shown as '-' in the paper:")
        print(t5ck.t5_decoder_ffn(t5_plms).round(4).to_string(index=False))

# %% [markdown]
# ## Table 5 (d) — PII before and after LoRA fine-tuning (Qwen-7B, merged adapter)
#
# The rows "Qwen (before LoRA)" and "LoRA (Qwen after LoRA merge)" of Table 5, plus their per-matrix change.
# This cell prepares the LoRA rows; the Table 5 cell below renders all parts as one table.

# %%
from isonorm.experiments.lu2024 import lora_summaries as l24_lora

lora_frame = load("table5_lora/*.parquet")
lora_cfg = cfg["table5"]["lora"]
table5_lora_rows = None  # None: not run (compute: data-free, or the results are missing)
table5_lora_caption, table5_lora_deviations = "", []
if lora_frame is not None:
    rows = l24_lora.pii_table(lora_frame)  # PII_col (decision A1), mean over seeds
    rows.loc["change (LoRA − Qwen)"] = rows.iloc[1] - rows.iloc[0]
    table5_lora_rows = rows.reset_index()
    changes = l24_lora.pii_changes(lora_frame)
    first = lora_frame.iloc[0]
    seeds = sorted(lora_frame.seed.unique())
    losses = l24_lora.training_curve(lora_frame)
    last_loss = losses[losses.step == losses.step.max()].loss.mean()
    table5_lora_caption = (
        f"LoRA rows: PII_col of block {first.layer}'s Query/Keys/Values (row blocks of the packed c_attn for Qwen v1), "
        f"attention output, Linear_1 (up: w1 / up_proj) and Linear_2 (gate: w2 / gate_proj) of {first.checkpoint} "
        f"({first.model_type}), before LoRA and after merge_and_unload(). LoRA with peft: r = {first['rank']}, "
        f"α = {first.alpha}, dropout {lora_cfg['dropout']}, targets {first.targets}, {first['dtype']} base, "
        f"AdamW lr {lora_cfg['lr']} (constant with {lora_cfg['warmup_steps']} warm-up steps, "
        f"grad-norm clip {lora_cfg['max_grad_norm']}), batch {lora_cfg['batch_size']} × "
        f"{lora_cfg['grad_accumulation']} accumulation, {lora_cfg['epochs']} epoch(s) = "
        f"{first.optimizer_steps} optimizer steps on the first {first.n_examples} examples of {first.instructions_source} "
        f"({first.n_dropped} dropped: prompt ≥ max length {lora_cfg['max_length']}; {first.train_tokens} "
        f"tokens), Stanford Alpaca prompt template, loss on the response tokens only (prompt labels masked). "
        f"Final training loss {last_loss:.3f}. Seeds {', '.join(map(str, seeds))} ({len(seeds)} run(s); mean shown). "
        f"Merging moved each matrix by {changes.relative_change.min():.2%}–{changes.relative_change.max():.2%} "
        f"(relative Frobenius norm); largest |PII_col change| {changes['PII_col change'].abs().max():.4f}."
    )
    table5_lora_deviations = [
        "decision A13: the paper publishes neither adapter nor recipe; plain LoRA (peft, bf16 base, no 4-bit QLoRA) "
        "with Firefly's Qwen-7B hyper-parameters on the first 5,000 Alpaca examples, max length 512 — the "
        "comparison with the paper's LoRA row is qualitative (PII stays small, changes ≤ about 0.01 per matrix)",
        "the 'Qwen (before LoRA)' row is measured in the same job from the same base weights (the authors' "
        "pre-LoRA block is disabled in the shipped script)",
        "Linear_1/Linear_2 = w1/w2 (up/gate) as in qwen_lora.py; both PII orientations are stored, the table "
        "shows PII_col (decision A1)",
    ]
    if first.model_type != "qwen":
        table5_lora_deviations.append(
            f"the base model is {first.checkpoint} ({first.model_type}), not Qwen-7B v1 "
            "(`lu2024: table5: lora: checkpoint`)"
        )
    print("Per-matrix change (mean over seeds):")
    print(changes.to_string(float_format=lambda v: f"{v:.4g}"))

# %% [markdown]
# ## Table 5 — PII of the attention and FFN matrices: Transformer, PLMs, LLMs, and after LoRA
#
# One table from the four parts above, in the paper's row order; a part that did not run is missing from it.

# %%
table5_parts = [
    (table5_transformer_row, table5_transformer_caption, table5_transformer_deviations),
    (table5_ckpt_rows, table5_ckpt_caption, table5_ckpt_deviations),
    (table5_lora_rows, table5_lora_caption, table5_lora_deviations),
]
table5_ran = [part for part in table5_parts if part[0] is not None]
if not table5_ran:
    render.not_run("lu2024-table5", NOT_RUN)
else:
    table5 = pd.concat([rows for rows, _, _ in table5_ran], ignore_index=True)
    missing = [name for name, (rows, _, _) in zip(("(a) Transformer", "(b)/(c) PLMs and LLMs", "(d) LoRA"),
                                                  table5_parts) if rows is None]
    caption = " ".join(text for _, text, _ in table5_ran)
    if missing:
        caption += f" Not run in this configuration: {', '.join(missing)}."
    render.table(table5, "lu2024-table5", caption,
                 deviations=[d for _, _, devs in table5_ran for d in devs], float_format=".3f")
