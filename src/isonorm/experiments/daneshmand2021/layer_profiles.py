"""Appendix Fig. 6a/6b: V at the input of every layer of one random ReLU MLP / ConvNet, BN vs vanilla.

As coded (daneshmand2021-appfig6a, daneshmand2021-appfig6b, decision B9): ``batches`` shuffled batches of
``batch_size`` CIFAR-10 training images through one network per normalisation (no training); BN layers use
batch statistics. BN and vanilla networks share their weights (same seed), so they differ only by BN.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import torch

from ...cost import sampled
from ...data import load_split
from ...metrics import orthogonality_gap_samples_first
from ...models.random_profile_nets import layer_inputs, profile_convnet, profile_mlp
from ...runtime import generator, resolve_device
from ...items import Item, Results
from . import SLUG, paper_summaries

NORMS = ("batchnorm", "none")
ARCHS = ("mlp", "convnet")  # App. Fig. 6a, 6b


def gap_profile(cfg: Mapping[str, Any], *, arch: str, data_root: str, dataset: str, device: str) -> pd.DataFrame:
    """daneshmand2021-appfig6a (``arch`` "mlp"), daneshmand2021-appfig6b ("convnet"): rows (arch, norm, batch,
    layer, orthogonality_gap); layer 1 is the raw input."""
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; use mlp or convnet")
    target = resolve_device(device)
    data = load_split(dataset, data_root, "train", transform=cfg["transform"], flatten=arch == "mlp", device=target)
    order = torch.randperm(data.x.shape[0], generator=generator(SLUG, "appfig6", "batches"))
    rows = []
    for norm in NORMS:
        gen = generator(SLUG, "appfig6", arch)
        if arch == "mlp":
            net = profile_mlp(data.x.shape[1], cfg["width"], cfg["layers"], norm=norm, generator=gen)
        else:
            net = profile_convnet(data.x.shape[1], cfg["width"], cfg["layers"], norm=norm,
                                  padding_mode=cfg["padding_mode"], generator=gen)
        net = net.to(target).train()  # BN with batch statistics, as the code ran it
        for batch in sampled(range(cfg["batches"])):  # every batch but under a step cap (docs/cost.md)
            picks = order[batch * cfg["batch_size"] : (batch + 1) * cfg["batch_size"]].to(target)
            for layer, h in enumerate(layer_inputs(net, data.x[picks]), start=1):
                rows.append({"arch": arch, "norm": norm, "batch": batch, "layer": layer,
                             "orthogonality_gap": orthogonality_gap_samples_first(h).item()})
    return pd.DataFrame(rows)


_PROFILES = {"appfig6": Results("appfig6/{arch}.parquet", arch=ARCHS)}  # one job per architecture
ITEMS = (  # isonorm.items; App. Figs. 6a and 6b split one result key by architecture
    Item("daneshmand2021-appfig6a", "BN vs vanilla gap through the layers of a ReLU MLP", "at_init", gap_profile,
         _PROFILES, paper_summaries.claims),
    Item("daneshmand2021-appfig6b", "The same for a ConvNet", "at_init", gap_profile, _PROFILES, paper_summaries.claims),
)
