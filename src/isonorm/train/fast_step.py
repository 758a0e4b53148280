"""A fast plain-SGD step for natively stacked classifiers (issue meterez2024: "make the engine fast enough").

A width-100, batch-100 step of a 1000-layer network is bound by kernel launches, not arithmetic. This step
(1) trains R natively stacked runs (e.g. :class:`isonorm.models.bn_mlp.StackedBNMLP`) with the launches of
one, (2) gathers the mini-batch on the device from a static index buffer, (3) updates all parameters with
one ``torch._foreach_add_`` (what ``torch.optim.SGD(foreach=True)`` does for plain SGD, so the numbers are
the same), (4) accumulates the running loss and correct counts on the device (no host sync per step), and
(5) on CUDA captures all of it in one ``torch.cuda.CUDAGraph`` (torch docs, "whole network capture"), so a
step is one graph replay. On the CPU it runs eagerly. It is a step of the engine (``loop.Step``): the epoch
loop, resume, stops and measurements are :func:`isonorm.train.loop.train_epochs`.

The loss is Σ_r mean_b CE_r: run r's parameters only enter its own term, so each run gets exactly the
gradient a separate training would (module docstring of ``vmap_step.py``).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

import torch
import torch.nn.functional as F
from torch import nn

log = logging.getLogger(__name__)

WARMUP_STEPS = 3  # side-stream warm-up iterations before capture (torch CUDA-graph docs use 3)


class StackedSGDStep:
    """One SGD step of ``model`` on device-resident data for index batches (R, B).

    Data: ``x`` (N, D), ``y`` (N,) shared by all runs; or one data set per group of runs, ``x`` (K, N, D),
    ``y`` (K, N) with ``run_data`` (R,) naming each run's data set (say CIFAR-10 and CIFAR-100 in one stack).
    ``model(inputs)`` maps (R, B, D) to logits (R, B, C). ``cuda_graph``: None = capture when ``x`` is on
    CUDA, True = require CUDA, False = always eager. Call :meth:`reset` at an epoch's start; after the steps,
    :attr:`loss_sum` (R,) float64 holds Σ over batches of each run's mean loss and :attr:`correct` (R,) the
    number of correctly classified training samples (the original's running train loss/accuracy).
    Batches of another size than ``batch_size`` (a short last batch) run eagerly.
    """

    stats = ("train_loss", "train_acc")

    def __init__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        y: torch.Tensor,
        n_runs: int,
        batch_size: int,
        lr: float,
        cuda_graph: bool | None = None,
        run_data: torch.Tensor | None = None,
    ):
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        if x.shape[: y.dim()] != y.shape:
            raise ValueError(f"x {tuple(x.shape)} and y {tuple(y.shape)} hold different numbers of samples")
        if (x.dim() == 3) != (run_data is not None):
            raise ValueError("per-data-set x (K, N, D) needs run_data (R,), and shared x (N, D) takes none")
        if run_data is not None and (run_data.shape != (n_runs,) or int(run_data.max()) >= x.shape[0]):
            raise ValueError(f"run_data must name one of the {x.shape[0]} data sets for each of the {n_runs} runs")
        if cuda_graph and x.device.type != "cuda":
            raise ValueError("cuda_graph=True needs the data on a CUDA device; pass cuda_graph=None or False")
        self.model, self.x, self.y = model, x, y
        self.n_runs, self.batch_size, self.lr = n_runs, batch_size, lr
        self.n_samples, self.device = y.shape[-1], x.device
        self.run_data = None if run_data is None else run_data.to(x.device).view(-1, 1)
        self.params = [p for p in model.parameters() if p.requires_grad]
        device = x.device
        self.index = torch.zeros(n_runs, batch_size, dtype=torch.long, device=device)
        self.loss_sum = torch.zeros(n_runs, dtype=torch.float64, device=device)
        self.correct = torch.zeros(n_runs, dtype=torch.long, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None
        if cuda_graph is None:
            cuda_graph = device.type == "cuda"
        if cuda_graph:
            self._capture()

    def _step(self, index: torch.Tensor) -> None:
        if self.run_data is None:  # device-side gather: (R, B, D), (R, B)
            inputs, targets = self.x[index], self.y[index]
        else:
            inputs, targets = self.x[self.run_data, index], self.y[self.run_data, index]
        logits = self.model(inputs)  # (R, B, C)
        # classes on dim 1: free for a feature-major model (StackedBNMLP's logits are a view of (R, C, B))
        per_run = F.cross_entropy(logits.mT, targets, reduction="none").mean(dim=1)
        grads = torch.autograd.grad(per_run.sum(), self.params)
        with torch.no_grad():
            torch._foreach_add_(self.params, grads, alpha=-self.lr)
            self.loss_sum += per_run.detach()
            self.correct += (logits.detach().argmax(dim=-1) == targets).sum(dim=1)

    def _capture(self) -> None:
        """Warm up on a side stream, restore the state the warm-up changed, capture one step."""
        saved = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(WARMUP_STEPS):
                self._step(self.index)
        torch.cuda.current_stream().wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step(self.index)
        with torch.no_grad():  # capture ran nothing, warm-up did: undo it
            for name, tensor in self.model.state_dict().items():
                tensor.copy_(saved[name])
        self.reset()

    def reset(self) -> None:
        """Zero the running loss and correct counts (start of an epoch)."""
        self.loss_sum.zero_()
        self.correct.zero_()

    @contextlib.contextmanager
    def epoch(self, epoch: int) -> Iterator[None]:
        """Train mode and zeroed running loss and counts; nothing random (no dropout, orders come from the loop)."""
        self.model.train()
        self.reset()
        yield

    def epoch_stats(self, n_batches: int, n_samples: int) -> dict[str, torch.Tensor]:
        """``train_loss``: each run's mean mini-batch loss; ``train_acc``: its fraction of correct samples."""
        return {"train_loss": self.loss_sum / n_batches, "train_acc": self.correct.double() / n_samples}

    def fingerprint(self) -> dict:
        shapes = {name: list(t.shape) for name, t in self.model.state_dict().items()}
        return {"data_shape": list(self.x.shape), "shapes": shapes}

    def state_dict(self) -> dict:
        """The model's tensors (plain SGD keeps no state of its own)."""
        return {"model": self.model.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        """Copied in place, so a captured CUDA graph keeps pointing at the same tensors."""
        self.model.load_state_dict(state["model"])

    def __call__(self, index: torch.Tensor) -> None:
        """One step on batch ``index`` (R, B) of sample indices on the data's device."""
        if self.graph is not None and tuple(index.shape) == tuple(self.index.shape):
            self.index.copy_(index)
            self.graph.replay()
        else:
            self._step(index)
