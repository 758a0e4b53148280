"""Where a workflow run's minutes go, from Snakemake's own log of it (issue: the data-free run profiled and cut).

Snakemake writes one log per run (``.snakemake/log/<date>.snakemake.log``): each job's block opens with a time
stamp and ``rule <name>:`` (or ``localrule``) with its ``jobid``, and ``Finished jobid: N`` follows a later time
stamp. From those this script gives, per rule, the jobs, their summed and longest wall time, and for the run its
wall time, the cores' busy share (summed job time over cores × wall time), and the start-up share: the time a
job process spends importing what every job imports (``--startup-s``, measured by ``--measure-startup``) times
the number of jobs. Time stamps have one-second resolution, so short jobs are rounded; the sums over many jobs
are what it is for.

``--schedule`` asks what the order of the jobs and more cores would change. It replays the run's own jobs, each
taking the seconds it took in the log and waiting for the jobs that write its inputs (the ``input:`` and ``output:``
lines of the log), on 2 to 16 cores by list scheduling: a free core starts the first ready job of an order. The
orders are random (101 seeded shuffles: the median and the range) and longest first (each job's own measured
seconds, the best any priority could know). Beside them the critical path (the longest chain of jobs that wait
for each other) and job-seconds / cores, the two bounds no order beats. The replay leaves out Snakemake's own time
between jobs, and a job's seconds on many cores are taken to be those of the 2-core run. Usage:

    python benchmarks/run_profile.py .snakemake/log/<date>.snakemake.log --cores 2 --measure-startup --schedule
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import heapq
import json
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FILES = re.compile(r"^\s+(input|output): (.*)$")
FINISHED = re.compile(r"^Finished jobid: (\d+)")
# What a rule's script process imports before it does any work (scripts/run_experiment.py and the others).
JOB_IMPORTS = "import snakemake.script, isonorm.workflow, isonorm.results"


def parse(log: Path) -> tuple[dict[int, dict], float]:
    """{jobid: {rule, start, end, input, output}} and the run's wall seconds (first to last time stamp)."""
    jobs: dict[int, dict] = {}
    stamp = job = None
    first = last = None
    for line in log.read_text(encoding="utf-8").splitlines():
        if found := STAMP.match(line):
            stamp = dt.datetime.strptime(found.group(1), "%a %b %d %H:%M:%S %Y")
            first, last = first or stamp, stamp
        elif found := RULE.match(line):
            job = {"rule": found.group(1), "start": stamp, "end": None, "input": [], "output": []}
        elif (found := FILES.match(line)) and job is not None:
            job[found.group(1)] = found.group(2).split(", ")
        elif (found := JOBID.match(line)) and job is not None:
            jobs[int(found.group(1))] = job
            job = None
        elif (found := FINISHED.match(line)) and int(found.group(1)) in jobs:
            jobs[int(found.group(1))]["end"] = stamp
    wall = (last - first).total_seconds() if first and last else 0.0
    return {k: v for k, v in jobs.items() if v["end"] is not None}, wall


def startup_seconds(repeats: int = 5) -> float:
    """The median wall time of a fresh interpreter importing what every job's script imports."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", JOB_IMPORTS], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def seconds(job: dict) -> float:
    """A parsed job's wall seconds."""
    return (job["end"] - job["start"]).total_seconds()


def profile(jobs: dict[int, dict], wall: float, cores: int, startup: float | None) -> dict:
    """Per rule, its jobs and their summed and longest seconds; the run's wall time, busy share and start-up share
    (``jobs`` and ``wall`` as :func:`parse` reads them)."""
    by_rule: dict[str, list[float]] = collections.defaultdict(list)
    for job in jobs.values():
        by_rule[job["rule"]].append(seconds(job))
    busy = sum(sum(times) for times in by_rule.values())
    rules = sorted(({"rule": rule, "jobs": len(times), "sum_s": sum(times), "max_s": max(times)}
                    for rule, times in by_rule.items()), key=lambda row: -row["sum_s"])
    out = {"wall_s": wall, "cores": cores, "jobs": len(jobs), "job_s": busy,
           "busy_share": busy / (cores * wall) if wall else None, "rules": rules}
    if startup is not None:
        out |= {"startup_s_per_job": startup, "startup_share_of_job_s": len(jobs) * startup / busy if busy else None}
    return out


