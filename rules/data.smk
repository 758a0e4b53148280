# Data stage (DESIGN 3/4): one local rule per data set, text corpus, word-level corpus, instruction set and
# checkpoint, run on the submitting host (compute nodes are often offline). Data sets: torchvision (download),
# local (pre-staged folder), synthetic (generated). Texts: huggingface (one pinned parquet file), local,
# shipped. Corpora and instruction sets: huggingface (pinned parquet files), local, synthetic. Checkpoints:
# huggingface (pinned revision, only the needed files or shards), local, tiny (a small random stand-in).
# All of them write <root>/<name>/.ready last; the wildcard constraints keep the names apart.


rule fetch_dataset:
    output:
        dataset_ready("{dataset}"),
    wildcard_constraints:
        dataset="|".join(config["data"]["datasets"]),
    params:
        spec=lambda wc: dataset_spec(wc.dataset),
        fetcher="isonorm.data:fetch_dataset",
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/data/fetch_{dataset}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"


rule fetch_texts:
    output:
        texts_ready("{texts}"),
    wildcard_constraints:
        texts="|".join(config["data"].get("texts", {})),
    params:
        spec=lambda wc: texts_spec(wc.texts),
        fetcher="isonorm.data:fetch_texts",
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/data/fetch_texts_{texts}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"


rule fetch_corpus:
    output:
        corpus_ready("{corpus}"),
    wildcard_constraints:
        corpus="|".join(config["data"].get("corpora", {})),
    params:
        spec=lambda wc: corpus_spec(wc.corpus),
        fetcher="isonorm.data.corpora:fetch_corpus",
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/data/fetch_corpus_{corpus}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"


rule fetch_instructions:
    output:
        instructions_ready("{instructions}"),
    wildcard_constraints:
        instructions="|".join(config["data"].get("instructions", {})),
    params:
        spec=lambda wc: instructions_spec(wc.instructions),
        fetcher="isonorm.data.instructions:fetch_instructions",
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["data"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/data/fetch_instructions_{instructions}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"


rule fetch_checkpoint:
    output:
        checkpoint_ready("{model}"),
    wildcard_constraints:
        model="|".join(config["checkpoints"]["models"]),
    params:
        spec=lambda wc: checkpoint_spec(wc.model),
        fetcher="isonorm.checkpoints:fetch_checkpoint",
        root=lambda wc, output: Path(output[0]).parent.parent,
        retries=config["checkpoints"].get("download_retries", 3),
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/checkpoints/fetch_{model}.log",
    localrule: True
    script:
        "../scripts/fetch_source.py"
