"""Helpers of ``notebooks/lu2024.py`` that several of its items share: the setup text of the three model families
(A.1.4 of docs/decisions/lu2024.md), the optimizer tables of the SimpleCNN and ResNet-18 items, the heat maps of
Figs. 1–2, and the parts of Table 5 (whose Transformer part also captions its training-course figure).

Every setting a caption names is read from ``cfg``, the run's ``lu2024:`` section of config.yaml, or from the
results' own columns, never written here as a number; what stays written out is the paper's own text and fixed
properties of this project's code. The summaries (``isonorm.experiments.lu2024``) stay in the notebook, which
passes their tables and frames in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ...verdicts.comparison import FITTED_RUN
from ..notebook import NOT_RUN, ItemRenderer

Config = Mapping[str, Any]

# Display names of the config's values (a name not listed is shown as written).
DATASETS = {"mnist": "MNIST", "cifar10": "CIFAR-10", "cifar100": "CIFAR-100"}
TRANSFORMS = {"to_tensor": "ToTensor only", "half": "Normalize(0.5, 0.5)"}  # isonorm.data.preprocess
ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "ReLU", "gelu": "GELU"}
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop"}
# The FNN block variants (A.1.4 (F), decision A9): the paper's name and what a block computes, act = activation.
VARIANTS = {"original": ("Original", "act(Wx)"), "norm": ("Normalization", "BN(act(Wx))"),
            "res": ("Residual", "act(Wx) + x"), "norm_res": ("Norm_Res", "BN(act(Wx) + x)")}


def item_section(cfg: Config, item_id: str) -> Config:
    """The config section of an item: ``lu2024-table2`` → ``cfg["table2"]``."""
    return cfg[item_id.removeprefix("lu2024-")]


def seeds_text(seeds: Sequence[int]) -> str:
    return f"{len(seeds)} run(s) (seeds {', '.join(str(s) for s in seeds)}; the paper: one run, seed 42)"


def optimizers_text(optimizers: Mapping[str, Mapping[str, float]], names: Iterable[str],
                    fitted: Mapping[str, Mapping[str, float]] | None = None) -> str:
    """"SGD lr 0.001 momentum 0.9, Adam lr 0.001, Adam (fitted) lr 0.01": the settings of the named runs, in the
    config's order, a fitted run's (``<optimizer>-fitted``, decision A3) with its item's ``fitted`` overrides."""
    names = set(names)
    parts = []
    for suffix, label in (("", ""), (FITTED_RUN, " (fitted)")):
        for name, settings in optimizers.items():
            if name + suffix in names:
                settings = {**settings, **((fitted or {}).get(name, {}) if suffix else {})}
                extras = "".join(f" {key.replace('_', ' ')} {settings[key]:g}" for key in ("momentum", "weight_decay")
                                 if settings.get(key))
                parts.append(f"{OPTIMIZERS.get(name, name)}{label} lr {settings['lr']:g}{extras}")
    return ", ".join(parts)


def split_fitted(runs: Iterable[str]) -> tuple[list[str], list[str]]:
    """The run labels of an item's own protocol and its fitted readings (``<optimizer>-fitted``, decision A3)."""
    runs = list(runs)
    return [r for r in runs if not r.endswith(FITTED_RUN)], [r for r in runs if r.endswith(FITTED_RUN)]


def fitted_text(cfg: Mapping[str, Any], item: Mapping[str, Any], fitted: Sequence[str]) -> tuple[str, str]:
    """(the caption's pointer, the method's sentence) on an item's fitted rows, or ("", "") without any: the caption
    says what is drawn, the method how the fitted rates were chosen."""
    if not fitted:
        return "", ""
    settings = optimizers_text(cfg["fnn"]["optimizers"], fitted, item.get("fitted"))
    return (" Rows marked -fitted: the fitted reading (decision A3).",
            f" Fitted reading ({settings}): learning rates picked from a CPU sweep to come near the paper's numbers, "
            "which show how far the setting must move; never scored as matches (decision A3).")


def dataset_name(name: str) -> str:
    return DATASETS.get(name, name)


def activation_name(name: str) -> str:
    return ACTIVATIONS.get(name, name)


