# Data stage (DESIGN 3/4): one local rule per data set, run on the submitting host (compute nodes are
# often offline). Sources: torchvision (download), local (pre-staged folder), synthetic (generated).


rule fetch_dataset:
    output:
        dataset_ready("{dataset}"),
    params:
        spec=lambda wc: dataset_spec(wc.dataset),
        root=DATA_ROOT,
        retries=config["data"].get("download_retries", 3),
    log:
        "logs/data/fetch_{dataset}.log",
    localrule: True
    script:
        "../scripts/fetch_dataset.py"
