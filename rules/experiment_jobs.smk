# The three kinds of experiment job, each stated once as a template rule: every rule of rules/<slug>.smk is
# `use rule <kind>_job as <slug>_<name> with:` and adds only its own input, output, params (the library function
# and its settings, rules/common.smk `experiment`), log and benchmark. A kind fixes the job's threads, memory,
# time and cluster group (rules/common.smk "job sizes", docs/cluster.md), its environment and its script.
#   simulation_job   random networks, no data set; seconds to minutes on a CPU
#   at_init_job      fresh or pretrained networks on a data set or checkpoint; no training
#   training_job     trains a network; holds a GPU (`resources: gpu`, isonorm.plan.RunPlan.gpus_per_training)
# A template has no output, so no target ever asks for it.


rule simulation_job:
    threads: SIMULATION.threads
    resources: **SIMULATION.resources
    group: SIMULATION.group
    conda:
        "../envs/pipeline.yaml"
    script:
        "../scripts/run_experiment.py"


use rule simulation_job as at_init_job with:
    threads: AT_INIT.threads
    resources: **AT_INIT.resources
    group: AT_INIT.group


use rule simulation_job as training_job with:
    threads: TRAINING.threads
    resources: **TRAINING.resources
    group: TRAINING.group
