"""Resumable training checkpoints (architecture §8), written atomically so a killed job never leaves half a file.

A checkpoint holds the step's state (stacked params and buffers, optimizer state), the number of finished
epochs, the history rows so far and the runs stopped on a non-finite loss, plus a ``fingerprint`` of
everything that must match for resuming to continue the same training (run ids, seeds, data size, batch
size, optimizer, parameter shapes). The epoch count is not part of it: resuming with more epochs extends a
finished training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_write

FORMAT = "isonorm.train.checkpoint/2"  # 2: the step's state under "state", the runs stopped on a non-finite loss


class CheckpointError(RuntimeError):
    """A checkpoint exists but cannot be used to resume this training."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write ``payload`` to ``path`` atomically; returns the path."""
    path = Path(path)
    with atomic_write(path) as tmp:
        torch.save({"format": FORMAT, **payload}, tmp)
    return path


def load_checkpoint(path: str | Path, fingerprint: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """The checkpoint at ``path``, checked against this training's ``fingerprint``.

    Raises :class:`CheckpointError` naming the file when it is unreadable, of another format, or was made by
    a different training; deleting it restarts from scratch.
    """
    path = Path(path)
    advice = f"delete {path} to start this training from scratch"
    try:
        payload = torch.load(path, map_location=device, weights_only=True)
    except Exception as error:  # torch raises many types for a truncated or foreign file
        raise CheckpointError(f"checkpoint {path} is unreadable ({type(error).__name__}: {error}); {advice}") from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {path} is not an isonorm training checkpoint ({FORMAT}); {advice}")
    stored = payload.get("fingerprint")
    if stored != fingerprint:
        changed = sorted(k for k in set(fingerprint) | set(stored or {}) if (stored or {}).get(k) != fingerprint.get(k))
        raise CheckpointError(
            f"checkpoint {path} belongs to a different training (differs in: {', '.join(changed)}); {advice}"
        )
    return payload
