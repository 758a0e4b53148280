"""Outputs of every stacked run on a whole data set, in batches, without touching the training state."""

from __future__ import annotations

import torch

from .stacking import StackedModels


@torch.no_grad()
def predict(stacked: StackedModels, x: torch.Tensor, batch_size: int, train_mode: bool = False) -> torch.Tensor:
    """Logits (R, N, k) of all R runs on the N inputs ``x`` (moved to the stack's device batch by batch).

    ``train_mode=False`` evaluates as ``model.eval()`` would (BatchNorm running stats, no dropout);
    ``train_mode=True`` uses batch statistics and active dropout, as measurements on a network "in training
    mode" do (decision D7). Either way the stacked buffers are left unchanged: BatchNorm's
    running-stat updates go to a scratch copy.
    """
    if batch_size < 1:
        raise ValueError(f"predict batch_size must be ≥ 1, got {batch_size}")
    was_training = stacked.training
    saved_buffers = stacked.buffers
    stacked.buffers = {name: b.clone() for name, b in saved_buffers.items()}
    stacked.train(train_mode)
    try:
        outputs = [
            stacked(x[start : start + batch_size].to(stacked.device), shared_input=True)
            for start in range(0, x.shape[0], batch_size)
        ]
    finally:
        stacked.buffers = saved_buffers
        stacked.train(was_training)
    return torch.cat(outputs, dim=1)
