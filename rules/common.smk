# Helpers shared by every rule file: paths, config lookups, script parameters. No rules here.

from pathlib import Path

PAPERS = ["daneshmand2021"]  # grows as the other papers land: lu2024, meterez2024, joudaki2023
DATA_ROOT = config["data"]["root"]
DATA_FREE_ONLY = config["compute"] == "data-free"


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


def dataset_spec(name):
    try:
        return config["data"]["datasets"][name]
    except KeyError:
        raise ValueError(
            f"data set {name!r} is used by an experiment but has no entry under data: datasets: in the "
            f"config; add e.g. `{name}: {{source: torchvision}}`"
        ) from None


def experiment(function, cfg, **kwargs):
    """Parameters of scripts/run_experiment.py: which library function to call with which settings."""
    return {"function": function, "config": dict(cfg), "kwargs": kwargs}


def training_kwargs(slug, dataset, checkpoint):
    """Keyword arguments every training function receives from its rule."""
    return {"data_root": DATA_ROOT, "dataset": dataset, "device": config["device"], "checkpoint": checkpoint}
