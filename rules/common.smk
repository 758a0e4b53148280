# Helpers shared by all the .smk files (paths, config lookups, script parameters); no rules here.

import re
from pathlib import Path

PAPERS = ["lu2024", "daneshmand2021", "meterez2024", "joudaki2023"]  # the report's order (DESIGN 2)
DATA_ROOT = config["data"]["root"]
DATA_FREE_ONLY = config["compute"] == "data-free"
CHECKPOINT_ROOT = config["checkpoints"]["root"]


def results(slug, *parts):
    """results/<slug>/<experiment>/<variant>.parquet and friends (DESIGN 3)."""
    return str(Path("results", slug, *parts))


def log_path(slug, name):
    return f"logs/{slug}/{name}.log"


def benchmark_path(rule_name, variant="all"):
    """Read by the report's runtime table: results/benchmarks/<rule>/<wildcards>.tsv."""
    return f"results/benchmarks/{rule_name}/{variant}.tsv"


def dataset_ready(name):
    """Marker written last by the fetch rule; a half-finished download has none."""
    return f"{DATA_ROOT}/{name}/.ready"


# Texts, word-level corpora and instruction sets live next to the data sets, under their own names.
texts_ready = corpus_ready = instructions_ready = dataset_ready


def checkpoint_ready(name):
    """Marker written last by the checkpoint fetch rule (resources/checkpoints/<name>/.ready)."""
    return f"{CHECKPOINT_ROOT}/{name}/.ready"


def _config_entry(section, key, name, what, example):
    """config[section][key][name], or an error naming the missing entry and how to add it."""
    try:
        return config[section][key][name]
    except KeyError:
        raise ValueError(
            f"{what} {name!r} is used by an experiment but has no entry under {section}: {key}: in the config; "
            f"add e.g. `{name}: {example}`"
        ) from None


def dataset_spec(name):
    return _config_entry("data", "datasets", name, "data set", "{source: torchvision}")


def texts_spec(name):
    return _config_entry("data", "texts", name, "text corpus", "{source: shipped, n_texts: 3, max_chars: 120}")


def corpus_spec(name):
    return _config_entry("data", "corpora", name, "word-level corpus", "{source: synthetic}")


def instructions_spec(name):
    return _config_entry("data", "instructions", name, "instruction set", "{source: synthetic, n_examples: 12}")


def checkpoint_spec(name):
    return _config_entry(
        "checkpoints", "models", name, "checkpoint", "{source: huggingface, repo: ..., revision: <commit sha>}"
    )


def experiment(function, cfg, **kwargs):
    """Parameters of scripts/run_experiment.py: which library function to call with which settings."""
    return {"function": function, "config": dict(cfg), "kwargs": kwargs}


def training_kwargs(dataset, checkpoint):
    """Keyword arguments every training function receives from its rule."""
    return {"data_root": DATA_ROOT, "dataset": dataset, "device": config["device"], "checkpoint": checkpoint}


# --- what each paper's rules produce (read by the paper's claims and notebook rules) -----------------

D21 = config["daneshmand2021"]
D21_LIB = "isonorm.experiments.daneshmand2021"


def d21_results():
    """Every results file of the paper, by item; the data items only when compute == all."""
    files = {
        "fig1": [results("daneshmand2021", "fig1", "chains.parquet")],
        "fig2a": expand(results("daneshmand2021", "fig2a", "width{w}.parquet"), w=D21["fig2a"]["widths"]),
        "fig2b": expand(results("daneshmand2021", "fig2b", "width{w}.parquet"), w=D21["fig2b"]["widths"]),
        "fig3": expand(results("daneshmand2021", "fig3", "batch{n}.parquet"), n=D21["fig3"]["batch_sizes"]),
        "appfigg": expand(results("daneshmand2021", "appfigg", "{a}.parquet"), a=D21["appfigg"]["activations"]),
    }
    if not DATA_FREE_ONLY:
        dt = D21["depth_training"]
        files["depth_training"] = expand(
            results("daneshmand2021", "depth_training", "{init}-depth{depth}.parquet"),
            init=dt["inits"], depth=dt["depths"],
        )
        files["fig4b"] = [results("daneshmand2021", "fig4b", f"depth{D21['fig4b']['depth']}.parquet")]
        files["appfig6"] = expand(results("daneshmand2021", "appfig6", "{arch}.parquet"), arch=["mlp", "convnet"])
        files["appfig7"] = expand(
            results("daneshmand2021", "appfig7", "{init}-extra{extra}.parquet"),
            init=D21["appfig7"]["inits"], extra=D21["appfig7"]["extra_layers"],
        )
    return files


J23 = config["joudaki2023"]
J23_LIB = "isonorm.experiments.joudaki2023"
J23_STRENGTHS = ["table2", "tableb1", "figb1"]
J23_SIMULATIONS = ["fig4", "fig5_6", "fig8a", "fig8b", "fig9", "figa1", "figb2", "figb3"]


