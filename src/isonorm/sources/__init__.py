"""The fetch layer: one ``fetch`` for every kind of input the pipeline downloads, stages or generates.

Below ``isonorm.data`` and ``isonorm.checkpoints`` (it imports neither): each of those registers a
:class:`SourceKind` (data sets, texts, corpora, instruction sets, checkpoints) and keeps only its own code;
the shared steps live here: the ``.ready`` marker and the completeness check (:mod:`.marker`), the fetch
itself (:mod:`.fetching`), Hub calls with retries, snapshots in the Hugging Face cache and their errors
(:mod:`.hub`, :mod:`.errors`), staging of pre-staged files (:mod:`.staging`) and the small argument checks
(:mod:`.checks`).
"""

from .checks import check_positive, check_source
from .errors import QUICK_PRESET_COMMAND, GatedRepoAccessError, HubError, HubNotFoundError, HubUnreachableError
from .fetching import fetch
from .hub import TOKEN_HELP, cached_snapshot, call_hub, download_file
from .kind import Build, SourceKind
from .marker import MARKER_NAME, already_complete, marker_path, read_marker, refetch_hint, write_marker
from .registry import Registry
from .staging import link_or_copy, staged_folder

__all__ = [
    "MARKER_NAME",
    "QUICK_PRESET_COMMAND",
    "TOKEN_HELP",
    "Build",
    "GatedRepoAccessError",
    "HubError",
    "HubNotFoundError",
    "HubUnreachableError",
    "Registry",
    "SourceKind",
    "already_complete",
    "cached_snapshot",
    "call_hub",
    "check_positive",
    "check_source",
    "download_file",
    "fetch",
    "link_or_copy",
    "marker_path",
    "read_marker",
    "refetch_hint",
    "staged_folder",
    "write_marker",
]
