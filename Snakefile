# Reproduction pipeline: normalization, orthogonality and isometry of deep networks.
#   snakemake --cores all                                    paper settings (downloads, GPU training)
#   snakemake --cores all --configfile presets/quick.yaml    offline CPU smoke run of the whole DAG
#   snakemake --cores all --config compute=data-free         only the items that need no data set
# Outputs: results/<slug>/... (Parquet), results/scoreboard.csv, report/index.html.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "schemas/config.schema.yaml")


report: "rules/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/daneshmand2021.smk"
include: "rules/meterez2024.smk"
include: "rules/joudaki2023.smk"
include: "rules/lu2024.smk"
include: "rules/report.smk"


rule all:
    input:
        "report/index.html",
        "results/scoreboard.csv",
        expand("report/{slug}.html", slug=PAPERS),
    default_target: True
