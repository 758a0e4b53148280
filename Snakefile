# Reproduction pipeline: normalization, orthogonality and isometry of deep networks.
#   snakemake --cores all                                    paper settings (downloads, GPU training)
#   snakemake --cores all --configfile presets/quick.yaml    offline CPU smoke run of the whole DAG
#   snakemake --cores all --config compute=data-free         only the items that need no data set
#   snakemake --cores all --configfile presets/shapes.yaml   every data/GPU job at paper sizes for a few steps:
#                                                            results/shapes/cost.csv, what the paper run costs
# Outputs: results/<slug>/... (Parquet), results/scoreboard.csv, report/index.html; a preset other than the paper
# configuration writes under results/<preset>/, report/<preset>/, logs/<preset>/ instead (architecture §4).

from pathlib import Path

from snakemake.utils import min_version

from isonorm.config_check import (ConfigSources, check_config, check_dataset_sizes, check_local_sources,
                                  check_papers)
from isonorm.user_errors import told_briefly

min_version("9.0")


configfile: "config.yaml"


with told_briefly():  # a config error: its cause and fix in a few lines, no traceback (isonorm.user_errors)
    CONFIG_SOURCES = ConfigSources.of(workflow)
    check_config(config, "schemas/config.schema.yaml", CONFIG_SOURCES,
                 verbose=workflow.output_settings.verbose, defaults="config.yaml")
    PAPERS = check_papers(config, sources=CONFIG_SOURCES)  # the config's `papers:`, in the report's order
    check_dataset_sizes(config, CONFIG_SOURCES)
    # the pre-staged copies are read by the fetch jobs, which run on this host (rules/data.smk: localrule); a cluster
    # job parses this file again on a node that need not see them
    if workflow.is_main_process:
        check_local_sources(config, CONFIG_SOURCES)


report: "rules/workflow.rst"


include: "rules/common.smk"
include: "rules/experiment_jobs.smk"
include: "rules/data.smk"


for slug in PAPERS:  # rules/<slug>.smk: one paper's rules, for its items that are not plain (docs/adding.md)
    if Path(workflow.basedir, "rules", f"{slug}.smk").is_file():  # none for a paper of plain items only

        include: f"rules/{slug}.smk"

    register_results(slug)  # its results files and claims, from its records (rules/common.smk)


include: "rules/report.smk"
include: "rules/cost.smk"



rule all:
    input:
        # the shapes preset's cost run (its step cap `shakedown`) measures cost; its capped results make no report
        [f"{RESULTS}/cost.csv", f"{REPORT}/cost.html"]
        if COST_RUN
        else [f"{REPORT}/index.html", f"{RESULTS}/scoreboard.csv", *expand(f"{REPORT}/{{slug}}.html", slug=PAPERS)],
    default_target: True