def variant_text(variant: str, activation: str = "act") -> str:
    """"Norm_Res BN(GELU(Wx) + x)": a variant's name and block with the activation filled in."""
    name, block = VARIANTS[variant]
    return f"{name} {block.replace('act', activation_name(activation))}"


def constant_init_text(constant: Mapping[str, Any] | None) -> str:
    return "no constant init" if constant is None else f"{constant['layer']} constant {constant['value']}"


def augment_text(family: Config) -> str:
    """The training-batch augmentation of a CIFAR family (A.1.4 (C), (R)) and its normalisation."""
    augment = (f"RandomCrop(32, pad {family['crop_padding']}) + horizontal flip (on the device)"
               if family["augment"] else "no augmentation")
    return f"{augment}, {TRANSFORMS.get(family['transform'], family['transform'])}"


def init_trained(table: pd.DataFrame, labels: Iterable[str]) -> pd.DataFrame:
    """Columns "PII <label> init"/"... trained" → one "init/trained" text column per label, as the paper prints."""
    out = table.copy()
    for label in labels:
        init, trained = out.pop(f"PII {label} init"), out.pop(f"PII {label} trained")
        out[f"PII {label} (init/trained)"] = [f"{a:.3f}/{b:.3f}" for a, b in zip(init, trained)]
    if "ACC %" in out:
        out["ACC %"] = out.pop("ACC %").round(2)
    return out


def heatmap(ax: Axes, matrix: np.ndarray, title: str, cmap: str) -> None:
    """One panel of Figs. 1–2: the matrix as an image with its colour bar (decision A15)."""
    image = ax.imshow(matrix, cmap=cmap, interpolation="nearest")
    ax.set_title(title, fontsize=10)
    ax.set_xticks([]), ax.set_yticks([])
    plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04)


# --- model (F), the MNIST FNN: Tables 1 and 3, App. Table 4, Figs. 1–2 -----------------------------------------

def fnn_setup(cfg: Config) -> str:
    fnn = cfg["fnn"]
    width, blocks = fnn["width"], fnn["blocks"]
    return (f"{dataset_name(fnn['dataset'])} ({TRANSFORMS.get(fnn['transform'], fnn['transform'])}), "
            f"FNN 784→{width}, {blocks} hidden {width}×{width} blocks linearH.0..{blocks - 1}, batch "
            f"{fnn['batch_size']}, {fnn['epochs']} epochs, PyTorch default init")


def fnn_decisions(cfg: Config) -> str:
    fnn = cfg["fnn"]
    norm = "one BatchNorm1d shared by all blocks" if fnn["shared_norm"] else "one BatchNorm1d per block"
    test = ("test accuracy in train mode, BN on test-batch statistics, as MLP.py" if fnn["test_train_mode"]
            else "test accuracy in eval mode")
    return f"{norm} (decision A5); {test} (decision A6); cuDNN on, not bit-exact (decision A14)"


# --- model (C), SimpleCNN: Table 2, App. Table 2 ------------------------------------------------------------------

def cnn_setup(cfg: Config) -> str:
    cnn = cfg["simple_cnn"]
    width = cnn["width"]
    return (f"SimpleCNN (conv {width}/{2 * width}/{4 * width} 3×3 with ReLU, BN after conv1/conv2, max-pool; fc "
            f"{cnn['fc_width']}), {constant_init_text(cnn['constant_init'])}, {augment_text(cnn)}, batch "
            f"{cnn['batch_size']}, {cnn['epochs']} epochs")


