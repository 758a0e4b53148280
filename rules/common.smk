# Helpers shared by every .smk file; no rules here, and nothing about one paper (that is in rules/<slug>.smk).
#   paths         RESULTS, REPORT, LOGS (this preset's output roots); results(), log_path(), benchmark_path();
#                 COST_RUN: the shapes preset's step cap is set: the cost run (isonorm.cost; no report)
#   data stage    markers and config entries of data sets, corpora and checkpoints (used by rules/data.smk)
#   experiments   experiment(), item_settings(), data_kwargs(), training_kwargs(): what scripts/run_experiment.py runs;
#                 PLAIN, plain_experiment(): the plain items, whose rule rules/experiment_jobs.smk generates;
#                 training_gpus(): the GPUs each training job holds (resources: gpu)
#   job sizes     LOCAL, SIMULATION, AT_INIT, TRAINING: each rule's threads, mem_mb, runtime and cpus_per_task
#                 (isonorm.resources: a cost table's row where it has the job's, else the defaults), which the
#                 template rules of rules/experiment_jobs.smk state once per kind; before_any_job(): once the jobs
#                 are known, their cost (paper_cost_lines) and the stop on one too large for the machine (memory_check)
#   report        item_output(): a rule's output, from the records of the result keys it writes; register_results()
#                 (results and claims, from the records), called by the Snakefile for each paper once its rules
#                 file (if any) is read; run_plan(): what this run
#                 computes (isonorm.plan); paper_results(), left_out_results(), data_results() (used by
#                 rules/report.smk and rules/cost.smk)
#   end of run    end_of_run(): the summary, and after a failure the report from what exists (rules/report.smk hooks)

import functools
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from isonorm.callables import name_of
from isonorm.items import (PLAIN_RESULTS, READING, claims_functions, key_results, output_pattern, paper_items,
                           item_files as files_of_items,
                           plain_items, result_files, unfinished_items)
from isonorm.outputs import output_roots
from isonorm.plan import DATA_FREE, NEEDS_DATA, TRAINS, RunPlan, cost_lines, projected_costs
from isonorm.run_status import StopSignal, job_label, summary_lines
from isonorm.resources import GROUPS, JobNeed, JobSizes, check_fits, machine_memory_mb
from isonorm.user_errors import told_briefly

DATA_ROOT = config["data"]["root"]
CHECKPOINT_ROOT = config["checkpoints"]["root"]
# results/, report/, logs/ for the paper configuration; results/<preset>/, … for every other preset, so that no
# run overwrites another preset's outputs (architecture §4). Every output path below starts with one of them.
RESULTS, REPORT, LOGS = (str(root) for root in output_roots(config["preset"]).values())
# The cost run (isonorm.cost): the shapes preset's step cap (key `shakedown`) is set, its jobs measure the paper
# run's cost, and its capped results make no report.
COST_RUN = bool(config["shakedown"])


def results(slug, *parts):
    """<RESULTS>/<slug>/<experiment>/<variant>.parquet and friends (architecture §3)."""
    return str(Path(RESULTS, slug, *parts))


def log_path(slug, name):
    return f"{LOGS}/{slug}/{name}.log"


def benchmark_path(rule_name, variant="all"):
    """Read by the report's runtime table: <RESULTS>/benchmarks/<rule>/<wildcards>.tsv."""
    return f"{RESULTS}/benchmarks/{rule_name}/{variant}.tsv"


def dataset_ready(name):
    """Marker written last by the fetch_data rule for any input of the data config (data set, texts, corpus,
    instruction set: they share the data root, one folder per name); a half-finished fetch has none."""
    return f"{DATA_ROOT}/{name}/.ready"


def checkpoint_ready(name):
    """Marker written last by the fetch_checkpoint rule (resources/checkpoints/<name>/.ready)."""
    return f"{CHECKPOINT_ROOT}/{name}/.ready"


# The sections of the data config, and the kind of input (isonorm.workflow.FETCH_KINDS) each one lists.
DATA_SECTIONS = {"datasets": "dataset", "texts": "texts", "corpora": "corpus", "instructions": "instructions"}


