# Data stage (architecture §3, §4): two local rules, run on the submitting host (compute nodes are often offline).
# fetch_data fetches every input listed under data: datasets / texts / corpora / instructions (the section
# that lists a name gives its kind); fetch_checkpoint every model under checkpoints: models. Both call the
# one isonorm.sources.fetch. Data sets: torchvision (download), local (pre-staged folder), synthetic
# (generated). Texts: huggingface (one pinned parquet file), local, shipped. Corpora and instruction sets:
# huggingface (pinned parquet files), local, synthetic. Checkpoints: huggingface (pinned revision, only the
# needed files or shards, kept in the user's Hugging Face cache and linked), local, tiny (a small random
# stand-in). All of them write <root>/<name>/.ready last.


rule fetch_data:
    output:
        dataset_ready("{name}"),
    wildcard_constraints:
        name="|".join(map(re.escape, DATA_KINDS)),
    params:
        kind=lambda wc: data_entry(wc.name)[0],
        entry=lambda wc: data_entry(wc.name)[1],
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"]["download_retries"],
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/data/fetch_{{name}}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"


rule fetch_checkpoint:
    output:
        checkpoint_ready("{model}"),
    wildcard_constraints:
        model="|".join(map(re.escape, config["checkpoints"]["models"])),
    params:
        kind="checkpoint",
        entry=lambda wc: config["checkpoints"]["models"][wc.model],
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["checkpoints"]["download_retries"],
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/checkpoints/fetch_{{model}}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"
