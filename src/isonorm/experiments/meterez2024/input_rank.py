"""Table D1 of Meterez et al. 2024: the numerical rank of input-batch Gram matrices (meterez2024-tabled1, decision C10).

For each batch size n, ``batches`` batches of n training samples, each drawn without replacement (a seeded
permutation per batch), give G = X Xᵀ (n × n) of the flattened images, in float32, and its
``torch.linalg.matrix_rank`` with the default tolerance σ_max · n · eps(float32) (decision C10: that
tolerance is what makes the n = 512 rank of CIFAR *lower* than the n = 256 one). Also recorded per batch:
the signed mean cosine similarity over off-diagonal sample pairs (the text's "average cosine similarity",
read at n = 512). ``transform: to_tensor`` is the default (decision C10); ``dataset_constants`` is the
Normalize ablation flag. Rank semantics depend on the torch version, so the frame records it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import torch

from ...cost import sampled
from ...data import load_split
from ...items import Item, Results
from ...runtime import generator, resolve_device
from . import at_init_summaries

SLUG = "meterez2024"
Config = Mapping[str, Any]


def gram_rank(x: torch.Tensor) -> torch.Tensor:
    """matrix_rank of the float32 Gram X Xᵀ of samples x (..., n, features), default tolerance (decision C10)."""
    x = x.to(torch.float32)
    return torch.linalg.matrix_rank(x @ x.mT)


def mean_offdiagonal_cosine(x: torch.Tensor) -> torch.Tensor:
    """Signed mean of cos(x_i, x_j) over ordered pairs i ≠ j of samples x (..., n, features), in float64."""
    x = x.to(torch.float64)
    unit = x / x.norm(dim=-1, keepdim=True)
    cos = unit @ unit.mT
    n = x.shape[-2]
    if n < 2:
        raise ValueError(f"mean_offdiagonal_cosine needs at least two samples, got {n}")
    return (cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(-1)) / (n * (n - 1))


def rank_table(x: torch.Tensor, batch_sizes: Sequence[int], batches: int, seed: object) -> pd.DataFrame:
    """Rows (n, batch, metric ∈ {rank, mean_cosine}, value) for ``batches`` batches per n of samples x (N, D)."""
    if x.ndim != 2:
        raise ValueError(f"expected flattened samples (N, features), got shape {tuple(x.shape)}")
    if batches < 1:
        raise ValueError(f"batches must be ≥ 1, got {batches}")
    rows = []
    for n in (int(n) for n in batch_sizes):
        if not 2 <= n <= len(x):
            raise ValueError(f"batch size {n} must be between 2 and the number of samples {len(x)}")
        gen = generator(SLUG, "tabled1", seed, n)
        for batch in sampled(range(batches)):  # every batch but under a step cap (docs/cost.md)
            index = torch.randperm(len(x), generator=gen)[:n].to(x.device)  # without replacement
            xb = x[index]
            rows.append(dict(n=n, batch=batch, metric="rank", value=float(gram_rank(xb))))
            rows.append(dict(n=n, batch=batch, metric="mean_cosine", value=float(mean_offdiagonal_cosine(xb))))
    return pd.DataFrame(rows)


def tabled1(cfg: Config, *, data_root: str, dataset: str, device: str) -> pd.DataFrame:
    """meterez2024-tabled1 for one data set (one job per data set)."""
    target = resolve_device(device)
    data = load_split(dataset, data_root, cfg["split"], transform=cfg["transform"], flatten=True, device=target)
    frame = rank_table(data.x, cfg["batch_sizes"], int(cfg["batches"]), cfg["seed"])
    transform = cfg["transform"] if isinstance(cfg["transform"], str) else str(cfg["transform"])
    return frame.assign(dataset=dataset, split=cfg["split"], transform=transform,
                        torch_version=torch.__version__, device=str(target))


ITEMS = (  # isonorm.items
    Item("meterez2024-tabled1", "Rank of input-batch Gram matrices", "at_init", tabled1,
         {"tabled1": Results("tabled1/{dataset}.parquet", dataset="tabled1.datasets")},
         at_init_summaries.claims),
)