def _data_kinds():
    """{name: section} over the data config; a name two sections list is an error (its folder would be shared)."""
    sections = {}
    for section in DATA_SECTIONS:
        for name in config["data"].get(section) or {}:
            if name in sections:
                raise ValueError(
                    f"{name!r} is listed under both data: {sections[name]}: and data: {section}: in the config, "
                    f"but both would be fetched into {DATA_ROOT}/{name}; keep it in one section (rename or remove "
                    "the other entry)"
                )
            sections[name] = section
    return sections


DATA_KINDS = _data_kinds()  # at parse time: a name listed twice fails before any job runs


def data_entry(name):
    """(kind, config entry) of an input of the data config, for the fetch_data rule."""
    section = DATA_KINDS[name]
    return DATA_SECTIONS[section], config["data"][section][name]


def experiment(function, cfg, **kwargs):
    """Parameters of scripts/run_experiment.py: which library function to call (the function itself, imported by the
    rules file, so that an editor follows it; the job receives its name, isonorm.callables) with which settings;
    under the shapes preset also its step cap (`shakedown`, docs/cost.md). Absent otherwise, so that no other run's
    params change."""
    run = {"function": name_of(function), "config": dict(cfg), "kwargs": kwargs}
    return {**run, "shakedown": config["shakedown"]} if COST_RUN else run


# The plain items of the run's papers (isonorm.items.Item.plain), {(slug, item suffix): record}: one simulation job
# each, whose rule (rules/experiment_jobs.smk `plain_simulation`) and results are generated from the record.
PLAIN = plain_items(config["papers"])  # the run's papers (the Snakefile checks them as PAPERS)


def plain_experiment(slug, item):
    """experiment() of a plain item: its function on its config section (and the device, if it takes one)."""
    record = PLAIN[slug, item]
    return experiment(record.computed_by, config[slug][item], **record.plain_kwargs(config["device"]))


def item_settings(paper, shared, item):
    """An item's settings: the paper's shared section (e.g. joudaki2023's `simulator`, lu2024's model family
    `fnn`) with the item's own section merged over it (docs/configuration.md)."""
    return {**paper[shared], **paper[item]}


def data_kwargs(dataset):
    """Keyword arguments of every experiment function that reads a data set (or a corpus)."""
    return {"data_root": DATA_ROOT, "dataset": dataset, "device": config["device"]}


def training_kwargs(dataset, checkpoint):
    """data_kwargs plus the training's resumable checkpoint (removed once its results are written)."""
    return {**data_kwargs(dataset), "checkpoint": checkpoint}


def jobs_run_here():
    """Whether the jobs run on this machine: a local executor. A dry run (-n) of a cluster profile validates the run
    against the cluster's executor, then swaps it for Snakemake's local "dryrun" executor; what stays of the cluster
    is the threads setting Snakemake derives from the validated executor (snakemake.api, execute_workflow)."""
    return workflow.local_exec and not (workflow.dryrun and workflow.execution_settings.use_threads)


def training_gpus(wildcards):
    """`resources: gpu` of a training rule (isonorm.plan.RunPlan.gpus_per_training). Snakemake asks it of each
    training job as the job comes up to run, with the executor known; the plan's device check comes before any job
    starts, in before_any_job, for every run with an experiment job in it (one asked for a single results file
    included)."""
    return run_plan().gpus_per_training


# --- job sizes (docs/cluster.md, "Job sizes"). Each rule of rules/*.smk names its kind of job and nothing else
# about its size: `threads: <KIND>.threads`, `resources: **<KIND>.resources`, `group: <KIND>.group` -------------

# The config's `resources` section picks the cost table; every Snakemake process (a cluster job's included) reads
# the same one, so a job's threads and resources are the same wherever they are evaluated.
JOB_SIZES = JobSizes.from_settings(config["resources"], config["preset"])
if workflow.is_main_process:
    JOB_SIZES.announce()


