# Joudaki, Daneshmand, Bach (NeurIPS 2023): every figure and table.
# Spec: ../shared/spec/joudaki2023.md (decisions D1-D18). Library: src/isonorm/experiments/joudaki2023/.
# Fig. 1 and Table 1 are drawn by the notebook itself (no data). Then: β in closed form and numerically,
# the mean-field simulator, the image MLPs (at init, then trained: GPU rules), and the GPT-2 probe.

# --- isometry strength β: Tables 2, B.1 and Fig. B.1 (CPU, seconds) ---------------------------------

rule joudaki2023_strengths:
    output:
        results("joudaki2023", "strengths", "{item}.parquet"),
    wildcard_constraints:
        item="|".join(J23_STRENGTHS),
    params:
        run=lambda wc: experiment(f"{J23_LIB}.strengths:{wc.item}", {**J23["strengths"], **J23[wc.item]}),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("joudaki2023", "strengths-{item}"),
    script:
        "../scripts/run_experiment.py"



# --- the mean-field simulator: Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2, B.3 (CPU; fig5_6 feeds Figs. 5 and 6) ---

rule joudaki2023_simulation:
    output:
        results("joudaki2023", "simulations", "{simulation}.parquet"),
    wildcard_constraints:
        simulation="|".join(J23_SIMULATIONS),
    params:
        run=lambda wc: experiment(
            f"{J23_LIB}.simulations:{wc.simulation}",
            {**J23["simulator"], **J23[wc.simulation]},
            device=config["device"],
        ),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("joudaki2023", "simulation-{simulation}"),
    benchmark:
        benchmark_path("joudaki2023_simulation", "{simulation}")
    script:
        "../scripts/run_experiment.py"

# --- image MLPs (spec D.0 (B)): LayerNorm → Linear → activation; Figs. 2, 3, 7, B.4, B.6, B.7 -------------
# Library: src/isonorm/experiments/joudaki2023/image_mlps.py. At-init items need a data set but no training
# (no GPU resource); the two training run sets stack all reruns of one activation in one job (gpu=1).

rule joudaki2023_fig3:
    """Fig. 3: LN-output gaps of fresh width-5000 MLPs, all activations in one job."""
    input:
        dataset_ready(J23["fig3"]["dataset"]),
    output:
        results("joudaki2023", "fig3", f"{J23['fig3']['dataset']}.parquet"),
    params:
        run=experiment(
            f"{J23_LIB}.image_mlps:fig3", J23["fig3"], **training_kwargs(J23["fig3"]["dataset"], None)
        ),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("joudaki2023", "fig3"),
    benchmark:
        benchmark_path("joudaki2023_fig3")
    script:
        "../scripts/run_experiment.py"


rule joudaki2023_figb4:
    """Fig. B.4: four width profiles of fresh ReLU MLPs, one job per data set."""
    input:
        lambda wc: dataset_ready(wc.dataset),
    output:
        results("joudaki2023", "figb4", "{dataset}.parquet"),
    wildcard_constraints:
        dataset="|".join(J23["figb4"]["datasets"]),
    params:
        run=lambda wc: experiment(
            f"{J23_LIB}.image_mlps:figb4", J23["figb4"], **training_kwargs(wc.dataset, None)
        ),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("joudaki2023", "figb4-{dataset}"),
    benchmark:
        benchmark_path("joudaki2023_figb4", "{dataset}")
    script:
        "../scripts/run_experiment.py"


rule joudaki2023_train_runs:
    """Figs. 2/B.6 (fig2_runs) and 7/B.7 (fig7_runs): all reruns of one activation trained stacked."""
    input:
        lambda wc: dataset_ready(J23[wc.runs]["dataset"]),
    output:
        results("joudaki2023", "{runs}", "{activation}.parquet"),
    wildcard_constraints:
        runs="fig2_runs|fig7_runs",
    params:
        run=lambda wc, output: experiment(
            f"{J23_LIB}.image_mlps:train_run_set",
            J23[wc.runs],
            activation=wc.activation,
            item=wc.runs,
            **training_kwargs(J23[wc.runs]["dataset"], output[0] + ".ckpt"),
        ),
    resources:
        gpu=1,
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("joudaki2023", "{runs}-{activation}"),
    benchmark:
        benchmark_path("joudaki2023_train_runs", "{runs}-{activation}")
    script:
        "../scripts/run_experiment.py"

# --- Fig. B.5: the GPT-2 probe (pre-trained checkpoint, 10 Simple English Wikipedia texts; CPU is fine) ---

rule joudaki2023_figb5:
    input:
        checkpoint_ready(J23["figb5"]["checkpoint"]),
        texts_ready(J23["figb5"]["texts"]),
    output:
        results("joudaki2023", "figb5", f"{J23['figb5']['checkpoint']}.parquet"),
    params:
        run=lambda wc, input: experiment(
            f"{J23_LIB}.gpt2_probe:figb5",
            J23["figb5"],
            checkpoint_dir=str(Path(input[0]).parent),
            texts=str(Path(input[1]).parent),
            device=config["device"],
        ),
    conda:
        "../envs/pipeline.yaml"
    log:
        log_path("joudaki2023", "figb5"),
    benchmark:
        benchmark_path("joudaki2023_figb5")
    script:
        "../scripts/run_experiment.py"
