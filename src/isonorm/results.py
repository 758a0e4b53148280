"""The results contract (architecture §5): tidy Parquet, provenance in the metadata, atomic writes.

Every measurement the pipeline makes is one row: columns for every varied factor (``width``, ``depth``,
``seed``, ``layer``, ``epoch`` ...) plus either ``metric``/``value`` or one column per metric when they are
always measured together. The file's key-value metadata holds, under the key ``isonorm``, a JSON object
with the config subset that produced it, the git commit, package versions and the device. Every reader goes
through :func:`read_parquet`, so a damaged file (a disk error, a copy cut short) is named with the command that
rebuilds it rather than met as a pyarrow traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .atomic import atomic_write
from .provenance import provenance

if TYPE_CHECKING:  # torch only for the annotation: readers of results need not import it
    import torch

METADATA_KEY = b"isonorm"
T = TypeVar("T")


def write_results(
    frame: pd.DataFrame,
    path: str | Path,
    config: Mapping[str, Any] | None = None,
    device: str | torch.device | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``frame`` to ``path`` atomically, with provenance metadata. A killed job leaves no file."""
    path = Path(path)
    meta = {"config": dict(config or {}), **provenance(device), **dict(extra or {})}
    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
    existing = table.schema.metadata or {}
    table = table.replace_schema_metadata({**existing, METADATA_KEY: json.dumps(meta, default=str).encode()})
    with atomic_write(path) as tmp:
        pq.write_table(table, tmp)
    return path


class DamagedResultError(OSError):
    """A results or claims file exists but cannot be read (truncated, overwritten, a disk error)."""


def read_parquet(path: str | Path, read: Callable[[str | Path], T] = pd.read_parquet) -> T:
    """``read(path)`` of a results or claims file; a damaged file raises :class:`DamagedResultError` saying how
    to rebuild it, instead of pyarrow's traceback. A missing file stays a FileNotFoundError."""
    try:
        return read(path)
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError, ValueError) as err:  # ArrowInvalid is a ValueError, ArrowIOError an OSError
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        reason = reason.split("': ", 1)[-1] if reason.startswith("Could not open Parquet input source") else reason
        raise DamagedResultError(
            f"{path} is damaged ({reason}). Delete it, or rebuild it with: snakemake --cores all --forcerun {path} "
            "(add the same --configfile as the run that made it, e.g. --configfile presets/quick.yaml)"
        ) from err


def read_results(path: str | Path) -> pd.DataFrame:
    return read_parquet(path)


def read_all_results(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Several results files of one experiment as one frame (e.g. one file per variant); at least one path."""
    paths = list(paths)
    if not paths:
        raise ValueError("read_all_results needs at least one results file")
    return pd.concat([read_results(p) for p in paths], ignore_index=True)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The provenance object stored with a results file."""
    schema = read_parquet(path, pq.read_schema)
    raw = (schema.metadata or {}).get(METADATA_KEY)
    return json.loads(raw) if raw else {}