def job_size(kind, **held):
    """The `threads`, `resources` and `group` of the kind (a key of isonorm.resources.DEFAULTS): callables that
    Snakemake evaluates per job with its rule name, wildcards and attempt (1, then 2, … when `retries` resubmits
    it), and the kind's cluster group (None: none). ``held`` are further resources every job of the kind holds.
    Also its `priority`, :func:`before_any_job`, for the template rules of rules/experiment_jobs.smk."""

    def size(wildcards, rulename, attempt=1):
        return JOB_SIZES.size(rulename, kind, wildcards, attempt)

    return SimpleNamespace(
        threads=lambda wildcards, rulename: size(wildcards, rulename).threads,
        resources={
            "mem_mb": lambda wildcards, rulename, attempt: size(wildcards, rulename, attempt).mem_mb,
            "runtime": lambda wildcards, rulename, attempt: size(wildcards, rulename, attempt).runtime,
            # sbatch --cpus-per-task from the threads Snakemake settled on (after --set-threads, --max-threads and
            # the `cores` cap), so that the CPUs SLURM grants and the threads the job runs never disagree
            "cpus_per_task": lambda wildcards, threads: threads,
            **held,
        },
        group=GROUPS.get(kind),  # the at-init jobs are bundled on a cluster (isonorm.resources.GROUPS)
        priority=before_any_job,
    )


_BEFORE_ANY_JOB = []  # set by the first call of before_any_job


def before_any_job(wildcards):
    """`priority` of every experiment job: Snakemake's default, 0. Snakemake asks it of each job this run will run
    once the DAG is built, before any job starts, in a dry run too (snakemake.dag.DAG.postprocess, update_priority),
    and lets a SystemExit from it end the run in a few lines (the `resources` callables are asked later, job by job
    as each is ready, and their errors come wrapped in a traceback). So its first call in the main process is where
    the run, knowing its jobs, checks its device (run_plan), prints what they cost (paper_cost_lines) and stops
    before one too large for this machine's memory (memory_check; docs/cluster.md, "Job sizes")."""
    if workflow.is_main_process and not _BEFORE_ANY_JOB:
        _BEFORE_ANY_JOB.append(True)
        jobs = [job for job in workflow.dag.needrun_jobs() if job.output]
        plan = run_plan()
        if config["preset"] == "paper":  # the shapes preset measures the paper's sizes (docs/cost.md)
            for line in paper_cost_lines(jobs):
                print(line, file=sys.stderr)
        if plan.local and config["resources"]["oversize"] == "stop":
            memory_check(jobs)
    return 0


def paper_cost_lines(jobs):
    """The cost lines of the data and GPU jobs among ``jobs`` (isonorm.plan.cost_lines): a training is a job that
    writes a file registered under `trains`."""
    trains = {str(Path(f).relative_to(RESULTS)) for f in registered_files(TRAINS)}
    data = {str(Path(f).relative_to(RESULTS)) for f in registered_files(NEEDS_DATA, TRAINS)}
    outputs = [[str(Path(f).relative_to(RESULTS)) for f in job.output if Path(f).is_relative_to(RESULTS)]
               for job in jobs]
    costed = [files for files in outputs if data.intersection(files)]
    return cost_lines(shapes_costs(), costed, trains, str(SHAPES_COST_TABLE), config["device"])


def memory_check(jobs):
    """Stop before any job when one of ``jobs`` asks for more memory (`mem_mb`, as Snakemake evaluates it) than
    this machine has (isonorm.resources.check_fits), in a few lines."""
    needs = []
    for job in jobs:
        mem_mb = job.resources.get("mem_mb")
        if isinstance(mem_mb, int):
            parts = Path(job.output[0]).parts
            needs.append(JobNeed(job_label(job), mem_mb, next((p for p in parts if p in PAPERS), None)))
    with told_briefly():
        check_fits(needs, machine_memory_mb(), PAPERS)


LOCAL, SIMULATION, AT_INIT = (job_size(kind) for kind in ("local", "simulation", "at_init"))
TRAINING = job_size("training", gpu=training_gpus)  # every training holds a GPU (profiles/default pools them)


# --- what each paper produces: every rules/<slug>.smk registers its results and its claims; the run plan (isonorm.plan)
# decides which of them this run computes -------------------------------------------------------------------------

REGISTERED = {}  # {slug: {need: {result key: [files]}}}, need: data_free | needs_data | trains (isonorm.plan.NEEDS)
PAPER_CLAIMS = {}  # {slug: ["package.module:function", ...]}: what measures its checkable quantities, by name
WRITTEN = {}  # {slug: {result key, or "<key>--" for its readings}}: the keys a rule's output takes (item_output)


