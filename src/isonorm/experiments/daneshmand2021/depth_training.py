"""Fig. 4a, 4b and 5: vanilla ReLU MLPs on CIFAR-10, Xavier vs iterative orthogonalisation.

daneshmand2021-fig4a, daneshmand2021-fig4b, daneshmand2021-fig5 and decisions B4–B6. Every run of one
(init, depth) is trained in one job, stacked by the shared engine. The "orthogonality gap" of these figures is
the training-time spectral gap of the logits, averaged over shuffled batches of the training set (B.0).
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import torch

from ...cost import sampled
from ...data import load_split
from ...metrics import spectral_orthogonality_gap
from ...models.mlp import mlp
from ...models.orthogonal_init import iterative_orthogonal_init_
from ...runtime import generator, resolve_device
from ...train import OptimizerConfig, StackedModels, TrainConfig, predict, train_stacked
from ...items import Item, Results
from . import SLUG, paper_summaries

Config = Mapping[str, Any]
INPUT_FEATURES = 3 * 32 * 32
CLASSES = 10


def spectral_gap_measure(x: torch.Tensor, batch_size: int, every_epoch: bool, *seed: object):
    """measure(stacked, epoch) for the engine: mean spectral gap of the logits over shuffled batches.

    The batches are drawn once (the same for every epoch) and gathered one at a time, so measuring never
    holds a second copy of the training set.
    """
    batches = torch.randperm(x.shape[0], generator=generator(*seed)).to(x.device).split(batch_size)

    def measure(stacked: StackedModels, epoch: int) -> dict[str, torch.Tensor]:
        if epoch > 0 and not every_epoch:
            return {}
        gaps = [spectral_orthogonality_gap(predict(stacked, x[index], batch_size)) for index in sampled(batches)]
        return {"spectral_gap": torch.stack(gaps).mean(dim=0)}

    return measure


def build_mlps(cfg: Config, depth: int, init: str, x: torch.Tensor, variant: str) -> list[torch.nn.Module]:
    """One Xavier MLP per run (``depth`` Linear layers), optionally re-initialised by the iterative SVD init
    on its own batch of ``init_batch_factor * width`` training images (daneshmand2021-fig5, decision B6)."""
    widths = [INPUT_FEATURES] + [cfg["width"]] * (depth - 1) + [CLASSES]
    models = []
    for run in range(cfg["runs"]):
        gen = generator(SLUG, variant, run)
        model = mlp(widths, generator=gen).to(x.device)
        if init == "iterative":
            picks = torch.randperm(x.shape[0], generator=gen)[: cfg["init_batch_factor"] * cfg["width"]]
            iterative_orthogonal_init_(model, x[picks.to(x.device)], select=sampled)  # all layers but under a step cap
        models.append(model)
    return models


def _train(cfg: Config, depth: int, init: str, variant: str, every_epoch: bool, data_root: str, dataset: str,
           device: str, checkpoint: str | None) -> pd.DataFrame:
    target = resolve_device(device)
    train = load_split(dataset, data_root, "train", transform=cfg["transform"], flatten=True, device=target)
    models = build_mlps(cfg, depth, init, train.x, variant)
    config = TrainConfig(
        experiment=SLUG, variant=variant, epochs=cfg["epochs"], batch_size=cfg["batch_size"],
        optimizer=OptimizerConfig(name="sgd", lr=cfg["lr"]), checkpoint_path=checkpoint,
        checkpoint_every=cfg["checkpoint_every"], device=target,
    )
    measure = spectral_gap_measure(train.x, cfg["gap_batch_size"], every_epoch, SLUG, variant, "gap-order")
    history = train_stacked(models, train.x, train.y, config, measure=measure).history
    return history.assign(init=init, depth=depth, width=cfg["width"])


def train_depth_variant(cfg: Config, *, init: str, depth: int, data_root: str, dataset: str, device: str,
                        checkpoint: str | None) -> pd.DataFrame:
    """daneshmand2021-fig4a, daneshmand2021-fig5: loss per epoch, spectral gap at initialisation (decision B4), all
    runs of (init, depth)."""
    return _train(cfg, depth, init, f"depth_training-{init}-depth{depth}", False, data_root, dataset, device,
                  checkpoint)


def train_gap_during_training(cfg: Config, *, data_root: str, dataset: str, device: str,
                              checkpoint: str | None) -> pd.DataFrame:
    """daneshmand2021-fig4b: loss and spectral gap every epoch for the Xavier MLP of ``depth`` layers (decision B5)."""
    return _train(cfg, cfg["depth"], "xavier", f"fig4b-depth{cfg['depth']}", True, data_root, dataset, device,
                  checkpoint)


# one job per (init, depth), all runs of one stacked
_DEPTHS = {"depth_training": Results("depth_training/{init}-depth{depth}.parquet", init="depth_training.inits",
                                     depth="depth_training.depths")}
ITEMS = (  # isonorm.items; Figs. 4a and 5 share their training runs
    Item("daneshmand2021-fig4a", "Initial gap and training loss after 30 epochs vs depth", "training",
         train_depth_variant, _DEPTHS, paper_summaries.claims),
    Item("daneshmand2021-fig4b", "Gap and training loss during training (20 layers)", "training",
         train_gap_during_training, {"fig4b": Results("fig4b/depth{depth}.parquet", depth="fig4b.depth")},
         paper_summaries.claims),
    Item("daneshmand2021-fig5", "Iterative orthogonalisation vs Xavier", "training", train_depth_variant, _DEPTHS,
         paper_summaries.claims),
)
