"""Optimizers built by name from a small config (the papers train with SGD, Adam, AdamW and RMSprop).

Every optimizer here updates each parameter element from that element's own gradient history, so one
optimizer over the stacked (R, ...) parameters is exactly R independent optimizers, one per run.
Optimizers with a norm taken over a whole tensor (LARS, LAMB, gradient clipping) would couple the runs and
are deliberately absent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import torch

OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "rmsprop": torch.optim.RMSprop,
}

_WITH_MOMENTUM = ("sgd", "rmsprop")
_WITH_BETAS = ("adam", "adamw")


@dataclass(frozen=True)
class OptimizerConfig:
    """Which optimizer and its hyper-parameters.

    - ``name="sgd"``, ``lr=0.01``, ``momentum=0``: daneshmand2021 Fig. 4a "SGD lr 0.01 (no momentum, no weight
      decay)".
    - ``weight_decay=None``: torch's own default for the optimizer (0, or 0.01 for AdamW: lu2024 Table 1
      "AdamW lr 1e-3 (default weight decay 0.01)").
    - ``betas``, ``eps``: torch's Adam/AdamW defaults (lu2024 "defaults β=(0.9,0.999), eps 1e-8"); ``eps``
      also feeds RMSprop. ``momentum`` only exists for sgd and rmsprop, ``betas`` only for adam and adamw.
    """

    name: str = "sgd"
    lr: float = 0.01
    momentum: float = 0.0
    weight_decay: float | None = None
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8

    def __post_init__(self) -> None:
        if self.name not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.name!r}; choose one of {sorted(OPTIMIZERS)}")
        if not self.lr > 0:
            raise ValueError(f"optimizer lr must be > 0, got {self.lr}")
        if self.momentum and self.name not in _WITH_MOMENTUM:
            raise ValueError(f"{self.name} has no momentum; set its betas instead (momentum is for sgd/rmsprop)")
        if self.betas != (0.9, 0.999) and self.name not in _WITH_BETAS:
            raise ValueError(f"{self.name} has no betas (they are for adam/adamw); use momentum instead")

    def as_dict(self) -> dict:
        return asdict(self)


def build_optimizer(params: Iterable[torch.Tensor], config: OptimizerConfig) -> torch.optim.Optimizer:
    """The torch optimizer ``config`` names, over ``params``."""
    kwargs: dict = {"lr": config.lr}
    if config.weight_decay is not None:
        kwargs["weight_decay"] = config.weight_decay
    if config.name in _WITH_MOMENTUM:
        kwargs["momentum"] = config.momentum
    if config.name in _WITH_BETAS:
        kwargs["betas"] = config.betas
    if config.name != "sgd":
        kwargs["eps"] = config.eps
    return OPTIMIZERS[config.name](params, **kwargs)
