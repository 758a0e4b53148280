"""The SLURM path for real: the quick preset through profiles/slurm on a live single-node SLURM.

.ci/slurm/local-slurm.sh installs (apt-get) and starts slurmctld, slurmd and munged with four fake GPUs; the
workflow is then submitted through `snakemake-executor-plugin-slurm` with the production workflow profile
plus the test cluster's site profile (.ci/slurm/profile). Checked: every non-local job ran as a SLURM
job that completed (the plugin's log, SLURM's job-completion log, scontrol), GPU rules asked for exactly
one GPU, training jobs bundle all seeds of a variant, the small jobs are grouped, and the report has the
same content as the local quick run. The daemons the script started are stopped by PID at the end,
whether the test passed or not. Skipped, with the reason, without root or when the packages cannot be
installed; the README section "Running on a cluster" describes the same commands.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict, deque
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import QUICK, REPO, copy_workflow

pytestmark = [pytest.mark.slurm, pytest.mark.integration]

SCRIPT = REPO / ".ci" / "slurm" / "local-slurm.sh"
RUN_TIMEOUT = 1200  # seconds; the run took 12 min on the 2-core CI machine
SNAKEMAKE_SLURM = ["--workflow-profile", "profiles/slurm", "--profile", ".ci/slurm/profile",
                   "--configfile", "presets/quick.yaml", "--verbose"]


@pytest.fixture(scope="module")
def local_slurm():
    """A running single-node SLURM; yields its state folder (logs under log/). Stopped by PID afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root: .ci/slurm/local-slurm.sh installs slurm and munge with apt-get and starts them")
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        pytest.skip("snakemake-executor-plugin-slurm is not installed: pip install -r envs/cluster.txt")
    state = Path(tempfile.mkdtemp(prefix="isonorm-slurm-"))  # a short path: slurmd keeps sockets there
    try:
        started = subprocess.run(["bash", str(SCRIPT), "start", str(state)], check=False, capture_output=True,
                                 text=True, timeout=900)
        if started.returncode == 3:
            pytest.skip(f"no local SLURM: {started.stderr.strip()}")
        assert started.returncode == 0, f"SLURM did not start:\n{started.stdout}\n{started.stderr}"
        pids = {p.stem: int(p.read_text()) for p in (state / "run").glob("*.pid")}
        assert {"slurmctld", "slurmd"} <= set(pids), pids
        yield state
    finally:
        stopped = subprocess.run(["bash", str(SCRIPT), "stop", str(state)], check=False, capture_output=True,
                                 text=True, timeout=300)
        print(stopped.stdout, stopped.stderr)
    still_running = [f"{name} {pid}" for name, pid in pids.items() if Path(f"/proc/{pid}").exists()]
    assert not still_running, f"daemons left running: {still_running}"
    shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def slurm_run(local_slurm, tmp_path_factory):
    """The quick preset submitted to the local SLURM through the profiles; yields (workdir, log text)."""
    work = copy_workflow(tmp_path_factory.mktemp("slurm-workflow"))
    command = ["timeout", "-s", "INT", "-k", "60", str(RUN_TIMEOUT), sys.executable, "-m", "snakemake",
               *SNAKEMAKE_SLURM]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    with open(work / "slurm-run.log", "w") as log:
        done = subprocess.run(command, check=False, cwd=work, stdout=log, stderr=subprocess.STDOUT, env=env,
                              timeout=RUN_TIMEOUT + 120)
    text = (work / "slurm-run.log").read_text()
    if done.returncode != 0:
        slurm_logs = "\n".join(f"--- {p}\n{p.read_text()[-3000:]}"
                               for p in sorted((work / ".snakemake" / "slurm_logs").rglob("*.log"))[:6])
        daemon_logs = "\n".join(f"--- {p}\n{p.read_text()[-2000:]}" for p in (local_slurm / "log").glob("*.log"))
        pytest.fail(f"snakemake on SLURM exited with {done.returncode} (124: timed out after {RUN_TIMEOUT} s)\n"
                    f"{text[-6000:]}\n{slurm_logs}\n{daemon_logs}")
    return work, text


