"""Sharded safetensors checkpoints: the index, choosing the shards that hold given tensors, checking them.

The Hub stores a large model as ``model.safetensors.index.json`` (``{"weight_map": {tensor: shard file}}``)
plus shards ``model-0000i-of-0000n.safetensors``. Table 5 (c) of Lu et al. needs the matrices of one layer of
7B models (lu2024-table5 (c): "only the shard(s) holding layer 8 are needed"), so the fetch reads the index
first and downloads only the shards whose tensors match the configured patterns.
"""

from __future__ import annotations

import fnmatch
import json
import struct
from pathlib import Path
from typing import Iterable, Sequence

from .errors import CorruptCheckpointError, MissingCheckpointFilesError
from .registry import INDEX
from .validate import check_safetensors, refetch_hint


def read_index(folder: str | Path) -> dict[str, str]:
    """The weight map {tensor name: shard file} of the sharded checkpoint in ``folder``."""
    path = Path(folder) / INDEX
    if not path.is_file():
        raise MissingCheckpointFilesError(f"{path} is missing: the folder holds no sharded checkpoint. "
                                          + refetch_hint(Path(folder)))
    try:
        weight_map = json.loads(path.read_text(encoding="utf-8"))["weight_map"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CorruptCheckpointError(f"{path} is not a safetensors index with a weight_map ({err}). "
                                     + refetch_hint(Path(folder), path)) from err
    bad = [f for f in set(weight_map.values()) if not isinstance(f, str) or "/" in f or not f.endswith(".safetensors")]
    if not isinstance(weight_map, dict) or not weight_map or bad:
        raise CorruptCheckpointError(f"{path} has an empty or garbled weight_map (shards {bad[:3]}). "
                                     + refetch_hint(Path(folder), path))
    return dict(weight_map)


def matching_tensors(names: Iterable[str], patterns: Sequence[str]) -> list[str]:
    """The tensor names that match any of the glob ``patterns`` (e.g. ``model.layers.8.*``), sorted."""
    return sorted(n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns))


def select_shards(weight_map: dict[str, str], patterns: Sequence[str] | None, *, what: str) -> list[str]:
    """The shard files holding the tensors that match ``patterns`` (None: every shard)."""
    if patterns is None:
        return sorted(set(weight_map.values()))
    wanted = matching_tensors(weight_map, patterns)
    if not wanted:
        example = next(iter(weight_map))
        raise ValueError(
            f"{what}: no tensor of the checkpoint matches `tensors: {list(patterns)}` (names look like "
            f"{example!r}); fix the glob patterns in the config, or remove `tensors` to fetch every shard"
        )
    return sorted({weight_map[n] for n in wanted})


def safetensors_names(path: Path) -> set[str]:
    """Names of the tensors in a safetensors file, from its header only (after :func:`check_safetensors`)."""
    with path.open("rb") as stream:
        (length,) = struct.unpack("<Q", stream.read(8))
        return {k for k in json.loads(stream.read(length)) if k != "__metadata__"}


def check_shards(folder: str | Path, shards: Sequence[str], weight_map: dict[str, str]) -> None:
    """Each shard present and intact, holding every tensor the index places in it."""
    folder = Path(folder)
    missing = [s for s in shards if not (folder / s).is_file()]
    if missing:
        raise MissingCheckpointFilesError(
            f"checkpoint folder {folder} lacks shard(s) {', '.join(missing)} listed in {INDEX}. " + refetch_hint(folder)
        )
    for shard in shards:
        check_safetensors(folder / shard)
        expected = {n for n, s in weight_map.items() if s == shard}
        absent = sorted(expected - safetensors_names(folder / shard))
        if absent:
            raise CorruptCheckpointError(
                f"{folder / shard} lacks {len(absent)} tensor(s) that {INDEX} places in it (e.g. {absent[:3]}): "
                "the index and the shard come from different revisions. " + refetch_hint(folder, folder / shard)
            )
