"""What a run did, for the report of every run (docs/architecture.md, "A report from every run").

- **A job's failure is recorded beside its log** (``<log>.failed.json``): its rule, outputs, log and the cause in
  one line (the exception's first line, which names the cause; the log keeps the traceback). ``isonorm.workflow.
  logged_job`` writes it when a job raises and removes it when the job starts again.
- **At the end of a run** (Snakemake's ``onsuccess``/``onerror``, rules/report.smk), :func:`job_outcomes` reads
  the jobs Snakemake planned and sorts each unfinished one: ``failed`` (it raised, and its record says why; or it
  started in this run and died without a record: killed, out of memory, a lost node), ``blocked`` (an input it
  needs was not produced, traced to the job that failed first) or ``not started`` (the run was stopped before it
  finished, or before it started). :func:`missing_causes` turns that into one line per missing results file,
  which the pages show on the items that read it; :func:`summary_lines` is the terminal's and the index's
  account of the run.
- **A run that did not finish resumes by the same command**: :func:`untrusted_jobs` names the jobs whose outputs
  exist but were made (or remade by the end-of-run report) after a job of this run that did not finish; the
  workflow marks those outputs incomplete in Snakemake's own records (rules/common.smk ``end_of_run``), so that the next run remakes
  them, and on its way every missing input upstream (docs/architecture.md, "A report from every run").
- **A stop** (Ctrl-C) is recorded when it arrives (:class:`StopSignal`), so that the end of the run says
  "stopped" once, with the command that resumes it, instead of a failure for each job it cut short.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, TypeVar

FAILED_SUFFIX = ".failed.json"
FAILED, BLOCKED, NOT_STARTED = "failed", "blocked", "not started"


def failure_record(log: str | Path) -> Path:
    return Path(str(log) + FAILED_SUFFIX)


def one_line(err: BaseException) -> str:
    """The exception's type and the first line of its message: the cause, in the pipeline's own errors."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


def record_failure(log: str | Path, rule: str, outputs: Sequence[str], err: BaseException) -> Path:
    path = failure_record(log)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rule": rule, "outputs": list(outputs), "log": str(log), "cause": one_line(err)},
                               indent=1), encoding="utf-8")
    return path


def clear_failure(log: str | Path) -> None:
    failure_record(log).unlink(missing_ok=True)


def read_failure(log: str | Path) -> dict[str, Any] | None:
    path = failure_record(log)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class PlannedJob(Protocol):
    """What :func:`job_outcomes` reads of a Snakemake job (``workflow.dag.jobs``)."""

    output: Sequence[str]
    input: Sequence[str]
    log: Sequence[str]
    wildcards: Mapping[str, str]

    @property
    def rule(self) -> Any: ...


@dataclass
class JobOutcome:
    """An unfinished job: its state, the cause in one line, its log, and the job whose failure blocked it."""

    rule: str
    label: str  # rule[wildcards]
    outputs: list[str]
    state: str
    cause: str
    log: str | None = None
    root: "JobOutcome | None" = field(default=None, repr=False)  # a blocked job's first failed (or stopped) input

    @property
    def blocked_by(self) -> str | None:
        return None if self.root is None else self.root.label

    def line(self) -> str:
        where = f" (log: {self.log})" if self.log and self.state != BLOCKED else ""
        return f"{self.label}: {self.cause}{where}"


def job_label(job: PlannedJob) -> str:
    """``rule[key=value, …]``: how the run's own lines name a job (the end-of-run summary, the memory stop)."""
    wildcards = ", ".join(f"{k}={v}" for k, v in dict(job.wildcards).items())
    return f"{job.rule.name}[{wildcards}]" if wildcards else job.rule.name


