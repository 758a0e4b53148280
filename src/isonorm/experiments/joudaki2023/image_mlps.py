"""Figs. 2, 3, 7, B.4, B.6, B.7: LayerNorm MLPs on MNIST / CIFAR-10, at initialisation and during SGD.

D.0 (B) [R-D `training.ipynb` `run_experiment`, `record_results`] and decisions D1, D3, D6,
D8, D9, D14, D15. After every epoch e (e = 0 is the fresh network) each run is measured on ``measure_batches``
batches of each stage: the original's ``record_results`` loops ``if i > num_batches: break`` with
``num_batches=5``, i.e. 6 batches. Train batches come from a fresh shuffle (a new DataLoader iterator), seeded
here per (run, epoch, stage); the test DataLoader did not shuffle, so test batches are the first ones in file
order (``shuffle_test: false``). Per (run, epoch, stage, batch, module) a row holds

- ``iso_gap``: −log I of the module output's Gram (metrics M1b: ``training_isometry_gap``, ε = 1e-8,
  ``reduce_mean`` from the config). A Gram whose rank is below n by construction (the 10-dimensional fc/act
  outputs of the last block for n = 100) is NaN, as the originals' points are absent (joudaki2023-fig2);
- ``loss``, ``accuracy``: cross-entropy and accuracy of that batch (the loss Fig. 7 plots, decision D15);
- ``epoch_train_loss``: the running mean loss of the training epoch (NaN at e = 0), for QA only.

All runs of one activation train stacked in one job with the shared engine (data on the device, D14); the
measurements travel in the engine's history, so a resumed job keeps them. The original's full test-set
accuracy pass, used by no figure, is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import torch
import torch.nn.functional as F

from ...cost import sampled
from ...data import dataset_spec, load_split
from ...items import Item, Results
from ...metrics import isometry_strength, training_isometry_gap
from ...models.layernorm_mlp import ACTIVATIONS, LayerNormMLP, module_index, module_kind
from ...runtime import generator, resolve_device
from ...train import OptimizerConfig, StackedModels, TrainConfig, train_stacked
from . import SLUG, image_mlp_summaries

Config = Mapping[str, Any]
Stages = dict[str, tuple[torch.Tensor, torch.Tensor]]
STAGES = ("train", "test")
BATCH_FIELDS = ("loss", "accuracy")  # per-batch fields; module names ("norm-0", ...) never clash with them


def _check_common(cfg: Config, where: str) -> None:
    if int(cfg["runs"]) < 1 or int(cfg["batch_size"]) < 1 or int(cfg["measure_batches"]) < 1:
        raise ValueError(f"joudaki2023 {where}: runs, batch_size and measure_batches must be ≥ 1")
    unknown = [stage for stage in cfg["stages"] if stage not in STAGES]
    if unknown or not cfg["stages"]:
        raise ValueError(f"joudaki2023 {where}: stages must be a non-empty subset of {STAGES}, got {cfg['stages']}")


def beta(activation: str, method: str = "quadrature") -> float:
    """β_σ of a torch.nn activation name, by exact quadrature (decision D8) or the originals' Monte Carlo."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; use one of {sorted(ACTIVATIONS)}")
    return isometry_strength(ACTIVATIONS[activation], method)


def module_isometry_gap(h: torch.Tensor, reduce_mean: bool, eps: float) -> torch.Tensor:
    """Gap (R,) of stacked module outputs h (R, n, features...); NaN where the Gram is singular by construction.

    With f features (f − 1 after per-sample centring) < n samples, G = h hᵀ has rank < n. The originals'
    float32 eigenvalues then came out ≤ −ε and the point vanished from the plot; in float64 they may stay just
    above −ε and give a large finite number instead, so the NaN is set here explicitly (joudaki2023-fig2, joudaki2023-figb4).
    """
    n, features = h.shape[1], h[0, 0].numel()
    if features - int(reduce_mean) < n:
        return torch.full((h.shape[0],), float("nan"), dtype=torch.float64, device=h.device)
    return training_isometry_gap(h, reduce_mean=reduce_mean, eps=eps, sample_dim=1)


