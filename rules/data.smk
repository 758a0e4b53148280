# Data stage (DESIGN 3/4): one local rule per data set, run on the submitting host (compute nodes are
# often offline). Sources: torchvision (download), local (pre-staged folder), synthetic (generated).


rule fetch_dataset:
    output:
        dataset_ready("{dataset}"),
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
