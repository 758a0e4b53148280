"""Lu et al. 2024, the trained networks: Tables 1–4, App. Tables 2–4, the weights behind Fig. 2, Fig. 1 at init.

A.1.3, A.1.4, the items lu2024-fig1–lu2024-apptable4 and decisions A1–A9, A14–A16. One job trains every seed of one
configuration (item × model variant × activation × optimizer) with the shared engine
(:func:`isonorm.train.train_stacked`; seeds from the config list ``seeds``, default [42], as in the code's
``seed_torch(42)``; each seed's network is drawn from the global RNG seeded with that seed, like the
original's default init). After every epoch (epoch 0 = the fresh network) a row set records, per run:

- ``pii``: PII of every layer in ``pii_layers``, both orientations (decision A1: tables read ``columns``;
  ``rows`` stored too); conv layers by their 3×3 centre tap (A.1.1);
- ``test_accuracy`` (%): on the whole test split, batches of ``test_batch_size``; FNN items evaluate in train
  mode when ``test_train_mode`` (decision A6, MLP.py has no ``eval()``: BN uses each test batch's statistics);
- ``train_accuracy`` (%): with ``train_accuracy: true``, every epoch (NaN at epoch 0), the running train-mode
  accuracy over that epoch's augmented mini-batches, counted from the logits of the training steps themselves
  (the engine's ``train_acc``), as ``ResNet-CIFAR10.py`` logs it; Table 4 compares the last epoch's (decision A7);
- ``train_accuracy_eval`` (%): with ``train_accuracy: true``, after the last epoch only (NaN before), over the
  un-augmented training split in eval mode: decision A7's alternative reading of Table 4;
- ``train_loss``: the engine's mean mini-batch loss of the epoch (NaN at epoch 0).

Output: one row per (seed, epoch, metric, layer, orientation) with the job's factors. The FNN jobs may also
write the weights of ``save_weights`` layers at init and after training (:func:`weights_frame`) for the heat
maps of Fig. 2, which :mod:`.trained_summaries` turns into cosine-similarity and Gram matrices. Fig. 1 needs
no data: :func:`fig1` draws the fresh network alone, as the training jobs draw it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import torch
from torch import nn

from ...cost import sampled
from ...data import dataset_spec, load_split, resolve_normalization
from ...data.augment import crop_flip_augment, padding_fill
from ...items import Item, Results
from ...metrics import conv_centre_tap, pii
from ...models.lu_fnn import LuFNN, constant_init
from ...models.resnet18 import ResNet18
from ...models.simple_cnn import SimpleCNN
from ...results import write_results
from ...verdicts.comparison import FITTED_RUN
from ...runtime import resolve_device
from ...train import OptimizerConfig, StackedModels, TrainConfig, predict, train_stacked
from . import trained_summaries

SLUG = "lu2024"
Config = Mapping[str, Any]
ORIENTATIONS = ("columns", "rows")


# A run labelled ``<optimizer>-fitted`` (FITTED_RUN) is its item's fitted reading (decision A3): the optimizer's
# settings with the item's ``fitted: <optimizer>:`` overrides, rates chosen from a sweep to come near the paper's.
def optimizer_settings(cfg: Config, run: str, where: str) -> tuple[str, dict[str, Any]]:
    """(torch optimizer name, hyper-parameters) of the run labelled ``run``: ``cfg['optimizers'][run]``, or for
    ``<optimizer>-fitted`` that entry updated with ``cfg['fitted'][<optimizer>]``."""
    name = run.removesuffix(FITTED_RUN)
    settings = cfg["optimizers"].get(name)
    if settings is None:
        raise ValueError(f"lu2024 {where}: optimizer {name!r} has no entry under optimizers "
                         f"(known: {sorted(cfg['optimizers'])}); add its lr (and momentum/weight_decay)")
    if run.endswith(FITTED_RUN):
        fitted = (cfg.get("fitted") or {}).get(name)
        if fitted is None:
            raise ValueError(f"lu2024 {where}: run {run!r} is a fitted reading, but the item has no `fitted: {name}:` "
                             f"entry (its fitted settings, decision A3); add one or drop the run from `runs`")
        settings = {**settings, **fitted}
    return name, dict(settings)


def check_fitted_runs(section: Config, where: str) -> None:
    """When the config is read: every ``<optimizer>-fitted`` run of an item's ``runs`` has its ``fitted`` entry."""
    fitted = section.get("fitted") or {}
    for run in section["runs"]:
        name = run.removesuffix(FITTED_RUN).rpartition("-")[2]  # Table 3's runs are <activation>-<optimizer>
        if run.endswith(FITTED_RUN) and name not in fitted:
            raise ValueError(f"config `{where}: runs` lists {run!r}, a fitted reading, but `{where}: fitted` has no "
                             f"`{name}:` entry with its settings (decision A3); add one, e.g. `fitted: {{{name}: "
                             f"{{lr: 0.01}}}}`, or drop the run")