def measurement_batches(
    n_samples: int, batch_size: int, n_batches: int, run_ids: Sequence[int], shuffle: bool, *seed: object
) -> list[torch.Tensor]:
    """The first ``n_batches`` batches (index tensors (R, b), CPU) of each run's pass over a split.

    ``shuffle``: run r's order is a permutation drawn from ``generator(*seed, r)``, as a fresh iterator of a
    shuffling DataLoader; otherwise file order for every run. A last short batch is kept (DataLoader default).
    """
    if shuffle:
        order = torch.stack([torch.randperm(n_samples, generator=generator(*seed, run)) for run in run_ids])
    else:
        order = torch.arange(n_samples).expand(len(run_ids), n_samples)
    taken = order[:, : n_batches * batch_size]
    return list(taken.split(batch_size, dim=1))


class ModuleMeasure:
    """The engine's ``measure`` callback: gap of every module, loss and accuracy, per stage and batch.

    Returns {"<stage>/<batch>/<module>": gap (R,), "<stage>/<batch>/loss": (R,), ".../accuracy": (R,)};
    :func:`tidy_history` turns the engine's history of these into rows.
    """

    def __init__(self, stages: Stages, cfg: Config, module_names: Sequence[str], run_ids: Sequence[int],
                 variant: str) -> None:
        self.stages = stages
        self.cfg = cfg
        self.module_names = list(module_names)
        self.run_ids = list(run_ids)
        self.variant = variant

    def __call__(self, stacked: StackedModels, epoch: int) -> dict[str, torch.Tensor]:
        values: dict[str, torch.Tensor] = {}
        for stage, (x, y) in self.stages.items():
            shuffle = stage == "train" or bool(self.cfg["shuffle_test"])
            batches = measurement_batches(
                x.shape[0], int(self.cfg["batch_size"]), int(self.cfg["measure_batches"]), self.run_ids, shuffle,
                SLUG, self.variant, "measure", stage, epoch,
            )
            for batch, index in enumerate(sampled(batches)):  # all of them but under a step cap (docs/cost.md)
                index = index.to(x.device)
                outputs = stacked(x[index], trace=True)  # tuple of (R, b, features), module order
                labels = y[index]
                logits = outputs[-1]
                loss = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none").mean(dim=1)
                values[f"{stage}/{batch}/loss"] = loss
                values[f"{stage}/{batch}/accuracy"] = (logits.argmax(dim=-1) == labels).double().mean(dim=1)
                for name, h in zip(self.module_names, outputs):
                    values[f"{stage}/{batch}/{name}"] = module_isometry_gap(
                        h, bool(self.cfg["reduce_mean"]), float(self.cfg["eps"]))
        return values


def tidy_history(history: pd.DataFrame, module_names: Sequence[str]) -> pd.DataFrame:
    """Wide engine history (run, epoch, train_loss, "<stage>/<batch>/<field>" ...) → one row per module."""
    long = history.rename(columns={"train_loss": "epoch_train_loss"}).melt(
        id_vars=["run", "epoch", "epoch_train_loss"], var_name="key", value_name="value")
    parts = long.pop("key").str.split("/", n=2, expand=True)
    long["stage"], long["batch"], long["field"] = parts[0], parts[1].astype(int), parts[2]
    keys = ["run", "epoch", "stage", "batch"]
    per_batch = long[long.field.isin(BATCH_FIELDS)].pivot(index=keys, columns="field", values="value")
    gaps = long[~long.field.isin(BATCH_FIELDS)].rename(columns={"field": "module", "value": "iso_gap"})
    frame = gaps.merge(per_batch.reset_index(), on=keys, how="left")
    position = {name: i for i, name in enumerate(module_names)}
    frame["position"] = frame.module.map(position)  # x axis of Figs. 2, B.4, B.6
    frame["kind"] = frame.module.map(module_kind)
    frame["layer"] = frame.module.map(module_index)  # ℓ of norm-ℓ: x axis of Figs. 3, B.7
    frame = frame.sort_values(["run", "epoch", "stage", "batch", "position"], ignore_index=True)
    columns = ["run", "epoch", "stage", "batch", "module", "position", "kind", "layer", "iso_gap", "loss",
               "accuracy", "epoch_train_loss"]
    return frame[columns]