def cnn_table(render: ItemRenderer, cfg: Config, item_id: str, table: pd.DataFrame | None,
              deviations: Sequence[str] = ()) -> None:
    """Table 2 or App. Table 2 from ``optimizer_table``'s rows (None: not run), with the item's own deviations."""
    if table is None:
        render.not_run(item_id, NOT_RUN)
        return
    item, cnn = item_section(cfg, item_id), cfg["simple_cnn"]
    layers = item["compared_layers"]
    accuracy = " and test accuracy (%, eval mode)" if "ACC %" in table else ""
    unknown = [name for name in item["runs"] if name != "adamw"]  # CNN-CIFAR10.py ships AdamW (lu2024-table2)
    render.table(
        init_trained(table, layers), item_id,
        f"PII (column vectors of the 3×3 centre taps) at init / after training{accuracy} per optimizer, "
        f"{dataset_name(item['dataset'])}, SimpleCNN; Layer_1..3 = {', '.join(layers.values())}. "
        f"{seeds_text(cnn['seeds'])}; means over runs.",
        method=f"{cnn_setup(cfg)}. Optimizers: {optimizers_text(cnn['optimizers'], item['runs'])}. cuDNN on "
               "(decision A14).",
        deviations=[f"Learning rates of the non-AdamW rows unknown: {optimizers_text(cnn['optimizers'], unknown)} "
                    "(decision A3).", *deviations],
    )


# --- model (R), ResNet-18: Table 4, App. Table 3 -------------------------------------------------------------------

def resnet_table(render: ItemRenderer, cfg: Config, item_id: str, table: pd.DataFrame | None, compared: str,
                 deviations: Sequence[str] = ()) -> None:
    """Table 4 or App. Table 3 from ``variant_table``'s rows (None: not run); ``compared``: the accuracy metric
    the paper's is compared with (decision A7)."""
    if table is None:
        render.not_run(item_id, NOT_RUN)
        return
    item, resnet = item_section(cfg, item_id), cfg["resnet18"]
    layer, activation = resnet["headline_layer"], activation_name(resnet["activation"])
    render.table(
        table.round(4), item_id,
        f"PII (column vectors of the 3×3 centre tap) of {layer} after training, train and test accuracy (%), "
        f"{dataset_name(item['dataset'])}: ResNet-18 for CIFAR (width {resnet['width']}, {activation}) with BN and "
        f"shortcuts (Norm_Res) and without (Original); batch {item['batch_size']}, {item['epochs']} epochs. "
        f"{seeds_text(resnet['seeds'])}; means over runs.",
        method=f"The paper's accuracy is compared with the {compared.removesuffix('_accuracy')} accuracy (decision "
               "A7). train_accuracy: the running train-mode accuracy over the last epoch's augmented batches, as the "
               "original logs it; train_accuracy_eval: eval mode on the un-augmented training set after the last "
               "epoch, the alternative reading. Original = every BN replaced by the identity and no shortcut "
               f"additions; {augment_text(resnet)}; {optimizers_text(resnet['optimizers'], item['runs'])}. cuDNN on "
               "(decision A14).",
        deviations=[
            f"{activation} (the table's label; the CIFAR-10 script uses ReLU), SGD hyper-parameters from the "
            f"commented line, {layer}, and the construction of 'Original' are decisions (decision A7).",
            *deviations,
        ],
    )


# --- Table 5: the Transformer, checkpoint and LoRA parts ---------------------------------------------------------

class Table5Part(NamedTuple):
    rows: pd.DataFrame
    caption: str  # what the rows are, with this run's main settings (a sentence)
    method: str  # how they were computed, folded under the caption
    deviations: list[str]


def optimizer_text(run: pd.Series) -> str:
    """"Adam lr 0.001": the optimizer a run's results name."""
    return f"{OPTIMIZERS.get(run['optimizer'], run['optimizer'])} lr {run['lr']:g}"


def transformer_caption(frame: pd.DataFrame, perplexity: pd.DataFrame) -> tuple[str, str]:
    """The Transformer row (lu2024-table5-transformer, decision A10), its settings from the results' own columns: (caption,
    method)."""
    run, last = frame.iloc[0], int(perplexity["epoch"].max())
    seeds = sorted(frame["seed"].unique().tolist())
    bypass = "bypasses" if bool(run["last_ffn_bypass"]) else "does NOT bypass"
    caption = (
        f"Transformer row: the last of {int(run['n_layers'])} encoder layers, trained on {run['corpus']} for {last} "
        f"epochs, mean of {len(seeds)} seed(s); validation perplexity "
        f"{perplexity[perplexity['epoch'] == last]['val_ppl'].mean():.1f}."
    )
    method = (
        f"Transformer row: PII of the column vectors (decision A1) of the six matrices of the last post-norm encoder "
        f"layer (d_model {int(run['d_model'])}, {int(run['n_heads'])} heads, FFN {int(run['d_ff'])}, dropout "
        f"{run['dropout']:g}; Query/Keys/Values = the three row blocks of in_proj_weight), seeds {seeds}; vocabulary {int(run['vocab_size'])} words from the "
        f"training split, {int(run['train_tokens'])} training tokens, windows of {int(run['bptt'])} tokens, batch "
        f"{int(run['batch_size'])}, {optimizer_text(run)}; the last layer's FFN {bypass} residual + LayerNorm."
    )
    return caption, method


