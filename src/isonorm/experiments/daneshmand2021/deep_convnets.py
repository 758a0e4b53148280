"""Appendix Fig. 7a/7b: AlexNet-style CIFAR-10 ConvNets with extra 256-channel layers, Xavier vs SVD init.

As coded (daneshmand2021-appfig7a/b, decision B10): unnormalised inputs, the SVD init on a
shuffled batch of ``init_batch`` training images, plain SGD (lr 0.001, batch 30), training loss per epoch.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import torch

from ...cost import sampled
from ...data import load_split
from ...models.alexnet_deep import alexnet_deep
from ...models.orthogonal_init import conv_svd_init_
from ...runtime import generator, resolve_device
from ...train import OptimizerConfig, TrainConfig, train_stacked
from ...items import Item, Results
from . import SLUG, paper_summaries


def train_deep_convnet(cfg: Mapping[str, Any], *, init: str, extra_layers: int, data_root: str, dataset: str,
                       device: str, checkpoint: str | None) -> pd.DataFrame:
    """daneshmand2021-appfig7a, daneshmand2021-appfig7b (fewer, more extra layers), all runs of one
    (init, extra_layers): rows (run, epoch, train_loss, init, extra_layers)."""
    if init not in ("xavier", "svd"):
        raise ValueError(f"unknown init {init!r}; use xavier or svd")
    target = resolve_device(device)
    limit = cfg.get("train_limit")  # null: the whole split; the quick preset keeps 300 images (smoke test)
    train = load_split(dataset, data_root, "train", transform=cfg["transform"], device=target,
                       limit=None if limit is None else int(limit))
    variant = f"appfig7-{init}-extra{extra_layers}"
    models = []
    for run in range(cfg["runs"]):
        gen = generator(SLUG, variant, run)
        net = alexnet_deep(extra_layers, generator=gen).to(target)
        if init == "svd":
            picks = torch.randperm(train.x.shape[0], generator=gen)[: cfg["init_batch"]].to(target)
            conv_svd_init_(net, train.x[picks], select=sampled)  # all square convs but under a step cap
        models.append(net)
    config = TrainConfig(
        experiment=SLUG, variant=variant, epochs=cfg["epochs"], batch_size=cfg["batch_size"],
        optimizer=OptimizerConfig(name="sgd", lr=cfg["lr"]), measure_at_init=False,
        checkpoint_path=checkpoint, checkpoint_every=cfg["checkpoint_every"], device=target,
    )
    history = train_stacked(models, train.x, train.y, config).history
    return history.assign(init=init, extra_layers=extra_layers)


# one job per (init, number of extra layers)
_CONVNETS = {"appfig7": Results("appfig7/{init}-extra{extra}.parquet", init="appfig7.inits",
                                extra="appfig7.extra_layers")}
ITEMS = (  # isonorm.items; App. Figs. 7a and 7b split one result key by number of extra layers
    Item("daneshmand2021-appfig7a", "SVD-based initialisation for deep ConvNets (Appendix I)", "training",
         train_deep_convnet, _CONVNETS, paper_summaries.claims),
    Item("daneshmand2021-appfig7b", "SVD-based initialisation for deep ConvNets (Appendix I)", "training",
         train_deep_convnet, _CONVNETS, paper_summaries.claims),
)
