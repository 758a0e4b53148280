"""The step of :func:`train_stacked`: R ordinary modules stacked with torch.func (:class:`StackedModels`).

The loss minimised is Σ_r mean_b CE_r: run r's parameters enter only its own term, so the gradient each run
receives is exactly the one a separate training would compute, and the element-wise optimizers of
``optimizers.py`` then update every run as R separate optimizers would (tests/test_train_stacked.py).

With ``running_accuracy`` the step also counts, per run, the predictions of each step's forward pass that hit
their label: the running train-mode accuracy over the epoch's (augmented) mini-batches, taken from the logits
the optimisation step computes anyway, before its update (what a training script that sums ``correct`` over
its loader logs as "train accuracy"; lu2024 decision A7). It costs one argmax per step and no host sync.
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
    Its statistics are ``train_loss`` and, with ``running_accuracy``, ``train_acc`` (see :meth:`epoch_stats`).
    """

    def __init__(
        self,
        models: StackedModels,
        optimizer: torch.optim.Optimizer,
        x: torch.Tensor,
        y: torch.Tensor,
        config: TrainConfig,
        augment: Augment | None = None,
        running_accuracy: bool = False,
    ):
        self.model, self.optimizer, self.x, self.y = models, optimizer, x, y
        self.config, self.augment, self.running_accuracy = config, augment, running_accuracy
        self.n_runs, self.n_samples, self.device = models.n_runs, x.shape[0], x.device
        self.stats: tuple[str, ...] = ("train_loss", "train_acc") if running_accuracy else ("train_loss",)
        self.generator: torch.Generator | None = None
        self.loss_sum = torch.zeros(self.n_runs, device=x.device, dtype=torch.float64)
        self.correct = torch.zeros(self.n_runs, device=x.device, dtype=torch.long)  # with running_accuracy
        self.predicted = 0  # predictions per run counted into ``correct`` this epoch (a host int: no sync)

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
            self.correct.zero_()
            self.predicted = 0
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
        if self.running_accuracy:  # the logits of this step's train-mode forward pass, before the update
            hits = logits.detach().argmax(dim=-1).reshape(-1) == targets
            self.correct += hits.view(self.n_runs, -1).sum(dim=1)
            self.predicted += targets.numel() // self.n_runs

    def epoch_stats(self, n_batches: int, n_samples: int) -> dict[str, torch.Tensor]:
        """``train_loss``: each run's mean mini-batch loss of the epoch; ``train_acc`` (with ``running_accuracy``):
        its fraction of the epoch's training predictions (one per sample, per position for sequence outputs)
        that hit their label, pooled over the epoch's batches (so a short last batch weighs by its size)."""
        stats = {"train_loss": self.loss_sum / n_batches}
        if self.running_accuracy:
            stats["train_acc"] = self.correct.double() / self.predicted
        return stats

    def fingerprint(self) -> dict:
        models = self.model
        shapes = {name: list(t.shape) for name, t in {**models.params, **models.buffers}.items()}
        extra = {"stats": list(self.stats)} if self.running_accuracy else {}  # a history without them can't go on
        return {"data_shape": list(self.x.shape), "shapes": shapes, **extra}

    def state_dict(self) -> dict:
        return {"models": self.model.state(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state(state["models"])
        self.optimizer.load_state_dict(state["optimizer"])