def j23_results():
    """Every results file of joudaki2023, by result key; data and checkpoint items only when compute == all."""
    files = {item: [results("joudaki2023", "strengths", f"{item}.parquet")] for item in J23_STRENGTHS}
    files.update({sim: [results("joudaki2023", "simulations", f"{sim}.parquet")] for sim in J23_SIMULATIONS})
    if not DATA_FREE_ONLY:
        files["fig3"] = [results("joudaki2023", "fig3", f"{J23['fig3']['dataset']}.parquet")]
        files["figb4"] = expand(results("joudaki2023", "figb4", "{dataset}.parquet"), dataset=J23["figb4"]["datasets"])
        for run_set in ("fig2_runs", "fig7_runs"):
            files[run_set] = expand(
                results("joudaki2023", run_set, "{activation}.parquet"), activation=J23[run_set]["activations"]
            )
        files["figb5"] = [results("joudaki2023", "figb5", f"{J23['figb5']['checkpoint']}.parquet")]
    return files


M24 = config["meterez2024"]
M24_LIB = "isonorm.experiments.meterez2024"
M24_AT_INIT = ["fig2", "fig3", "fig5", "figg6", "fige1", "fige2"]  # the sweeps on one CIFAR-10 batch


def m24_results():
    """Every results file of meterez2024, by result key; only Fig. 1 needs no data set."""
    files = {"fig1": [results("meterez2024", "fig1", "synthetic.parquet")]}
    if not DATA_FREE_ONLY:
        files.update({item: [results("meterez2024", "at_init", f"{item}.parquet")] for item in M24_AT_INIT})
        files["tabled1"] = expand(
            results("meterez2024", "tabled1", "{dataset}.parquet"), dataset=M24["tabled1"]["datasets"]
        )
        # Figs. 4, 6, F1, F2, G1–G4 split this one key by data set and depth (a stack's file holds several)
        files["training"] = expand(
            results("meterez2024", "training", "{stack}-d{depth}.parquet"),
            stack=m24_training_stacks(), depth=M24["training"]["depths"],
        )
    return files


def m24_training_stacks():
    """Job names of the training grid: each `stacks` group (its members listed in `datasets`, joined by "+",
    e.g. cifar10+cifar100), then every other data set alone."""
    training = M24["training"]
    datasets, names, seen = list(training["datasets"]), [], set()
    for group in training["stacks"]:
        members = [name for name in group if name in datasets]
        if seen & set(members):
            raise ValueError(
                f"meterez2024: training: stacks: {sorted(seen & set(members))} appear in two stacks; "
                "list each data set in one stack at most"
            )
        seen.update(members)
        names += ["+".join(members)] if members else []
    return names + [name for name in datasets if name not in seen]


L24 = config["lu2024"]
L24_LIB = "isonorm.experiments.lu2024"


def l24_cfg(family, item):
    """An item's settings: its model family's section (fnn, simple_cnn, resnet18) with the item's merged over it."""
    return {**L24[family], **L24[item]}


def l24_results():
    """Every results file of lu2024, by result key. Every item needs a data set or a checkpoint."""
    if DATA_FREE_ONLY:
        return {}
    runs3 = L24["table3"]["runs"]
    files = {
        "table1": expand(results("lu2024", "table1", "{o}.parquet"), o=L24["table1"]["runs"]),
        "table2": expand(results("lu2024", "table2", "{o}.parquet"), o=L24["table2"]["runs"]),
        "apptable2": expand(results("lu2024", "apptable2", "{o}.parquet"), o=L24["apptable2"]["runs"]),
        "table3": expand(results("lu2024", "table3", "{v}-{r}.parquet"), v=L24["table3"]["variants"], r=runs3),
        # Figs. 1–2 read these (written by the same Table-3 jobs)
        "table3_weights": expand(
            results("lu2024", "table3_weights", "{v}-{r}.parquet"), v=L24["table3"]["variants"], r=runs3
        ),
        "table4": expand(
            results("lu2024", "table4", "{v}-{o}.parquet"), v=L24["resnet18"]["variants"], o=L24["table4"]["runs"]
        ),
        "apptable3": expand(
            results("lu2024", "apptable3", "{v}-{o}.parquet"), v=L24["resnet18"]["variants"], o=L24["apptable3"]["runs"]
        ),
        "apptable4": expand(results("lu2024", "apptable4", "{v}.parquet"), v=L24["apptable4"]["variants"]),
        "table5_transformer": [
            results("lu2024", "table5_transformer", f"{L24['table5_transformer']['corpus']}.parquet")
        ],
        "table5_plms": [results("lu2024", "table5", "plms.parquet")],
        "table5_llms": [results("lu2024", "table5", "llms.parquet")],
        "table5_lora": [results("lu2024", "table5_lora", f"{L24['table5']['lora']['checkpoint']}.parquet")],
    }
    return files


PAPER_RESULTS = {
    "lu2024": l24_results, "daneshmand2021": d21_results, "meterez2024": m24_results, "joudaki2023": j23_results,
}


def paper_results(wc):
    """Every results file of the paper named by the {slug} wildcard."""
    return [f for files in PAPER_RESULTS[wc.slug]().values() for f in files]