@functools.cache
def paper_table(slug):
    """The paper's records (isonorm.items.paper_items), gathered once per process."""
    return paper_items(slug)


def item_output(slug, *keys, reading=False):
    """The `output:` of the rule of rules/<slug>.smk that writes the files of these result keys, as their records
    declare them (isonorm.items.Results, output_pattern): <RESULTS>/<slug>/<path>, each wildcard held to its values;
    with ``reading``, the files of their alternative readings (`<key>--<reading>`, decision D19)."""
    WRITTEN.setdefault(slug, set()).update(f"{key}{READING}" if reading else key for key in keys)
    return results(slug, output_pattern(slug, paper_table(slug), config[slug], keys, reading=reading))


def register_results(slug):
    """Register a paper's results files, by what computing them needs and by result key, as its records declare
    them (isonorm.items.result_files): ``data_free`` (random networks), ``needs_data`` (a data set, corpus or
    checkpoint, no training) and ``trains`` (a network is trained); the run plan (isonorm.plan) picks among them.
    Called by the Snakefile for each paper once its rules are read: every key of an item that is not plain must
    be written by one of them (item_output). The paper's claims functions, each ``claims(results, config) ->
    {item id: {quantity: value}}`` (isonorm.verdicts.claims), come from the same records, held by name for the job."""
    items = paper_table(slug)
    found = result_files(slug, items, config[slug])
    plain = {item.suffix for item in items if item.plain}
    written = WRITTEN.get(slug, set())
    unwritten = [key for key, files in key_results(slug, items).items() if key not in plain and (
        key not in written or (files.reading_names(config[slug]) and f"{key}{READING}" not in written))]
    if unwritten:
        raise ValueError(f"rules/{slug}.smk has no rule whose output is item_output({slug!r}, key) for the result "
                         f"keys {unwritten} (item_output(..., reading=True) for their readings) (docs/adding.md)")
    REGISTERED[slug] = {need: {key: [results(slug, f) for f in files] for key, files in by_key.items()}
                        for need, by_key in found.items()}
    PAPER_CLAIMS[slug] = [name_of(function) for function in claims_functions(items)]


_RUN_PLAN = []


def run_plan():
    """This run's plan (isonorm.plan.RunPlan), made on first use: from the input functions, once Snakemake knows
    whether the jobs run here or on a cluster. ``device: cuda`` without a GPU stops here, before any job."""
    if not _RUN_PLAN:
        plan = RunPlan.of(config, local=jobs_run_here(), measures_cost=COST_RUN)
        with told_briefly():  # `device: cuda` without a GPU: a few lines, not the input function's traceback
            plan.check()
        _RUN_PLAN.append(plan)
        if workflow.is_main_process:
            print(plan.device_line(), file=sys.stderr)  # its cost follows once the jobs are known (before_any_job)
    return _RUN_PLAN[0]


def planned_results(slug):
    """{result key: [files]} of the paper that this run computes, and the files its bundles gave it (imported()) of
    the keys its plan leaves out."""
    plan, given = run_plan(), imported()
    planned = {}
    for need, by_key in REGISTERED[slug].items():
        for key, files in by_key.items():
            kept = files if plan.left_out(need) is None else [f for f in files if f in given]
            if kept:
                planned[key] = kept
    return planned


def item_origins(slug):
    """{item id: where its numbers come from} (isonorm.bundles.ledger: imported from a bundle, or computed here, with
    device, date and commit) over the results files of the paper's items that exist: the scored rows' `origin`, for
    the end of a run that could not finish (the claims job reads them itself, once its results exist)."""
    from isonorm.bundles.ledger import paper_origins

    return paper_origins(slug, planned_results(slug), RESULTS)


# what the shapes preset measured (docs/cost.md)
SHAPES_COST_TABLE = Path(output_roots("shapes")["results"], "cost.csv")


@functools.cache
def shapes_costs():
    """{results file: (projected hours, device)} of the shapes preset's cost table, read once per process."""
    return projected_costs(SHAPES_COST_TABLE)


