"""Which results files came from a bundle, and the origin of every file and item (docs/bundles.md, "Origins").

The ledger, ``<results root>/imported.json``, lists each file a bundle placed with the bundle's name, the file's
SHA-256 and its provenance. A file counts as imported while its bytes are the ledger's: a job that computes it again
here replaces the file, and from then on it is computed here, whatever the ledger still says. The origin of a file
computed here is read from its own metadata (isonorm.results): device and commit, and when it was written.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..atomic import write_text_atomically
from ..items import item_files, paper_items
from ..results import DamagedResultError, read_metadata
from ..verdicts.scoreboard import ORIGIN_COMPUTED as COMPUTED, ORIGIN_IMPORTED as IMPORTED, ORIGIN_STALE as STALE

LEDGER = "imported.json"


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ledger_path(results_root: str | Path) -> Path:
    return Path(results_root, LEDGER)


def read_ledger(results_root: str | Path) -> dict[str, dict[str, Any]]:
    """{path relative to the results root: entry} of the files bundles placed here; {} before any."""
    path = ledger_path(results_root)
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is damaged ({err}); delete it: the files it lists then count as computed here, "
                         "and the next run with `bundles:` set places its bundles' files again") from err


def write_ledger(results_root: str | Path, files: Mapping[str, Mapping[str, Any]]) -> Path:
    body = {"about": "results files placed here from bundles (isonorm.bundles, docs/bundles.md)",
            "files": {k: dict(v) for k, v in sorted(files.items())}}
    return write_text_atomically(ledger_path(results_root), json.dumps(body, indent=1) + "\n")


def still_imported(results_root: str | Path, relative: str, entry: Mapping[str, Any]) -> bool:
    """Whether the file is the bundle's copy still (a job here may have written its own since)."""
    path = Path(results_root, relative)
    return path.is_file() and sha256(path) == entry.get("sha256")


def _commit(commit: Any) -> str:
    text = str(commit or "unknown")
    return text[:7] + ("+dirty" if text.endswith("+dirty") else "") if text != "unknown" else text


def written(path: Path, meta: Mapping[str, Any], endtime: float | None = None) -> str:
    """When a results file was written (UTC, ISO 8601): its metadata's ``written`` where an older job recorded it,
    else Snakemake's record of its job (``endtime``), else the file's own time."""
    if meta.get("written"):
        return str(meta["written"])
    stamp = endtime if endtime is not None else path.stat().st_mtime
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="seconds")


def file_origin(results_root: str | Path, path: str | Path,
                ledger: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, str] | None:
    """Where one existing results file came from: {kind, bundle, device, date, commit}, kind ``imported`` (the
    ledger's copy still), ``stale`` (an imported stale file the run was told to use) or ``computed`` (here, read from
    its metadata); None for a file that does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    ledger = read_ledger(results_root) if ledger is None else ledger
    try:
        relative = path.relative_to(results_root).as_posix()
    except ValueError:
        relative = None
    entry = ledger.get(relative) if relative else None
    if entry is not None and still_imported(results_root, relative, entry):
        return {"kind": STALE if entry.get("stale") else IMPORTED, "bundle": str(entry.get("bundle")),
                "device": str(entry.get("device") or "device unknown"), "date": str(entry.get("written") or "")[:10],
                "commit": _commit(entry.get("commit"))}
    try:
        meta = read_metadata(path)
    except DamagedResultError:
        meta = {"device": "damaged file, its metadata unreadable"}
    return {"kind": COMPUTED, "bundle": "", "device": str(meta.get("device") or "device unknown"),
            "date": written(path, meta)[:10], "commit": _commit(meta.get("git_commit"))}


def origin_text(origins: Iterable[Mapping[str, str]]) -> str:
    """Several files' origins as one text, one part per kind, bundle, device and commit, its dates as a range:
    ``imported from real-data-cpu-2026-12-02 (cpu:x86_64, 2026-12-02, c3fb5af)``, ``computed (cuda:NVIDIA H100,
    2026-12-01 to 2026-12-03, 1a2b3c4)``, ``stale, imported from …``; imported parts first."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for o in origins:
        groups.setdefault((o["kind"], o["bundle"], o["device"], o["commit"]), []).append(o["date"])
    order = {IMPORTED: 0, STALE: 1, COMPUTED: 2}
    parts = []
    for (kind, bundle, device, commit), dates in sorted(groups.items(), key=lambda g: (order[g[0][0]], g[0])):
        known = sorted(d for d in dates if d)
        when = ("date unknown" if not known else known[0] if known[0] == known[-1]
                else f"{known[0]} to {known[-1]}")
        head = {IMPORTED: f"imported from {bundle}", STALE: f"stale, imported from {bundle}", COMPUTED: "computed"}
        parts.append(f"{head[kind]} ({device}, {when}, {commit})")
    return "; ".join(parts)


def item_origins(results_root: str | Path, items: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """{item id: origin text} from {item id: its results files}: the origins of the files that exist; an item none of
    whose files exists has no entry (its rows are not run, or failed)."""
    ledger = read_ledger(results_root)
    found = {}
    for item, files in items.items():
        origins = [o for o in (file_origin(results_root, f, ledger) for f in files) if o is not None]
        if origins:
            found[item] = origin_text(origins)
    return found


def paper_origins(slug: str, results: Mapping[str, Iterable[str]], results_root: str | Path) -> dict[str, str]:
    """{item id: origin text} of a paper's items from its results (result key -> files, readings ``<key>--<name>``
    included, as the claims job gets them): read when the claims job runs, once its results exist."""
    return item_origins(results_root, item_files(paper_items(slug), results))