# Keys of an item's section that only its claims and notebook read: a job's settings leave them out, and keep of
# `optimizers` and `fitted` only its own run's entry, so that adding a run to `runs` (a fitted reading, another
# optimizer) or changing a compared layer reruns no job that exists (Snakemake reruns a job whose params change).
ITEM_ONLY = ("runs", "fitted", "compared_layers", "headline_layer", "variants")


def job_settings(settings: Config, run: str) -> dict[str, Any]:
    """What the job of the run labelled ``run`` reads of its item's ``settings`` (``ITEM_ONLY`` left out)."""
    name = run.removesuffix(FITTED_RUN)
    job = {key: value for key, value in settings.items() if key not in ITEM_ONLY}
    job["optimizers"] = {name: settings["optimizers"][name]} if name in settings["optimizers"] else {}
    if run.endswith(FITTED_RUN) and name in (settings.get("fitted") or {}):
        job["fitted"] = {name: settings["fitted"][name]}
    return job


def optimizer_config(cfg: Config, run: str, where: str) -> OptimizerConfig:
    """The optimizer of the run labelled ``run`` with its hyper-parameters (:func:`optimizer_settings`)."""
    name, settings = optimizer_settings(cfg, run, where)
    return OptimizerConfig(name=name, **settings)


def seeded_model(factory: Callable[[], nn.Module], seed: int) -> nn.Module:
    """``factory()`` with the global RNG seeded by ``seed`` (the original's ``seed_torch``), state restored."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return factory()


def layer_matrix(params: Mapping[str, torch.Tensor], layer: str, stacked: bool = True) -> torch.Tensor:
    """Parameter matrix of ``layer``, (R, out, in) from stacked params or (out, in) from a module's: a Linear
    weight, or a conv's 3×3 centre tap (A.1.1)."""
    name = f"{layer}.weight"
    if name not in params:
        known = sorted(n[: -len(".weight")] for n, t in params.items() if n.endswith(".weight") and t.ndim >= 3)
        raise ValueError(f"no layer {layer!r} with a weight matrix; choose from {known}")
    weight = params[name]
    return conv_centre_tap(weight) if weight.ndim == 4 + int(stacked) else weight


class TrainedNetMeasure:
    """The engine's ``measure``: PII of ``layers`` (both orientations), test accuracy and (last epoch) the
    eval-mode accuracy on the un-augmented training split (``train_accuracy_eval``)."""

    def __init__(self, layers: Sequence[str], test: tuple[torch.Tensor, torch.Tensor], test_batch_size: int,
                 test_train_mode: bool, train: tuple[torch.Tensor, torch.Tensor] | None, last_epoch: int) -> None:
        self.layers, self.test, self.test_batch_size = list(layers), test, test_batch_size
        self.test_train_mode, self.train, self.last_epoch = test_train_mode, train, last_epoch

    @staticmethod
    def _accuracy(stacked: StackedModels, data: tuple[torch.Tensor, torch.Tensor], batch_size: int,
                  train_mode: bool) -> torch.Tensor:
        x, y = data
        correct, seen = torch.zeros(stacked.n_runs, dtype=torch.float64, device=stacked.device), 0
        for start in sampled(range(0, x.shape[0], batch_size)):  # every batch but under a step cap (docs/cost.md)
            logits = predict(stacked, x[start : start + batch_size], batch_size, train_mode=train_mode)  # (R, b, k)
            labels = y[start : start + batch_size].to(logits.device)
            correct += (logits.argmax(dim=-1) == labels).double().sum(dim=1)
            seen += labels.shape[0]
        return 100.0 * correct / seen

    def __call__(self, stacked: StackedModels, epoch: int) -> dict[str, torch.Tensor]:
        values: dict[str, torch.Tensor] = {}
        for layer in self.layers:
            matrix = layer_matrix(stacked.params, layer).double()  # float64 (architecture §6)
            for orientation in ORIENTATIONS:
                values[f"pii/{layer}/{orientation}"] = pii(matrix, orientation)
        values["test_accuracy"] = self._accuracy(stacked, self.test, self.test_batch_size, self.test_train_mode)
        if self.train is not None:
            if epoch == self.last_epoch:
                values["train_accuracy_eval"] = self._accuracy(stacked, self.train, self.test_batch_size, False)
            else:
                values["train_accuracy_eval"] = torch.full((stacked.n_runs,), float("nan"), dtype=torch.float64)
        return values


