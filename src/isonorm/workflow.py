"""Glue between Snakemake's ``script:`` directive and the library: logging and dispatch.

Scripts under scripts/ are three lines each; everything a test may want to reach lives here or deeper.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import torch

from .callables import resolve
from .cost import CAP_SETTING, capped
from .provenance import device_description
from .run_status import clear_failure, record_failure
from .runtime import resolve_device
from .sources import fetch

log = logging.getLogger("isonorm")


@contextlib.contextmanager
def logged_job(snakemake: Any) -> Iterator[logging.Logger]:
    """Send logging (and warnings, and the traceback of a failure) to the rule's ``log:`` file.

    A failure reaches the terminal once: its message (which names the cause and the fix) on stderr, the traceback
    in the log only, and a record beside the log (isonorm.run_status) for the report of the run; the job then
    exits with status 1. A job that starts again removes its old record."""
    path = Path(snakemake.log[0]) if snakemake.log else None
    to_terminal = logging.StreamHandler(sys.stderr)
    handlers: list[logging.Handler] = [to_terminal]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        clear_failure(path)
        handlers.append(logging.FileHandler(path, mode="w"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", handlers=handlers, force=True
    )
    logging.captureWarnings(True)
    start = time.perf_counter()
    log.info("rule %s, wildcards %s", snakemake.rule, dict(snakemake.wildcards))
    # torch's intra-op pool sizes itself from OMP_NUM_THREADS at import, which Snakemake sets to the job's threads;
    # set it from the job all the same (a site's environment may override the variable) and log both, so that a
    # job's log says how many threads it ran on (docs/cluster.md "Job sizes")
    at_import = torch.get_num_threads()
    torch.set_num_threads(max(1, int(getattr(snakemake, "threads", 1))))
    log.info("threads: %d torch intra-op threads (%d at import; the job's threads %s, OMP_NUM_THREADS=%s)",
             torch.get_num_threads(), at_import, getattr(snakemake, "threads", None), os.environ.get("OMP_NUM_THREADS"))
    try:
        yield log
    except Exception as err:
        if path is None:
            raise
        logging.getLogger().removeHandler(to_terminal)  # the traceback goes to the log alone
        log.exception("rule %s failed", snakemake.rule)
        record_failure(path, snakemake.rule, [str(o) for o in snakemake.output], err)
        print(f"rule {snakemake.rule} failed: {type(err).__name__}: {err}\n(traceback: {path})", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:  # Ctrl-C reaches every job of the run: the run says "stopped" once, not each job
        logging.getLogger().removeHandler(to_terminal)
        log.exception("rule %s stopped", snakemake.rule)
        raise SystemExit(130) from None  # no record: the job did not fail itself
    except BaseException:  # SystemExit: no record, the job did not fail itself
        log.exception("rule %s stopped", snakemake.rule)
        raise
    log.info("rule %s done in %.1f s", snakemake.rule, time.perf_counter() - start)


def job_device(run: dict[str, Any]) -> torch.device | None:
    """The device of a job whose function takes one (``device`` among its kwargs, the config's ``device``),
    resolved once, here, and logged; None for a function without one. On a machine whose GPU torch cannot use,
    ``device: auto`` stops here with the fix (isonorm.runtime.UnusableGPUError) instead of training on the CPU."""
    if "device" not in run["kwargs"]:
        return None
    device = resolve_device(run["kwargs"]["device"])
    log.info("device: %s (config: device=%s)", device_description(device), run["kwargs"]["device"])
    return device


def run_experiment(run: dict[str, Any], device: torch.device | None = None) -> pd.DataFrame:
    """Call the library function a rule names (rules/common.smk ``experiment``) with its settings, on ``device``
    (:func:`job_device`) when it takes one."""
    kwargs = {**run["kwargs"], **({"device": device} if device is not None else {})}
    frame = resolve(run["function"])(run["config"], **kwargs)
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise RuntimeError(f"{run['function']} returned no measurements")
    return frame


def costed_experiment(
    run: dict[str, Any], snakemake_job: Any, device: torch.device | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """:func:`run_experiment` under ``run``'s step cap (isonorm.cost, the key ``CAP_SETTING``: the shapes
    preset's only): then also the job's cost record, to be stored with its results; ``{}`` otherwise
    (docs/cost.md). ``snakemake_job`` is the script's ``snakemake`` object (rule, wildcards and outputs name the
    job in the cost table)."""
    with capped(run.get(CAP_SETTING)) as record:
        frame = run_experiment(run, device)
    if record is None:
        return frame, {}
    summary = record.summary(record.elapsed_seconds(), device or resolve_device("auto"))
    wildcards = ",".join(f"{key}={value}" for key, value in dict(snakemake_job.wildcards).items())
    return frame, {"cost": {"rule": snakemake_job.rule, "wildcards": wildcards, "outputs": list(snakemake_job.output),
                            **summary}}


def discard_checkpoint(run: dict[str, Any]) -> None:
    """Remove a training job's checkpoint once its results are safely written.

    Checkpoints exist to resume a killed job; after success they would only hold disk (hundreds of MB for the
    deep ConvNets) and block a rerun with changed settings (their fingerprint would no longer match).
    """
    checkpoint = run["kwargs"].get("checkpoint")
    if checkpoint:
        Path(checkpoint).unlink(missing_ok=True)


# The kinds of input the fetch rules name (params.kind), each imported only by the job that fetches one:
# a data job need not load the checkpoint code, and no registry depends on what happened to be imported.
FETCH_KINDS = {
    "dataset": "isonorm.data.fetch:DATASET",
    "texts": "isonorm.data.texts:TEXTS",
    "corpus": "isonorm.data.corpora:CORPUS",
    "instructions": "isonorm.data.instructions:INSTRUCTIONS",
    "checkpoint": "isonorm.checkpoints.fetch:CHECKPOINT",
}


def fetch_source(snakemake: Any) -> None:
    """Fetch the one input a fetch rule (fetch_data, fetch_checkpoint) names by its wildcard.

    ``params.kind`` names the kind (a key of :data:`FETCH_KINDS`), ``params.entry`` is the input's config entry
    (``source`` picks the source, the other keys are the kind's options), ``params.root`` the folder it lands in.
    """
    (name,) = snakemake.wildcards
    if snakemake.params.kind not in FETCH_KINDS:
        raise ValueError(f"unknown kind of input {snakemake.params.kind!r}; known: {sorted(FETCH_KINDS)}")
    entry = {key: value for key, value in snakemake.params.entry.items() if value is not None}
    kind = resolve(FETCH_KINDS[snakemake.params.kind])
    fetch(kind, name, snakemake.params.root, entry.pop("source"), retries=snakemake.params.retries, **entry)
