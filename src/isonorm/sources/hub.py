"""Calls to the Hugging Face Hub with retries, and its errors translated into ones that say what to do.

Every Hub download of the pipeline goes through :func:`call_hub`: one file of a dataset or model repository
(:func:`download_file`: texts, corpora, instruction sets) or a checkpoint's snapshot (:func:`cached_snapshot`,
for ``isonorm.checkpoints.fetch``). A snapshot lives in the user's Hugging Face cache, not in the project:
``snapshot_download`` without ``local_dir`` uses the folder ``huggingface_hub`` takes from ``HF_HUB_CACHE``
(else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``), so a model already there is not downloaded again,
and the cache is looked at first, with no network call at all. Retries follow the data sets' torchvision download
(``isonorm.data.download``): ``retries`` more attempts after the first, waits doubling from ``backoff_s``
(1, 2, 4 s by default), so that a transient error passes. Only transient causes are retried (no connection,
time-outs, HTTP 429 and 5xx); a missing repository, revision or file and a gated repository fail at once. An
offline machine fails within seconds, before any download is tried: huggingface_hub retries a failed request
five times on its own (about 25 s per attempt, two minutes over the retries here), so :func:`hub_unreachable`
first opens one TCP connection to the Hub's endpoint (or the HTTPS proxy) with a short time-out; with
``HF_HUB_OFFLINE=1`` nothing is probed and the cache alone answers. ``huggingface_hub`` is imported where it is used: it is slow to
import and only the ``huggingface`` sources need it.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import urllib.request
from urllib.parse import urlsplit
from pathlib import Path
from typing import Callable, Literal, Sequence, TypeVar

from .errors import GatedRepoAccessError, HubError, HubNotFoundError, HubUnreachableError, offline_ways_forward

log = logging.getLogger(__name__)
T = TypeVar("T")

TOKEN_HELP = (
    "set the environment variable HF_TOKEN to a read token of an account that has been granted access "
    "(create one at https://huggingface.co/settings/tokens), or run `hf auth login` once on this machine"
)


def _transient_types() -> tuple[type[BaseException], ...]:
    """Exception types that mean "could not reach the Hub" (retried)."""
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    types: list[type[BaseException]] = [LocalEntryNotFoundError, OfflineModeIsEnabled, ConnectionError, TimeoutError]
    try:  # huggingface_hub's HTTP client (httpx2 in 2.x, httpx before); its network errors are not OSErrors
        import httpx2 as http_client  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - older huggingface_hub
        try:
            import httpx as http_client  # type: ignore[import-not-found, no-redef]
        except ImportError:
            http_client = None
    if http_client is not None:
        types.append(http_client.TransportError)
    return tuple(types)


def _status(err: BaseException) -> int | None:
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None)


def classify(err: BaseException) -> str:
    """``gated`` | ``not-found`` | ``transient`` | ``http`` (another HTTP error) | ``other``."""
    from huggingface_hub.errors import (
        DisabledRepoError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(err, GatedRepoError):  # before RepositoryNotFoundError, its base class
        return "gated"
    if isinstance(err, (RepositoryNotFoundError, RevisionNotFoundError, RemoteEntryNotFoundError, DisabledRepoError)):
        return "not-found"
    if isinstance(err, (LocalEntryNotFoundError, *_transient_types())):
        return "transient"
    if isinstance(err, HfHubHTTPError):
        status = _status(err)
        return "transient" if status is not None and (status == 429 or status >= 500) else "http"
    return "other"


# How long the probe waits for a name lookup and a TCP connection to the Hub: long enough for a slow link, short
# enough that an offline machine fails in seconds (issue: "an offline Hub fetch fails in under 10 s").
PROBE_TIMEOUT_S = 4.0


def hub_unreachable(timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the Hub cannot be reached from here (the probe's error), or None when a TCP connection to its endpoint
    (``HF_ENDPOINT``, huggingface.co by default), or to the HTTPS proxy the environment names, opens within
    ``timeout_s``. The name lookup has no time-out of its own, so the probe runs in a daemon thread."""
    from huggingface_hub import constants

    endpoint = urlsplit(constants.ENDPOINT)
    proxy = urllib.request.getproxies().get(endpoint.scheme or "https")
    if proxy and urllib.request.proxy_bypass(endpoint.hostname or ""):  # NO_PROXY names the endpoint
        proxy = None
    target = urlsplit(proxy) if proxy else endpoint
    host = target.hostname or ""
    port = target.port or (443 if target.scheme == "https" else 80)
    outcome: list[BaseException | None] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout_s).close()
            outcome.append(None)
        except OSError as err:
            outcome.append(err)

    thread = threading.Thread(target=probe, name="hub-probe", daemon=True)
    thread.start()
    thread.join(timeout_s)
    via = " (the HTTPS proxy of this environment)" if proxy else ""
    if not outcome:
        return f"no answer from {host}:{port}{via} within {timeout_s:g} s"
    if outcome[0] is not None:
        return f"cannot connect to {host}:{port}{via}: {type(outcome[0]).__name__}: {outcome[0]}"
    return None


