"""The one fetch: the steps every kind of input shares, in one place.

Look the name up in the kind's registry, check the source and ``path``, build the request from the options,
compare it with the ``.ready`` marker of ``root/<name>`` (complete and matching: nothing to do; complete and
different: an error, never an overwrite), run the source's builder, the kind's checks, and write the marker
last. A build that fails or is killed leaves no marker, so the next call builds again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .checks import check_source
from .kind import Build, SourceKind
from .marker import already_complete, read_marker, write_marker


def fetch(
    kind: SourceKind,
    name: str,
    root: str | Path,
    source: str,
    *,
    path: str | Path | None = None,
    retries: int = 3,
    backoff_s: float = 1.0,
    **options: Any,
) -> Path:
    """Make ``root/<name>/`` hold the complete ``kind`` input ``name`` from ``source``; returns that folder.

    ``path``: the pre-staged copy (source ``local`` only). ``retries``/``backoff_s``: download retries after
    the first attempt and the first wait, doubling. ``options``: the kind's own (``kind.option_defaults``).
    """
    entry = kind.registry.lookup(name)
    check_source(kind.what, name, source, kind.sources, path)
    defaults = kind.option_defaults(entry)
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(f"{kind.what} {name}: unknown option(s) {unknown}; known: {sorted(defaults)}")
    options = {**defaults, **options}
    entry = kind.configure(entry, options)
    request = kind.request(entry, source, options)

    folder = Path(root) / name
    existing = read_marker(folder)
    held = None if existing is None else kind.held(existing, request)
    matches = held == request or (existing is not None and kind.satisfies is not None
                                  and kind.satisfies(existing, request))
    if already_complete(folder, f"{kind.what} {name}", held, request, matches):
        return folder

    folder.mkdir(parents=True, exist_ok=True)
    build = Build(name=name, entry=entry, folder=folder, source=source, request=request, options=options,
                  path=None if path is None else Path(path), retries=retries, backoff_s=backoff_s)
    extras = kind.builders[source](build)
    if kind.finish is not None:
        extras = kind.finish(build, extras)
    write_marker(folder, kind.marker(name, request, extras))
    return folder
