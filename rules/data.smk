# Data stage (DESIGN 3/4): one local rule per data set, text corpus and checkpoint, run on the submitting
# host (compute nodes are often offline). Data sets: torchvision (download), local (pre-staged folder),
# synthetic (generated). Texts: huggingface (one pinned parquet file), local, shipped. Checkpoints:
# huggingface (pinned revision, only the needed files), local, tiny (a small random stand-in).


rule fetch_dataset:
    output:
        dataset_ready("{dataset}"),
    wildcard_constraints:  # texts share the {data root}/{name}/.ready pattern
        dataset="|".join(config["data"]["datasets"]),
    params:
        spec=lambda wc: dataset_spec(wc.dataset),
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/data/fetch_{dataset}.log",
    localrule: True
    script:
        "../scripts/fetch_dataset.py"


rule fetch_texts:
    output:
        texts_ready("{texts}"),
    wildcard_constraints:
        texts="|".join(config["data"].get("texts", {})),
    params:
        spec=lambda wc: texts_spec(wc.texts),
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/data/fetch_texts_{texts}.log",
    localrule: True
    script:
        "../scripts/fetch_texts.py"


rule fetch_checkpoint:
    output:
        checkpoint_ready("{model}"),
    wildcard_constraints:
        model="|".join(config["checkpoints"]["models"]),
    params:
        spec=lambda wc: checkpoint_spec(wc.model),
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["checkpoints"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/checkpoints/fetch_{model}.log",
    localrule: True
    script:
        "../scripts/fetch_checkpoint.py"
