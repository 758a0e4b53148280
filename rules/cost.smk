# Cost stage of the shapes preset (docs/cost.md): every job that needs a data set, a checkpoint or a GPU ran at
# the paper's sizes for a few steps (the cost run, isonorm.cost: the step cap `shakedown` in presets/shapes.yaml)
# and stored a cost record with its results.
#   cost_table    <RESULTS>/cost.csv, <REPORT>/cost.html    one row per job: projected hours and peak memory
# A paper run warns at start about the jobs a shapes run found too large for its device (memory guard).

import sys

from isonorm.cost import memory_guard

rule cost_table:
    input:
        data_results,
    output:
        table=f"{RESULTS}/cost.csv",
        page=f"{REPORT}/cost.html",
    params:
        results=lambda wc, output: Path(output.table).parent,  # <RESULTS>: result paths are relative to it
        preset=config["preset"],
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/cost.log",
    localrule: True
    script:
        "../scripts/build_cost_table.py"


# The memory guard: before a paper run starts, name the jobs a shapes run found too large for its device. Only
# the main process: a job that a cluster executor starts parses this file again, and its log needs no copy.
if config["preset"] == "paper" and workflow.is_main_process:
    for line in memory_guard(Path(output_roots("shapes")["results"], "cost.csv")):
        print(line, file=sys.stderr)
