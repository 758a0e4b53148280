"""A run's ``bundles:`` placed into its results folder before Snakemake creates the jobs that would write them
(docs/bundles.md, "Using one").

Every bundle is read whole and checked first (isonorm.bundles.manifest): a damaged or edited one, a bundle of
another preset, or two bundles with different copies of one file stop the run before anything is written, the cause
and the fix named. Then each of their files is held against the job of this run that would write it (``job_of``:
its rule and the code and settings fingerprints this checkout computes for it, isonorm.fingerprints):

- **current** (both fingerprints equal): placed at its path, so that Snakemake finds the output there and plans no
  job for it; the ledger (isonorm.bundles.ledger) records it, and its rows say ``imported from <bundle>``;
- **stale** (this checkout's code or settings differ): not placed; named with the cause, and computed by the run like
  any missing file. ``stale_bundles: use`` places them all the same, labelled ``stale``;
- **already there** with other bytes (computed here, or another bundle's copy): kept; nothing is overwritten;
- **not of this run** (no job of this run writes it: another width, a paper not in ``papers:``): left in the bundle.

Files placed by a bundle no longer listed (or stale files once ``stale_bundles`` is back to ``skip``) are removed
again while they are the bundle's bytes, so that ``--config bundles=[]`` computes everything; a file a job rewrote
here since is the run's own and stays. A dry run (``-n``) writes nothing and says what a run would do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from ..atomic import atomic_write
from .ledger import read_ledger, sha256, still_imported, write_ledger
from .manifest import Bundle, BundledFile, BundleError, read_bundle

# (rule, code fingerprint, settings fingerprint) of the job of this run that writes a results file; None for none
JobOf = Callable[[str], "tuple[str, str, str] | None"]
SKIP, USE = "skip", "use"


@dataclass
class Placed:
    """What one bundle gave this run: paths relative to the results root."""

    bundle: Bundle
    placed: list[str] = field(default_factory=list)  # written now
    in_place: list[str] = field(default_factory=list)  # there already, the bundle's bytes
    kept: list[str] = field(default_factory=list)  # there already, other bytes: this checkout's own
    stale: dict[str, str] = field(default_factory=dict)  # path -> why
    not_of_run: list[str] = field(default_factory=list)

    @property
    def used(self) -> list[str]:
        return [*self.placed, *self.in_place]


@dataclass
class Imports:
    """The outcome of :func:`place_bundles`: per bundle, the files used, and the lines the run prints."""

    bundles: list[Placed]
    removed: list[str]
    lines: list[str]

    dry_run: bool = False

    @property
    def used(self) -> set[str]:
        return {p for b in self.bundles for p in b.used}

    @property
    def present(self) -> set[str]:
        """The files used that are at their paths now: a dry run's only those already in place."""
        return {p for b in self.bundles for p in (b.in_place if self.dry_run else b.used)}


def _conflicts(bundles: Sequence[Bundle]) -> None:
    holders: dict[str, dict[str, list[str]]] = {}
    for bundle in bundles:
        for entry in bundle.files:
            holders.setdefault(entry.path, {}).setdefault(entry.sha256, []).append(f"{bundle.name} ({bundle.path})")
    clashes = {path: by_sha for path, by_sha in holders.items() if len(by_sha) > 1}
    if clashes:
        path, by_sha = next(iter(clashes.items()))
        names = sorted({n for held in by_sha.values() for n in held})
        raise BundleError(f"the bundles {' and '.join(names)} hold different copies of {len(clashes)} results "
                          f"file(s), e.g. {path}; nothing is chosen for you: list only one of them in `bundles:`, or "
                          "export one again without those items (python -m isonorm.bundles export --items ...)")


def _why_stale(entry: BundledFile, job: tuple[str, str, str]) -> str | None:
    _, code, settings = job
    why = []
    if code != entry.code_fingerprint:
        why.append(f"the code that computes them changed since {entry.commit[:7]}")
    if settings != entry.settings_fingerprint:
        why.append("this run's settings for them differ from the bundle's")
    return " and ".join(why) or None


def _write(path: Path, data: bytes) -> None:
    with atomic_write(path) as tmp:
        tmp.write_bytes(data)


