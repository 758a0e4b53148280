"""The training grid of Meterez et al. 2024: Figs. 4, 6, F1, F2, G1–G4 (meterez2024-fig4, C.0 "Training script").

One job trains every activation of one depth and one data set — or one *group* of data sets, say
``cifar10+cifar100`` (config ``stacks``, :mod:`.grid_jobs`) — as ONE natively stacked computation
(:class:`StackedBNMLP` with per-run activations, class counts and input widths, :class:`StackedSGDStep` with
per-run data): a width-100 step is launch-bound on a GPU, so six runs cost what three do and grouping data
sets halves the grid's cost. Data sets of unequal size or input width share a group too (``mnist+cifar10``,
:func:`group_split`): the smaller are zero-padded, a run's padding columns of fc_0 stay zero, and a run sits out
the steps after its own epoch (:class:`isonorm.train.EpochPlan`), so each run trains as it would alone. Torch BN
with bias, the config's init, gain exponent, width, batch size and plain SGD learning rate
(`meterez2024: training:`; decisions C3, C4). Per epoch, as run.py:
the running train loss/accuracy (train mode), a full test pass in eval mode (BN running statistics), then
``get_measurements`` on the fixed measurement batch — one forward+backward in train mode, which also updates
the BN running statistics (C15 faithful; ``measure_on_copy`` measures a deep copy instead). Epoch 0 is
evaluated on train and test in eval mode. A run whose epoch loss is non-finite stops there (the original
exits on NaN): its later rows are absent and a ``stopped`` row records the epoch.

The epoch loop, resume, NaN stops and epoch caps are the training engine's
(:func:`isonorm.train.train_epochs`); this module builds the stack (:func:`grid_training`), supplies the
evaluation and measurement (:class:`GridMeasure`) and turns the engine's history into the long frame
(:func:`long_frame`). Run r depends only on (data set, depth, activation): its init and batch orders are
seeded from those, so stacked runs give the numbers of separate trainings (tests/test_meterez2024_training.py).
With ``epoch_caps`` (budget preset) a group trains to its members' largest cap and records each run up to
its own.

Output: one tidy long frame, columns ``dataset, depth, activation, epoch, layer, metric, value``; epoch-level
metrics (train_loss, train_acc, test_loss, test_acc, stopped) have ``layer = -1``; per-layer metrics
(weight_isogap for ℓ = 0..L, grad_fro_norm for ℓ = 0..L, fc_isogap/norm_isogap/act_isogap for ℓ = 0..L−1) are
stored at ``measure_epochs`` only (bounds the output size; the figures need epochs 50, 100, 200, 300).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ...cost import sampled
from ...data import dataset_spec, load_split
from ...items import Item, Results
from ...metrics import gram, isometry_gap, weight_isometry_gap
from ...models.bn_mlp import BNMLPConfig, StackedBNMLP
from ...runtime import generator, resolve_device
from ...train import Measure, OptimizerConfig, TrainConfig, TrainResult, train_epochs
from ...train.fast_step import StackedSGDStep
from . import training_summaries
from .grid_jobs import GROUP_SEPARATOR, group_members, training_groups

EXPERIMENT = "meterez2024/training"
EPOCH_METRICS = ("train_loss", "train_acc", "test_loss", "test_acc")
LAYER_METRICS = ("weight_isogap", "fc_isogap", "norm_isogap", "act_isogap", "grad_fro_norm")
COLUMNS = ["dataset", "depth", "activation", "epoch", "layer", "metric", "value"]

Config = Mapping[str, Any]  # config.yaml meterez2024: training: (its keys are required by the config schema)


def epochs_for(cfg: Config, dataset: str, depth: int) -> int:
    """Epochs of the (dataset, depth) job: ``epoch_caps[dataset][depth]`` when given (budget preset, decision
    C5), else ``epochs``."""
    caps = (cfg.get("epoch_caps") or {}).get(dataset) or {}
    for key in (depth, str(depth)):
        if key in caps:
            return int(caps[key])
    return int(cfg["epochs"])


def model_config(cfg: Config, in_features: int, classes: int, depth: int) -> BNMLPConfig:
    """The training architecture of ``cfg`` (`meterez2024: training:`, meterez2024-fig4): torch BN with bias, the
    config's width, init and gain exponent."""
    return BNMLPConfig(
        in_features=in_features, width=int(cfg["width"]), out_features=classes, depth=depth,
        norm=str(cfg["norm"]), init=str(cfg["init"]), gain_exponent=float(cfg["gain_exponent"]),
        bias=bool(cfg["bias"]), activation=str(cfg["activations"][0]),
    )


