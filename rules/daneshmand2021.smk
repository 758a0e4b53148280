# Daneshmand, Joudaki, Bach (NeurIPS 2021), "Batch Normalization Orthogonalizes Representations in Deep Random
# Networks": every figure and table. Library: src/isonorm/experiments/daneshmand2021/; decisions:
# docs/decisions/daneshmand2021.md.
# Its items, each once with its title, job, results (their files) and claims: the records (`ITEMS`) beside their
# functions in isonorm.experiments.daneshmand2021; each rule's docstring names the items it computes, and its output
# is the files of their result keys, as the records declare them (item_output; the Snakefile registers them).
# A plain item (`plain=True` in its record) has no rule here: its rule is generated from its record
# (rules/experiment_jobs.smk).

import isonorm.experiments.daneshmand2021.simulations
import isonorm.experiments.daneshmand2021.depth_training
import isonorm.experiments.daneshmand2021.layer_profiles
import isonorm.experiments.daneshmand2021.deep_convnets

D21 = config["daneshmand2021"]


# --- random chains, no data (CPU) -------------------------------------------------------------------

use rule simulation_job as daneshmand2021_fig2a with:
    """daneshmand2021-fig2a: the orthogonality gap through the layers of the BN chain, one job per width."""
    output:
        item_output("daneshmand2021", "fig2a"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.daneshmand2021.simulations.gap_through_depth,
            {**D21["fig2a"], "widths": [int(wc.width)]},
            item="fig2a",
        ),
    log:
        log_path("daneshmand2021", "fig2a-width{width}"),
    benchmark:
        benchmark_path("daneshmand2021_fig2a", "width{width}")


use rule simulation_job as daneshmand2021_fig2b with:
    """daneshmand2021-fig2b: the orthogonality gap through the layers of the BN chain, one job per width (the
    figure averages it over a window of layers)."""
    output:
        item_output("daneshmand2021", "fig2b"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.daneshmand2021.simulations.gap_through_depth,
            {**D21["fig2b"], "widths": [int(wc.width)]},
            item="fig2b",
        ),
    log:
        log_path("daneshmand2021", "fig2b-width{width}"),
    benchmark:
        benchmark_path("daneshmand2021_fig2b", "width{width}")


use rule simulation_job as daneshmand2021_fig3 with:
    """daneshmand2021-fig3: whether Assumption A1 holds per (n, d) and run, one job per simulated batch size n
    (both readings of the batch axis, decision B15)."""
    output:
        item_output("daneshmand2021", "fig3"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.daneshmand2021.simulations.assumption_a1_grid,
            # batch_offset only picks the jobs (decision B15): changing it reruns no existing job
            {**{k: v for k, v in D21["fig3"].items() if k != "batch_offset"}, "batch_sizes": [int(wc.n)]},
        ),
    log:
        log_path("daneshmand2021", "fig3-batch{n}"),
    benchmark:
        benchmark_path("daneshmand2021_fig3", "batch{n}")


use rule simulation_job as daneshmand2021_appfigg with:
    """daneshmand2021-appfigg: fluctuations of the Gram matrix of non-linear BN chains, one job per activation."""
    output:
        item_output("daneshmand2021", "appfigg"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.daneshmand2021.simulations.activation_fluctuations,
            {**D21["appfigg"], "activations": [wc.activation]},
        ),
    log:
        log_path("daneshmand2021", "appfigg-{activation}"),
    benchmark:
        benchmark_path("daneshmand2021_appfigg", "{activation}")


# --- on the config's data sets -----------------------------------------------------------------------

use rule training_job as daneshmand2021_depth_training with:
    """daneshmand2021-fig4a, daneshmand2021-fig5: training loss per epoch and spectral gap at initialisation of
    MLPs on the config's data set, all runs of one (init, depth) stacked in one job."""
    input:
        dataset_ready(D21["depth_training"]["dataset"]),
    output:
        item_output("daneshmand2021", "depth_training"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.daneshmand2021.depth_training.train_depth_variant,
            D21["depth_training"],
            init=wc.init,
            depth=int(wc.depth),
            **training_kwargs(D21["depth_training"]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("daneshmand2021", "depth_training-{init}-depth{depth}"),
    benchmark:
        benchmark_path("daneshmand2021_depth_training", "{init}-depth{depth}")


use rule training_job as daneshmand2021_fig4b with:
    """daneshmand2021-fig4b: training loss and spectral gap every epoch of the Xavier MLP of the config's depth
    on the config's data set."""
    input:
        dataset_ready(D21["fig4b"]["dataset"]),
    output:
        item_output("daneshmand2021", "fig4b"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.daneshmand2021.depth_training.train_gap_during_training,
            D21["fig4b"],
            **training_kwargs(D21["fig4b"]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("daneshmand2021", "fig4b-depth{depth}"),
    benchmark:
        benchmark_path("daneshmand2021_fig4b", "depth{depth}")


use rule at_init_job as daneshmand2021_appfig6 with:
    """daneshmand2021-appfig6a (mlp), daneshmand2021-appfig6b (convnet): the orthogonality gap through the
    layers of one random network with and without BN on batches of the config's data set, no training."""
    input:
        dataset_ready(D21["appfig6"]["dataset"]),
    output:
        item_output("daneshmand2021", "appfig6"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.daneshmand2021.layer_profiles.gap_profile,
            D21["appfig6"],
            arch=wc.arch,
            **data_kwargs(D21["appfig6"]["dataset"]),
        ),
    log:
        log_path("daneshmand2021", "appfig6-{arch}"),
    benchmark:
        benchmark_path("daneshmand2021_appfig6", "{arch}")


use rule training_job as daneshmand2021_appfig7 with:
    """daneshmand2021-appfig7a, daneshmand2021-appfig7b: training loss per epoch of deep ConvNets on the config's
    data set, all runs of one (init, number of extra layers) in one job."""
    input:
        dataset_ready(D21["appfig7"]["dataset"]),
    output:
        item_output("daneshmand2021", "appfig7"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.daneshmand2021.deep_convnets.train_deep_convnet,
            D21["appfig7"],
            init=wc.init,
            extra_layers=int(wc.extra),
            **training_kwargs(D21["appfig7"]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("daneshmand2021", "appfig7-{init}-extra{extra}"),
    benchmark:
        benchmark_path("daneshmand2021_appfig7", "{init}-extra{extra}")
