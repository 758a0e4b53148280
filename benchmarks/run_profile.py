"""Where a workflow run's minutes go, from Snakemake's own log of it (issue: the data-free run profiled and cut).

Snakemake writes one log per run (``.snakemake/log/<date>.snakemake.log``): each job's block opens with a time
stamp and ``rule <name>:`` (or ``localrule``) with its ``jobid``, and ``Finished jobid: N`` follows a later time
stamp. From those this script gives, per rule, the jobs, their summed and longest wall time, and for the run its
wall time, the cores' busy share (summed job time over cores × wall time), and the start-up share: the time a
job process spends importing what every job imports (``--startup-s``, measured by ``--measure-startup``) times
the number of jobs. Time stamps have one-second resolution, so short jobs are rounded; the sums over many jobs
are what it is for. Usage:

    python benchmarks/run_profile.py .snakemake/log/<date>.snakemake.log --cores 2 --measure-startup
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+)")
# What a rule's script process imports before it does any work (scripts/run_experiment.py and the others).
JOB_IMPORTS = "import snakemake.script, isonorm.workflow, isonorm.results"


def parse(log: Path) -> tuple[dict[int, dict], float]:
    """{jobid: {rule, start, end}} and the run's wall seconds (first to last time stamp)."""
    jobs: dict[int, dict] = {}
    stamp = rule = None
    first = last = None
    for line in log.read_text(encoding="utf-8").splitlines():
        if found := STAMP.match(line):
            stamp = dt.datetime.strptime(found.group(1), "%a %b %d %H:%M:%S %Y")
            first, last = first or stamp, stamp
        elif found := RULE.match(line):
            rule = found.group(1)
        elif (found := JOBID.match(line)) and rule is not None:
            jobs[int(found.group(1))] = {"rule": rule, "start": stamp, "end": None}
            rule = None
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


def profile(log: Path, cores: int, startup: float | None) -> dict:
    jobs, wall = parse(log)
    by_rule: dict[str, list[float]] = collections.defaultdict(list)
    for job in jobs.values():
        by_rule[job["rule"]].append((job["end"] - job["start"]).total_seconds())
    busy = sum(sum(times) for times in by_rule.values())
    rules = sorted(({"rule": rule, "jobs": len(times), "sum_s": sum(times), "max_s": max(times)}
                    for rule, times in by_rule.items()), key=lambda row: -row["sum_s"])
    out = {"log": str(log), "wall_s": wall, "cores": cores, "jobs": len(jobs), "job_s": busy,
           "busy_share": busy / (cores * wall) if wall else None, "rules": rules}
    if startup is not None:
        out |= {"startup_s_per_job": startup, "startup_share_of_job_s": len(jobs) * startup / busy if busy else None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--cores", type=int, required=True, help="the run's --cores")
    parser.add_argument("--startup-s", type=float, help="a job process's start-up seconds, measured elsewhere")
    parser.add_argument("--measure-startup", action="store_true", help="measure it here (5 fresh interpreters)")
    parser.add_argument("--json", type=Path, help="also write the profile here")
    args = parser.parse_args()
    startup = startup_seconds() if args.measure_startup else args.startup_s
    result = profile(args.log, args.cores, startup)
    print(f"{result['jobs']} jobs in {result['wall_s']:.0f} s on {args.cores} cores: {result['job_s']:.0f} job-seconds "
          f"(cores busy {result['busy_share']:.0%})")
    if startup is not None:
        print(f"start-up: {startup:.2f} s per job, {result['startup_share_of_job_s']:.0%} of the job-seconds")
    for row in result["rules"]:
        print(f"{row['sum_s']:7.0f} s  {row['jobs']:3d} jobs  (longest {row['max_s']:4.0f} s)  {row['rule']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
