# Helpers shared by all the .smk files (paths, config lookups, script parameters); no rules here.

from pathlib import Path

PAPERS = ["daneshmand2021", "joudaki2023"]  # grows as the other papers land: lu2024, meterez2024
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


def checkpoint_ready(name):
    """Marker written last by the checkpoint fetch rule (resources/checkpoints/<name>/.ready)."""
    return f"{CHECKPOINT_ROOT}/{name}/.ready"


def texts_ready(name):
    """Marker written last by the text-corpus fetch rule."""
    return f"{DATA_ROOT}/{name}/.ready"


def dataset_spec(name):
    try:
        return config["data"]["datasets"][name]
    except KeyError:
        raise ValueError(
            f"data set {name!r} is used by an experiment but has no entry under data: datasets: in the "
            f"config; add e.g. `{name}: {{source: torchvision}}`"
        ) from None


def texts_spec(name):
    try:
        return config["data"]["texts"][name]
    except KeyError:
        raise ValueError(
            f"text corpus {name!r} is used by an experiment but has no entry under data: texts: in the config; "
            f"add e.g. `{name}: {{source: shipped, n_texts: 3, max_chars: 120}}`"
        ) from None


def checkpoint_spec(name):
    try:
        return config["checkpoints"]["models"][name]
    except KeyError:
        raise ValueError(
            f"checkpoint {name!r} is used by an experiment but has no entry under checkpoints: models: in the "
            f"config; add e.g. `{name}: {{source: huggingface, repo: ..., revision: <commit sha>}}`"
        ) from None


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


PAPER_RESULTS = {"daneshmand2021": d21_results, "joudaki2023": j23_results}


def paper_results(wc):
    """Every results file of the paper named by the {slug} wildcard."""
    return [f for files in PAPER_RESULTS[wc.slug]().values() for f in files]