def run_generator(dataset: str, depth: int, activation: str) -> torch.Generator:
    """A run's init generator: it depends on (data set, depth, activation) only (C13: seeds from the config)."""
    return generator(EXPERIMENT, dataset, depth, activation, "init")


def measurement_index(n: int, batch_size: int, dataset: str) -> torch.Tensor:
    """The fixed measurement batch: the first batch of one seeded shuffle, drawn once (run.py)."""
    return torch.randperm(n, generator=generator(EXPERIMENT, dataset, "measurement"))[:batch_size]


@torch.no_grad()
def evaluate(model: StackedBNMLP, x: torch.Tensor, y: torch.Tensor, batch_size: int,
             run_data: torch.Tensor, sizes: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Eval-mode mean loss and accuracy per run over (x, y) (running-stat BN, so the batching is immaterial):
    ``x`` (K, N, D), ``y`` (K, N) for K data sets, ``run_data`` (R,) naming each run's data set, ``sizes`` (K,)
    each data set's own samples, its first rows (default N: the rest is a group's padding)."""
    was_training = model.training
    model.eval()
    loss = torch.zeros(model.n_runs, dtype=torch.float64, device=x.device)
    correct = torch.zeros(model.n_runs, dtype=torch.float64, device=x.device)
    n = torch.zeros(model.n_runs, dtype=torch.float64, device=x.device)
    own = torch.tensor(sizes if sizes is not None else [x.shape[1]] * x.shape[0], device=x.device)[run_data, None]
    for start in sampled(range(0, x.shape[1], batch_size)):  # every batch but under a step cap (docs/cost.md)
        xb, targets = x[run_data, start:start + batch_size], y[run_data, start:start + batch_size]  # per run
        valid = torch.arange(start, start + targets.shape[1], device=x.device) < own  # (R, b): not padding
        n += valid.sum(dim=1)
        logits = model(xb)  # (R, b, C)
        losses = F.cross_entropy(logits.mT, targets, reduction="none")
        loss += torch.where(valid, losses, 0.0).sum(dim=1).double()
        correct += ((logits.argmax(dim=-1) == targets) & valid).sum(dim=1).double()
    model.train(was_training)
    return (loss / n).cpu().numpy(), (correct / n).cpu().numpy()


def measure(model: StackedBNMLP, x: torch.Tensor, y: torch.Tensor, record: bool) -> dict[str, np.ndarray]:
    """``get_measurements``: one train-mode forward+backward on each run's measurement batch, ``x`` (R, B, D)
    and ``y`` (R, B) (updates BN running statistics, C15). With ``record``,
    returns per metric an (R, L+1) array (NaN where a metric has no value: the output isometry gaps at
    ℓ = L); without, only the side effect happens (no eigenvalues). φ(W_L) is taken on each run's own
    classes (a group pads fc_L)."""
    model.train()
    if not record:
        with torch.no_grad():
            model(x)
        return {}
    logits, trace = model(x, trace=True)
    per_run = F.cross_entropy(logits.mT, y, reduction="none").mean(dim=1)
    weights = model.weights()
    grads = torch.autograd.grad(per_run.sum(), weights)
    depth, runs = model.config.depth, model.n_runs
    out = {name: np.full((runs, depth + 1), np.nan) for name in LAYER_METRICS}
    with torch.no_grad():
        out["grad_fro_norm"] = torch.stack([g.flatten(1).norm(dim=1) for g in grads], dim=1).double().cpu().numpy()
        gaps = [weight_isometry_gap(w.detach()) for w in weights[:-1]]
        gaps.append(torch.stack([weight_isometry_gap(model.run_weight(depth, r).detach()) for r in range(runs)]))
        out["weight_isogap"] = torch.stack(gaps, dim=1).cpu().numpy()
        for kind in ("fc", "norm", "act"):
            gaps = [isometry_gap(gram(h.detach().double())) for h in trace[kind]]  # each (R,)
            out[f"{kind}_isogap"][:, :depth] = torch.stack(gaps, dim=1).cpu().numpy()
    return out


@dataclass
class StackedSplit:
    """One split of a group's data sets, stacked: x (K, N, D) and y (K, N), data set k in the first ``sizes[k]``
    rows and ``dims[k]`` features, zero-padded to the largest (N, D) of the group."""

    x: torch.Tensor
    y: torch.Tensor
    sizes: list[int]
    dims: list[int]


def group_split(members: Sequence[str], data_root: str, split: str, transform: str,
                device: torch.device) -> StackedSplit:
    """One split of every member, stacked (:class:`StackedSplit`): data sets of unequal size or input width
    (MNIST's 60,000 × 784 with CIFAR-10's 50,000 × 3,072) are zero-padded to one shape."""
    loaded = [load_split(name, data_root, split, transform=transform, flatten=True, device=device) for name in members]
    sizes, dims = [part.x.shape[0] for part in loaded], [part.x.shape[1] for part in loaded]
    x = torch.zeros(len(loaded), max(sizes), max(dims), dtype=loaded[0].x.dtype, device=device)
    y = torch.zeros(len(loaded), max(sizes), dtype=loaded[0].y.dtype, device=device)
    for k, part in enumerate(loaded):
        x[k, : sizes[k], : dims[k]], y[k, : sizes[k]] = part.x, part.y
    return StackedSplit(x, y, sizes, dims)


@dataclass
class GridTraining:
    """One job's runs on the training engine: the stacked model and its SGD step on the training stack, the
    engine's config (epoch caps, NaN stops, checkpoints) and the runs' names and batch-order seeds.
    ``train_grid_job`` adds the evaluation and measurement; ``benchmarks/meterez_engine.py`` times
    :meth:`train` as it is."""

    step: StackedSGDStep
    config: TrainConfig
    runs: list[tuple[str, str]]  # (data set, activation) per stacked run, grouped by activation
    depth: int
    run_data: torch.Tensor  # (R,): each run's data set in the stacked splits
    fingerprint: dict
    data: StackedSplit  # the step's x and y, with each data set's own samples and input features

    @property
    def run_ids(self) -> list[str]:
        return [f"{name}/{act}" for name, act in self.runs]

    def train(self, measure: Measure | None = None) -> TrainResult:
        # run.py reshuffles every epoch; each (data set, activation) has its own order (stacked = alone)
        keys = [(EXPERIMENT, f"{name}-d{self.depth}", act) for name, act in self.runs]
        return train_epochs(self.step, self.config, run_ids=self.run_ids, seed_keys=keys, measure=measure,
                            fingerprint=self.fingerprint)


def grid_training(cfg: Config, members: Sequence[str], acts: Sequence[str], depth: int, train_x: torch.Tensor,
                  train_y: torch.Tensor, checkpoint: str | None = None, *, sizes: Sequence[int] | None = None,
                  dims: Sequence[int] | None = None) -> GridTraining:
    """The engine set up for every activation of ``members`` at ``depth``, on the stacked training split
    ``train_x`` (K, N, D), ``train_y`` (K, N); each run is trained to its data set's cap (``epochs_for``).
    ``sizes`` and ``dims`` (K,): each data set's samples and input features when the split pads them
    (:func:`group_split`); its runs then sit out the steps after their own epoch and their fc_0 is padded."""
    runs = [(name, act) for act in acts for name in members]
    sizes = list(sizes) if sizes is not None else [train_x.shape[1]] * len(members)
    dims = list(dims) if dims is not None else [train_x.shape[-1]] * len(members)
    train = StackedSplit(train_x, train_y, sizes, dims)
    caps = tuple(epochs_for(cfg, name, depth) for name, _ in runs)
    device = train_x.device
    config = TrainConfig(
        EXPERIMENT, f"{GROUP_SEPARATOR.join(members)}-d{depth}", epochs=max(caps), batch_size=int(cfg["batch_size"]),
        optimizer=OptimizerConfig("sgd", lr=float(cfg["lr"])), checkpoint_path=checkpoint,
        checkpoint_every=int(cfg["checkpoint_every"]), device=device, run_epochs=caps, stop_non_finite=True,
    )
    classes = [dataset_spec(name).num_classes for name, _ in runs]
    architecture = model_config(cfg, train_x.shape[-1], max(classes), depth)
    generators = [run_generator(name, depth, act) for name, act in runs]
    index = [list(members).index(name) for name, _ in runs]
    model = StackedBNMLP(architecture, generators, activations=[act for _, act in runs], classes=classes,
                         inputs=[dims[k] for k in index]).to(device)
    if cfg["fused_block"]:  # compiled on the step's first call: the warm-up before a CUDA graph's capture
        model.fuse_norm_act()
    run_data = torch.tensor(index, device=device)
    cuda_graph = {"auto": None, True: True, False: False}[cfg["cuda_graph"]]
    step = StackedSGDStep(model, train_x, train_y, len(runs), config.batch_size, config.optimizer.lr,
                          cuda_graph=cuda_graph, run_data=run_data, run_samples=[sizes[k] for k in index])
    fingerprint = {"model": repr(architecture), "measure_on_copy": bool(cfg["measure_on_copy"])}
    if len(set(dims)) > 1:  # the runs' own first layers: a checkpoint of other widths must not continue them
        fingerprint["inputs"] = model.inputs
    return GridTraining(step, config, runs, depth, run_data, fingerprint, train)


@dataclass
class GridMeasure:
    """run.py's per-epoch evaluation, the engine's measure: at epoch 0 the train and test sets in eval mode;
    then the test set in eval mode and ``measure`` on the fixed measurement batch, every epoch (its train-mode
    forward updates the BN running statistics, C15), recorded at ``measure_epochs`` only."""

    train: StackedSplit
    test: StackedSplit
    run_data: torch.Tensor
    batch: tuple[torch.Tensor, torch.Tensor]  # each run's measurement batch, x (R, B, D), y (R, B)
    eval_batch_size: int
    measure_epochs: frozenset[int]
    on_copy: bool

    @classmethod
    def for_job(cls, cfg: Config, job: GridTraining, test: StackedSplit) -> "GridMeasure":
        x, y, rows = job.data.x, job.data.y, job.run_data.view(-1, 1)
        sizes = [job.data.sizes[k] for k in job.run_data.tolist()]
        index = torch.stack([measurement_index(n, job.config.batch_size, name)
                             for n, (name, _) in zip(sizes, job.runs)])
        index = index.to(x.device)
        return cls(job.data, test, job.run_data, (x[rows, index], y[rows, index]),
                   int(cfg["eval_batch_size"]), frozenset(int(e) for e in cfg["measure_epochs"]),
                   bool(cfg["measure_on_copy"]))

    def evaluate(self, model: StackedBNMLP, split: StackedSplit) -> tuple[np.ndarray, np.ndarray]:
        return evaluate(model, split.x, split.y, self.eval_batch_size, self.run_data, split.sizes)

    def __call__(self, model: StackedBNMLP, epoch: int) -> dict[str, np.ndarray]:
        values: dict[str, np.ndarray] = {}
        if epoch == 0:  # nothing trained yet: the training set is evaluated too
            values["train_loss"], values["train_acc"] = self.evaluate(model, self.train)
        values["test_loss"], values["test_acc"] = self.evaluate(model, self.test)
        record = epoch in self.measure_epochs
        # run.py also measures at init (get_measurements after the epoch-0 evaluation, in train mode on the model
        # it then trains, so BN's running statistics take one step before training); here only when epoch 0 is
        # in measure_epochs, and on a copy. That step decays as 0.9^k over epoch 1's k SGD steps and touches
        # only eval-mode values (test loss/accuracy); at the paper's 500+ steps per epoch no reported value moves
        # (decision C15)
        if epoch == 0 and not record:
            return values
        target = copy.deepcopy(model) if epoch == 0 or self.on_copy else model
        values.update(measure(target, *self.batch, record=record))
        return values


def long_frame(result: TrainResult, runs: Sequence[tuple[str, str]], depth: int) -> pd.DataFrame:
    """The engine's history (one row per recorded run and epoch; per-layer metrics as lists) as the tidy long
    frame of the module docstring: per epoch, the ``stopped`` rows, the epoch metrics, the layer metrics."""
    where = {f"{name}/{act}": (name, act) for name, act in runs}
    history = result.history
    by_epoch = {epoch: rows for epoch, rows in history.groupby("epoch", sort=True)}
    records: list[tuple] = []
    for epoch in sorted(set(by_epoch) | set(result.stopped.values())):
        for run, (name, act) in where.items():
            if result.stopped.get(run) == epoch:
                records.append((name, depth, act, epoch, -1, "stopped", float(epoch)))
        rows = by_epoch.get(epoch, history.iloc[:0])
        owners = [where[run] for run in rows.run]
        for metric in EPOCH_METRICS:
            records += [(name, depth, act, epoch, -1, metric, float(value))
                        for (name, act), value in zip(owners, rows[metric])]
        for metric in LAYER_METRICS:
            for (name, act), values in zip(owners, rows.get(metric, ())):
                if isinstance(values, list):
                    records += [(name, depth, act, epoch, layer, metric, float(v)) for layer, v in enumerate(values)]
    frame = pd.DataFrame(records, columns=COLUMNS)
    return frame.astype({"depth": "int64", "epoch": "int64", "layer": "int64", "value": "float64"})


def train_grid_job(
    cfg: Config,
    *,
    data_root: str,
    dataset: str,
    device: str,
    checkpoint: str | None = None,
    depth: int,
    activations: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The training grid of meterez2024-fig4, meterez2024-fig6, meterez2024-figf1, meterez2024-figf2,
    meterez2024-figg1, meterez2024-figg2, meterez2024-figg3 and meterez2024-figg4, one job of it: train all
    ``cfg["activations"]`` (or ``activations``) of ``dataset`` — one data set or a group ``"a+b"`` — at ``depth``,
    stacked; tidy frame as the module docstring says. ``checkpoint``: resumable
    checkpoint file (every ``checkpoint_every`` epochs; C.0 "Training script": saved every 10 epochs)."""
    members = group_members(dataset)
    acts = list(activations if activations is not None else cfg["activations"])
    target = resolve_device(device)
    train = group_split(members, data_root, "train", cfg["transform"], target)
    test = group_split(members, data_root, "test", cfg["transform"], target)
    job = grid_training(cfg, members, acts, depth, train.x, train.y, checkpoint, sizes=train.sizes, dims=train.dims)
    result = job.train(GridMeasure.for_job(cfg, job, test))
    return long_frame(result, job.runs, depth)