def job_outcomes(jobs: Iterable[PlannedJob], *, stopped: bool = False,
                 run_started: float | None = None) -> list[JobOutcome]:
    """Every planned job with an output missing, with why (module docstring); jobs whose outputs all exist are left
    out. A report job is never the cause of another's absence: the end-of-run report is built from what exists.
    ``stopped``: the run was stopped (Ctrl-C), so a job without a failure record was cut short, not broken;
    ``run_started`` (a time.time()): a job without a record whose log was written after it started in this run
    and died (killed, out of memory): a failure of that job."""
    jobs = [job for job in jobs if job.output]
    producer = {str(path): job for job in jobs for path in job.output}
    outcomes: dict[int, JobOutcome] = {}

    def died(log: str | None) -> bool:
        return (not stopped and run_started is not None and log is not None and Path(log).is_file()
                and Path(log).stat().st_mtime >= run_started)

    def outcome(job: PlannedJob, seen: frozenset[int] = frozenset()) -> JobOutcome | None:
        if id(job) in outcomes:
            return outcomes[id(job)]
        if all(Path(p).exists() for p in job.output):
            return None
        log = str(job.log[0]) if job.log else None
        record = read_failure(log) if log else None
        outputs = list(map(str, job.output))
        if record is not None:
            found = JobOutcome(job.rule.name, job_label(job), outputs, FAILED, record["cause"], log)
        elif died(log):
            found = JobOutcome(job.rule.name, job_label(job), outputs, FAILED,
                               "it ended without finishing or a record of why (killed, out of memory, or its node "
                               "lost)", log)
        else:
            missing = [str(p) for p in job.input if not Path(p).exists()]
            roots = [outcome(producer[p], seen | {id(job)}) for p in missing
                     if p in producer and id(producer[p]) not in seen]
            root = next((r for r in roots if r is not None and r.state == FAILED), None) or next(
                (r for r in roots if r is not None), None)
            if root is not None and root.state != NOT_STARTED:
                first = root.root or root  # a blocked input names the failure at its own root
                found = JobOutcome(job.rule.name, job_label(job), outputs, BLOCKED,
                                   f"needs {first.label}, which {first.state}: {first.cause}"
                                   + (f" (log: {first.log})" if first.log else ""), log, root=first)
            else:
                found = JobOutcome(job.rule.name, job_label(job), outputs, NOT_STARTED,
                                   STOPPED_CAUSE if stopped else
                                   "the run ended before it finished" + (f"; see {log}" if log else ""), log)
        outcomes[id(job)] = found
        return found

    results = [outcome(job) for job in jobs]
    return [r for r in results if r is not None]


STOPPED_CAUSE = "the run was stopped (Ctrl-C) before it finished"
J = TypeVar("J")


def untrusted_jobs(unfinished: Iterable[J], downstream: Callable[[J], Iterable[J]],
                   outputs: Callable[[J], Iterable[str]]) -> list[J]:
    """The jobs an unfinished run leaves with outputs that must be remade: the jobs this run was to run and did not
    finish (``unfinished``), and every job after one (``downstream``: the jobs that read a job's outputs), whose
    outputs exist. Snakemake decides what to run from the targets down: an output that exists and is newer than
    its existing inputs is up to date, and nothing upstream of it is looked at. The end-of-run report writes the
    claims, pages and index from what exists, at the outputs of the report rules; left so, the same command would
    find them up to date and never run the jobs that are missing (docs/architecture.md, "Resuming: the same
    command"). Only what this run was to make counts: a result made by an earlier run whose input has gone since
    (a data set deleted after its training) is not remade."""
    seen: dict[int, J] = {}
    todo = list(unfinished)
    while todo:
        job = todo.pop()
        if id(job) not in seen:
            seen[id(job)] = job
            todo.extend(downstream(job))
    return [job for job in seen.values() if any(Path(f).exists() for f in outputs(job))]


class StopSignal:
    """Records a stop (SIGINT: Ctrl-C) as it arrives, then lets it do what it did before (Python's
    KeyboardInterrupt, on which Snakemake cancels its jobs and ends the run as failed): so that the end of the run
    can tell a stop from a failure. Installed by the main Snakemake process, in its main thread."""

    def __init__(self) -> None:
        self.stopped = False

    def install(self) -> "StopSignal":
        previous = signal.getsignal(signal.SIGINT)

        def on_stop(signum: int, frame: Any) -> None:
            self.stopped = True
            if callable(previous):
                previous(signum, frame)
            else:
                raise KeyboardInterrupt

        try:
            signal.signal(signal.SIGINT, on_stop)
        except ValueError:  # not the main thread (an API caller's worker): a stop then reads as a failure
            pass
        return self


RERUN = "Fix the cause, then run the same command again: only what is missing runs"


