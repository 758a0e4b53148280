"""What one stacked training does: epochs, batch size, optimizer, seeds, stops, checkpointing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from .optimizers import OptimizerConfig


@dataclass(frozen=True)
class TrainConfig:
    """Settings of the epoch loop (:func:`train_epochs`) and of the step :func:`train_stacked` builds.

    - ``experiment``, ``variant``: seed namespace; run r's epoch-e batch order is seeded with
      ``derive_seed(experiment, variant, r, e)`` (architecture §8 "deterministic seeding per (experiment, variant,
      run)"; decision B12 "run index as seed"), unless the caller names other seed keys.
    - ``epochs=30``, ``batch_size=500``: daneshmand2021 Fig. 4a ("batch 500 shuffled", "30 epochs").
    - ``optimizer``: SGD lr 0.01 without momentum, the same setup. The step is built from it (a step that
      supports only some optimizers refuses the others).
    - ``drop_last=False``: a short last batch is trained on, as torch's DataLoader does by default.
    - ``measure_at_init=True``: also measure the freshly initialised networks as epoch 0 (daneshmand2021
      decision B4: "gap computed on the freshly initialised network").
    - ``checkpoint_path=None``: no checkpoints; otherwise save there every ``checkpoint_every`` epochs (and
      after the last) and resume from it when present.
    - ``device="auto"``: CUDA when present (``runtime.resolve_device``); a job passes the ``torch.device`` it
      resolved once (``isonorm.workflow.job_device``), which is used as it is.
    - ``run_epochs=None``: per-run epoch caps, one per run, each ≤ ``epochs``: the stack trains ``epochs``
      epochs and run r is recorded up to epoch ``run_epochs[r]`` (it trains on in the stack, unrecorded;
      meterez2024's budget preset caps some data sets, decision C5).
    - ``stop_non_finite=False``: when True, a run whose epoch train loss is non-finite stops there: its later
      rows are absent and the result names the epoch (the meterez2024 original exits on NaN).
    """

    experiment: str
    variant: str
    epochs: int = 30
    batch_size: int = 500
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    drop_last: bool = False
    measure_at_init: bool = True
    checkpoint_path: Path | str | None = None
    checkpoint_every: int = 1
    device: str | torch.device = "auto"
    run_epochs: tuple[int, ...] | None = None
    stop_non_finite: bool = False

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"epochs must be ≥ 0, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {self.batch_size}")
        if self.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be ≥ 1 epoch, got {self.checkpoint_every}")
        if self.run_epochs is not None and not all(0 <= cap <= self.epochs for cap in self.run_epochs):
            raise ValueError(f"run_epochs must lie in 0..epochs ({self.epochs}), got {list(self.run_epochs)}")

    def caps(self, n_runs: int) -> list[int]:
        """Each run's last recorded epoch (``run_epochs``, or ``epochs`` for all)."""
        if self.run_epochs is None:
            return [self.epochs] * n_runs
        if len(self.run_epochs) != n_runs:
            raise ValueError(f"run_epochs gives {len(self.run_epochs)} caps for {n_runs} runs; give one per run")
        return list(self.run_epochs)