def _stages(cfg: Config, data_root: str, dataset: str, target: torch.device) -> Stages:
    stages: Stages = {}
    for stage in cfg["stages"]:
        split = load_split(dataset, data_root, stage, transform=cfg["transform"], flatten=True, device=target)
        stages[stage] = (split.x, split.y)
    return stages


def _factors(cfg: Config, activation: str, hidden_sizes: Sequence[int], dataset: str) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "activation": activation,
        "beta": beta(activation, cfg["beta_method"]),
        "hidden_sizes": str(list(hidden_sizes)),
        "batch_size": int(cfg["batch_size"]),
        "reduce_mean": bool(cfg["reduce_mean"]),
        "act_on_logits": bool(cfg["act_on_logits"]),
    }


def measure_at_init(cfg: Config, stages: Stages, activation: str, hidden_sizes: Sequence[int], variant: str,
                    target: torch.device) -> pd.DataFrame:
    """Rows of ``cfg['runs']`` freshly initialised networks (epoch 0), one run at a time to bound memory
    (a width-5000 network of Fig. 3 holds 265 M parameters)."""
    x_train = next(iter(stages.values()))[0]
    num_classes = int(cfg["num_classes"])
    rows = []
    names: list[str] = []
    for run in sampled(range(int(cfg["runs"]))):  # every run but under a step cap (docs/cost.md)
        model = LayerNormMLP(x_train.shape[1], hidden_sizes, num_classes, activation, bool(cfg["act_on_logits"]),
                             generator=generator(SLUG, variant, run))
        names = model.module_names
        stacked = StackedModels([model], target)
        del model
        stacked.eval()
        with torch.no_grad():
            values = ModuleMeasure(stages, cfg, names, [run], variant)(stacked, 0)
        rows.append({"run": run, "epoch": 0, "train_loss": float("nan"),
                     **{key: float(value[0]) for key, value in values.items()}})
        del stacked
    return tidy_history(pd.DataFrame(rows), names)


def _at_init_config(cfg: Config, dataset: str) -> dict[str, Any]:
    return {**cfg, "num_classes": dataset_spec(dataset).num_classes}


def fig3(cfg: Config, *, data_root: str, dataset: str, device: str) -> pd.DataFrame:
    """joudaki2023-fig3: every module's gap of ``runs`` fresh networks per activation (hidden
    [width]×hidden_layers)."""
    _check_common(cfg, "fig3")
    target = resolve_device(device)
    run_cfg = _at_init_config(cfg, dataset)
    stages = _stages(cfg, data_root, dataset, target)
    hidden = [int(cfg["width"])] * int(cfg["hidden_layers"])
    frames = [
        measure_at_init(run_cfg, stages, activation, hidden, f"fig3-{dataset}-{activation}", target).assign(
            **_factors(cfg, activation, hidden, dataset))
        for activation in cfg["activations"]
    ]
    return pd.concat(frames, ignore_index=True)


def figb4(cfg: Config, *, data_root: str, dataset: str, device: str) -> pd.DataFrame:
    """joudaki2023-figb4: every module's gap of fresh networks for each width profile (``width_profiles``: name →
    sizes)."""
    _check_common(cfg, "figb4")
    target = resolve_device(device)
    run_cfg = _at_init_config(cfg, dataset)
    stages = _stages(cfg, data_root, dataset, target)
    frames = []
    for profile, hidden in cfg["width_profiles"].items():
        hidden = [int(h) for h in hidden]
        frame = measure_at_init(run_cfg, stages, cfg["activation"], hidden, f"figb4-{dataset}-{profile}", target)
        frames.append(frame.assign(profile=profile, **_factors(cfg, cfg["activation"], hidden, dataset)))
    return pd.concat(frames, ignore_index=True)


