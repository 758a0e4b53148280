"""Reading single tensors of a fetched checkpoint without building the model (lu2024-table5 (b), lu2024-table5 (c)).

``safetensors.safe_open`` memory-maps a file and materialises only the tensor asked for, so the matrices of
one layer of a 7B model cost their own size in memory, not the model's 13-15 GB. Works on one-file and on
sharded checkpoints (the index says which shard holds a tensor) and on the parameter names of both a base
model (``encoder.layer.0...``) and a model with a head (``bert.encoder.layer.0...``): a short name matches
the full name it ends with, at a dot boundary.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from .errors import CheckpointError, CorruptCheckpointError, MissingCheckpointFilesError
from .load import checkpoint_record
from .registry import INDEX
from .shards import read_index, safetensors_names
from .validate import refetch_hint

WEIGHTS = "model.safetensors"  # the one-file layout's weights (registry CheckpointSpec.weights)


class TensorIndex:
    """Where each tensor of a checkpoint folder lives: {full name: file}, from the index or the file header."""

    def __init__(self, folder: str | Path, *, check: bool = True) -> None:
        self.folder = Path(folder)
        self.record = checkpoint_record(self.folder) if check else {}
        if (self.folder / INDEX).is_file():
            self.files = read_index(self.folder)
        elif (self.folder / WEIGHTS).is_file():
            self.files = dict.fromkeys(safetensors_names(self.folder / WEIGHTS), WEIGHTS)
        else:
            raise MissingCheckpointFilesError(
                f"{self.folder} has neither {WEIGHTS} nor {INDEX}: not a safetensors checkpoint. "
                + refetch_hint(self.folder)
            )

    def resolve(self, name: str) -> str:
        """The full tensor name that is ``name`` or ends with ``.name``; an error naming close matches."""
        if name in self.files:
            return name
        hits = [full for full in self.files if full.endswith("." + name)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise CheckpointError(f"{name!r} is ambiguous in {self.folder}: {sorted(hits)[:4]}")
        tail = name.rsplit(".", 2)[-2] if name.count(".") >= 1 else name
        near = sorted(full for full in self.files if tail in full)[:5]
        raise CheckpointError(
            f"{self.folder} has no tensor {name!r} (nor one ending with it); similar names: {near or 'none'}. "
            "Is it the checkpoint of the architecture the name map expects (config.json model_type)?"
        )

    def read(self, name: str, *, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """The tensor ``name`` (short or full), read alone and converted to ``dtype`` on ``device``."""
        from safetensors import SafetensorError, safe_open  # deferred: only readers of weights need it

        full = self.resolve(name)
        path = self.folder / self.files[full]
        if not path.is_file():
            raise MissingCheckpointFilesError(
                f"tensor {full} lives in {path.name}, which this folder does not hold (it was fetched with "
                f"`tensors: {self.record.get('tensors')}`). Add a pattern matching {full!r} to the checkpoint's "
                "`tensors:` in the config (or remove `tensors` to fetch every shard), delete the folder and fetch again."
            )
        try:
            with safe_open(str(path), framework="pt", device="cpu") as handle:
                tensor = handle.get_tensor(full)
        except (SafetensorError, OSError, ValueError, RuntimeError) as err:  # SafetensorError is no OSError
            raise CorruptCheckpointError(f"{path} is damaged: cannot read {full} ({err}). "
                                         + refetch_hint(self.folder, path)) from err
        return tensor.to(device=device, dtype=dtype)


def model_type(folder: str | Path) -> str:
    """``model_type`` of the checkpoint's config.json (bert, roberta, gpt2, t5, llama, qwen, qwen2, ...)."""
    path = Path(folder) / "config.json"
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["model_type"])
    except (OSError, ValueError, KeyError) as err:
        raise CheckpointError(f"{path} gives no model_type ({err}). " + refetch_hint(Path(folder))) from err