# --- what the run's log says ------------------------------------------------------------------------

def submissions(log: str) -> list[dict]:
    """One entry per sbatch call of the plugin that SLURM accepted: SLURM job id, the sbatch options, the
    Snakemake jobs in it. A call that sbatch refused is in ``refused_submissions`` instead."""
    return _sbatch_calls(log)[0]


def refused_submissions(log: str) -> list[dict]:
    """The sbatch calls that sbatch itself refused (the plugin reports 'SLURM sbatch failed' and Snakemake
    resubmits the job under the profile's `retries`): their options, Snakemake jobs and sbatch's message."""
    return _sbatch_calls(log)[1]


def _sbatch_calls(log: str) -> tuple[list[dict], list[dict]]:
    pending = defaultdict(deque)  # --output folder -> sbatch calls not yet answered with a job id or a refusal
    found, refused, refusal = [], [], None
    # Lines are searched, not matched at their start: a local job's progress bar (a carriage return, no newline)
    # can run into the plugin's next line.
    for line in log.splitlines():
        if "sbatch call: " in line:
            call = line.split("sbatch call: ", 1)[1]
            options, _, wrapped = call.partition(" --wrap=")
            folder = str(Path(re.search(r"--output (\S+)", options).group(1)).parent)
            targets = re.findall(r"'([^']*)'", re.search(r"--target-jobs ((?:'[^']*' ?)+)", wrapped).group(1))
            pending[folder].append({"options": options, "targets": targets,
                                    "rules": [t.split(":")[0] for t in targets]})
        elif m := re.search(r"Job \S+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.", line):
            entry = pending[str(Path(m.group(2)).parent)].popleft()
            found.append({**entry, "slurm_id": m.group(1)})
        elif m := re.search(r"SLURM sbatch failed\. The error message was '(.*?)(?:'\.)?$", line):
            refusal = m.group(1)  # the plugin's report, followed by the refused call on a line of its own
        elif refusal is not None and (m := re.match(r"\s+sbatch .*--output (\S+)", line)):
            entry = pending[str(Path(m.group(1)).parent)].popleft()
            refused.append({**entry, "message": refusal})
            refusal = None
    assert not any(pending.values()), f"sbatch calls without a job id or a refusal: {dict(pending)}"
    return found, refused


def job_counts(log: str) -> Counter:
    """Snakemake's own 'Job stats' table of the run: jobs per rule."""
    table = log.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return Counter({m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)
                    if m.group(1) != "total"})


def local_rules_run(log: str) -> set[str]:
    return set(re.findall(r"^localrule (\w+):", log, re.MULTILINE))


def declared_rules(workdir: Path) -> dict[str, str]:
    """Rule name -> its definition (the indented lines under `rule NAME:`), from rules/*.smk."""
    rules, current = {}, None
    for smk in sorted((workdir / "rules").glob("*.smk")):
        for line in smk.read_text().splitlines():
            if m := re.match(r"rule (\w+):", line):
                current = m.group(1)
                rules[current] = ""
            elif current and (not line.strip() or line[0].isspace()):
                rules[current] += line + "\n"
            else:
                current = None
    return rules


def slurm_job_records(state: Path) -> dict[str, dict]:
    """SLURM's job-completion log (jobcomp/filetxt): one record per finished job."""
    records = {}
    for line in (state / "log" / "jobcomp.log").read_text().splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        records[fields["JobId"]] = fields
    return records


def scontrol(job_id: str) -> dict:
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True)
    return dict(re.findall(r"(\w+)=(\S*)", out.stdout))


# --- the checks ------------------------------------------------------------------------------------

