# Daneshmand, Joudaki, Bach (NeurIPS 2021), "Batch Normalization Orthogonalizes Representations in Deep Random
# Networks": every figure and table. Library: src/isonorm/experiments/daneshmand2021/; decisions:
# docs/decisions/daneshmand2021.md.
# Contents, item id: rule (or "notebook", drawn without results) — what it shows:
#   daneshmand2021-fig1: daneshmand2021_fig1 — random chains, |cos| of two samples
#   daneshmand2021-fig2a: daneshmand2021_fig2a — orthogonality gap vs depth (one job per width)
#   daneshmand2021-fig2b: daneshmand2021_fig2b — layer-averaged gap vs width (one job per width)
#   daneshmand2021-fig3: daneshmand2021_fig3 — Assumption A1 over (n, d) (one job per simulated n, decision B15)
#   daneshmand2021-appfigg: daneshmand2021_appfigg — Gram fluctuations per activation (one job per activation)
#   daneshmand2021-fig4a, daneshmand2021-fig5: daneshmand2021_depth_training — gap and loss vs depth, CIFAR-10 (GPU)
#   daneshmand2021-fig4b: daneshmand2021_fig4b — gap and loss during training (GPU)
#   daneshmand2021-appfig6a, daneshmand2021-appfig6b: daneshmand2021_appfig6 — gap through random BN / vanilla nets
#   daneshmand2021-appfig7a, daneshmand2021-appfig7b: daneshmand2021_appfig7 — deep ConvNets, Xavier vs SVD (GPU)
#   daneshmand2021-table1, daneshmand2021-apptable2, daneshmand2021-apph: notebook — static tables, Appendix H

from isonorm.experiments.daneshmand2021.summaries import a1_batches
import isonorm.experiments.daneshmand2021.claims
import isonorm.experiments.daneshmand2021.simulations
import isonorm.experiments.daneshmand2021.depth_training
import isonorm.experiments.daneshmand2021.layer_profiles
import isonorm.experiments.daneshmand2021.deep_convnets

D21 = config["daneshmand2021"]


# Every results file of the paper, by result key and by what it needs (isonorm.plan: what a run computes).
register_results(
    "daneshmand2021",
    data_free={
        "fig1": [results("daneshmand2021", "fig1", "chains.parquet")],
        "fig2a": expand(results("daneshmand2021", "fig2a", "width{w}.parquet"), w=D21["fig2a"]["widths"]),
        "fig2b": expand(results("daneshmand2021", "fig2b", "width{w}.parquet"), w=D21["fig2b"]["widths"]),
        "fig3": expand(results("daneshmand2021", "fig3", "batch{n}.parquet"), n=a1_batches(D21["fig3"])),
        "appfigg": expand(results("daneshmand2021", "appfigg", "{a}.parquet"), a=D21["appfigg"]["activations"]),
    },
    needs_data=lambda: {
        "appfig6": expand(results("daneshmand2021", "appfig6", "{arch}.parquet"), arch=["mlp", "convnet"]),
    },
    trains=lambda: {
        "depth_training": expand(
            results("daneshmand2021", "depth_training", "{init}-depth{depth}.parquet"),
            init=D21["depth_training"]["inits"], depth=D21["depth_training"]["depths"],
        ),
        "fig4b": [results("daneshmand2021", "fig4b", f"depth{D21['fig4b']['depth']}.parquet")],
        "appfig7": expand(
            results("daneshmand2021", "appfig7", "{init}-extra{extra}.parquet"),
            init=D21["appfig7"]["inits"], extra=D21["appfig7"]["extra_layers"],
        ),
    },
    claims=[  # each claims(results, config): {item: {quantity: value}}
        isonorm.experiments.daneshmand2021.claims.claims,
    ],
)


# --- random chains, no data (CPU) -------------------------------------------------------------------

use rule simulation_job as daneshmand2021_fig1 with:
    output:
        results("daneshmand2021", "fig1", "chains.parquet"),
    params:
        run=experiment(isonorm.experiments.daneshmand2021.simulations.warmup_cosine, D21["fig1"]),
    log:
        log_path("daneshmand2021", "fig1"),
    benchmark:
        benchmark_path("daneshmand2021_fig1")


use rule simulation_job as daneshmand2021_fig2a with:
    output:
        results("daneshmand2021", "fig2a", "width{width}.parquet"),
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
    output:
        results("daneshmand2021", "fig2b", "width{width}.parquet"),
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
    output:
        results("daneshmand2021", "fig3", "batch{n}.parquet"),
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
    output:
        results("daneshmand2021", "appfigg", "{activation}.parquet"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.daneshmand2021.simulations.activation_fluctuations,
            {**D21["appfigg"], "activations": [wc.activation]},
        ),
    log:
        log_path("daneshmand2021", "appfigg-{activation}"),
    benchmark:
        benchmark_path("daneshmand2021_appfigg", "{activation}")


# --- CIFAR-10 experiments ----------------------------------------------------------------------------

use rule training_job as daneshmand2021_depth_training with:
    """Fig. 4a and Fig. 5: all runs of one (init, depth) stacked in one job."""
    input:
        dataset_ready(D21["depth_training"]["dataset"]),
    output:
        results("daneshmand2021", "depth_training", "{init}-depth{depth}.parquet"),
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
    input:
        dataset_ready(D21["fig4b"]["dataset"]),
    output:
        results("daneshmand2021", "fig4b", "depth{depth}.parquet"),
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
    """Appendix Fig. 6a (mlp) and 6b (convnet): no training, a few hundred images."""
    input:
        dataset_ready(D21["appfig6"]["dataset"]),
    output:
        results("daneshmand2021", "appfig6", "{arch}.parquet"),
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
    input:
        dataset_ready(D21["appfig7"]["dataset"]),
    output:
        results("daneshmand2021", "appfig7", "{init}-extra{extra}.parquet"),
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