def running_accuracy_percent(history: pd.DataFrame) -> pd.DataFrame:
    """The engine's running ``train_acc`` (a fraction) as ``train_accuracy`` in %, the unit of the tables."""
    if "train_acc" not in history:
        return history
    return history.assign(train_acc=100.0 * history["train_acc"]).rename(columns={"train_acc": "train_accuracy"})


def tidy_history(history: pd.DataFrame) -> pd.DataFrame:
    """Engine history (run, epoch, train_loss, "pii/<layer>/<orientation>", accuracies) → long rows."""
    long = history.melt(id_vars=["run", "epoch"], var_name="key", value_name="value")
    parts = long.pop("key").str.split("/", n=2, expand=True).reindex(columns=[0, 1, 2])
    long["metric"], long["layer"], long["orientation"] = parts[0], parts[1], parts[2]
    long = long.rename(columns={"run": "seed"})
    long["seed"] = long["seed"].astype(int)
    return long[["seed", "epoch", "metric", "layer", "orientation", "value"]].sort_values(
        ["seed", "epoch", "metric", "layer", "orientation"], ignore_index=True, na_position="first")


def weights_frame(weights: Mapping[tuple[int, int, str], torch.Tensor]) -> pd.DataFrame:
    """{(seed, epoch, layer): W (out, in)} → one row per matrix row: seed, epoch, layer, row, weight (list)."""
    rows = [
        {"seed": seed, "epoch": epoch, "layer": layer, "row": i, "weight": w.tolist()}
        for (seed, epoch, layer), matrix in weights.items()
        for i, w in enumerate(matrix.detach().float().cpu())
    ]
    return pd.DataFrame(rows, columns=["seed", "epoch", "layer", "row", "weight"])


def _split(cfg: Config, data_root: str, dataset: str, split: str, flatten: bool, target: torch.device):
    limit = cfg.get(f"{split}_limit")  # quick preset: a few hundred samples; null = the whole split
    return load_split(dataset, data_root, split, transform=cfg["transform"], flatten=flatten, device=target,
                      limit=None if limit is None else int(limit))


def _run(cfg: Config, where: str, item: str, factory: Callable[[], nn.Module], optimizer: str, job: str, *,
         data_root: str, dataset: str, device: str, checkpoint: str | None, flatten: bool,
         test_train_mode: bool = False, augment: bool = False, constant: Mapping[str, Any] | None = None,
         train_accuracy: bool = False, save_weights: Sequence[str] = (), weights_path: str | None = None,
         ) -> pd.DataFrame:
    """Train every seed of one configuration and return its tidy measurements (see the module docstring)."""
    seeds = [int(s) for s in cfg["seeds"]]
    if not seeds:
        raise ValueError(f"lu2024 {where}: seeds must list at least one seed (the paper's is [42])")
    target = resolve_device(device)
    train = _split(cfg, data_root, dataset, "train", flatten, target)
    test = _split(cfg, data_root, dataset, "test", flatten, target)
    models = []
    for seed in seeds:
        model = seeded_model(factory, seed)
        if constant:
            constant_init(model, str(constant["layer"]), float(constant["value"]))
        models.append(model)
    initial = {(seed, 0, layer): layer_matrix(dict(m.named_parameters()), layer, stacked=False).detach().clone()
               for seed, m in zip(seeds, models) for layer in save_weights}
    hook = None
    if augment:
        fill = padding_fill(resolve_normalization(cfg["transform"], dataset))
        hook = crop_flip_augment(fill=fill, padding=int(cfg["crop_padding"]))
    epochs = int(cfg["epochs"])
    config = TrainConfig(
        experiment=SLUG, variant=f"{item}-{dataset}-{job}", epochs=epochs, batch_size=int(cfg["batch_size"]),
        optimizer=optimizer_config(cfg, optimizer, where), measure_at_init=True, checkpoint_path=checkpoint,
        checkpoint_every=int(cfg["checkpoint_every"]), device=target,
    )
    measure = TrainedNetMeasure(cfg["pii_layers"], (test.x, test.y), int(cfg["test_batch_size"]), test_train_mode,
                                (train.x, train.y) if train_accuracy else None, epochs)
    result = train_stacked(models, train.x, train.y, config, measure=measure, run_ids=seeds, augment=hook,
                           running_accuracy=train_accuracy)
    if weights_path is not None:
        final = {(seed, epochs, layer): layer_matrix(result.models.params, layer)[r]
                 for r, seed in enumerate(seeds) for layer in save_weights}
        write_results(weights_frame({**initial, **final}), weights_path,
                      config={"item": item, "job": job, "layers": list(save_weights)}, device=target)
    settings = config.optimizer
    return tidy_history(running_accuracy_percent(result.history)).assign(
        item=item, dataset=dataset, optimizer=optimizer, lr=settings.lr, momentum=settings.momentum,
        weight_decay=float("nan") if settings.weight_decay is None else settings.weight_decay,
        epochs=epochs, batch_size=int(cfg["batch_size"]))


