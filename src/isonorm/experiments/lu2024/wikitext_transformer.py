"""Table 5 (first row) of Lu et al. (2024): PII of a six-layer Transformer LM trained on WikiText-2.

lu2024-table5-transformer and decision A10 (binding proposal): :class:`WordTransformerLM` (6 layers,
d_model 200, 2 heads, FFN 200, dropout 0.2, post-norm, the last block's FFN without residual + LayerNorm),
word-level WikiText-2 (:mod:`isonorm.data.corpora`), windows of bptt 35 tokens, batch 20, a few epochs.
Training reuses :func:`isonorm.train.train_stacked`: x = (N, bptt) windows, y = the next tokens (N, bptt),
whose cross-entropy the engine averages over every (window, position); all ``seeds`` train stacked.

Optimizer: Adam, lr 1e-3 (the alternative of lu2024-table5-transformer). The example's SGD lr 5.0 relies on gradient-norm clipping
at 0.25, which the engine deliberately lacks (a whole-tensor norm would couple the stacked runs;
``isonorm.train.optimizers``); plain SGD at lr 5 without clipping is prone to diverge. Any engine optimizer
can be set in the config.

After every epoch (and at init, epoch 0) it records PII of the six Table-5 matrices (Query, Keys, Values =
row blocks of ``in_proj_weight``, Atten_Output, Linear_1, Linear_2) of EVERY layer in BOTH orientations
(decision A1: tables use columns; store both), the validation cross-entropy and perplexity, and the mean
training loss. The table reports PII_col of the last layer after the last epoch (``wikitext_summaries``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch
import torch.nn.functional as F

from ...cost import sampled
from ...data.corpora import Corpus, lm_windows, load_corpus, tail_window
from ...items import Item, Results
from ...metrics import pii
from ...models.word_transformer import WordTransformerLM, layer_matrices
from ...runtime import generator, resolve_device
from ...train import OptimizerConfig, StackedModels, TrainConfig, train_stacked
from . import checkpoint_pii, lora, table5_summaries

SLUG = "lu2024"
VARIANT = "table5-transformer"  # seed namespace of batch orders and initialisations
ORIENTATIONS = ("columns", "rows")  # decision A1: store both
Config = Mapping[str, Any]


def _check_config(cfg: Config) -> None:
    seeds = list(cfg["seeds"])
    if not seeds or len(set(seeds)) != len(seeds) or not all(isinstance(s, int) for s in seeds):
        raise ValueError(f"lu2024 table5_transformer: seeds must be a non-empty list of distinct integers, got {seeds}")
    if int(cfg["epochs"]) < 1:
        raise ValueError("lu2024 table5_transformer: epochs must be ≥ 1 (the table reports trained weights)")


def optimizer_config(spec: Mapping[str, Any]) -> OptimizerConfig:
    """An :class:`OptimizerConfig` from the config's ``optimizer`` mapping (YAML lists become tuples)."""
    spec = dict(spec)
    if "betas" in spec:
        spec["betas"] = tuple(float(b) for b in spec["betas"])
    try:
        return OptimizerConfig(**spec)
    except TypeError as err:
        raise ValueError(f"lu2024 table5_transformer: bad optimizer settings {spec} ({err})") from None


def build_models(cfg: Config, n_tokens: int) -> list[WordTransformerLM]:
    """One model per seed, each initialised from ``generator(SLUG, VARIANT, seed)``."""
    return [
        WordTransformerLM(
            n_tokens, d_model=int(cfg["d_model"]), n_heads=int(cfg["n_heads"]), d_ff=int(cfg["d_ff"]),
            n_layers=int(cfg["n_layers"]), dropout=float(cfg["dropout"]),
            last_ffn_bypass=bool(cfg["last_ffn_bypass"]), generator=generator(SLUG, VARIANT, seed),
        )
        for seed in cfg["seeds"]
    ]


def pii_measures(params: Mapping[str, torch.Tensor], n_layers: int) -> dict[str, torch.Tensor]:
    """``pii|layer|matrix|orientation`` -> (R,) PII of every Table-5 matrix of every layer, both orientations."""
    out = {}
    for layer in range(n_layers):
        for name, weight in layer_matrices(dict(params), layer).items():
            for orientation in ORIENTATIONS:
                out[f"pii|{layer}|{name}|{orientation}"] = pii(weight, dim=orientation)
    return out


def validation_loss(stacked: StackedModels, ids: torch.Tensor, bptt: int, batch_size: int) -> torch.Tensor:
    """(R,) mean next-word cross-entropy (nats) over every target of ``ids``, in chunks of ``bptt`` tokens
    without carried context (the example's ``evaluate`` for the Transformer), ``batch_size`` chunks at once."""
    ids = ids.to(stacked.device)
    x, y = lm_windows(ids, bptt)
    chunks = [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, x.shape[0], batch_size)]
    tail = tail_window(ids, bptt)
    if tail is not None:
        chunks.append(tail)
    total = torch.zeros(stacked.n_runs, dtype=torch.float64, device=stacked.device)
    count = 0
    for inputs, targets in sampled(chunks):  # every chunk but under a step cap (docs/cost.md)
        logits = stacked(inputs, shared_input=True)  # (R, B, T, V)
        losses = F.cross_entropy(logits.flatten(0, 2), targets.expand(stacked.n_runs, -1, -1).flatten(),
                                 reduction="none")
        total += losses.view(stacked.n_runs, -1).double().sum(dim=1)
        count += targets.numel()
    return total / count


