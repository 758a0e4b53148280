# Meterez et al. (ICLR 2024), "Towards Training Without Depth Limits: Batch Normalization Without Gradient
# Explosion": every table and figure. Library: src/isonorm/experiments/meterez2024/ (the model is
# isonorm.models.bn_mlp, R runs natively stacked); decisions: docs/decisions/meterez2024.md.
# Its items, each once with its title, job, results (their files) and claims: the records (`ITEMS`) beside their
# functions in isonorm.experiments.meterez2024; each rule's docstring names the items it computes, and its output
# is the files of their result keys, as the records declare them (item_output; the Snakefile registers them).
# A plain item (`plain=True` in its record) has no rule here: its rule is generated from its record
# (rules/experiment_jobs.smk).
# The at-init items are cheap on a CPU (C.Z): no gpu resource; `device: auto` still uses CUDA when present.

import isonorm.experiments.meterez2024.at_init
import isonorm.experiments.meterez2024.input_rank
import isonorm.experiments.meterez2024.training_grid

M24 = config["meterez2024"]


use rule at_init_job as meterez2024_at_init with:
    """meterez2024-fig2, meterez2024-fig3, meterez2024-fig5 (whose runs also give meterez2024-figg5),
    meterez2024-figg6, meterez2024-fige1, meterez2024-fige2: fresh networks on one seeded train batch of the
    at-init data set, one job per figure (all variants × depths, the runs stacked per (variant, depth))."""
    input:
        dataset_ready(M24["at_init"]["dataset"]),
    output:
        item_output("meterez2024", *isonorm.experiments.meterez2024.at_init.SWEEP_ITEMS),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.meterez2024.at_init.gradient_sweep,
            item_settings(M24, "at_init", wc.item),
            item=wc.item,
            **data_kwargs(M24["at_init"]["dataset"]),
        ),
    log:
        log_path("meterez2024", "at_init-{item}"),
    benchmark:
        benchmark_path("meterez2024_at_init", "{item}")


use rule at_init_job as meterez2024_tabled1 with:
    """meterez2024-tabled1: Gram ranks and mean cosines of 100 input batches per n, one job per data set."""
    input:
        lambda wc: dataset_ready(wc.dataset),
    output:
        item_output("meterez2024", "tabled1"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.meterez2024.input_rank.tabled1, M24["tabled1"], **data_kwargs(wc.dataset)
        ),
    log:
        log_path("meterez2024", "tabled1-{dataset}"),
    benchmark:
        benchmark_path("meterez2024_tabled1", "{dataset}")


use rule training_job as meterez2024_training with:
    """meterez2024-fig4, meterez2024-fig6, meterez2024-figf1, meterez2024-figf2, meterez2024-figg1,
    meterez2024-figg2, meterez2024-figg3, meterez2024-figg4: all activations of one data-set group (config
    `stacks`) at one depth, trained for the config's epochs."""
    input:
        lambda wc: [dataset_ready(name) for name in wc.stack.split("+")],
    output:
        item_output("meterez2024", "training"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.meterez2024.training_grid.train_grid_job,
            M24["training"],
            **training_kwargs(wc.stack, str(Path(output[0]).with_suffix(".ckpt"))),
            depth=int(wc.depth),
        ),
    log:
        log_path("meterez2024", "training-{stack}-d{depth}"),
    benchmark:
        benchmark_path("meterez2024_training", "{stack}-d{depth}")
