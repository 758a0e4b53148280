"""A fast plain-SGD step for natively stacked classifiers (issue meterez2024: "make the engine fast enough").

A width-100, batch-100 step of a 1000-layer network is bound by kernel launches, not arithmetic. This step
(1) trains R natively stacked runs (e.g. :class:`isonorm.models.bn_mlp.StackedBNMLP`) with the launches of
one, (2) gathers the mini-batch on the device from a static index buffer, (3) updates all parameters with
one ``torch._foreach_add_`` (what ``torch.optim.SGD(foreach=True)`` does for plain SGD, so the numbers are
the same), (4) accumulates the running loss and correct counts on the device (no host sync per step), and
(5) on CUDA captures all of it in one ``torch.cuda.CUDAGraph`` (torch docs, "whole network capture"), so a
step is one graph replay. On the CPU it runs eagerly. Runs of unequal data sets share the step
(``run_samples``): a run whose epoch is done sits out the longest run's remaining steps
(:class:`isonorm.train.batches.EpochPlan`), through a second graph that zeroes its loss term and restores its
BatchNorm running statistics. It is a step of the engine (``loop.Step``): the epoch loop, resume, stops and
measurements are :func:`isonorm.train.loop.train_epochs`.

The loss is Σ_r mean_b CE_r: run r's parameters only enter its own term, so each run gets exactly the
gradient a separate training would (module docstring of ``vmap_step.py``).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import nn

log = logging.getLogger(__name__)

WARMUP_STEPS = 3  # side-stream warm-up iterations before capture (torch CUDA-graph docs use 3)


def _samples(run_samples: Sequence[int] | None, n_runs: int, rows: int) -> int | list[int]:
    """The loop's ``n_samples``: one count when every run has all ``rows``, else one count per run."""
    if run_samples is None:
        return rows
    sizes = [int(n) for n in run_samples]
    if len(sizes) != n_runs or not all(0 < n <= rows for n in sizes):
        raise ValueError(f"run_samples must give one count in 1..{rows} (the data's rows) for each of the {n_runs} "
                         f"runs; got {sizes}")
    return sizes if len(set(sizes)) > 1 else sizes[0]