class Table5Measure:
    """The per-epoch measurement of :func:`train_stacked`: PII of all layers and validation loss/perplexity."""

    def __init__(self, corpus: Corpus, cfg: Config):
        self.valid = corpus.ids["valid"]
        self.n_layers = int(cfg["n_layers"])
        self.bptt = int(cfg["bptt"])
        self.eval_batch_size = int(cfg["eval_batch_size"])

    def __call__(self, stacked: StackedModels, epoch: int) -> dict[str, torch.Tensor]:
        values = pii_measures(stacked.params, self.n_layers)
        loss = validation_loss(stacked, self.valid, self.bptt, self.eval_batch_size)
        values["val_loss"] = loss
        values["val_ppl"] = loss.exp()
        return values


def tidy(history: pd.DataFrame, seeds: Sequence[int]) -> pd.DataFrame:
    """One row per (seed, epoch, metric[, layer, matrix, orientation]) from the engine's wide history."""
    wide = history.rename(columns={"run": "seed"})
    long = wide.melt(id_vars=["seed", "epoch"], var_name="name", value_name="value")
    parts = long["name"].str.split("|", expand=True).reindex(columns=range(4))
    long = long.assign(
        metric=parts[0],
        layer=pd.array([int(v) if isinstance(v, str) else pd.NA for v in parts[1]], dtype="Int64"),
        matrix=parts[2].where(parts[2].notna(), None),
        orientation=parts[3].where(parts[3].notna(), None),
    ).drop(columns="name")
    long = long[~(long.metric.eq("train_loss") & long.epoch.eq(0))]  # nothing trained at epoch 0
    return long.sort_values(["seed", "epoch", "metric", "layer", "matrix", "orientation"], ignore_index=True)


def table5_transformer(cfg: Config, *, data_root: str, dataset: str, device: str = "auto",
                       checkpoint: str | None = None) -> pd.DataFrame:
    """lu2024-table5-transformer, lu2024-table5 (its row (a)): train the Table-5 Transformer on corpus
    ``dataset`` (a fetched ``<data_root>/<dataset>``) for every seed.

    Returns the tidy measurements (columns seed, epoch, metric ∈ {pii, val_loss, val_ppl, train_loss}, layer,
    matrix, orientation, value, plus the run's settings). ``checkpoint``: resume file (rules give
    ``<output>.ckpt``); None trains without checkpoints.
    """
    _check_config(cfg)
    target = resolve_device(device)
    corpus = load_corpus(Path(data_root) / dataset)
    bptt = int(cfg["bptt"])
    x, y = lm_windows(corpus.ids["train"], bptt)
    seeds = [int(s) for s in cfg["seeds"]]
    optimizer = optimizer_config(cfg["optimizer"])
    config = TrainConfig(
        experiment=SLUG, variant=VARIANT, epochs=int(cfg["epochs"]), batch_size=int(cfg["batch_size"]),
        optimizer=optimizer, measure_at_init=True, checkpoint_path=checkpoint,
        checkpoint_every=int(cfg["checkpoint_every"]), device=target,
    )
    models = build_models(cfg, corpus.n_tokens)
    history = train_stacked(models, x, y, config, measure=Table5Measure(corpus, cfg), run_ids=seeds).history
    return tidy(history, seeds).assign(
        corpus=dataset, n_layers=int(cfg["n_layers"]), d_model=int(cfg["d_model"]), n_heads=int(cfg["n_heads"]),
        d_ff=int(cfg["d_ff"]), dropout=float(cfg["dropout"]), last_ffn_bypass=bool(cfg["last_ffn_bypass"]),
        bptt=bptt, batch_size=int(cfg["batch_size"]), optimizer=optimizer.name, lr=optimizer.lr,
        vocab_size=corpus.n_tokens, train_tokens=int(corpus.ids["train"].numel()),
        valid_unknown=int(corpus.unknown["valid"]), device=target.type,
    )


ITEMS = (  # isonorm.items
    # the training course of Table 5's part (a), a supplementary figure; the row's quantities are lu2024-table5's
    Item("lu2024-table5-transformer", "Transformer trained on WikiText-2", "training", table5_transformer,
         {"table5_transformer": Results("table5_transformer/{corpus}.parquet",
                                        settings={"corpus": "table5_transformer.corpus"})}),
    # one table from the results of three jobs: (a) this Transformer's training (the files the record above
    # declares), (b)/(c) the pre-trained checkpoints read at init, one job each, (d) the LoRA fine-tuning
    Item("lu2024-table5", "PII of attention and FFN matrices in Transformers, PLMs, LLMs and after LoRA",
         ("training", "at_init", "training"),
         (table5_transformer, checkpoint_pii.table5_checkpoints, lora.table5_lora_runs),
         {"table5_transformer": None,
          "table5_plms": Results("table5/{part}.parquet", part=("plms",), needs="needs_data"),
          "table5_llms": Results("table5/{part}.parquet", part=("llms",), needs="needs_data"),
          "table5_lora": Results("table5_lora/{checkpoint}.parquet",
                                 settings={"checkpoint": "table5.lora.checkpoint"}, needs="trains")},
         table5_summaries.claims),
)
