"""A bundle of a run's results (docs/bundles.md, "Making one"): every experiment results file under the run's
results root (or those of the items named), each with its checksum, the items that read it, the job that wrote it
(Snakemake's own record of the file, ``.snakemake/metadata``), and the provenance and fingerprints its job wrote into
it (isonorm.results, isonorm.fingerprints). No data sets, no checkpoints, no claims or scored rows: a checkout that
imports the bundle measures and scores them again from the results, with its own reference files.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from ..items import READING, Item, Results, key_results, paper_items, reads_key
from ..provenance import git_commit, package_versions, provenance
from ..results import DamagedResultError, read_metadata
from .ledger import sha256, written
from .manifest import BundledFile, BundleError, manifest_of, read_bundle, write_bundle, Bundle

SNAKEMAKE_RECORDS = Path(".snakemake", "metadata")


@dataclass(frozen=True)
class KeyPattern:
    """A result key's files as a regular expression over their paths under the results root."""

    slug: str
    key: str
    items: tuple[str, ...]
    names: tuple[str, ...]
    regex: re.Pattern[str]

    def match(self, relative: str) -> dict[str, str] | None:
        found = self.regex.fullmatch(relative)
        return None if found is None else dict(zip(self.names, found.groups()))


def _pattern(slug: str, key: str, path: str, items: Sequence[Item], files: Results) -> KeyPattern:
    """A wildcard whose values the record gives as a tuple matches those values only (``item=("table2",)``); one
    whose values come from the config matches any name (the config of the exporting run is not at hand)."""
    literal = {spec: [str(v) for v in given] for spec, given in files.wildcards
               if "-" not in spec and isinstance(given, (tuple, list))}
    names = tuple(re.findall(r"\{(\w+)\}", path))
    parts = re.split(r"\{\w+\}", path)
    groups = [f"({'|'.join(map(re.escape, literal[n]))})" if n in literal else "([^/]+?)" for n in names]
    body = re.escape(parts[0]) + "".join(g + re.escape(p) for g, p in zip(groups, parts[1:]))
    readers = tuple(item.id for item in items if reads_key(item, key))
    return KeyPattern(slug, key, readers, names, re.compile(re.escape(f"{slug}/") + body))


def key_patterns(slugs: Iterable[str]) -> list[KeyPattern]:
    """Every result key of the papers, its readings' paths first (a reading's file also matches its key's pattern)."""
    found = []
    for slug in slugs:
        items = paper_items(slug)
        for key, files in key_results(slug, items).items():
            if files.readings:
                found.append(_pattern(slug, f"{key}{READING}{{reading}}", files.reading_path("{reading}"), items,
                                      files))
            found.append(_pattern(slug, key, files.path, items, files))
    return found


def snakemake_record(path: Path) -> dict:
    """Snakemake's record of an output it made (``.snakemake/metadata``, named by the path in urlsafe base64): its
    ``rule``, and the ``job_hash`` that the outputs of one job share; {} without one (a file made elsewhere)."""
    record = SNAKEMAKE_RECORDS / base64.urlsafe_b64encode(str(path).encode()).decode()
    try:
        return dict(json.loads(record.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def bundled_file(results_root: Path, path: Path, patterns: Sequence[KeyPattern],
                 job_prints: dict | None = None) -> BundledFile | str:
    """The manifest entry of one results file, or why it cannot travel (a text). A file its job's function writes
    beside the job's results (lu2024's weights for Fig. 2) records no fingerprints of its own: it takes those of
    the file of the same job (``job_prints``: Snakemake's job hash -> that file's metadata)."""
    relative = path.relative_to(results_root).as_posix()
    try:
        meta = read_metadata(path)
    except DamagedResultError as err:
        return str(err)
    record = snakemake_record(path)
    if "code_fingerprint" not in meta and record.get("job_hash") in (job_prints or {}):
        sibling = job_prints[record["job_hash"]]
        meta = {**meta, **{k: sibling[k] for k in ("code_fingerprint", "settings_fingerprint", "config")}}
    if "code_fingerprint" not in meta:
        return (f"{relative} records no fingerprints (written before they were recorded, or not by an experiment "
                "job); compute it again to bundle it")
    for pattern in patterns:
        wildcards = pattern.match(relative)
        if wildcards is not None and not (READING not in pattern.key and any(READING in v for v in wildcards.values())):
            break
    else:
        return f"{relative} is no result key's file under the papers' records"
    rule = record.get("rule") or "unknown rule"
    job = f"{rule}[{', '.join(f'{k}={v}' for k, v in wildcards.items())}]" if wildcards else rule
    run = meta.get("config") or {}
    return BundledFile(
        path=relative, sha256=sha256(path), bytes=path.stat().st_size, items=pattern.items,
        result_key=pattern.key.replace("{reading}", wildcards.get("reading", "")), job=job,
        function=str(run.get("function", "")), commit=str(meta.get("git_commit", "unknown")),
        device=str(meta.get("device", "unknown")), written=written(path, meta, record.get("endtime")),
        code_fingerprint=str(meta["code_fingerprint"]), settings_fingerprint=str(meta["settings_fingerprint"]),
        packages=dict(meta.get("packages") or {}))


def export_bundle(results_root: str | Path, out: str | Path, *, slugs: Sequence[str], preset: str,
                  items: Sequence[str] = (), name: str | None = None, note: str = "") -> tuple[Bundle, list[str]]:
    """Write the bundle ``out`` of the results under ``results_root`` (module docstring): the files of ``items``
    (ids), or all; returns it, read back and checked, and the files left out with why."""
    root = Path(results_root)
    if not root.is_dir():
        raise BundleError(f"{root} does not exist: run the workflow first, or name the preset whose results to "
                          "bundle (--preset)")
    patterns = key_patterns(slugs)
    wanted = set(items)
    known = {item for p in patterns for item in p.items}
    unknown = sorted(wanted - known)
    if unknown:
        raise BundleError(f"no item {unknown} has results files in the papers {list(slugs)}; name items by id "
                          "(lu2024-table1)")
    entries, left_out = [], []
    files = [path for slug in slugs if Path(root, slug).is_dir() for path in sorted(Path(root, slug).rglob("*.parquet"))
             if not (path.name == "claims.parquet" and path.parent == Path(root, slug))]  # claims: measured again
    job_prints = {}
    for path in files:
        job_hash = snakemake_record(path).get("job_hash")
        try:
            meta = read_metadata(path) if job_hash is not None else {}
        except DamagedResultError:
            continue  # named when its own entry is made
        if "code_fingerprint" in meta:
            job_prints[job_hash] = meta
    for slug in slugs:
        for path in [p for p in files if p.is_relative_to(Path(root, slug))]:
            entry = bundled_file(root, path, patterns, job_prints)
            if isinstance(entry, str):
                left_out.append(entry)
            elif not wanted or wanted & set(entry.items):
                entries.append(entry)
    if not entries:
        raise BundleError(f"no results file to bundle under {root}" + (f" for {sorted(wanted)}" if wanted else "")
                          + (f" ({left_out[0]}, …)" if left_out else ""))
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    made_by = {**provenance(), "commit": git_commit(), "packages": package_versions()}
    made_by.pop("git_commit", None)
    name = name or Path(out).name.split(".")[0]
    manifest = manifest_of(name, created, preset, made_by, entries, note)
    write_bundle(out, manifest, {e.path: root / e.path for e in entries})
    return read_bundle(out), left_out
