# Example et al. (2099), "How independent are the columns of a random matrix?": a one-item paper that shows the
# places an item lives (docs/adding.md). Library: src/isonorm/experiments/example2099.py.
# Its items, each once with its title, job, results and claims: isonorm.experiments.example2099.ITEMS; each rule's
# docstring names the items it computes.

import isonorm.experiments.example2099

EX = config["example2099"]

register_results(
    "example2099",
    data_free={"fig1": [results("example2099", "fig1", "matrices.parquet")]},
)


use rule simulation_job as example2099_fig1 with:
    """example2099-fig1: PII of fresh d × d Gaussian matrices, one per run and width."""
    output:
        results("example2099", "fig1", "matrices.parquet"),
    params:
        run=experiment(isonorm.experiments.example2099.fig1, EX["fig1"]),
    log:
        log_path("example2099", "fig1"),
    benchmark:
        benchmark_path("example2099_fig1")