__all__ = ["train_grid_job", "grid_training", "GridTraining", "GridMeasure", "StackedSplit", "group_split",
           "long_frame", "group_members",
           "evaluate", "measure", "epochs_for", "model_config", "EPOCH_METRICS", "LAYER_METRICS"]


# The items of the grid, each once (isonorm.items): its title as its section in docs/decisions/meterez2024.md heads
# it; all read the one result key that the grid's jobs split by data set and depth: one job per group of data sets
# (cifar10+cifar100, mnist+fashionmnist, ...: grid_jobs.training_groups) and depth. The config key `stacks` and the
# wildcard `stack` keep their older name (config files set the key; cost tables name jobs by the wildcard), each of
# their entries a group.
_GRID = dict(kind="training", computed_by=train_grid_job, claims=training_summaries.claims, results={
    "training": Results("training/{stack}-d{depth}.parquet", stack=lambda section: training_groups(section["training"]),
                        depth="training.depths")})
ITEMS = (
    Item("meterez2024-fig4", "Training accuracy on CIFAR10 at depths 100, 500, 1000", **_GRID),
    Item("meterez2024-fig6", "Implicit orthogonality bias of SGD (depth 1000, tanh)", **_GRID),
    Item("meterez2024-figf1", "Weight isometry gap during training (depths 100, 500, 1000)", **_GRID),
    Item("meterez2024-figf2", "Gradient norms during training", **_GRID),
    Item("meterez2024-figg1", "Train and test accuracy on MNIST", **_GRID),
    Item("meterez2024-figg2", "Train and test accuracy on FashionMNIST", **_GRID),
    Item("meterez2024-figg3", "Train and test accuracy on CIFAR100", **_GRID),
    Item("meterez2024-figg4", "Test accuracy on CIFAR10", **_GRID),
)
