"""The bundle format (docs/bundles.md, "The file"): one tar archive, readable with ``tar`` and any JSON reader.

    manifest.json                      what the bundle holds: its name, when and from which checkout it was made,
                                       the preset, and one entry per file (:class:`BundledFile`)
    results/<slug>/<path>.parquet      the results files, at their paths under the run's results root

Reading a bundle (:func:`read_bundle`) checks it whole before anything is used: the format, every file the manifest
lists present with its size and SHA-256, and nothing in the archive that the manifest does not list. A truncated
download, an edited file or an added one is a :class:`BundleError` that names the bundle, the file and the fix.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from ..atomic import atomic_write
from ..user_errors import UserError

FORMAT, FORMAT_VERSION = "isonorm-bundle", 1
MANIFEST = "manifest.json"
RESULTS_DIR = "results"


class BundleError(UserError):
    """A bundle that cannot be used as it is: damaged, edited, of another format, or in conflict with another; the
    run stops before any job with the cause and the fix (isonorm.user_errors)."""


@dataclass(frozen=True)
class BundledFile:
    """One results file of a bundle, with where it came from and what computed it."""

    path: str  # relative to the results root of the run that wrote it (results/ for the paper configuration)
    sha256: str
    bytes: int
    items: tuple[str, ...]  # the item ids that read it (their records)
    result_key: str
    job: str  # rule[wildcards], as the run's own summary names a job (isonorm.run_status.job_label)
    function: str  # the library function its job ran, package.module:function
    commit: str
    device: str
    written: str  # when its job wrote it (UTC, ISO 8601)
    code_fingerprint: str
    settings_fingerprint: str
    packages: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> "BundledFile":
        names = {f.name for f in fields(cls)}
        missing = sorted(names - set(entry) - {"packages"})
        if missing:
            raise KeyError(f"a file entry lacks {missing}")
        values = {k: v for k, v in entry.items() if k in names}
        return cls(**{**values, "items": tuple(values["items"]), "packages": dict(values.get("packages") or {})})


@dataclass(frozen=True)
class Bundle:
    """A bundle read and checked (:func:`read_bundle`)."""

    path: Path
    name: str
    created: str
    preset: str
    made_by: Mapping[str, Any]  # the exporting checkout: commit, host, python, packages
    files: tuple[BundledFile, ...]
    note: str = ""

    def file(self, path: str) -> BundledFile:
        return next(f for f in self.files if f.path == path)

    def member(self, path: str) -> str:
        return f"{RESULTS_DIR}/{path}"

    def read(self, path: str) -> bytes:
        """The bytes of one of its files, checked against its checksum again (the archive may change on disk)."""
        entry = self.file(path)
        with tarfile.open(self.path, "r:*") as archive:
            data = _member_bytes(archive, self.member(path), self.path)
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise BundleError(f"{self.path}: {path} changed since the bundle was checked; get the bundle again")
        return data


def manifest_of(name: str, created: str, preset: str, made_by: Mapping[str, Any], files: Any,
                note: str = "") -> dict[str, Any]:
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "name": name, "created": created, "preset": preset,
            "made_by": dict(made_by), "note": note,
            "files": [{**asdict(f), "items": list(f.items)} for f in files]}


def _member_bytes(archive: tarfile.TarFile, name: str, where: Path) -> bytes:
    try:
        member = archive.getmember(name)
        stream = archive.extractfile(member)
    except KeyError:
        raise BundleError(f"{where} lists {name} in its manifest but does not hold it: the archive is incomplete "
                          "(a download or copy cut short); get or export it again") from None
    if stream is None:
        raise BundleError(f"{where}: {name} is not a regular file")
    return stream.read()


def _damaged(where: Path, why: str) -> BundleError:
    return BundleError(f"{where} is not a readable bundle ({why}); it may be truncated or not a bundle at all: get it "
                       "again, or remove it from `bundles:` (--config bundles=[] runs without any); nothing was "
                       "imported from it")


def read_bundle(path: str | Path) -> Bundle:
    """The bundle at ``path``, every file's size and checksum checked (module docstring)."""
    where = Path(path)
    if not where.is_file():
        raise BundleError(f"bundle {where} does not exist; fix the path in `bundles:` (config.yaml or --config), or "
                          "run without it: --config bundles=[]")
    try:
        with tarfile.open(where, "r:*") as archive:
            names = archive.getnames()
            if MANIFEST not in names:
                raise _damaged(where, f"no {MANIFEST}")
            manifest = json.loads(_member_bytes(archive, MANIFEST, where))
            if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
                raise BundleError(f"{where} is a {manifest.get('format')!r} file of version "
                                  f"{manifest.get('format_version')!r}; this checkout reads {FORMAT!r} version "
                                  f"{FORMAT_VERSION} (update the checkout, or export the bundle again)")
            try:
                files = tuple(BundledFile.of(entry) for entry in manifest["files"])
            except (KeyError, TypeError) as err:
                raise _damaged(where, f"its manifest is malformed: {err}") from None
            listed = {f"{RESULTS_DIR}/{f.path}" for f in files}
            extra = sorted(set(n for n in names if n != MANIFEST and archive.getmember(n).isfile()) - listed)
            if extra:
                raise BundleError(f"{where} holds files its manifest does not list ({', '.join(extra[:3])}): it was "
                                  "changed after it was made; get or export it again")
            for entry in files:
                unsafe = PurePosixPath(entry.path)
                if unsafe.is_absolute() or ".." in unsafe.parts:
                    raise BundleError(f"{where}: {entry.path} would be written outside the results folder")
                data = _member_bytes(archive, f"{RESULTS_DIR}/{entry.path}", where)
                if len(data) != entry.bytes or hashlib.sha256(data).hexdigest() != entry.sha256:
                    raise BundleError(
                        f"{where}: {entry.path} does not match its checksum in the manifest (edited, or damaged in "
                        "transit): the bundle is refused and nothing was imported from it; get or export it again")
    except BundleError:
        raise
    except (tarfile.TarError, EOFError, OSError, ValueError) as err:
        raise _damaged(where, f"{type(err).__name__}: {str(err).strip() or 'unreadable'}") from None
    return Bundle(where, str(manifest["name"]), str(manifest["created"]), str(manifest["preset"]),
                  dict(manifest.get("made_by") or {}), files, str(manifest.get("note") or ""))


def write_bundle(out: str | Path, manifest: Mapping[str, Any], sources: Mapping[str, Path]) -> Path:
    """Write the archive atomically: the manifest, then each file of ``sources`` ({path in the manifest: the file on
    disk}) under ``results/``, in the manifest's order, with fixed owners and times (the same files give the same
    archive)."""
    def add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, 0
        archive.addfile(info, io.BytesIO(data))

    with atomic_write(out) as tmp:
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as archive:
            add(archive, MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())
            for entry in manifest["files"]:
                add(archive, f"{RESULTS_DIR}/{entry['path']}", Path(sources[entry["path"]]).read_bytes())
    return Path(out)
