# Lu et al. (IJCAI 2024), "The Orthogonality of Weight Vectors: The Key Characteristics of Normalization and
# Residual Connections": every table and figure. Library: src/isonorm/experiments/lu2024/; decisions:
# docs/decisions/lu2024.md. Training rules train every seed of a configuration stacked in one job (resources
# gpu=1); the Table 5 (b)/(c) rule reads single layers straight from the checkpoints' shards.
# Its items, each once with its title, job, results (their files) and claims: the records (`ITEMS`) beside their
# functions in isonorm.experiments.lu2024; each rule's docstring names the items it computes, and its output is
# the files of their result keys, as the records declare them (item_output; the Snakefile registers them).

import isonorm.experiments.lu2024.trained_nets
import isonorm.experiments.lu2024.wikitext_transformer
import isonorm.experiments.lu2024.checkpoint_pii
import isonorm.experiments.lu2024.lora

L24 = config["lu2024"]
job_settings = isonorm.experiments.lu2024.trained_nets.job_settings  # a job's params: what it reads of its item
for _item in ("table1", "table2", "apptable2", "table3"):  # every fitted run names its settings (decision A3)
    isonorm.experiments.lu2024.trained_nets.check_fitted_runs(L24[_item], f"lu2024: {_item}")


use rule simulation_job as lu2024_fig1 with:
    """lu2024-fig1: the weight of one layer of model (F) right after initialisation; no data set, no training."""
    output:
        item_output("lu2024", "fig1"),
    params:
        run=experiment(isonorm.experiments.lu2024.trained_nets.fig1, item_settings(L24, "fnn", "fig1")),
    log:
        log_path("lu2024", "fig1"),
    benchmark:
        benchmark_path("lu2024_fig1")