def transformer_deviations(frame: pd.DataFrame) -> list[str]:
    """What the Transformer row decides that the paper does not give (decision A10), shared by Table 5 and the
    row's training-course figure."""
    run = frame.iloc[0]
    bypass = ("the last layer's FFN output skips residual and LayerNorm (decision A10: how the paper built its "
              "'last segment' is unknown)" if bool(run["last_ffn_bypass"]) else
              "the last layer's FFN keeps residual and LayerNorm: the plain example model, not the paper's 'last "
              "segment' (decision A10)")
    return [
        "Transformer row: architecture and training are not given by the paper; the lu2024-table5-transformer proposal is used "
        f"(word_language_model Transformer, {int(run['n_layers'])} layers, d_model {int(run['d_model'])}, "
        f"{int(run['n_heads'])} heads, FFN {int(run['d_ff'])}, dropout {run['dropout']:g}, bptt {int(run['bptt'])}, "
        f"batch {int(run['batch_size'])})",
        bypass,
        f"{optimizer_text(run)} instead of the example's SGD lr 5 with gradient clipping 0.25 (the stacked training "
        "engine has no clipping), constant learning rate (no annealing), shuffled windows instead of the example's "
        "sequential batches",
        f"corpus {run['corpus']} (its data: corpora: entry of config.yaml, lu2024-table5-transformer), whitespace words + <eos> per "
        "line, vocabulary from train; valid/test words unseen in train -> <unk>",
    ]


def checkpoint_caption(frames: Mapping[str, pd.DataFrame], dtype: str) -> tuple[str, str]:
    """The PLM/LLM rows (lu2024-table5 (b), lu2024-table5 (c)) from their frames by group name ("PLMs", "LLMs"): (caption,
    method)."""
    sources = "; ".join(f"{r.model}: {r.checkpoint}"
                        for r in pd.concat(frames.values()).drop_duplicates("model").itertuples())
    layers = ", ".join(f"{name} layer {frame['layer'].iloc[0]}" for name, frame in frames.items())
    caption = f"PLM/LLM rows: the pre-trained weights ({layers})."
    method = (
        "PLM/LLM rows: one checkpoint each, read, not trained; cells are PII over columns (the paper's convention, decision A1) except Atten_Output, "
        "Linear_1, Linear_2 of BERT/RoBERTa (PLM.py computes rows) and, by analogy, GPT-2/T5. GPT-2's Conv1D "
        "weights are transposed to (out, in) and c_attn split into Q/K/V; Qwen's packed c_attn (3d × d) is split "
        "into three d-row blocks. LLaMA: Linear_1 = up_proj, Linear_2 = gate_proj (decision A12); Qwen: w1/w2. "
        f"Metric in {dtype} from fp16/fp32 weights; deterministic, no seeds. Checkpoints: {sources}."
    )
    return caption, method


def checkpoint_deviations(cfg: Config, preset: str) -> list[str]:
    table5 = cfg["table5"]
    deviations = [
        f"decision A11: T5's size (the checkpoint above) and layer {table5['plms']['layer']} for GPT-2/T5 (the paper "
        "names neither); T5/Decoder Linear_1/2 are shown as '-' as published although the decoder has an FFN "
        "(layer.2.DenseReluDense, table below)",
        f"decision A12: the LLaMA, LLaMA 2 and Qwen checkpoints above, layer {table5['llms']['layer']} for all (only "
        "Qwen's is in the authors' code)",
        "every checkpoint pinned by revision (config.yaml checkpoints: models:); the paper gives none",
    ]
    if preset == "quick":
        deviations.append("quick preset: tiny random stand-ins of the same classes, not the real weights")
    return deviations