def fnn_factory(cfg: Config, variant: str, activation: str, dataset: str) -> Callable[[], nn.Module]:
    """Model (F) for ``dataset``'s image size and class count (metadata only: nothing is read)."""
    spec = dataset_spec(dataset)
    in_features = 1
    for size in spec.image_shape:
        in_features *= size

    def factory() -> nn.Module:
        return LuFNN(variant, activation, in_features, int(cfg["width"]), int(cfg["blocks"]), spec.num_classes,
                     bool(cfg["shared_norm"]))
    return factory


def fnn(cfg: Config, *, item: str, optimizer: str, variant: str | None = None, activation: str | None = None,
        data_root: str, dataset: str, device: str, checkpoint: str | None = None,
        weights_path: str | None = None) -> pd.DataFrame:
    """lu2024-table1 (per optimizer), lu2024-table3 (variant × activation × optimizer), lu2024-fig2 (the weights
    the Table-3 jobs save), lu2024-apptable4 (per variant): model (F) on MNIST.

    ``variant``/``activation`` default to the config's (Table 1: norm_res, GELU). With ``weights_path`` the
    weights of ``cfg['save_weights']`` at init and after training are written there (Fig. 2).
    """
    variant = variant or cfg.get("variant")
    activation = activation or cfg.get("activation")
    if variant is None or activation is None:
        raise ValueError(f"lu2024 {item}: give variant and activation (job keywords or config keys)")
    frame = _run(cfg, item, item, fnn_factory(cfg, variant, activation, dataset), optimizer,
                 f"{variant}-{activation}-{optimizer}", data_root=data_root,
                 dataset=dataset, device=device, checkpoint=checkpoint, flatten=True,
                 test_train_mode=bool(cfg["test_train_mode"]), constant=cfg["constant_init"],
                 save_weights=list(cfg.get("save_weights") or []) if weights_path else [],
                 weights_path=weights_path)
    return frame.assign(model="fnn", variant=variant, activation=activation, shared_norm=bool(cfg["shared_norm"]),
                        test_train_mode=bool(cfg["test_train_mode"]), width=int(cfg["width"]))


def fig1(cfg: Config) -> pd.DataFrame:
    """lu2024-fig1: the weight of ``cfg['layer']`` of a freshly initialised model (F), one matrix per seed.

    No data and no training: the network is drawn exactly as a training job of the same variant and activation
    draws it (:func:`seeded_model` on :func:`fnn_factory`; ``dataset`` only sets the input and output sizes), so
    these are the epoch-0 weights of that job (a test checks it). Rows as :func:`weights_frame` writes them.
    """
    factory = fnn_factory(cfg, str(cfg["variant"]), str(cfg["activation"]), str(cfg["dataset"]))
    layer = str(cfg["layer"])
    weights = {(int(seed), 0, layer): layer_matrix(dict(seeded_model(factory, seed).named_parameters()), layer,
                                                    stacked=False)
               for seed in cfg["seeds"]}
    return weights_frame(weights).assign(variant=cfg["variant"], activation=cfg["activation"],
                                         width=int(cfg["width"]), dataset=cfg["dataset"])