def left_out_results(slug):
    """{file: {cause, fix, and where the shapes preset measured it: hours, device}} of every results file of the
    paper that this run's plan leaves out (the report shows them as not run, with their cost)."""
    plan, costs, given = run_plan(), shapes_costs(), imported()
    left = {}
    for need, by_key in REGISTERED[slug].items():
        if plan.left_out(need) is not None:
            for f in (f for files in by_key.values() for f in files if f not in given):
                hours, device = costs.get(str(Path(f).relative_to(RESULTS)), (None, None))
                left[f] = {**plan.left_out(need).as_dict(), "hours": hours, "device": device}
    return left


def paper_results(wc):
    """Every results file of the paper named by the {slug} wildcard that this run computes."""
    return [f for files in planned_results(wc.slug).values() for f in files]


def registered_files(*needs):
    """Every results file of every paper registered under one of ``needs``, planned or not (paper by paper)."""
    return [f for slug in PAPERS for need in needs for files in REGISTERED[slug][need].values() for f in files]


def data_results(wc=None):
    """Every results file of a job that needs a data set, a checkpoint or a GPU, of every paper (the shapes preset's
    jobs, whose cost table the cost stage writes)."""
    plan = run_plan()
    return registered_files(*(need for need in (NEEDS_DATA, TRAINS) if plan.left_out(need) is None))


def all_left_out():
    """{file: why} of every paper's results files that this run's plan leaves out."""
    return {f: why for slug in PAPERS for f, why in left_out_results(slug).items()}


def plan_summary():
    """The index's and the terminal's lines on what this run's plan leaves out (isonorm.run_status)."""
    return summary_lines([], all_left_out(), None)


# --- bundles: results computed elsewhere, placed before Snakemake creates their jobs (isonorm.bundles.importing,
# docs/bundles.md) ----------------------------------------------------------------------------------------------


def bundle_job(path):
    """(rule, code fingerprint, settings fingerprint) of the experiment job of this run that writes ``path``, as its
    rule's params name it (rules/common.smk experiment); None when no job of this run writes it. Snakemake's own
    matching of a path to a rule, its wildcards and its params, as it does when it plans the job."""
    from isonorm.fingerprints import code_fingerprint, settings_fingerprint

    for candidate in workflow.rules:
        if candidate.output and candidate.is_producer(path):
            wildcards = candidate.get_wildcards(path)
            output, _ = candidate.expand_output(wildcards)
            input, *_ = candidate.expand_input(wildcards)
            params, _ = candidate.expand_params(wildcards, input, output, None)
            run = getattr(params, "run", None)
            if not isinstance(run, dict) or "function" not in run:
                return None
            return candidate.name, code_fingerprint(run["function"]), settings_fingerprint(run)
    return None


_IMPORTED = []  # set by the first call of imported()


def imported():
    """{results file} that this run's bundles give it, placed on first use (place_bundles): by the first input
    function that asks for a paper's results, so before Snakemake creates the jobs that write them, and once the
    run knows whether it is a dry run."""
    if not _IMPORTED:
        _IMPORTED.append(place_bundles())
    return _IMPORTED[0]


def place_bundles():
    """The config's `bundles:` placed under RESULTS (isonorm.bundles.importing), once, by the main process, before
    any job runs: {results file} of those there for this run. A damaged, edited or conflicting bundle stops the run
    here. A dry run (-n), or a command that runs nothing (--summary), writes nothing and says what a run would use.
    Another process (a cluster job parsing the workflow again) reads what the main process placed."""
    from isonorm.bundles.importing import place_bundles as place
    from isonorm.bundles.ledger import LEDGER, read_ledger, still_imported

    if not workflow.is_main_process:
        return {f"{RESULTS}/{p}" for p, e in read_ledger(RESULTS).items() if still_imported(RESULTS, p, e)}
    if not config["bundles"] and not Path(RESULTS, LEDGER).is_file():
        return set()
    dry = workflow.executor_plugin is None or workflow.dryrun or workflow.touch
    item_files = {item: [str(Path(f).relative_to(RESULTS)) for f in files] for slug in PAPERS
                  for item, files in files_of_items(paper_table(slug), {key: files for by_key in REGISTERED[slug].values()
                                                                         for key, files in by_key.items()}).items()}
    with told_briefly():
        imports = place(config["bundles"], RESULTS, config["preset"], bundle_job, stale=config["stale_bundles"],
                        dry_run=dry, item_files=item_files)
    for line in imports.lines:
        print(line, file=sys.stderr)
    used = {f"{RESULTS}/{p}" for p in imports.present}
    without_inputs(used)
    return used


