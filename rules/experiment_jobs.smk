# The three kinds of experiment job, each stated once as a template rule, and the rule of every plain item, generated
# from its record (plain_simulation, at the end). Every rule of rules/<slug>.smk is
# `use rule <kind>_job as <slug>_<name> with:` and adds only its own input, output, params (the library function
# and its settings, rules/common.smk `experiment`), log and benchmark. A kind fixes the job's threads, memory,
# time and cluster group (rules/common.smk "job sizes", docs/cluster.md), its environment and its script. Its
# `priority` is Snakemake's default, 0, asked of each job once the run knows them all, before any starts: the
# first ask checks the run's device, prints its jobs' cost and stops on one too large for this machine's memory
# (rules/common.smk before_any_job).
#   simulation_job   random networks, no data set; seconds to minutes on a CPU
#   at_init_job      fresh or pretrained networks on a data set or checkpoint; no training
#   training_job     trains a network; holds a GPU (`resources: gpu`, isonorm.plan.RunPlan.gpus_per_training)
# A template has no output, so no target ever asks for it; its log, which every rule made from it replaces, is
# there for the linter. The three are written out, not made from one another: `use rule ... with:` cannot take a
# group away (a training made from the simulation template stayed in its cluster group).


rule simulation_job:
    threads: SIMULATION.threads
    resources: **SIMULATION.resources
    group: SIMULATION.group
    priority: SIMULATION.priority
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/templates/simulation_job.log",
    script:
        "../scripts/run_experiment.py"


rule at_init_job:
    threads: AT_INIT.threads
    resources: **AT_INIT.resources
    group: AT_INIT.group
    priority: AT_INIT.priority
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/templates/at_init_job.log",
    script:
        "../scripts/run_experiment.py"


rule training_job:
    threads: TRAINING.threads
    resources: **TRAINING.resources
    group: TRAINING.group
    priority: TRAINING.priority
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/templates/training_job.log",
    script:
        "../scripts/run_experiment.py"


use rule simulation_job as plain_simulation with:
    """Every plain item of the run's papers (isonorm.items.Item.plain; rules/common.smk PLAIN), one job each: the
    item's function on its config section, its results `<slug>/<item>/synthetic.parquet`. A plain item needs no
    rule of its own; which items are plain, their records say."""
    output:
        results("{slug}", "{item}", PLAIN_RESULTS),
    wildcard_constraints:
        # "(?!)" matches nothing: a run without plain items has no such job
        slug="|".join(sorted({slug for slug, _ in PLAIN})) or "(?!)",
        item="|".join(sorted({item for _, item in PLAIN})) or "(?!)",
    params:
        run=lambda wc: plain_experiment(wc.slug, wc.item),
    log:
        log_path("{slug}", "{item}"),
    benchmark:
        benchmark_path("plain_simulation", "{slug}-{item}")