def simple_cnn(cfg: Config, *, item: str, optimizer: str, data_root: str, dataset: str, device: str,
               checkpoint: str | None = None) -> pd.DataFrame:
    """lu2024-table2, lu2024-apptable2: model (C) on CIFAR-10 (Table 2) or CIFAR-100 (App. Table 2), one
    optimizer, with augmentation."""
    num_classes = dataset_spec(dataset).num_classes
    frame = _run(cfg, item, item, lambda: SimpleCNN(num_classes, int(cfg["width"]), int(cfg["fc_width"])),
                 optimizer, optimizer, data_root=data_root, dataset=dataset, device=device, checkpoint=checkpoint,
                 flatten=False, augment=bool(cfg["augment"]), constant=cfg["constant_init"])
    return frame.assign(model="simple_cnn", variant="norm", activation="relu", width=int(cfg["width"]))


def resnet18(cfg: Config, *, item: str, variant: str, optimizer: str, data_root: str, dataset: str, device: str,
             checkpoint: str | None = None) -> pd.DataFrame:
    """lu2024-table4, lu2024-apptable3: model (R) on CIFAR-10 (Table 4) or CIFAR-100 (App. Table 3), one
    variant × optimizer."""
    num_classes = dataset_spec(dataset).num_classes
    activation = cfg["activation"]
    frame = _run(cfg, item, item, lambda: ResNet18(variant, activation, num_classes, int(cfg["width"])), optimizer,
                 f"{variant}-{optimizer}", data_root=data_root, dataset=dataset, device=device,
                 checkpoint=checkpoint, flatten=False, augment=bool(cfg["augment"]),
                 train_accuracy=bool(cfg["train_accuracy"]))
    return frame.assign(model="resnet18", variant=variant, activation=activation, width=int(cfg["width"]))


def _optimizer_runs(item: str) -> Results:
    """The files of a SimpleCNN item, one job per optimizer run (its config's ``runs``); one rule for all."""
    return Results("{item}/{optimizer}.parquet", item=(item,), optimizer=f"{item}.runs")


def _resnet18_runs(item: str) -> Results:
    """The files of a ResNet-18 item, one job per variant and optimizer run; one rule for all."""
    return Results("{item}/{variant}-{optimizer}.parquet", item=(item,), variant="resnet18.variants",
                   optimizer=f"{item}.runs")


# The Table-3 jobs, one per variant and run (an "<activation>-<optimizer>" of the config's `runs`).
_TABLE3_RUNS = {"variant": "table3.variants", "activation-optimizer": "table3.runs"}

# The items these functions compute, each once (isonorm.items): its title as its section in
# docs/decisions/lu2024.md heads it, its job, the results it reads (their files) and its claims.
ITEMS = (
    Item("lu2024-fig1", "Cosine-similarity and Gram matrix at initialisation", "simulation", fig1,
         {"fig1": Results("fig1/init_weights.parquet")}, trained_summaries.claims),
    Item("lu2024-table1", "Optimisers' \"conformal capability\" in FNNs (MNIST)", "training", fnn,
         {"table1": Results("table1/{optimizer}.parquet", optimizer="table1.runs")}, trained_summaries.claims),
    Item("lu2024-table2", "Optimisers' \"conformal capability\" in CNNs (CIFAR-10)", "training", simple_cnn,
         {"table2": _optimizer_runs("table2")}, trained_summaries.claims),
    # drawn from the weights the Table-3 jobs save; nothing measured
    Item("lu2024-fig2", "Cosine-similarity and Gram matrices with and without norm + residual (FNN)", "training",
         fnn, {"table3_weights": Results("table3_weights/{variant}-{activation}-{optimizer}.parquet", _TABLE3_RUNS)}),
    Item("lu2024-table3", "Norm + residual vs Original in FNNs (MNIST)", "training", fnn,
         {"table3": Results("table3/{variant}-{activation}-{optimizer}.parquet", _TABLE3_RUNS)},
         trained_summaries.claims),
    Item("lu2024-table4", "Norm + residual vs Original in CNNs (CIFAR-10, ResNet-18)", "training", resnet18,
         {"table4": _resnet18_runs("table4")}, trained_summaries.claims),
    Item("lu2024-apptable2", "Optimisers on CIFAR-100 (SimpleCNN)", "training", simple_cnn,
         {"apptable2": _optimizer_runs("apptable2")}, trained_summaries.claims),
    Item("lu2024-apptable3", "Norm + residual vs Original, ResNet-18 on CIFAR-100", "training", resnet18,
         {"apptable3": _resnet18_runs("apptable3")}, trained_summaries.claims),
    Item("lu2024-apptable4", "Normalisation only, residual only", "training", fnn,
         {"apptable4": Results("apptable4/{variant}.parquet", variant="apptable4.variants")},
         trained_summaries.claims),
)