def train_run_set(cfg: Config, *, item: str, activation: str, data_root: str, dataset: str, device: str,
                  checkpoint: str | None) -> pd.DataFrame:
    """joudaki2023-fig2, joudaki2023-figb6 (``item="fig2_runs"``) and joudaki2023-fig7, joudaki2023-figb7
    (``item="fig7_runs"``): all runs of one activation.

    Epochs 0..num_epochs−1 as in the original loop: epoch 0 measures the fresh networks, each later epoch
    first trains one full epoch (plain SGD, ``lr``; batch order seeded per (item, activation, run, epoch)).
    ``item`` names the seed namespace, so the two run sets draw independent networks.
    """
    _check_common(cfg, item)
    if int(cfg["num_epochs"]) < 1:
        raise ValueError(f"joudaki2023 {item}: num_epochs counts epoch 0 (init) and must be ≥ 1")
    if "train" not in cfg["stages"]:
        raise ValueError(f"joudaki2023 {item}: stages must include 'train' (the training split)")
    target = resolve_device(device)
    stages = _stages(cfg, data_root, dataset, target)
    x, y = stages["train"]
    hidden = [int(cfg["width"])] * int(cfg["hidden_layers"])
    variant = f"{item}-{dataset}-{activation}"
    run_ids = list(range(int(cfg["runs"])))
    num_classes = dataset_spec(dataset).num_classes
    models = [
        LayerNormMLP(x.shape[1], hidden, num_classes, activation, bool(cfg["act_on_logits"]),
                     generator=generator(SLUG, variant, run))
        for run in run_ids
    ]
    names = models[0].module_names
    config = TrainConfig(
        experiment=SLUG, variant=variant, epochs=int(cfg["num_epochs"]) - 1, batch_size=int(cfg["batch_size"]),
        optimizer=OptimizerConfig(name="sgd", lr=float(cfg["lr"])), measure_at_init=True,
        checkpoint_path=checkpoint, checkpoint_every=int(cfg["checkpoint_every"]), device=target,
    )
    measure = ModuleMeasure(stages, cfg, names, run_ids, variant)
    history = train_stacked(models, x, y, config, measure=measure, run_ids=run_ids).history
    return tidy_history(history, names).assign(lr=float(cfg["lr"]), **_factors(cfg, activation, hidden, dataset))


def _run_set(runs: str) -> dict[str, Results]:
    """A trained run set's files: one job per activation, one rule for both sets."""
    return {runs: Results("{runs}/{activation}.parquet", runs=(runs,), activation=f"{runs}.activations")}


# The items these functions compute, each once (isonorm.items): its title as its section in
# docs/decisions/joudaki2023.md heads it, its job, the results it reads (their files) and its claims.
# Trained run sets (each feeds two items) and fresh networks.
ITEMS = (
    Item("joudaki2023-fig2", "LayerNorm never decreases isometry (tanh, at init and after training)", "training",
         train_run_set, _run_set("fig2_runs"), image_mlp_summaries.claims),
    Item("joudaki2023-figb6", "Isometry through the modules for many activations", "training", train_run_set,
         _run_set("fig2_runs"), image_mlp_summaries.claims),  # the Fig. 2 runs, more activations
    Item("joudaki2023-fig3", "Theorem 4 on CIFAR10 at initialisation (n = 100, d = 5000)", "at_init", fig3,
         {"fig3": Results("fig3/{dataset}.parquet", settings={"dataset": "fig3.dataset"})},
         image_mlp_summaries.claims),
    Item("joudaki2023-figb4", "Variable-width MLPs at initialisation (ReLU; MNIST and CIFAR10)", "at_init", figb4,
         {"figb4": Results("figb4/{dataset}.parquet", dataset="figb4.datasets")}, image_mlp_summaries.claims),
    Item("joudaki2023-fig7", "β_σ and the speed of SGD training", "training", train_run_set, _run_set("fig7_runs"),
         image_mlp_summaries.claims),
    Item("joudaki2023-figb7", "The isometry gap changes little during training", "training", train_run_set,
         _run_set("fig7_runs"), image_mlp_summaries.claims),  # the Fig. 7 runs
)
