# Joudaki, Daneshmand, Bach (NeurIPS 2023), "On the impact of activation and normalization in obtaining isometric
# embeddings at initialization": every figure and table. Library: src/isonorm/experiments/joudaki2023/;
# decisions: docs/decisions/joudaki2023.md.
# Its items, each once with its title, job, results (their files) and claims: the records (`ITEMS`) beside their
# functions in isonorm.experiments.joudaki2023; each rule's docstring names the items it computes, and its output
# is the files of their result keys, as the records declare them (item_output; the Snakefile registers them).

import isonorm.experiments.joudaki2023.strengths
import isonorm.experiments.joudaki2023.simulations
import isonorm.experiments.joudaki2023.image_mlps
import isonorm.experiments.joudaki2023.gpt2_probe

J23 = config["joudaki2023"]


# --- isometry strength β: Tables 2, B.1 and Fig. B.1 (CPU, seconds) ---------------------------------

use rule simulation_job as joudaki2023_strengths with:
    """joudaki2023-table2, joudaki2023-tableb1, joudaki2023-figb1: β of each activation at each gain of the item, in
    closed form, by quadrature and by Monte Carlo, one job per item."""
    output:
        item_output("joudaki2023", *isonorm.experiments.joudaki2023.strengths.STRENGTH_ITEMS),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.joudaki2023.strengths.isometry_strengths, item_settings(J23, "strengths", wc.item)
        ),
    log:
        log_path("joudaki2023", "strengths-{item}"),
    benchmark:
        benchmark_path("joudaki2023_strengths", "{item}")


# --- the mean-field simulator: Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2, B.3 (CPU; fig5_6 feeds Figs. 5 and 6) ---

use rule simulation_job as joudaki2023_simulation with:
    """joudaki2023-fig4, joudaki2023-fig5, joudaki2023-fig6, joudaki2023-fig8a, joudaki2023-fig8b, joudaki2023-fig9,
    joudaki2023-figa1, joudaki2023-figb2, joudaki2023-figb3: the mean-field simulator on synthetic inputs, one job
    per grid (the fig5_6 grid gives joudaki2023-fig5 and joudaki2023-fig6)."""
    output:
        item_output("joudaki2023", *isonorm.experiments.joudaki2023.simulations.SIMULATION_ITEMS),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.joudaki2023.simulations.run_grid,
            item_settings(J23, "simulator", wc.simulation),
            item=wc.simulation,
            device=config["device"],
        ),
    log:
        log_path("joudaki2023", "simulation-{simulation}"),
    benchmark:
        benchmark_path("joudaki2023_simulation", "{simulation}")


use rule simulation_job as joudaki2023_simulation_reading with:
    """joudaki2023-fig5, joudaki2023-fig6, joudaki2023-fig8a, joudaki2023-fig9: an alternative reading of a simulator
    item's grid (its `readings:` entry, decision D19), or more runs, one job per reading."""
    output:
        item_output("joudaki2023", *isonorm.experiments.joudaki2023.simulations.SIMULATION_ITEMS, reading=True),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.joudaki2023.simulations.run_grid,
            item_settings(J23, "simulator", wc.simulation),
            item=wc.simulation,
            reading=wc.reading,
            device=config["device"],
        ),
    log:
        log_path("joudaki2023", "simulation-{simulation}--{reading}"),
    benchmark:
        benchmark_path("joudaki2023_simulation", "{simulation}--{reading}")

# --- image MLPs (D.0 (B)): LayerNorm → Linear → activation; Figs. 2, 3, 7, B.4, B.6, B.7 ------------------
# Library: src/isonorm/experiments/joudaki2023/image_mlps.py. At-init items need a data set but no training
# (no GPU resource); the two training run sets stack all reruns of one activation in one job (gpu=1).

use rule at_init_job as joudaki2023_fig3 with:
    """joudaki2023-fig3: every module's gap of fresh LayerNorm MLPs on the config's data set, all activations in
    one job."""
    input:
        dataset_ready(J23["fig3"]["dataset"]),
    output:
        item_output("joudaki2023", "fig3"),
    params:
        run=experiment(
            isonorm.experiments.joudaki2023.image_mlps.fig3,
            item_settings(J23, "image_mlp", "fig3"),
            **data_kwargs(J23["fig3"]["dataset"]),
        ),
    log:
        log_path("joudaki2023", "fig3"),
    benchmark:
        benchmark_path("joudaki2023_fig3")


use rule at_init_job as joudaki2023_figb4 with:
    """joudaki2023-figb4: every module's gap of fresh MLPs of each width profile, one job per data set."""
    input:
        lambda wc: dataset_ready(wc.dataset),
    output:
        item_output("joudaki2023", "figb4"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.joudaki2023.image_mlps.figb4,
            item_settings(J23, "image_mlp", "figb4"),
            **data_kwargs(wc.dataset),
        ),
    log:
        log_path("joudaki2023", "figb4-{dataset}"),
    benchmark:
        benchmark_path("joudaki2023_figb4", "{dataset}")


use rule training_job as joudaki2023_train_runs with:
    """joudaki2023-fig2, joudaki2023-figb6 (fig2_runs), joudaki2023-fig7, joudaki2023-figb7 (fig7_runs): the
    LayerNorm MLPs trained with SGD, all reruns of one activation stacked in one job."""
    input:
        lambda wc: dataset_ready(J23[wc.runs]["dataset"]),
    output:
        item_output("joudaki2023", "fig2_runs", "fig7_runs"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.joudaki2023.image_mlps.train_run_set,
            item_settings(J23, "image_mlp", wc.runs),
            activation=wc.activation,
            item=wc.runs,
            **training_kwargs(J23[wc.runs]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("joudaki2023", "{runs}-{activation}"),
    benchmark:
        benchmark_path("joudaki2023_train_runs", "{runs}-{activation}")

# --- Fig. B.5: the GPT-2 probe (a pre-trained checkpoint on a few texts; CPU is fine) -------------------

use rule at_init_job as joudaki2023_figb5 with:
    """joudaki2023-figb5: the isometry gap after every submodule of the config's pre-trained GPT-2 checkpoint, on
    the config's texts."""
    input:
        checkpoint_ready(J23["figb5"]["checkpoint"]),
        dataset_ready(J23["figb5"]["texts"]),
    output:
        item_output("joudaki2023", "figb5"),
    params:
        # the folders of its inputs, named as they are: a job whose results a bundle gives has no inputs
        run=experiment(
            isonorm.experiments.joudaki2023.gpt2_probe.figb5,
            J23["figb5"],
            checkpoint_dir=str(Path(checkpoint_ready(J23["figb5"]["checkpoint"])).parent),
            texts=str(Path(dataset_ready(J23["figb5"]["texts"])).parent),
            device=config["device"],
        ),
    log:
        log_path("joudaki2023", "figb5"),
    benchmark:
        benchmark_path("joudaki2023_figb5")