def _unreachable_message(what: str, repo: str, revision: str, cause: str, offline_sources: str) -> str:
    return (
        f"{what}: could not reach the Hugging Face Hub for {repo}@{revision} ({cause}). This machine may be offline "
        "(compute nodes often are)." + offline_ways_forward(what, offline_sources)
    )


def _offline_mode() -> bool:
    from huggingface_hub import constants

    return bool(getattr(constants, "HF_HUB_OFFLINE", False))


def call_hub(
    fn: Callable[[], T],
    *,
    what: str,
    repo: str,
    revision: str,
    repo_type: str = "model",
    retries: int = 3,
    backoff_s: float = 1.0,
    offline_sources: str = "`local`",
) -> T:
    """``fn()`` (a Hub download), retried on transient errors; Hub errors become :class:`HubError`\\ s.

    ``what`` names the download in messages (e.g. "checkpoint gpt2"); ``offline_sources`` names the config
    sources that need no network, for the "unreachable" message.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    prefix = "datasets/" if repo_type == "dataset" else ""
    page = f"https://huggingface.co/{prefix}{repo}"
    offline = _offline_mode()
    attempts = 1 if offline else retries + 1  # HF_HUB_OFFLINE=1: retrying cannot help
    unreachable = None if offline else hub_unreachable()
    if unreachable is not None:
        raise HubUnreachableError(_unreachable_message(what, repo, revision, unreachable, offline_sources))
    for attempt in range(attempts):
        try:
            return fn()
        except Exception as err:  # classified below; anything unknown is re-raised as is
            kind = classify(err)
            cause = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
            if kind == "gated":
                raise GatedRepoAccessError(
                    f"{what}: {repo} is a gated repository and this machine has no access to it ({cause}). "
                    f"Accept its licence / request access at {page} while logged in, then {TOKEN_HELP}. "
                    "Or stage the files elsewhere and use source `local`."
                ) from err
            if kind == "not-found":
                raise HubNotFoundError(
                    f"{what}: {repo_type} repository {repo} at revision {revision} (or the requested file in it) "
                    f"was not found on the Hub ({cause}). Check `repo`, `revision` (a full commit sha of "
                    f"{page}/commits) "
                    f"and the file name in the config; a private repository also answers 'not found' without a "
                    f"token ({TOKEN_HELP})."
                ) from err
            if kind == "http":
                raise HubError(f"{what}: the Hub refused the download of {repo}@{revision}: {cause}") from err
            if kind == "other":
                raise
            if attempt == attempts - 1:
                reason = ("HF_HUB_OFFLINE is set, and the Hugging Face cache does not hold it"
                          if offline else f"{attempts} attempt(s); last error: {cause}")
                raise HubUnreachableError(
                    _unreachable_message(what, repo, revision, reason, offline_sources)
                ) from err
            wait = backoff_s * 2**attempt
            log.warning("%s: Hub not reachable (%s); retrying in %.0f s", what, cause, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def download_file(
    repo: str, revision: str, file: str, target: Path, *, repo_type: Literal["dataset", "model"] = "dataset",
    what: str, offline_sources: str, retries: int, backoff_s: float,
) -> Path:
    """One file of a Hub repository (``repo_type`` dataset or model) at a pinned revision, into ``target``.

    Retried and translated by :func:`call_hub`: errors name the cause (unknown repository or revision, gated,
    unreachable) and, for an unreachable Hub, the ``offline_sources`` that work without it.
    """
    from huggingface_hub import hf_hub_download

    return Path(call_hub(
        lambda: hf_hub_download(repo_id=repo, filename=file, repo_type=repo_type, revision=revision,
                                local_dir=target),
        what=what, repo=repo, revision=revision, repo_type=repo_type, retries=retries, backoff_s=backoff_s,
        offline_sources=offline_sources,
    ))


def hub_cache() -> Path:
    """The Hugging Face cache of this process: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
    ``~/.cache/huggingface/hub`` (``huggingface_hub.constants``, read from the environment when it is imported)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE).expanduser().resolve()  # resolved, as snapshot_download resolves it


def repo_cache_folder(repo: str) -> Path:
    """``<cache>/models--<org>--<name>``: the cache's folder of every revision of the model repository ``repo``."""
    from huggingface_hub.file_download import repo_folder_name

    return hub_cache() / repo_folder_name(repo_id=repo, repo_type="model")


def _missing(snapshot: Path, required: Sequence[str]) -> list[str]:
    return [name for name in required if not (snapshot / name).is_file()]


