"""``python -m isonorm.bundles``: make a bundle of a run's results, check one, list what it holds (docs/bundles.md).

    python -m isonorm.bundles export my-run.tar                      every results file of the paper run (results/)
    python -m isonorm.bundles export quick.tar --preset quick        of another preset's run (results/quick/)
    python -m isonorm.bundles export t1.tar --items lu2024-table1    the files of some items only
    python -m isonorm.bundles verify my-run.tar                      every checksum, and which files this checkout's
                                                                     code would compute alike
    python -m isonorm.bundles list my-run.tar                        its files, items, jobs, devices and dates

A run uses a bundle through the config: ``--config 'bundles=[my-run.tar]'`` (config.yaml ``bundles:``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Sequence

from ..fingerprints import code_fingerprint
from ..outputs import output_roots
from ..user_errors import UserError, brief
from .export import export_bundle
from .manifest import Bundle, read_bundle

PAPERS = ("lu2024", "daneshmand2021", "meterez2024", "joudaki2023")


def describe(bundle: Bundle) -> list[str]:
    files = bundle.files
    devices = Counter(f.device for f in files)
    commits = sorted({f.commit[:7] for f in files})
    dates = sorted(f.written[:10] for f in files if f.written)
    items = Counter(item for f in files for item in f.items)
    size = sum(f.bytes for f in files)
    lines = [f"{bundle.name} ({bundle.path}): {len(files)} results files, {size / 1e6:.1f} MB, preset "
             f"{bundle.preset!r}, made {bundle.created}",
             f"  computed on {', '.join(f'{d} ({n})' for d, n in devices.items())}; commits {', '.join(commits)}"
             + (f"; written {dates[0]} to {dates[-1]}" if dates else ""),
             f"  items: {', '.join(f'{i} ({n})' for i, n in sorted(items.items()))}"]
    if bundle.note:
        lines.append(f"  note: {bundle.note}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m isonorm.bundles", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="a bundle of a run's results files")
    export.add_argument("out", help="the archive to write (a .tar file)")
    export.add_argument("--preset", default="paper", help="whose run: paper (results/, the default) or a preset name")
    export.add_argument("--items", nargs="*", default=(), help="item ids (default: every item with results)")
    export.add_argument("--papers", nargs="*", default=PAPERS, help="paper slugs to look in (default: all four)")
    export.add_argument("--name", help="the bundle's name (default: the file's name without its suffix)")
    export.add_argument("--note", default="", help="a line on how the run was made, kept in the manifest")
    for name in ("verify", "list"):
        one = sub.add_parser(name, help="check every checksum" if name == "verify" else "what it holds")
        one.add_argument("bundle")
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            root = output_roots(args.preset)["results"]
            bundle, left_out = export_bundle(root, args.out, slugs=args.papers, preset=args.preset, items=args.items,
                                             name=args.name, note=args.note)
            print("\n".join(describe(bundle)))
            for why in left_out:
                print(f"  left out: {why}", file=sys.stderr)
            return 0
        bundle = read_bundle(args.bundle)
        print("\n".join(describe(bundle)))
        if args.command == "verify":
            changed = [f for f in bundle.files if f.function and code_fingerprint(f.function) != f.code_fingerprint]
            print(f"  checksums: all {len(bundle.files)} files match the manifest")
            print(f"  code: {len(bundle.files) - len(changed)} of {len(bundle.files)} files were computed by the code "
                  "this checkout has" + (f"; changed since for {', '.join(sorted({i for f in changed for i in f.items}))}"
                                         " (a run computes those again unless stale_bundles: use)" if changed else ""))
            print("  settings: checked against this run's config when a run imports it (`snakemake -n --config "
                  f"'bundles=[{args.bundle}]'` says what it would use)")
        else:
            for f in bundle.files:
                print(f"  {f.path}  {f.job}  {f.device}  {f.written}  {f.commit[:7]}  {', '.join(f.items)}")
        return 0
    except UserError as err:
        print(brief(err), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
