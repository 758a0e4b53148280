"""Device choice and deterministic seeding (architecture §8)."""

from __future__ import annotations

import hashlib

import torch


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` means CUDA when present, else CPU; anything else is passed to ``torch.device``."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            f"config asks for device {device!r} but CUDA is not available here; "
            "set `device: auto` (or `cpu`) in the config"
        )
    return resolved


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from (experiment, variant, run, ...): same parts, same seed, on every machine.

    Decision B12 takes the run index as the seed; hashing it together with the experiment and
    variant keeps the streams of different experiments independent while staying reproducible.
    """
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def generator(*parts: object, device: str | torch.device = "cpu") -> torch.Generator:
    """A torch Generator seeded with :func:`derive_seed` of ``parts``."""
    gen = torch.Generator(device=device)
    gen.manual_seed(derive_seed(*parts))
    return gen
