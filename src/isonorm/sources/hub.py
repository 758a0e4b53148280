"""Calls to the Hugging Face Hub with retries, and its errors translated into ones that say what to do.

Every Hub download of the pipeline goes through :func:`call_hub`: one file of a dataset or model repository
(:func:`download_file`: texts, corpora, instruction sets) or a checkpoint's snapshot
(``isonorm.checkpoints.fetch``). Retries follow the data sets' torchvision download
(``isonorm.data.download``): ``retries`` more attempts after the first, waits doubling from ``backoff_s``
(1, 2, 4 s by default), so that a transient error passes and an offline machine fails within seconds. Only
transient causes are retried (no connection, time-outs, HTTP 429 and 5xx); a missing repository, revision
or file and a gated repository fail at once. ``huggingface_hub`` is imported where it is used: it is slow to
import and only the ``huggingface`` sources need it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Callable, Literal, TypeVar

from .errors import QUICK_PRESET_COMMAND, GatedRepoAccessError, HubError, HubNotFoundError, HubUnreachableError

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
    attempts = 1 if _offline_mode() else retries + 1  # HF_HUB_OFFLINE=1: retrying cannot help
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
                raise HubUnreachableError(
                    f"{what}: could not reach the Hugging Face Hub for {repo}@{revision} after {attempts} "
                    f"attempt(s); last error: {cause}. This machine may be offline (compute nodes often are). "
                    "Ways forward:\n"
                    f"  1. run the offline quick preset (local stand-ins, same pipeline): `{QUICK_PRESET_COMMAND}`;\n"
                    f"  2. fetch it on a machine with internet and use source {offline_sources} (see the README, "
                    "'Checkpoints')."
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