class StackedSGDStep:
    """One SGD step of ``model`` on device-resident data for index batches (R, B).

    Data: ``x`` (N, D), ``y`` (N,) shared by all runs; or one data set per group of runs, ``x`` (K, N, D),
    ``y`` (K, N) with ``run_data`` (R,) naming each run's data set (say CIFAR-10 and CIFAR-100 of one group).
    ``model(inputs)`` maps (R, B, D) to logits (R, B, C). ``cuda_graph``: None = capture when ``x`` is on
    CUDA, True = require CUDA, False = always eager. Call :meth:`reset` at an epoch's start; after the steps,
    :attr:`loss_sum` (R,) float64 holds Σ over batches of each run's mean loss and :attr:`correct` (R,) the
    number of correctly classified training samples (the original's running train loss/accuracy).
    Batches of another size than ``batch_size`` (a short last batch) run eagerly.

    ``run_samples`` (R,): the training samples of each run's data set, its first rows of ``x`` (the rest is
    padding), when the runs' data sets differ in size; the epoch loop then calls the step with an ``active``
    mask on the steps some runs sit out. An inactive run's loss term is zeroed, so its gradient is zero and plain
    SGD leaves its parameters as they are (exactly, while its network's output on the padding batch is
    finite: a non-finite one turns zero into NaN), its per-run buffers named ``running_*`` (BatchNorm's
    running statistics, which a train-mode forward updates) are restored, and its loss and counts do not grow.
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
        run_samples: Sequence[int] | None = None,
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
        self.n_samples, self.device = _samples(run_samples, n_runs, y.shape[-1]), x.device
        self.run_data = None if run_data is None else run_data.to(x.device).view(-1, 1)
        self.params = [p for p in model.parameters() if p.requires_grad]
        device = x.device
        self.index = torch.zeros(n_runs, batch_size, dtype=torch.long, device=device)
        self.active = torch.ones(n_runs, dtype=torch.bool, device=device)  # the idle graph's mask
        self.ragged = isinstance(self.n_samples, list)  # runs of unequal data sets: some sit out steps
        # what a sitting-out run must get back after the forward: its running statistics
        self.held = [buffer for name, buffer in model.named_buffers() if name.rsplit(".", 1)[-1].startswith("running_")
                     and buffer.is_floating_point() and buffer.shape[:1] == (n_runs,)] if self.ragged else []
        self.held_saved = [torch.empty_like(buffer) for buffer in self.held]
        self.idle_graph: torch.cuda.CUDAGraph | None = None
        self.loss_sum = torch.zeros(n_runs, dtype=torch.float64, device=device)
        self.correct = torch.zeros(n_runs, dtype=torch.long, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None
        if cuda_graph is None:
            cuda_graph = device.type == "cuda"
        if cuda_graph:
            self._capture()

    def _step(self, index: torch.Tensor, active: torch.Tensor | None = None) -> None:
        if self.run_data is None:  # device-side gather: (R, B, D), (R, B)
            inputs, targets = self.x[index], self.y[index]
        else:
            inputs, targets = self.x[self.run_data, index], self.y[self.run_data, index]
        if active is not None:  # the running statistics before the forward moves them
            torch._foreach_copy_(self.held_saved, self.held)
        logits = self.model(inputs)  # (R, B, C)
        # classes on dim 1: free for a feature-major model (StackedBNMLP's logits are a view of (R, C, B))
        per_run = F.cross_entropy(logits.mT, targets, reduction="none").mean(dim=1)
        hits = (logits.detach().argmax(dim=-1) == targets).sum(dim=1)
        if active is not None:  # the runs sitting out: no gradient, no statistics
            per_run, hits = torch.where(active, per_run, 0.0), hits * active
        grads = torch.autograd.grad(per_run.sum(), self.params)
        with torch.no_grad():
            if active is not None:  # and their running statistics back (after the backward, which saved them)
                for buffer, saved in zip(self.held, self.held_saved):
                    torch.where(active.view(-1, *[1] * (buffer.dim() - 1)), buffer, saved, out=buffer)
            torch._foreach_add_(self.params, grads, alpha=-self.lr)
            self.loss_sum += per_run.detach()
            self.correct += hits

    def _capture(self) -> None:
        """Warm up on a side stream, restore the state the warm-up changed, capture one step."""
        saved = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        idle = [self.active] if self.ragged else []
        with torch.cuda.stream(stream):
            for _ in range(WARMUP_STEPS):
                for active in [None, *idle]:
                    self._step(self.index, active)
        torch.cuda.current_stream().wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step(self.index)
        if idle:  # the steps some runs sit out: a second graph on the same buffers and memory pool
            self.idle_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.idle_graph, pool=self.graph.pool()):
                self._step(self.index, self.active)
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
        sizes = {"run_samples": self.n_samples} if self.ragged else {}
        return {"data_shape": list(self.x.shape), "shapes": shapes, **sizes}

    def state_dict(self) -> dict:
        """The model's tensors (plain SGD keeps no state of its own)."""
        return {"model": self.model.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        """Copied in place, so a captured CUDA graph keeps pointing at the same tensors."""
        self.model.load_state_dict(state["model"])

    def __call__(self, index: torch.Tensor, active: torch.Tensor | None = None) -> None:
        """One step on batch ``index`` (R, B) of sample indices on the data's device; ``active`` (R,) bool: the
        runs that train (None: all)."""
        if active is not None and not self.ragged:
            raise ValueError("an active mask needs per-run run_samples (runs of unequal data sets)")
        if self.graph is not None and tuple(index.shape) == tuple(self.index.shape):
            self.index.copy_(index)
            if active is None:
                self.graph.replay()
            else:
                self.active.copy_(active)
                self.idle_graph.replay()
        else:
            self._step(index, active)
