"""Cheap integrity checks of a checkpoint folder, run after every fetch and before every load.

A truncated or garbled file must fail with its name and the fix (delete the folder, fetch again), not with a
traceback from deep inside ``transformers``. The safetensors check reads only the header: the format is an
8-byte little-endian header length, a JSON header giving each tensor's byte range, then the data, which must
end exactly at the end of the file (https://github.com/huggingface/safetensors, "Format").
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from ..sources import refetch_hint as sources_refetch_hint
from .cache import cache_hint
from .errors import CorruptCheckpointError, MissingCheckpointFilesError

JSON_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.json", "model.safetensors.index.json")


def refetch_hint(folder: Path, path: Path | None = None) -> str:
    """Delete the folder and run snakemake again (for a `local` checkpoint: re-stage its copy first; for one
    linked into the Hugging Face cache: remove the damaged file ``path`` there first, :func:`.cache.cache_hint`)."""
    return cache_hint(folder, path) or sources_refetch_hint(folder, "checkpoint")


def check_safetensors(path: Path) -> int:
    """Number of tensors in the safetensors file ``path``; CorruptCheckpointError if truncated or garbled."""
    size = path.stat().st_size
    folder = path.parent
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
            if len(head) < 8:
                raise ValueError(f"only {size} bytes, less than the 8-byte header length")
            (header_len,) = struct.unpack("<Q", head)
            if 8 + header_len > size:
                raise ValueError(f"the header claims {header_len} bytes but the file has {size}")
            header = json.loads(stream.read(header_len))
    except (OSError, ValueError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CorruptCheckpointError(
            f"{path} is not a readable safetensors file ({err}). {refetch_hint(folder, path)}"
        ) from err
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    try:
        data_end = max((int(v["data_offsets"][1]) for v in tensors.values()), default=0)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise CorruptCheckpointError(
            f"{path} has a garbled safetensors header ({err}). {refetch_hint(folder, path)}"
        ) from err
    expected = 8 + header_len + data_end
    if expected != size:
        state = "truncated" if size < expected else "longer than its header says"
        raise CorruptCheckpointError(
            f"{path} is {state}: {size} bytes on disk, {expected} expected from its header "
            f"(an interrupted download or copy). {refetch_hint(folder, path)}"
        )
    return len(tensors)


def check_files(folder: Path, files: list[str] | tuple[str, ...], sizes: dict[str, int] | None = None) -> None:
    """Every file present, with the size recorded at fetch time, JSON files parseable, weights intact."""
    folder = Path(folder)
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise MissingCheckpointFilesError(
            f"checkpoint folder {folder} lacks {len(missing)} file(s): {', '.join(missing)} "
            f"(needed: {', '.join(files)}). {refetch_hint(folder, folder / missing[0])}"
        )
    for name, size in (sizes or {}).items():
        actual = (folder / name).stat().st_size
        if actual != size:
            raise CorruptCheckpointError(
                f"{folder / name} has {actual} bytes but had {size} when it was fetched (changed or truncated since). "
                f"{refetch_hint(folder, folder / name)}"
            )
    for name in files:
        path = folder / name
        if name in JSON_FILES:
            try:
                json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                raise CorruptCheckpointError(f"{path} is not valid JSON ({err}). {refetch_hint(folder, path)}") from err
        elif name.endswith(".safetensors"):
            check_safetensors(path)
        elif path.stat().st_size == 0:
            raise CorruptCheckpointError(f"{path} is empty. {refetch_hint(folder, path)}")
