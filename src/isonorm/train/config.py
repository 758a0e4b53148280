"""What one stacked training does: epochs, batch size, optimizer, seeds, checkpointing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .optimizers import OptimizerConfig


@dataclass(frozen=True)
class TrainConfig:
    """Settings of :func:`train_stacked`.

    - ``experiment``, ``variant``: seed namespace; run r's epoch-e batch order is seeded with
      ``derive_seed(experiment, variant, r, e)`` (DESIGN 8 "deterministic seeding per (experiment, variant,
      run)"; spec daneshmand2021 decision 12 "run index as seed").
    - ``epochs=30``, ``batch_size=500``: daneshmand2021 Fig. 4a ("batch 500 shuffled", "30 epochs").
    - ``optimizer``: SGD lr 0.01 without momentum, the same setup.
    - ``drop_last=False``: a short last batch is trained on, as torch's DataLoader does by default.
    - ``measure_at_init=True``: also measure the freshly initialised networks as epoch 0 (daneshmand2021
      decision 4: "gap computed on the freshly initialised network").
    - ``checkpoint_path=None``: no checkpoints; otherwise save there every ``checkpoint_every`` epochs (and
      after the last) and resume from it when present.
    - ``device="auto"``: CUDA when present (``runtime.resolve_device``).
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
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"epochs must be ≥ 0, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {self.batch_size}")
        if self.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be ≥ 1 epoch, got {self.checkpoint_every}")