use rule training_job as lu2024_table1 with:
    """lu2024-table1: model (F) of the config's variant and activation, one layer constant-initialised, on the
    config's data set, one job per optimizer."""
    input:
        dataset_ready(L24["fnn"]["dataset"]),
    output:
        item_output("lu2024", "table1"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.lu2024.trained_nets.fnn,
            job_settings(item_settings(L24, "fnn", "table1"), wc.optimizer),
            item="table1",
            optimizer=wc.optimizer,
            **training_kwargs(L24["fnn"]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("lu2024", "table1-{optimizer}"),
    benchmark:
        benchmark_path("lu2024_table1", "{optimizer}")


use rule training_job as lu2024_table3 with:
    """lu2024-table3, lu2024-fig2 (through the saved weights): model (F) Original vs Norm_Res, one job per
    variant × activation × optimizer."""
    input:
        dataset_ready(L24["fnn"]["dataset"]),
    output:
        item_output("lu2024", "table3"),
        weights=item_output("lu2024", "table3_weights"),  # what lu2024-fig2 draws
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.lu2024.trained_nets.fnn,
            job_settings(item_settings(L24, "fnn", "table3"), wc.optimizer),
            item="table3",
            optimizer=wc.optimizer,
            variant=wc.variant, activation=wc.activation, weights_path=output.weights,
            **training_kwargs(L24["fnn"]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("lu2024", "table3-{variant}-{activation}-{optimizer}"),
    benchmark:
        benchmark_path("lu2024_table3", "{variant}-{activation}-{optimizer}")


use rule training_job as lu2024_apptable4 with:
    """lu2024-apptable4: model (F) with normalisation only, residual only, both or neither, the config's
    activation and optimizer, one job per variant."""
    input:
        dataset_ready(L24["fnn"]["dataset"]),
    output:
        item_output("lu2024", "apptable4"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.lu2024.trained_nets.fnn,
            job_settings(item_settings(L24, "fnn", "apptable4"), L24["apptable4"]["optimizer"]), item="apptable4",
            optimizer=L24["apptable4"]["optimizer"], variant=wc.variant,
            activation=L24["apptable4"]["activation"],
            **training_kwargs(L24["fnn"]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("lu2024", "apptable4-{variant}"),
    benchmark:
        benchmark_path("lu2024_apptable4", "{variant}")


use rule training_job as lu2024_simple_cnn with:
    """lu2024-table2, lu2024-apptable2: model (C) on each item's data set, its first layer constant-initialised,
    one job per item and optimizer."""
    input:
        lambda wc: dataset_ready(L24[wc.item]["dataset"]),
    output:
        item_output("lu2024", "table2", "apptable2"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.lu2024.trained_nets.simple_cnn,
            job_settings(item_settings(L24, "simple_cnn", wc.item), wc.optimizer), item=wc.item,
            optimizer=wc.optimizer, **training_kwargs(L24[wc.item]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("lu2024", "{item}-{optimizer}"),
    benchmark:
        benchmark_path("lu2024_simple_cnn", "{item}-{optimizer}")


use rule training_job as lu2024_resnet18 with:
    """lu2024-table4, lu2024-apptable3: model (R) Original vs Norm_Res on each item's data set, one job per
    item, variant and optimizer."""
    input:
        lambda wc: dataset_ready(L24[wc.item]["dataset"]),
    output:
        item_output("lu2024", "table4", "apptable3"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.lu2024.trained_nets.resnet18,
            job_settings(item_settings(L24, "resnet18", wc.item), wc.optimizer), item=wc.item,
            variant=wc.variant, optimizer=wc.optimizer,
            **training_kwargs(L24[wc.item]["dataset"], output[0] + ".ckpt"),
        ),
    log:
        log_path("lu2024", "{item}-{variant}-{optimizer}"),
    benchmark:
        benchmark_path("lu2024_resnet18", "{item}-{variant}-{optimizer}")


use rule training_job as lu2024_table5_transformer with:
    """lu2024-table5-transformer, lu2024-table5 (its row (a)): the word-level Transformer trained on the
    config's corpus, all seeds in one job."""
    input:
        dataset_ready(L24["table5_transformer"]["corpus"]),
    output:
        item_output("lu2024", "table5_transformer"),
    params:
        run=lambda wc, output: experiment(
            isonorm.experiments.lu2024.wikitext_transformer.table5_transformer,
            L24["table5_transformer"],
            **training_kwargs(L24["table5_transformer"]["corpus"], output[0] + ".ckpt"),
        ),
    log:
        log_path("lu2024", "table5_transformer"),
    benchmark:
        benchmark_path("lu2024_table5_transformer")


use rule at_init_job as lu2024_table5_checkpoints with:
    """lu2024-table5 (b) (part=plms) and (c) (part=llms): PII of one layer's matrices of the config's
    checkpoints, nothing trained; one row per model, matrix and orientation."""
    input:
        lambda wc: [checkpoint_ready(m) for m in L24["table5"][wc.part]["models"]],
    output:
        item_output("lu2024", "table5_plms", "table5_llms"),
    params:
        run=lambda wc: experiment(
            isonorm.experiments.lu2024.checkpoint_pii.table5_checkpoints, L24["table5"][wc.part],
            checkpoint_root=CHECKPOINT_ROOT, device=config["device"],
        ),
    log:
        log_path("lu2024", "table5-{part}"),
    benchmark:
        benchmark_path("lu2024_table5_checkpoints", "{part}")


use rule training_job as lu2024_table5_lora with:
    """lu2024-table5 (d): LoRA fine-tuning of the config's base LLM with peft, merged; PII of its layer before
    and after."""
    input:
        checkpoint_ready(L24["table5"]["lora"]["checkpoint"]),
        dataset_ready(L24["table5"]["lora"]["instructions"]),
    output:
        item_output("lu2024", "table5_lora"),
    params:
        # the folders of its inputs, named as they are: a job whose results a bundle gives has no inputs
        run=experiment(
            isonorm.experiments.lu2024.lora.table5_lora_runs,
            L24["table5"]["lora"],
            checkpoint_dir=str(Path(checkpoint_ready(L24["table5"]["lora"]["checkpoint"])).parent),
            instructions=str(Path(dataset_ready(L24["table5"]["lora"]["instructions"])).parent),
            device=config["device"],
        ),
    log:
        log_path("lu2024", "table5_lora"),
    benchmark:
        benchmark_path("lu2024_table5_lora")
