"""The step of :func:`train_stacked`: R ordinary modules stacked with torch.func (:class:`StackedModels`).

The loss minimised is Σ_r mean_b CE_r: run r's parameters enter only its own term, so the gradient each run
receives is exactly the one a separate training would compute, and the element-wise optimizers of
``optimizers.py`` then update every run as R separate optimizers would (tests/test_train_stacked.py).
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

from ..runtime import derive_seed
from .config import TrainConfig
from .stacking import StackedModels

# augment(batch, generator) -> batch of the same shape: a random transform of each run's mini-batch (R, B, ...)
# applied on the device before the forward pass (e.g. random crops and flips); the generator lives on the
# data's device and is seeded per (experiment, variant, epoch), so augmented training stays reproducible.
Augment = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


class VmapStep:
    """One step of a torch optimizer over ``models`` on per-run mini-batches of device-resident (x, y).

    ``x`` (N, ...) and ``y`` (N, ...) integer labels are shared by all runs; ``config`` names the seeds of
    the epoch's dropout masks and augmentation. Implements the :class:`isonorm.train.loop.Step` protocol.
    """

    stats = ("train_loss",)

    def __init__(
        self,
        models: StackedModels,
        optimizer: torch.optim.Optimizer,
        x: torch.Tensor,
        y: torch.Tensor,
        config: TrainConfig,
        augment: Augment | None = None,
    ):
        self.model, self.optimizer, self.x, self.y = models, optimizer, x, y
        self.config, self.augment = config, augment
        self.n_runs, self.n_samples, self.device = models.n_runs, x.shape[0], x.device
        self.generator: torch.Generator | None = None
        self.loss_sum = torch.zeros(self.n_runs, device=x.device, dtype=torch.float64)

    @contextlib.contextmanager
    def epoch(self, epoch: int) -> Iterator[None]:
        """Train mode, a zero running loss, and the epoch's random streams.

        Dropout masks come from the global RNG (vmap's randomness="different"); seeding it per epoch inside a
        fork keeps runs reproducible and resumable without disturbing the caller's random state.
        """
        config = self.config
        with torch.random.fork_rng(devices=list(range(torch.cuda.device_count()))):
            torch.manual_seed(derive_seed(config.experiment, config.variant, "dropout", epoch))
            if self.augment is not None:
                self.generator = torch.Generator(device=self.device)
                self.generator.manual_seed(derive_seed(config.experiment, config.variant, "augment", epoch))
            self.loss_sum.zero_()  # float64: no digits lost over many batches
            self.model.train()
            yield

    def __call__(self, index: torch.Tensor) -> None:
        """One optimizer step on batch ``index`` (R, B): run r's mini-batch is ``x[index[r]]``."""
        inputs = self.x[index] if self.augment is None else self.augment(self.x[index], self.generator)
        logits = self.model(inputs)  # (R, B, ..., k)
        targets = self.y[index].reshape(-1)
        per_sample = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets, reduction="none")
        per_run = per_sample.view(self.n_runs, -1).mean(dim=1)
        self.optimizer.zero_grad(set_to_none=True)
        per_run.sum().backward()
        self.optimizer.step()
        self.loss_sum += per_run.detach()

    def epoch_stats(self, n_batches: int, n_samples: int) -> dict[str, torch.Tensor]:
        """``train_loss``: each run's mean mini-batch loss of the epoch."""
        return {"train_loss": self.loss_sum / n_batches}

    def fingerprint(self) -> dict:
        models = self.model
        shapes = {name: list(t.shape) for name, t in {**models.params, **models.buffers}.items()}
        return {"data_shape": list(self.x.shape), "shapes": shapes}

    def state_dict(self) -> dict:
        return {"models": self.model.state(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state(state["models"])
        self.optimizer.load_state_dict(state["optimizer"])