def test_a_refused_sbatch_call_is_told_apart_from_an_accepted_one():
    """The log parser on the plugin's and Snakemake's own line formats: a call sbatch refused, then its retry."""
    out = "/w/.snakemake/slurm_logs/rule_a/x/%j.log"
    call = (f"sbatch --parsable --job-name r --output {out} -p debug "
            "--wrap=\"python -m snakemake --target-jobs 'a:p=x' \"")
    log = "\n".join([
        f"sbatch call: {call}",
        "Error in rule a:",
        "    message: SLURM sbatch failed. The error message was 'sbatch: error: Socket timed out on send/recv'.",
        "    sbatch call:",
        f"        {call.split(' --wrap=')[0]}",
        f"sbatch call: {call}",
        f"Job 7 has been submitted with SLURM jobid 42 (log: {out.replace('%j', '42')}).",
        # a local job's progress bar ran into the next two lines (seen in CI)
        f"Writing model shards:   0%|          | 0/4 [00:00<?, ?it/s]sbatch call: {call.replace('/x/', '/y/')}",
        f"Shards: 0/1 [00:00<?, ?it/s]Job 8 has been submitted with SLURM jobid 43 "
        f"(log: {out.replace('/x/', '/y/').replace('%j', '43')}).",
    ])
    assert [(s["slurm_id"], s["targets"]) for s in submissions(log)] == [("42", ["a:p=x"]), ("43", ["a:p=x"])]
    assert [(r["targets"], r["message"]) for r in refused_submissions(log)] == [
        (["a:p=x"], "sbatch: error: Socket timed out on send/recv")]
    with pytest.raises(AssertionError, match="without a job id"):
        submissions(f"sbatch call: {call}")


def test_every_job_ran_under_slurm_or_as_a_local_rule(slurm_run, local_slurm):
    work, log = slurm_run
    counts, subs = job_counts(log), submissions(log)
    assert subs, "nothing was submitted to SLURM"
    # sbatch may refuse a call when slurmctld is slow to answer (a loaded 2-core CI machine); the profile's
    # `retries` resubmits the job, so a refused call must be followed by an accepted one with the same jobs.
    for refused in refused_submissions(log):
        assert any(sub["targets"] == refused["targets"] for sub in subs), refused
        print(f"sbatch refused, then resubmitted: {refused['targets']}: {refused['message']}")
    declared = declared_rules(work)
    local = local_rules_run(log)
    # Only the rules marked `localrule: True` (and the target rule `all`) ran on the submitting host ...
    assert local - {"all"} <= {name for name, body in declared.items() if "localrule: True" in body}, local
    assert {"fetch_data", "paper_notebook", "report_index"} <= local
    # ... and every other job of the DAG ran inside a SLURM job, exactly once.
    in_slurm = Counter(rule for sub in subs for rule in sub["rules"])
    assert in_slurm == Counter({rule: n for rule, n in counts.items() if rule not in local})
    # SLURM's own records: each submitted job ran on the node and completed; none failed or was retried.
    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    records = {i: r for i, r in slurm_job_records(local_slurm).items() if r.get("Name") == run_id}
    assert set(records) == {sub["slurm_id"] for sub in subs}
    assert {r["JobState"] for r in records.values()} == {"COMPLETED"}
    assert all(r["NodeList"] == os.uname().nodename.split(".")[0] for r in records.values())
    for sub in subs:  # slurmctld's view of the job: the plugin's comment names its rule or group
        comment = scontrol(sub["slurm_id"])["Comment"]
        assert all(rule in comment for rule in sub["rules"]), (comment, sub["rules"])


