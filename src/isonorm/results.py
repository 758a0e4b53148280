"""The results contract (architecture §5): tidy Parquet, provenance in the metadata, atomic writes.

Every measurement the pipeline makes is one row: columns for every varied factor (``width``, ``depth``,
``seed``, ``layer``, ``epoch`` ...) plus either ``metric``/``value`` or one column per metric when they are
always measured together. The file's key-value metadata holds, under the key ``isonorm``, a JSON object
with the config subset that produced it, the git commit, package versions and the device.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .atomic import atomic_write
from .provenance import provenance

METADATA_KEY = b"isonorm"


def write_results(
    frame: pd.DataFrame,
    path: str | Path,
    config: Mapping[str, Any] | None = None,
    device: str | None = None,
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


def read_results(path: str | Path) -> pd.DataFrame:
    return pd.read_parquet(path)


def read_all_results(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Several results files of one experiment as one frame (e.g. one file per variant); at least one path."""
    paths = list(paths)
    if not paths:
        raise ValueError("read_all_results needs at least one results file")
    return pd.concat([read_results(p) for p in paths], ignore_index=True)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The provenance object stored with a results file."""
    schema = pq.read_schema(path)
    raw = (schema.metadata or {}).get(METADATA_KEY)
    return json.loads(raw) if raw else {}