def missing_causes(outcomes: Iterable[JobOutcome]) -> dict[str, dict[str, str]]:
    """{results file: {cause, fix, log, state}} of every output of an unfinished job: what the page says on its items.
    The cause names the rule, not the job's wildcards, so that the jobs of one item that failed alike say it once;
    the state (failed, blocked, not started) says whether the item's measurement failed (isonorm.items.failed_items)."""
    causes = {}
    for found in outcomes:
        if found.state == FAILED:
            cause = f"{found.rule} failed: {found.cause}"
        elif found.state == BLOCKED:
            cause = f"{found.rule} could not run: it {found.cause}"
        else:
            cause = f"{found.rule} did not finish: {found.cause}"  # stopped, or the run ended before it
        log = found.log if found.state != BLOCKED else None  # a blocked job never ran: the cause names its root's log
        for path in found.outputs:
            causes[path] = {"cause": cause, "fix": RERUN, "log": log or "", "state": found.state}
    return causes


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command this run was started with (``snakemake …``), to be given again to resume it."""
    argv = list(sys.argv if argv is None else argv)
    if not argv:
        return "snakemake --cores all"
    program = Path(argv[0]).name
    if program == "__main__.py" or program.startswith("python"):
        program = "snakemake"
    return " ".join([program, *map(shlex.quote, argv[1:])])


def summary_lines(outcomes: Sequence[JobOutcome], left_out: Mapping[str, Mapping[str, Any]],
                  jobs_planned: int | None, report: str | None = None, command: str | None = None,
                  stopped: bool = False) -> list[str]:
    """The run in a few lines: what ran (``jobs_planned``: the jobs Snakemake planned, None when not yet known),
    what the plan left out and why, what failed or could not run, where the report is and how to finish. A
    ``stopped`` run (Ctrl-C) says so once, with the command that resumes it, not a line per job it cut short."""
    failed = [o for o in outcomes if o.state == FAILED]
    blocked = [o for o in outcomes if o.state == BLOCKED]
    unfinished = [o for o in outcomes if o.state == NOT_STARTED]
    lines: list[str] = []
    if jobs_planned is not None:
        lines.append(f"{jobs_planned - len(outcomes)} of {jobs_planned} planned jobs have their results"
                     + (": all of them." if not outcomes else "."))
    if stopped:
        lines.append(f"stopped: the run was stopped (Ctrl-C) with {len(unfinished)} job(s) unfinished"
                     + (f"; resume it with `{command}` (only what is missing runs)." if command else "."))
    for cause, files in _grouped(left_out).items():
        fix = left_out[files[0]].get("fix", "")
        lines.append(f"not planned: {len(files)} results file(s), because the item {cause}"
                     + (f"; `{fix}` computes them" if fix else "") + ".")
    for group in _alike(failed):
        if len(group) == 1:
            lines.append(f"failed: {group[0].line()}")
        else:  # e.g. every Hub fetch of an offline machine: one line, the first job's cause standing for all
            labels = ", ".join(o.label.split("[", 1)[-1].rstrip("]") for o in group)
            folders = sorted({str(Path(o.log).parent) for o in group if o.log})
            lines.append(f"failed: {group[0].rule} × {len(group)} ({labels}), alike: {group[0].cause}"
                         + (f" (logs in {', '.join(folders)})" if folders else ""))
    if blocked:
        by_root: dict[str, int] = {}
        for found in blocked:
            by_root[found.blocked_by or "?"] = by_root.get(found.blocked_by or "?", 0) + 1
        lines.append("not run, an input missing: " + "; ".join(f"{n} job(s) after {root}"
                                                              for root, n in sorted(by_root.items())) + ".")
    if unfinished and not stopped:
        lines.append(f"not finished: {len(unfinished)} job(s): the run ended before they finished"
                     + (f" ({', '.join(o.label for o in unfinished[:3])}{', …' if len(unfinished) > 3 else ''})."))
    if report:
        lines.append(f"report: {report}")
    if (failed or blocked) and command:
        lines.append(f"to finish: fix the causes above, then run `{command}` again (only what is missing runs).")
    elif unfinished and command and not stopped:
        lines.append(f"to finish: run `{command}` again (only what is missing runs).")
    return lines


def _alike(outcomes: Sequence[JobOutcome]) -> list[list[JobOutcome]]:
    """Failed jobs grouped by rule and kind of error (the cause's exception type), in order of first appearance."""
    groups: dict[tuple[str, str], list[JobOutcome]] = {}
    for found in outcomes:
        groups.setdefault((found.rule, found.cause.split(":", 1)[0]), []).append(found)
    return list(groups.values())


def _grouped(left_out: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for path, why in left_out.items():
        groups.setdefault(str(why.get("cause", "")), []).append(path)
    return groups


def absence_text(entries: Sequence[Mapping[str, Any]]) -> str:
    """One or two sentences for an item whose results files are absent: their causes (each once), the projected
    cost of computing them where the shapes preset measured it, and the setting or step that computes them."""
    causes = list(dict.fromkeys(str(e.get("cause", "")) for e in entries if e.get("cause")))
    fixes = list(dict.fromkeys(str(e.get("fix", "")) for e in entries if e.get("fix")))
    hours = [float(e["hours"]) for e in entries if e.get("hours") is not None]
    devices = sorted({str(e["device"]) for e in entries if e.get("device")})
    text = "Not run: " + ("; ".join(causes[:2]) + (f"; and {len(causes) - 2} other causes" if len(causes) > 2 else "")
                          if causes else "its results are missing")
    if hours:
        measured = f"{len(hours)} of {len(entries)} files" if len(hours) < len(entries) else "its results"
        text += f". Projected cost of {measured}: {sum(hours):.3g} h on {', '.join(devices)} (the shapes preset's cost table)"
    elif any(e.get("cause", "").startswith("trains") for e in entries):
        text += (". No cost table projects it here: `snakemake --cores all --configfile presets/shapes.yaml "
                 "--config device=cpu` measures one")
    logs = list(dict.fromkeys(str(e["log"]) for e in entries if e.get("log")))
    if logs:
        text += f" (log: {', '.join(logs[:2])}{f' and {len(logs) - 2} more' if len(logs) > 2 else ''})"
    if fixes:
        text += ". " + " / ".join(f"`{f}` computes it" if f.startswith("--") else f for f in fixes)
    return text + "."
