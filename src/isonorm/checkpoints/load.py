"""Loading a fetched checkpoint folder for an experiment, with clear errors instead of library tracebacks.

The folder must carry the ``.ready`` marker of :func:`~isonorm.checkpoints.fetch_checkpoint`; its files are
re-checked against the sizes recorded there (:mod:`.validate`), those of a `huggingface` checkpoint also
against the pinned revision's Hugging Face cache snapshot they link to (:mod:`.cache`), before
``transformers`` reads them, and a model whose weights do not cover every parameter is refused (a wrong or
partial checkpoint would otherwise run silently with random weights). ``transformers`` is imported by the
loaders only: it is slow to import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..runtime import resolve_device
from .cache import check_links
from .errors import CheckpointError, CorruptCheckpointError
from .fetch import CHECKPOINT
from .validate import check_files, refetch_hint


def checkpoint_record(folder: str | Path) -> dict[str, Any]:
    """The marker of a complete checkpoint folder, after checking its files; clear errors otherwise."""
    folder = Path(folder)
    record = CHECKPOINT.require_complete(folder)  # MissingCheckpointFilesError naming the fetch
    files = record.get("files")
    if not isinstance(files, dict) or not files or "model_class" not in record:
        raise CheckpointError(f"{folder}/.ready does not describe a checkpoint. {refetch_hint(folder)}")
    if record.get("snapshot"):  # links into the Hugging Face cache (a folder fetched before that has none)
        check_links(folder, record)
    check_files(folder, list(files), sizes=files)
    return record


def describe_checkpoint(record: dict[str, Any]) -> str:
    """One line for captions: where the weights came from."""
    if record.get("source") == "tiny":
        sizes = record.get("sizes", {})
        settings = ", ".join(f"{k}={v}" for k, v in sizes.items())
        return f"tiny random {record['model_class']} ({settings}, seed {record.get('seed')})"
    if record.get("source") == "random":
        depth_keys = ("num_hidden_layers", "n_layer", "num_layers")  # the one option of `random`: its depth
        depth = {k: v for k, v in record.get("sizes", {}).items() if k in depth_keys}
        part = "" if record.get("tensors") is None else f", tensors {record['tensors']} only"
        return f"random {record['model_class']} at full size ({depth}, seed {record.get('seed')}{part})"
    if record.get("source") == "local":
        return f"{record.get('repo')} (staged locally from {record.get('path')})"
    return f"{record.get('repo')}@{record.get('revision')}"


def load_checkpoint_model(
    folder: str | Path,
    *,
    device: str | torch.device = "cpu",
    attn_implementation: str = "eager",  # decision D7: pin the attention implementation
    dtype: torch.dtype = torch.float32,
) -> torch.nn.Module:
    """The checkpoint's model (the marker's class, e.g. ``GPT2Model``) on ``device``, in eval mode."""
    import transformers

    folder = Path(folder)
    record = checkpoint_record(folder)
    model_class = getattr(transformers, record["model_class"], None)
    if model_class is None:
        raise CheckpointError(
            f"transformers {transformers.__version__} has no class {record['model_class']} (named in {folder}/.ready); "
            "install the pinned version (envs/requirements.txt)"
        )
    if record.get("tensors") is not None:  # a sharded checkpoint fetched for some tensors only (Table 5 (c))
        raise CheckpointError(
            f"{folder} holds only the shards with the tensors {record['tensors']} (the `tensors:` option of its "
            "checkpoint entry), not a whole model; remove `tensors` from the entry and fetch it again to build it"
        )
    from safetensors import SafetensorError  # not an OSError/ValueError: a tensor the header check let through

    try:
        model, info = model_class.from_pretrained(
            folder, attn_implementation=attn_implementation, dtype=dtype, output_loading_info=True
        )
    except (OSError, ValueError, RuntimeError, KeyError, SafetensorError) as err:
        raise CorruptCheckpointError(
            f"transformers could not load {folder}: a file there is damaged or unreadable ({type(err).__name__}: "
            f"{err}). {refetch_hint(folder)}"
        ) from err
    missing = sorted(info.get("missing_keys", []))
    if missing:
        raise CorruptCheckpointError(
            f"{folder / 'model.safetensors'} lacks {len(missing)} parameter(s) of {record['model_class']} "
            f"(e.g. {', '.join(missing[:3])}); they would be random. Is it the right checkpoint? {refetch_hint(folder)}"
        )
    return model.to(resolve_device(str(device)) if not isinstance(device, torch.device) else device).eval()


def load_checkpoint_tokenizer(folder: str | Path) -> Any:
    """The checkpoint's tokenizer (``AutoTokenizer``), checked like the model."""
    from transformers import AutoTokenizer

    folder = Path(folder)
    checkpoint_record(folder)
    try:
        return AutoTokenizer.from_pretrained(folder)
    except (OSError, ValueError, RuntimeError, KeyError) as err:
        raise CorruptCheckpointError(
            f"transformers could not load the tokenizer of {folder} ({type(err).__name__}: {err}). "
            + refetch_hint(folder)
        ) from err
