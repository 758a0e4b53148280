# Meterez et al. (ICLR 2024), "Towards Training Without Depth Limits: Batch Normalization Without Gradient
# Explosion": every table and figure. Library: src/isonorm/experiments/meterez2024/ (the model is
# isonorm.models.bn_mlp, R runs natively stacked); decisions: docs/decisions/meterez2024.md.
# Its items, each once with its title, job, results and claims: the records (`ITEMS`) beside their functions in
# isonorm.experiments.meterez2024; each rule's docstring names the items it computes. A plain item (`plain=True` in
# its record) has no rule here: its rule is generated from its record (rules/experiment_jobs.smk).
# The at-init items are cheap on a CPU (C.Z): no gpu resource; `device: auto` still uses CUDA when present.

from isonorm.experiments.meterez2024.at_init import SWEEP_ITEMS
from isonorm.experiments.meterez2024.grid_jobs import training_groups
import isonorm.experiments.meterez2024.at_init
import isonorm.experiments.meterez2024.input_rank
import isonorm.experiments.meterez2024.training_grid

M24 = config["meterez2024"]
# The training jobs, one per data-set group (cifar10+cifar100, mnist+fashionmnist, ...) and depth: the config key
# `stacks` and the wildcard `stack` keep their older name (config files set the key; cost tables name jobs by the
# wildcard), each of their entries a group.
M24_GROUPS = training_groups(M24["training"])

# Every results file of meterez2024, by result key and by what it needs (isonorm.plan: what a run computes).
register_results(
    "meterez2024",
    needs_data=lambda: {
        **{item: [results("meterez2024", "at_init", f"{item}.parquet")] for item in SWEEP_ITEMS},
        "tabled1": expand(results("meterez2024", "tabled1", "{dataset}.parquet"), dataset=M24["tabled1"]["datasets"]),
    },
    trains=lambda: {
        # Figs. 4, 6, F1, F2, G1–G4 split this one key by data set and depth (a group's file holds several)
        "training": expand(
            results("meterez2024", "training", "{stack}-d{depth}.parquet"), stack=M24_GROUPS,
            depth=M24["training"]["depths"],
        ),
    },
)


use rule at_init_job as meterez2024_at_init with:
    """meterez2024-fig2, meterez2024-fig3, meterez2024-fig5 (whose runs also give meterez2024-figg5),
    meterez2024-figg6, meterez2024-fige1, meterez2024-fige2: fresh networks on one seeded train batch of the
    at-init data set, one job per figure (all variants × depths, the runs stacked per (variant, depth))."""
    input:
        dataset_ready(M24["at_init"]["dataset"]),
    output:
        results("meterez2024", "at_init", "{item}.parquet"),
    wildcard_constraints:
        item="|".join(SWEEP_ITEMS),
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
        results("meterez2024", "tabled1", "{dataset}.parquet"),
    wildcard_constraints:
        dataset="|".join(M24["tabled1"]["datasets"]),
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
        results("meterez2024", "training", "{stack}-d{depth}.parquet"),
    wildcard_constraints:
        stack="|".join(map(re.escape, M24_GROUPS)),
        depth=r"\d+",
    params:
        run=lambda wc: experiment(
            isonorm.experiments.meterez2024.training_grid.train_grid_job,
            M24["training"],
            **training_kwargs(wc.stack, results("meterez2024", "training", f"{wc.stack}-d{wc.depth}.ckpt")),
            depth=int(wc.depth),
        ),
    log:
        log_path("meterez2024", "training-{stack}-d{depth}"),
    benchmark:
        benchmark_path("meterez2024_training", "{stack}-d{depth}")
