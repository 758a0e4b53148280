"""What sets one kind of fetched input apart (data sets, texts, corpora, instruction sets, checkpoints).

A :class:`SourceKind` holds only what is the kind's own: its registry and wording, one builder per source,
the options its entries take, how a request is built from them and compared with an existing marker, and
what is checked and recorded after any build. The steps every kind shares are :func:`isonorm.sources.fetch`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .marker import read_marker, refetch_hint
from .registry import Registry


@dataclass(frozen=True)
class Build:
    """Everything a builder may need to write one input into ``folder``."""

    name: str
    entry: Any  # the registry entry, after the kind's ``configure`` (e.g. another revision)
    folder: Path
    source: str
    request: dict[str, Any]  # what was asked for (recorded in the marker)
    options: dict[str, Any]  # every option of the kind, defaults filled in
    path: Path | None  # the pre-staged copy (source ``local`` only)
    retries: int  # download retries after the first attempt, waits doubling from backoff_s
    backoff_s: float

    @property
    def staged_from(self) -> str:
        """The absolute pre-staged path, as markers record it."""
        return str(Path(self.path).expanduser().resolve())

    def damaged_staged_copy(self, err: Exception) -> str:
        """``err`` (a damaged file found by the kind's checks) with the way forward of a ``local`` build: the
        file was linked or copied from the pre-staged copy, so fetching again would find the same damage."""
        if self.source != "local" or self.path is None:
            return str(err)
        return f"{err} It came from the pre-staged copy {self.staged_from} (source `local`): replace it there first."


Builder = Callable[[Build], dict[str, Any]]


def _same_entry(entry: Any, options: dict[str, Any]) -> Any:
    return entry


@dataclass(frozen=True)
class SourceKind:
    """One kind of input: how it is found, asked for, built and recorded (see the module docstring).

    ``builders``: source name -> builder; their order is the order of :attr:`sources` in messages. A builder
    writes into ``build.folder`` and returns what the marker should record beyond the request (``finish``
    may turn that into the marker's extras after its checks).
    """

    name: str  # the kind's id (the workflow's `kind` param) and the marker key naming the input
    registry: Registry[Any]
    builders: Mapping[str, Builder]
    options: Mapping[str, Any] | Callable[[Any], Mapping[str, Any]]  # defaults; a function of the entry if they vary
    request: Callable[[Any, str, dict[str, Any]], dict[str, Any]]  # (entry, source, options) -> request
    fetcher: str  # the Python call named by "fetch it first" hints
    configure: Callable[[Any, dict[str, Any]], Any] = _same_entry  # the entry after option overrides
    # A complete folder that holds another request but serves this one (e.g. real data from either source).
    satisfies: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None
    finish: Callable[[Build, dict[str, Any]], dict[str, Any]] | None = None  # checks after any builder
    flat_marker: bool = False  # request keys at the marker's top level rather than under `request`
    rule: str = "fetch_data"  # the workflow rule that fetches it
    missing_error: type[Exception] = FileNotFoundError  # raised by readers of an unfetched folder

    @property
    def what(self) -> str:
        return self.registry.what

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self.builders)

    def option_defaults(self, entry: Any) -> Mapping[str, Any]:
        return self.options(entry) if callable(self.options) else self.options

    def held(self, marker: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """The request an existing marker records (in the shape of ``request``)."""
        if self.flat_marker:
            return {key: marker.get(key) for key in request}
        return marker.get("request", {})

    def marker(self, name: str, request: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
        """The marker of a finished build: the input's name, the request and the build's extras."""
        asked = request if self.flat_marker else {"request": request}
        return {**asked, **extras, self.name: name}

    def require_complete(self, folder: str | Path) -> dict[str, Any]:
        """The marker of a fetched folder, for readers; ``missing_error`` naming the fetch when there is none."""
        folder = Path(folder)
        record = read_marker(folder)
        if record is None:
            state = "does not exist" if not folder.exists() else "has no .ready marker (the fetch did not finish)"
            raise self.missing_error(
                f"{folder} holds no complete {self.what}: it {state}. Fetch it first: the {self.rule} rule "
                f"(`snakemake {folder}/.ready`) or {self.fetcher}."
            )
        return record

    def read_file(self, folder: str | Path, filename: str, parse: Callable[[str], Any] = str) -> Any:
        """``parse`` of the text of ``folder/filename``, a file the fetch froze there (marker required)."""
        folder = Path(folder)
        self.require_complete(folder)
        path = folder / filename
        try:
            return parse(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:  # JSON and UTF-8 errors are ValueErrors
            raise ValueError(f"{path} is damaged ({err}). {refetch_hint(folder, self.what)}") from err
