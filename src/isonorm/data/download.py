"""The ``torchvision`` source: download through torchvision's own dataset class, with retries.

architecture §4: an unreachable download fails at once (after a few quick retries) with a message that names the
cause and the ways forward (isonorm.sources.errors.offline_ways_forward): a pre-staged folder with the ``local``
source, the data-free run, the offline quick preset.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..sources.errors import offline_ways_forward
from .registry import DatasetSpec


class DownloadError(RuntimeError):
    """The data set could not be downloaded after all retries."""


def download_failure_message(spec: DatasetSpec, dataset_dir: Path, attempts: int, cause: BaseException) -> str:
    files = ", ".join(spec.required_files())
    return (
        f"could not download {spec.name} with torchvision.datasets.{spec.torchvision_class} into {dataset_dir} "
        f"after {attempts} attempt(s); last error: {type(cause).__name__}: {cause}. "
        "This machine may be offline (compute nodes often are)."
        + offline_ways_forward(
            f"{spec.name} (torchvision.datasets.{spec.torchvision_class}(root, download=True))",
            f"`local` with `path:` pointing at that root (the folder holding `{spec.layout}/` with {files})",
        )
    )


def download_with_torchvision(spec: DatasetSpec, dataset_dir: Path, retries: int, backoff_s: float) -> None:
    """Let torchvision download (and md5-check) ``spec`` into ``dataset_dir``; retry ``retries`` times.

    The waits double from ``backoff_s`` (1, 2, 4 s by default: transient network errors pass, an offline
    machine fails within seconds). torchvision skips files that are already there with the right checksum.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    import torchvision.datasets  # deferred: only this source needs it, and it is slow to import

    dataset_class = getattr(torchvision.datasets, spec.torchvision_class)
    attempts = retries + 1
    for attempt in range(attempts):
        try:
            dataset_class(root=str(dataset_dir), train=True, download=True)
            return
        except (OSError, RuntimeError) as err:  # URLError/HTTPError/timeouts are OSError; md5 failures RuntimeError
            if attempt == attempts - 1:
                raise DownloadError(download_failure_message(spec, dataset_dir, attempts, err)) from err
            time.sleep(backoff_s * 2**attempt)