def without_inputs(imported):
    """A job whose outputs all came from a bundle needs no input: its rule's inputs (Snakemake's `expand_input`) are
    none for it, so that a data set fetched for another job of this run (its marker new) does not make Snakemake
    run it again, nor one it cannot fetch (offline) hold it back. Every other job keeps its inputs."""
    from snakemake.iocontainers import InputFiles

    for producer in [r for r in workflow.rules if r.output and any(r.is_producer(f) for f in imported)]:

        def inputs(wildcards, groupid=None, _rule=producer, _expand=producer.expand_input):
            outputs, _ = _rule.expand_output(wildcards)
            if all(str(f) in imported for f in outputs):
                return InputFiles(), {}, {}, False
            return _expand(wildcards, groupid=groupid)

        producer.expand_input = inputs


# --- the end of every run (rules/report.smk's onsuccess and onerror; isonorm.run_status, isonorm.report.end_of_run) --


# A stop (Ctrl-C) is recorded as it arrives, and the time the run started, so that the end of the run tells a stop
# from a failure, and a job that died in this run from one that never started (isonorm.run_status).
STOP = StopSignal().install() if workflow.is_main_process else StopSignal()
RUN_STARTED = time.time()


def end_of_run(success):
    """What ran, what did not and why, printed at the end of every run; after a failure or a stop, first the whole
    report from what exists (isonorm.report.end_of_run), and then every output after a job this run did not finish
    marked incomplete, so that the same command resumes the run (isonorm.run_status.untrusted_jobs)."""
    from isonorm.report.end_of_run import report_what_exists
    from isonorm.run_status import command_line, job_outcomes, missing_causes, untrusted_jobs

    report_jobs = {"paper_claims", "paper_notebook", "scoreboard", "report_index", "all"}
    planned = [job for job in workflow.dag.jobs if job.rule.name not in report_jobs]
    outcomes = job_outcomes(planned, stopped=STOP.stopped, run_started=RUN_STARTED)
    # The report (and the plan's left-out items, which it shows) concerns a run that was to make it: the default
    # target, a page, the index; never one asked for one results file or fetch, nor the shapes preset's cost table.
    wants_report = not COST_RUN and any(job.rule.name in report_jobs for job in workflow.dag.targetjobs)
    left_out = all_left_out() if wants_report else {}
    lines = summary_lines(outcomes, left_out, len(planned), f"{REPORT}/index.html" if wants_report else None,
                          command_line(), stopped=STOP.stopped)
    if not success and wants_report:
        if STOP.stopped:
            print("stopped: writing the report from what exists (Ctrl-C again skips it)", file=sys.stderr)
        missing = missing_causes(outcomes)
        try:
            lines += report_what_exists(
                papers=PAPERS, config=config, results_root=RESULTS, report_root=REPORT, logs_root=LOGS,
                planned=planned_results, claims=PAPER_CLAIMS, summary=lines,
                not_run=lambda slug: {f: why for f, why in {**left_out, **missing}.items()
                                      if f.startswith(f"{RESULTS}/{slug}/")},
                unfinished=lambda slug: unfinished_items(paper_items(slug), planned_results(slug), missing),
                origins=item_origins,
            )
        except KeyboardInterrupt:
            lines.append("report: not rebuilt (stopped again); the same command rebuilds it")
    if not success:  # Snakemake's incomplete markers: `rerun-incomplete` (profiles/default) remakes these outputs
        dag = workflow.dag
        for job in untrusted_jobs(dag.needrun_jobs(exclude_finished=True), lambda job: dag.depending[job],
                                  lambda job: job.output):
            workflow.persistence.started(job)
    print("\n".join(["", "=== end of run ===", *lines]), file=sys.stderr)