def lora_caption(frame: pd.DataFrame, lora: Config, changes: pd.DataFrame, losses: pd.DataFrame) -> tuple[str, str]:
    """The LoRA rows (lu2024-table5 (d), decision A13): the run's settings from its results and ``lora``, the config's
    ``table5: lora:`` section: (caption, method)."""
    row = frame.iloc[0]
    seeds = sorted(frame.seed.unique())
    last_loss = losses[losses.step == losses.step.max()].loss.mean()
    caption = (
        f"LoRA rows: block {row.layer} of the {row.model_type} checkpoint before LoRA and after merging, "
        f"{row.optimizer_steps} steps on {row.n_examples} examples of {row.instructions_source}, mean of "
        f"{len(seeds)} run(s)."
    )
    method = (
        f"LoRA rows: the adapter merged by merge_and_unload(); r = {row['rank']}, α = {row.alpha}. PII_col of "
        f"Query/Keys/Values (row blocks of the packed c_attn for Qwen v1), attention output, "
        f"Linear_1 (up: w1 / up_proj) and Linear_2 (gate: w2 / gate_proj) of {row.checkpoint}. LoRA with peft: "
        f"dropout {lora['dropout']}, targets {row.targets}, {row['dtype']} base, AdamW lr {lora['lr']} (constant "
        f"with {lora['warmup_steps']} warm-up steps, grad-norm clip {lora['max_grad_norm']}), batch "
        f"{lora['batch_size']} × {lora['grad_accumulation']} accumulation, {lora['epochs']} epoch(s); "
        f"{row.n_dropped} example(s) dropped (prompt ≥ max length {lora['max_length']}), {row.train_tokens} tokens, "
        "Stanford Alpaca prompt template, loss on the response tokens only (prompt labels masked). Seeds "
        f"{', '.join(map(str, seeds))}; final training loss {last_loss:.3f}. Merging moved each matrix by "
        f"{changes.relative_change.min():.2%}–{changes.relative_change.max():.2%} (relative Frobenius norm); largest "
        f"|PII_col change| {changes['PII_col change'].abs().max():.4f}."
    )
    return caption, method


def lora_deviations(frame: pd.DataFrame, lora: Config) -> list[str]:
    row = frame.iloc[0]
    deviations = [
        f"decision A13: the paper publishes neither adapter nor recipe; plain LoRA (peft, {row['dtype']} base, no "
        f"4-bit QLoRA) with Firefly's Qwen-7B hyper-parameters on the first {row.n_examples:,} "
        f"{lora['instructions']} examples, max length {lora['max_length']} — the comparison with the paper's LoRA "
        "row is qualitative (PII stays small and changes little per matrix)",
        "the 'Qwen (before LoRA)' row is measured in the same job from the same base weights (the authors' "
        "pre-LoRA block is disabled in the shipped script)",
        "Linear_1/Linear_2 = w1/w2 (up/gate) as in qwen_lora.py; both PII orientations are stored, the table "
        "shows PII_col (decision A1)",
    ]
    if row.model_type != "qwen":
        deviations.append(f"the base model is {row.checkpoint} ({row.model_type}), not Qwen-7B v1 "
                          "(`lu2024: table5: lora: checkpoint`)")
    return deviations


def table5(parts: Mapping[str, Table5Part | None]) -> Table5Part | None:
    """One Table 5 from its parts by name, in the paper's row order (None: that part did not run), or None if
    none ran."""
    ran = [part for part in parts.values() if part is not None]
    if not ran:
        return None
    caption = "PII (columns) of the attention and FFN matrices. " + " ".join(part.caption for part in ran)
    missing = [name for name, part in parts.items() if part is None]
    if missing:
        caption += f" Not run in this configuration: {', '.join(missing)}."
    return Table5Part(pd.concat([part.rows for part in ran], ignore_index=True), caption,
                      " ".join(part.method for part in ran), [text for part in ran for text in part.deviations])