def waits_for(jobs: dict[int, dict]) -> dict[int, set[int]]:
    """{jobid: the jobs that write one of its inputs}."""
    writer = {path: jobid for jobid, job in jobs.items() for path in job["output"]}
    return {jobid: {writer[path] for path in job["input"] if writer.get(path, jobid) != jobid}
            for jobid, job in jobs.items()}


def replay(jobs: dict[int, dict], cores: int, rank) -> float:
    """Seconds the jobs take on ``cores`` by list scheduling: whenever a core is free, the ready job of least
    ``rank(jobid)`` starts; a job is ready once every job it waits for has finished."""
    needs = waits_for(jobs)
    left = {jobid: len(before) for jobid, before in needs.items()}
    then = collections.defaultdict(list)
    for jobid, before in needs.items():
        for other in before:
            then[other].append(jobid)
    ready = [(rank(jobid), jobid) for jobid, count in left.items() if count == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []  # (end, jobid)
    now = 0.0
    while ready or running:
        while ready and len(running) < cores:
            jobid = heapq.heappop(ready)[1]
            heapq.heappush(running, (now + seconds(jobs[jobid]), jobid))
        now, jobid = heapq.heappop(running)
        for other in then[jobid]:
            left[other] -= 1
            if left[other] == 0:
                heapq.heappush(ready, (rank(other), other))
    return now


def critical_path(jobs: dict[int, dict]) -> float:
    """Seconds of the longest chain of jobs each waiting for the one before: no number of cores is faster."""
    needs, longest = waits_for(jobs), {}

    def chain(jobid: int) -> float:
        if jobid not in longest:
            longest[jobid] = seconds(jobs[jobid]) + max((chain(other) for other in needs[jobid]), default=0.0)
        return longest[jobid]

    return max((chain(jobid) for jobid in jobs), default=0.0)


def schedule(jobs: dict[int, dict], cores_list: list[int], shuffles: int = 101) -> list[dict]:
    """Per number of cores: the replay in random orders (median and range over ``shuffles`` seeded shuffles) and
    longest first, beside the two bounds no order beats (the critical path, job-seconds / cores)."""
    total, path, rows = sum(seconds(job) for job in jobs.values()), critical_path(jobs), []
    for cores in cores_list:
        shuffled = sorted(replay(jobs, cores, lambda _, draw=random.Random(seed): draw.random())
                          for seed in range(shuffles))
        rows.append({"cores": cores, "random_median_s": statistics.median(shuffled),
                     "random_range_s": [shuffled[0], shuffled[-1]],
                     "longest_first_s": replay(jobs, cores, lambda jobid: -seconds(jobs[jobid])),
                     "critical_path_s": path, "job_s_per_core": total / cores})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--cores", type=int, required=True, help="the run's --cores")
    parser.add_argument("--startup-s", type=float, help="a job process's start-up seconds, measured elsewhere")
    parser.add_argument("--measure-startup", action="store_true", help="measure it here (5 fresh interpreters)")
    parser.add_argument("--schedule", action="store_true",
                        help="replay the run's jobs in random and longest-first order on 2 to 16 cores")
    parser.add_argument("--json", type=Path, help="also write the profile here")
    args = parser.parse_args()
    startup = startup_seconds() if args.measure_startup else args.startup_s
    jobs, wall = parse(args.log)  # read once, for the profile and the replay
    result = {"log": str(args.log), **profile(jobs, wall, args.cores, startup)}
    if args.schedule:
        result["schedule"] = schedule(jobs, sorted({args.cores, 2, 4, 8, 16}))
    print(f"{result['jobs']} jobs in {result['wall_s']:.0f} s on {args.cores} cores: {result['job_s']:.0f} job-seconds "
          f"(cores busy {result['busy_share']:.0%})")
    if startup is not None:
        print(f"start-up: {startup:.2f} s per job, {result['startup_share_of_job_s']:.0%} of the job-seconds")
    for row in result["rules"]:
        print(f"{row['sum_s']:7.0f} s  {row['jobs']:3d} jobs  (longest {row['max_s']:4.0f} s)  {row['rule']}")
    for row in result.get("schedule", []):
        print(f"{row['cores']:2d} cores: random order {row['random_median_s']:.0f} s ({row['random_range_s'][0]:.0f} "
              f"to {row['random_range_s'][1]:.0f}), longest first {row['longest_first_s']:.0f} s; bounds: critical "
              f"path {row['critical_path_s']:.0f} s, job-seconds / cores {row['job_s_per_core']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
