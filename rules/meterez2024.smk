# Meterez et al. (ICLR 2024), "Towards Training Without Depth Limits": every table and figure (spec meterez2024).
# Library: src/isonorm/experiments/meterez2024/; the model is isonorm.models.bn_mlp (R runs natively stacked).
#   Fig. 1                                   synthetic input, data-free        meterez2024_fig1
#   Figs. 2, 3, 5 (= G5), G6, E1, E2         fresh networks, one CIFAR-10 batch  meterez2024_at_init (one job per figure)
#   Table D1                                 input Gram ranks                  meterez2024_tabled1 (one job per data set)
#   Figs. 4, 6, F1, F2, G1–G4                the 1000-epoch training grid       meterez2024_training (GPU; one job per
#                                                                               data-set stack × depth, e.g. cifar10+cifar100,
#                                                                               3 activations × 2 data sets stacked)
# The at-init items are "CPU fine" (spec C.Z): no gpu resource; `device: auto` still uses CUDA when present.


rule meterez2024_fig1:
    """Fig. 1: φ of fc outputs of linear orthogonal BN-MLPs on a synthetic input, with Theorem 1's line."""
    output:
        results("meterez2024", "fig1", "synthetic.parquet"),
    params:
        run=experiment(f"{M24_LIB}.at_init:fig1", M24["fig1"], device=config["device"]),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("meterez2024", "fig1"),
    benchmark:
        benchmark_path("meterez2024_fig1")
    script:
        "../scripts/run_experiment.py"


rule meterez2024_at_init:
    """Figs. 2, 3, 5/G5, G6, E1, E2: fresh networks on one seeded CIFAR-10 train batch, one job per figure
    (all variants × depths, 10 runs stacked per (variant, depth))."""
    input:
        dataset_ready(M24["at_init"]["dataset"]),
    output:
        results("meterez2024", "at_init", "{item}.parquet"),
    wildcard_constraints:
        item="|".join(M24_AT_INIT),
    params:
        run=lambda wc: experiment(
            f"{M24_LIB}.at_init:{wc.item}",
            {**M24["at_init"], **M24[wc.item]},
            **training_kwargs(M24["at_init"]["dataset"], None),
        ),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("meterez2024", "at_init-{item}"),
    benchmark:
        benchmark_path("meterez2024_at_init", "{item}")
    script:
        "../scripts/run_experiment.py"


rule meterez2024_tabled1:
    """Table D1: Gram ranks and mean cosines of 100 input batches per n, one job per data set."""
    input:
        lambda wc: dataset_ready(wc.dataset),
    output:
        results("meterez2024", "tabled1", "{dataset}.parquet"),
    wildcard_constraints:
        dataset="|".join(M24["tabled1"]["datasets"]),
    params:
        run=lambda wc: experiment(
            f"{M24_LIB}.input_rank:tabled1", M24["tabled1"], **training_kwargs(wc.dataset, None)
        ),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("meterez2024", "tabled1-{dataset}"),
    benchmark:
        benchmark_path("meterez2024_tabled1", "{dataset}")
    script:
        "../scripts/run_experiment.py"


rule meterez2024_training:
    """Figs. 4/6/F1/F2/G1-G4: all activations of one data-set stack (config `stacks`) at one depth, 1000 epochs
    (paper preset)."""
    input:
        lambda wc: [dataset_ready(name) for name in wc.stack.split("+")],
    output:
        results("meterez2024", "training", "{stack}-d{depth}.parquet"),
    wildcard_constraints:
        stack="|".join(re.escape(name) for name in m24_training_stacks()),
        depth=r"\d+",
    params:
        run=lambda wc: experiment(
            f"{M24_LIB}.training_grid:train_grid_job",
            M24["training"],
            **training_kwargs(wc.stack, results("meterez2024", "training", f"{wc.stack}-d{wc.depth}.ckpt")),
            depth=int(wc.depth),
        ),
    resources:
        gpu=1,
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("meterez2024", "training-{stack}-d{depth}"),
    benchmark:
        benchmark_path("meterez2024_training", "{stack}-d{depth}")
    script:
        "../scripts/run_experiment.py"