def test_gpu_rules_ask_for_exactly_one_gpu_and_bundle_their_seeds(slurm_run):
    work, log = slurm_run
    declared = declared_rules(work)
    gpu_rules = {name for name, body in declared.items() if re.search(r"\bgpu=training_gpus\b", body)}
    assert {"daneshmand2021_depth_training", "daneshmand2021_fig4b", "daneshmand2021_appfig7"} <= gpu_rules
    subs = submissions(log)
    gpu_subs = [s for s in subs if set(s["rules"]) & gpu_rules]
    assert gpu_subs
    for sub in subs:
        flags = re.findall(r"--(?:gpus|gres|gpus-per-\w+)[= ]\S+", sub["options"])
        if sub in gpu_subs:
            assert flags == ["--gpus=1"], sub["options"]   # the plugin's sbatch line: one GPU, nothing else
            assert len(sub["targets"]) == 1                # one training job = one variant
            assert scontrol(sub["slurm_id"]).get("TresPerJob") == "gres:gpu:1"  # what slurmctld allocated
        else:
            assert flags == [], sub["options"]
    # No job per seed: every training output holds all runs of its variant.
    summary = subprocess.run([sys.executable, "-m", "snakemake", "--summary", "--configfile", "presets/quick.yaml"],
                             cwd=work, capture_output=True, text=True, check=True).stdout
    outputs = [row.split("\t")[0] for row in summary.splitlines()[1:] if row.split("\t")[2] in gpu_rules]
    assert sum(job_counts(log)[rule] for rule in gpu_rules) == len(gpu_subs)  # one submission per training job
    for path in outputs:
        frame = pd.read_parquet(work / path)
        # the stacked factor: runs / seeds, or meterez2024's activations and data sets of one (stack, depth)
        seed = next(c for c in ("run", "seed", "rerun", "activation") if c in frame.columns)
        assert frame[seed].nunique() > 1, f"{path}: a single seed per training job"


def test_small_jobs_are_grouped_as_the_profile_says(slurm_run):
    work, log = slurm_run
    profile = yaml.safe_load((work / "profiles" / "slurm" / "config.yaml").read_text())
    counts, subs = job_counts(log), submissions(log)
    for group in set(profile["groups"].values()):
        rules = {r for r, g in profile["groups"].items() if g == group}
        jobs = sum(counts[r] for r in rules)
        if not jobs:
            continue
        holding = [s for s in subs if set(s["rules"]) & rules]
        assert all(set(s["rules"]) <= rules for s in holding), group
        assert len(holding) == math.ceil(jobs / profile["group-components"][group]), group


# --- same report as the local run ------------------------------------------------------------------

def report_content(workdir: Path) -> dict:
    """What the quick report says, without provenance (times, host, run times differ between runs)."""
    content = {}
    for page in sorted((workdir / QUICK["report"]).glob("*.html")):
        if page.name in ("index.html", "scoreboard.html"):
            continue
        content[page.name] = sorted(re.findall(r'<figure[^>]*\bid="([^"]+)"', page.read_text()))
        content[page.stem + "/"] = sorted(p.name for p in (workdir / QUICK["report"] / page.stem).iterdir())
    return content


def tables(workdir: Path) -> dict[str, pd.DataFrame]:
    """Every table behind the quick report: measurements, claims, scoreboard and the report's own tables."""
    results, report = workdir / QUICK["results"], workdir / QUICK["report"]
    found = {str(p.relative_to(results)): pd.read_parquet(p) for p in results.rglob("*.parquet")}
    found |= {str(p.relative_to(report)): pd.read_csv(p) for p in report.glob("*/*.csv")}
    found["scoreboard.csv"] = pd.read_csv(results / "scoreboard.csv")
    return found


def test_report_has_the_same_content_as_the_local_run(slurm_run, quick_run):
    work, _ = slurm_run
    assert report_content(work) == report_content(quick_run)
    here, there = tables(work), tables(quick_run)
    assert set(here) == set(there)
    assert {"scoreboard.csv", "daneshmand2021/claims.parquet"} <= set(here)
    for name, frame in here.items():
        # The runs are seeded; the tolerance only absorbs summation order (thread counts differ per job).
        pd.testing.assert_frame_equal(frame, there[name], check_exact=False, rtol=1e-6, atol=1e-9, obj=name)