def place_bundles(paths: Iterable[str | Path], results_root: str | Path, preset: str, job_of: JobOf, *,
                  stale: str = SKIP, dry_run: bool = False, item_files: Mapping[str, Iterable[str]] | None = None,
                  results_prefix: str | None = None) -> Imports:
    """Place the bundles at ``paths`` under ``results_root`` (module docstring). ``job_of`` takes a path as the
    workflow names it (``results_prefix`` + the path in the bundle; the results root by default); ``item_files``:
    {item id: its files relative to the root} this run registers, to name items a bundle holds only part of."""
    if stale not in (SKIP, USE):
        raise BundleError(f"stale_bundles: {stale!r} is neither {SKIP!r} nor {USE!r}")
    root = Path(results_root)
    prefix = results_prefix if results_prefix is not None else f"{root.as_posix()}/"
    bundles = [read_bundle(p) for p in paths]
    names = [b.name for b in bundles]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BundleError(f"`bundles:` lists {twice[0]} twice (two files of one name); list each bundle once")
    other = [b for b in bundles if b.preset != preset]
    if other:
        raise BundleError(f"bundle {other[0].path} holds results of the {other[0].preset!r} preset, and this run is "
                          f"{preset!r}: their settings and results folders differ; remove it from `bundles:` of "
                          f"this run (presets set `bundles: []`), or use it in a run of {other[0].preset!r}")
    _conflicts(bundles)
    ledger = read_ledger(root)
    offered = {entry.path: bundle.name for bundle in bundles for entry in bundle.files}
    removed = []
    for relative, entry in list(ledger.items()):
        gone = entry.get("bundle") not in names or offered.get(relative) != entry.get("bundle")
        if not still_imported(root, relative, entry):
            del ledger[relative]  # rewritten here by a job since, or deleted: the run's own now
        elif gone or (entry.get("stale") and stale == SKIP):
            removed.append(relative)
            if not dry_run:
                (root / relative).unlink()
                del ledger[relative]
    outcomes = []
    for bundle in bundles:
        done = Placed(bundle)
        for entry in bundle.files:
            target = root / entry.path
            job = job_of(prefix + entry.path)
            if job is None:
                done.not_of_run.append(entry.path)
                continue
            why = _why_stale(entry, job)
            if target.is_file():
                if sha256(target) != entry.sha256:
                    done.kept.append(entry.path)
                    continue
                if why and stale == SKIP:  # a stale copy a dry run leaves in place (a run removes it above)
                    done.stale[entry.path] = why
                    continue
                done.in_place.append(entry.path)
            elif why and stale == SKIP:
                done.stale[entry.path] = why
                continue
            else:
                if not dry_run:
                    _write(target, bundle.read(entry.path))
                done.placed.append(entry.path)
            ledger[entry.path] = {"bundle": bundle.name, "file": os.fspath(bundle.path), "sha256": entry.sha256,
                                  "device": entry.device, "written": entry.written, "commit": entry.commit,
                                  "job": entry.job, "items": list(entry.items), "stale": bool(why),
                                  **({"why_stale": why} if why else {})}
            if why:
                done.stale[entry.path] = why
        outcomes.append(done)
    if not dry_run and (ledger or Path(root, "imported.json").is_file()):
        write_ledger(root, ledger)
    return Imports(outcomes, removed, summary(outcomes, removed, stale, dry_run, item_files or {}, prefix), dry_run)


def _items(bundle: Bundle, paths: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for path in paths:
        for item in bundle.file(path).items or ("(no item)",):
            counts[item] = counts.get(item, 0) + 1
    return ", ".join(f"{item} ({n})" for item, n in sorted(counts.items()))


def summary(outcomes: Sequence[Placed], removed: Sequence[str], stale: str, dry_run: bool,
            item_files: Mapping[str, Iterable[str]], prefix: str) -> list[str]:
    """The lines the run prints before its jobs' cost: what each bundle gave, and what it did not, with the fix."""
    would = "would be " if dry_run else ""
    lines = []
    if removed:
        lines.append(f"bundles: {len(removed)} file(s) placed by a bundle no longer used {would}removed, so that this "
                     f"run computes them (e.g. {prefix}{removed[0]})")
    for done in outcomes:
        b = done.bundle
        used = done.used
        lines.append(f"bundle {b.name} ({b.path}): {len(used)} of {len(b.files)} results files "
                     f"{'would be used' if dry_run else 'used'}" + (f": {_items(b, used)}" if used else "")
                     + (" (a dry run plans their jobs all the same)" if dry_run and done.placed else ""))
        if done.kept:
            lines.append(f"  kept {len(done.kept)} file(s) this checkout has of its own (not overwritten; delete "
                         f"them to use the bundle's copies): {_items(b, done.kept)}")
        skipped = {p: why for p, why in done.stale.items() if p not in used}
        if skipped:
            example = next(iter(skipped))
            lines.append(f"  stale, not used: {len(skipped)} file(s), {_items(b, skipped)}: {skipped[example]} "
                         f"(e.g. {prefix}{example}); this run computes them like any missing file, "
                         "`--config stale_bundles=use` uses the bundle's copies, labelled stale")
        labelled = [p for p in used if p in done.stale]
        if labelled:
            lines.append(f"  stale, used as asked (stale_bundles: use): {len(labelled)} file(s), {_items(b, labelled)}"
                         f": their rows say `stale`")
        if done.not_of_run:
            lines.append(f"  not of this run: {len(done.not_of_run)} file(s) no job of this run writes (another "
                         f"paper selection or settings): {_items(b, done.not_of_run)}")
        used_set = set(used)
        partial = sorted(item for item, files in item_files.items()
                         if used_set & set(files) and not set(files) <= used_set)
        if partial:
            lines.append(f"  partial: {', '.join(partial)}: the bundle gives part of the item's results; the rest "
                         "are computed in this run, or reported not run, as the run's plan says")
    return lines
