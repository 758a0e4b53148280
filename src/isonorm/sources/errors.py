"""Errors of the fetch layer's Hub downloads, and the one wording of the offline way forward they share.

Every message names the cause and the way forward (architecture §4). Subclasses let tests and callers tell the
causes apart: a missing repository or file is a configuration error, a gated one needs a token, an
unreachable Hub needs another source.
"""

from __future__ import annotations

# The offline quick preset: a way forward of every "could not download" message.
QUICK_PRESET_COMMAND = "snakemake --cores all --configfile presets/quick.yaml"
DATA_FREE_COMMAND = "snakemake --cores all --config compute=data-free"


def offline_ways_forward(what: str, offline_sources: str) -> str:
    """The ways forward of every "could not download" message, one per line (docs/data.md)."""
    return (
        "\nWays forward:\n"
        f"  1. pre-stage {what} on a machine with internet and use source {offline_sources} "
        "(docs/data.md, 'Pre-staging for offline machines');\n"
        f"  2. run only the items that need no download, at the paper's settings: `{DATA_FREE_COMMAND}`;\n"
        f"  3. run the offline smoke preset (synthetic stand-ins, same pipeline): `{QUICK_PRESET_COMMAND}`."
    )


class HubError(RuntimeError):
    """A download from the Hugging Face Hub failed."""


class HubNotFoundError(HubError):
    """The repository, the revision or a file does not exist on the Hub (or is private)."""


class GatedRepoAccessError(HubError):
    """The repository is gated and this machine's token has not been granted access."""


class HubUnreachableError(HubError):
    """The Hub could not be reached after all retries (offline machine, proxy, outage)."""