def _from_cache(repo: str, revision: str, patterns: list[str]) -> tuple[Path | None, bool]:
    """(the cached snapshot of ``repo`` at commit ``revision`` or None, whether it is complete), found without any
    network call. Incomplete: huggingface_hub's cached file listing of the commit names a file matching
    ``patterns`` that the snapshot lacks; without such a listing a snapshot counts as complete."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import IncompleteSnapshotError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id=repo, revision=revision, allow_patterns=patterns,
                                      local_files_only=True)), True
    except IncompleteSnapshotError as err:  # a LocalEntryNotFoundError, with the snapshot's path
        return Path(err.snapshot_path), False
    except LocalEntryNotFoundError:
        return None, False


def _cache_state(repo: str, revision: str, required: Sequence[str]) -> str:
    """What the cache holds of ``repo``: said when the snapshot of ``revision`` could not be completed."""
    snapshots = repo_cache_folder(repo) / "snapshots"
    held = sorted(p.name for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
    if revision in held:
        lacking = _missing(snapshots / revision, required)
        return (f"The Hugging Face cache holds {repo} at {revision} ({snapshots / revision}), but without "
                f"{', '.join(lacking) or 'some of the files asked for'}.")
    if held:
        return (f"The Hugging Face cache {hub_cache()} holds {repo} only at revision(s) {', '.join(held)}, not at the "
                f"pinned {revision}: a snapshot of another revision is never used in its place (pin that revision "
                "in the config if it is the one you mean).")
    return f"The Hugging Face cache {hub_cache()} holds no snapshot of {repo}."


def _fill_cache(repo: str, revision: str, required: Sequence[str]) -> str:
    return (f"fill the Hugging Face cache on a machine with internet (`hf download {repo} {' '.join(required)} "
            f"--revision {revision}`, which honours HF_HUB_CACHE and HF_HOME) and make it this machine's cache, or "
            f"copy its {repo_cache_folder(repo).name} folder into {hub_cache()} (docs/data.md, 'Pre-staging for "
            "offline machines').")


def cached_snapshot(
    repo: str,
    revision: str,
    patterns: list[str],
    required: Sequence[str],
    *,
    what: str,
    retries: int,
    backoff_s: float,
    offline_sources: str,
    before_download: Callable[[], None] | None = None,
) -> Path:
    """The snapshot ``<cache>/models--<org>--<name>/snapshots/<revision>`` of a model repository, holding the
    files that match ``patterns``; ``revision`` is a full commit sha, the snapshot's own name, so a snapshot of
    another revision can never pass for it (a branch name would be resolved through the cache's ``refs/``).

    The cache is looked at first, with no network call: a snapshot of this commit that holds every ``required``
    file is used as it is (with the optional files it has, unless huggingface_hub's cached listing of the commit
    shows some missing). Otherwise ``before_download()`` runs (a token check, say), then ``snapshot_download``
    fetches what the cache lacks into it, retried and translated by :func:`call_hub`; if that fails, a cached
    snapshot that lacks only optional files is used after all. When the Hub is unreachable huggingface_hub falls
    back to the cached snapshot itself, so the result may still lack ``required`` files (HF_HUB_OFFLINE set: an
    error here; else the caller names them, as it does files the revision lacks).
    """
    if len(revision) != 40 or any(c not in "0123456789abcdef" for c in revision):
        raise ValueError(f"{what}: revision {revision!r} of {repo} is not a full commit sha (40 hex digits); pin one "
                         f"from https://huggingface.co/{repo}/commits: a branch or tag name would let the cached "
                         "snapshot, and the weights, change under a result")
    cached, complete = _from_cache(repo, revision, patterns)
    usable = cached if cached is not None and not _missing(cached, required) else None
    if usable is not None and complete:
        log.info("%s: %s@%s found in the Hugging Face cache (%s); nothing downloaded", what, repo, revision, usable)
        return usable
    from huggingface_hub import snapshot_download

    try:
        if before_download is not None:
            before_download()
        snapshot = Path(call_hub(
            lambda: snapshot_download(repo_id=repo, revision=revision, allow_patterns=patterns),
            what=what, repo=repo, revision=revision, retries=retries, backoff_s=backoff_s,
            offline_sources=offline_sources,
        ))
    except (HubUnreachableError, GatedRepoAccessError) as err:
        if usable is not None:
            log.warning("%s: %s; using the cached snapshot %s, which holds every file needed but lacks optional "
                        "files of the revision (tokenizer or code files)", what, str(err).splitlines()[0], usable)
            return usable
        if isinstance(err, HubUnreachableError):
            # the cause first (the line a run's summary shows), then what the cache holds and how to fill it
            raise HubUnreachableError(f"{err}\n  4. or {_fill_cache(repo, revision, required)}\n"
                                      f"{_cache_state(repo, revision, required)}") from err
        raise
    if _offline_mode() and _missing(snapshot, required):  # huggingface_hub fell back to the incomplete snapshot
        raise HubUnreachableError(f"{what}: HF_HUB_OFFLINE is set, so nothing can be downloaded. "
                                  f"{_cache_state(repo, revision, required)} Unset HF_HUB_OFFLINE to download them, "
                                  f"or {_fill_cache(repo, revision, required)}")
    if snapshot.name != revision:  # snapshot_download names the folder after the commit it resolved
        raise HubError(f"{what}: the Hugging Face cache gave {snapshot} for {repo} at the pinned revision {revision}, "
                       f"another commit's snapshot. Remove it (`hf cache rm {snapshot.name}`) and run again.")
    return snapshot
