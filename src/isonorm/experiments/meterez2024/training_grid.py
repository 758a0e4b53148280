"""The training grid of Meterez et al. 2024: Figs. 4, 6, F1, F2, G1–G4 (spec C-Fig4, C.0 "Training script").

One job trains every activation of one depth and one data set — or one *stack* of data sets of equal
train/test size and input shape, say ``cifar10+cifar100`` (config ``stacks``) — as ONE natively stacked
computation (:class:`StackedBNMLP` with per-run activations and class counts, :class:`StackedSGDStep` with
per-run data): a width-100 step is launch-bound on a GPU, so six runs cost what three do and stacking data
sets halves the grid's cost. Torch BN with bias, orthogonal init, gain exponent 0.4, width 100, batch 100,
plain SGD lr 0.001 (decisions C3, C4). Per epoch, as run.py:
the running train loss/accuracy (train mode), a full test pass in eval mode (BN running statistics), then
``get_measurements`` on the fixed measurement batch — one forward+backward in train mode, which also updates
the BN running statistics (C15 faithful; ``measure_on_copy`` measures a deep copy instead). Epoch 0 is
evaluated on train and test in eval mode. A run whose epoch loss is non-finite stops there (the original
exits on NaN): its later rows are absent and a ``stopped`` row records the epoch.

Run r depends only on (data set, depth, activation): its init and batch orders are seeded from those, so a
stack gives the numbers of separate trainings (tests/test_meterez2024_training.py). With ``epoch_caps``
(budget preset) a stack trains to its members' largest cap and records each run up to its own.

Output: one tidy long frame, columns ``dataset, depth, activation, epoch, layer, metric, value``; epoch-level
metrics (train_loss, train_acc, test_loss, test_acc, stopped) have ``layer = -1``; per-layer metrics
(weight_isogap for ℓ = 0..L, grad_fro_norm for ℓ = 0..L, fc_isogap/norm_isogap/act_isogap for ℓ = 0..L−1) are
stored at ``measure_epochs`` only (bounds the output size; the figures need epochs 50, 100, 200, 300).
"""

from __future__ import annotations

import copy
import logging
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ...data import dataset_spec, load_split
from ...metrics import gram, isometry_gap, weight_isometry_gap
from ...models.bn_mlp import BNMLPConfig, StackedBNMLP
from ...runtime import generator, resolve_device
from ...train.batches import epoch_permutations
from ...train.checkpoint import load_checkpoint, save_checkpoint
from ...train.fast_step import StackedSGDStep

log = logging.getLogger(__name__)

EXPERIMENT = "meterez2024/training"
EPOCH_METRICS = ("train_loss", "train_acc", "test_loss", "test_acc")
LAYER_METRICS = ("weight_isogap", "fc_isogap", "norm_isogap", "act_isogap", "grad_fro_norm")
STACK_SEPARATOR = "+"  # job names of stacked data sets, e.g. cifar10+cifar100 (rules/common.smk)
COLUMNS = ["dataset", "depth", "activation", "epoch", "layer", "metric", "value"]
REQUIRED = ("width", "batch_size", "lr", "epochs", "activations", "gain_exponent", "norm", "bias", "init",
            "transform", "measure_epochs", "checkpoint_every", "eval_batch_size", "measure_on_copy", "cuda_graph")

Config = Mapping[str, Any]


def _require(cfg: Config) -> None:
    missing = [key for key in REQUIRED if key not in cfg]
    if missing:
        raise KeyError(f"meterez2024 training config lacks {missing}; see config.yaml meterez2024: training:")


def epochs_for(cfg: Config, dataset: str, depth: int) -> int:
    """Epochs of the (dataset, depth) job: ``epoch_caps[dataset][depth]`` when given (budget preset, decision
    C5), else ``epochs``."""
    caps = (cfg.get("epoch_caps") or {}).get(dataset) or {}
    for key in (depth, str(depth)):
        if key in caps:
            return int(caps[key])
    return int(cfg["epochs"])


def model_config(cfg: Config, in_features: int, classes: int, depth: int) -> BNMLPConfig:
    """The training architecture (spec C-Fig4: torch BN, bias, orthogonal, gain exponent 0.4, width 100)."""
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
             run_data: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Eval-mode mean loss and accuracy per run over (x, y) (running-stat BN, so the batching is immaterial):
    ``x`` (K, N, D), ``y`` (K, N) for K data sets, ``run_data`` (R,) naming each run's data set."""
    was_training = model.training
    model.eval()
    loss = torch.zeros(model.n_runs, dtype=torch.float64, device=x.device)
    correct = torch.zeros(model.n_runs, dtype=torch.float64, device=x.device)
    n = x.shape[1]
    for start in range(0, n, batch_size):
        xb, targets = x[run_data, start:start + batch_size], y[run_data, start:start + batch_size]  # per run
        logits = model(xb)  # (R, b, C)
        loss += F.cross_entropy(logits.mT, targets, reduction="none").sum(dim=1).double()
        correct += (logits.argmax(dim=-1) == targets).sum(dim=1).double()
    model.train(was_training)
    return (loss / n).cpu().numpy(), (correct / n).cpu().numpy()


def measure(model: StackedBNMLP, x: torch.Tensor, y: torch.Tensor, record: bool) -> dict[str, np.ndarray]:
    """``get_measurements``: one train-mode forward+backward on each run's measurement batch, ``x`` (R, B, D)
    and ``y`` (R, B) (updates BN running statistics, C15). With ``record``,
    returns per metric an (R, L+1) array (NaN where a metric has no value: the output isometry gaps at
    ℓ = L); without, only the side effect happens (no eigenvalues). φ(W_L) is taken on each run's own
    classes (a stack pads fc_L)."""
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


def _epoch_rows(runs: Sequence[tuple[str, str]], depth: int, epoch: int, values: Mapping[str, np.ndarray],
                alive: np.ndarray) -> pd.DataFrame:
    rows = [(dataset, depth, act, epoch, -1, name, float(values[name][r]))
            for name in EPOCH_METRICS for r, (dataset, act) in enumerate(runs) if alive[r]]
    return pd.DataFrame(rows, columns=COLUMNS)


def _layer_rows(runs: Sequence[tuple[str, str]], depth: int, epoch: int, values: Mapping[str, np.ndarray],
                alive: np.ndarray) -> pd.DataFrame:
    frames = []
    layers = np.arange(depth + 1)
    for name, array in values.items():
        for r, (dataset, act) in enumerate(runs):
            if alive[r]:
                frames.append(pd.DataFrame({"dataset": dataset, "depth": depth, "activation": act, "epoch": epoch,
                                            "layer": layers, "metric": name, "value": array[r]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def stack_members(stack: str) -> list[str]:
    """The data sets of a job name: ``"cifar10+cifar100"`` → [cifar10, cifar100]; one name → [name]."""
    members = stack.split(STACK_SEPARATOR)
    if len(set(members)) != len(members) or not all(members):
        raise ValueError(f"training stack {stack!r} must name distinct data sets joined by {STACK_SEPARATOR!r}")
    return members


def _stack_data(members: Sequence[str], data_root: str, split: str, transform: str, device: torch.device):
    """One split of every member, stacked to x (K, N, D), y (K, N); members must agree on N and D."""
    loaded = [load_split(name, data_root, split, transform=transform, flatten=True, device=device) for name in members]
    shapes = {name: tuple(part.x.shape) for name, part in zip(members, loaded)}
    if len(set(shapes.values())) > 1:
        raise ValueError(
            f"meterez2024 training stack {'+'.join(members)}: the {split} splits differ in size or input shape "
            f"{shapes}; stack only data sets of equal shape (config meterez2024: training: stacks:), or train "
            "them alone by removing the stack"
        )
    return torch.stack([part.x for part in loaded]), torch.stack([part.y for part in loaded])


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
    """Train all ``cfg["activations"]`` (or ``activations``) of ``dataset`` — one data set or a stack
    ``"a+b"`` — at ``depth``, stacked; tidy frame as the module docstring says. ``checkpoint``: resumable
    checkpoint file (every ``checkpoint_every`` epochs, spec C.0 "saved every 10 epochs")."""
    _require(cfg)
    members = stack_members(dataset)
    acts = list(activations if activations is not None else cfg["activations"])
    runs = [(name, act) for act in acts for name in members]  # grouped by activation (StackedBNMLP)
    run_data = torch.tensor([members.index(name) for name, _ in runs])
    target = resolve_device(device)
    train_x, train_y = _stack_data(members, data_root, "train", cfg["transform"], target)
    test_x, test_y = _stack_data(members, data_root, "test", cfg["transform"], target)
    classes = [dataset_spec(name).num_classes for name, _ in runs]
    config = model_config(cfg, train_x.shape[-1], max(classes), depth)
    generators = [run_generator(name, depth, act) for name, act in runs]
    model = StackedBNMLP(config, generators, activations=[act for _, act in runs], classes=classes).to(target)
    run_data = run_data.to(target)
    batch, n_train = int(cfg["batch_size"]), train_x.shape[1]
    run_epochs = np.array([epochs_for(cfg, name, depth) for name, _ in runs])
    epochs = int(run_epochs.max())
    measure_epochs = {int(e) for e in cfg["measure_epochs"]}
    m_index = torch.stack([measurement_index(n_train, batch, name) for name, _ in runs]).to(target)
    m_x, m_y = train_x[run_data.view(-1, 1), m_index], train_y[run_data.view(-1, 1), m_index]
    cuda_graph = {"auto": None, True: True, False: False}[cfg["cuda_graph"]]
    eval_batch = int(cfg["eval_batch_size"])

    fingerprint = {"datasets": members, "depth": depth, "activations": acts, "n_train": n_train,
                   "batch_size": batch, "lr": float(cfg["lr"]), "config": repr(config),
                   "measure_on_copy": bool(cfg["measure_on_copy"])}
    path = Path(checkpoint) if checkpoint else None
    frames: list[pd.DataFrame] = []
    alive = np.ones(len(runs), dtype=bool)
    done = 0
    if path is not None and path.exists():
        payload = load_checkpoint(path, fingerprint, target)
        model.load_state_dict(payload["model"])
        done, alive = int(payload["epoch"]), np.array(payload["alive"], dtype=bool)
        frames = [pd.DataFrame(payload["rows"], columns=COLUMNS)]
        log.info("%s d=%d: resuming after epoch %d from %s", dataset, depth, done, path)
    else:
        train_loss, train_acc = evaluate(model, train_x, train_y, eval_batch, run_data)
        test_loss, test_acc = evaluate(model, test_x, test_y, eval_batch, run_data)
        values = {"train_loss": train_loss, "train_acc": train_acc, "test_loss": test_loss, "test_acc": test_acc}
        frames.append(_epoch_rows(runs, depth, 0, values, alive))
        if 0 in measure_epochs:  # a measurement at init, recorded only when asked (run.py has none)
            measured = measure(copy.deepcopy(model), m_x, m_y, record=True)
            frames.append(_layer_rows(runs, depth, 0, measured, alive))

    step = StackedSGDStep(model, train_x, train_y, len(runs), batch, float(cfg["lr"]), cuda_graph=cuda_graph,
                          run_data=run_data)
    for epoch in range(done + 1, epochs + 1):
        started = time.perf_counter()
        model.train()
        step.reset()
        # run.py reshuffles every epoch; each (data set, activation) has its own order (stacked = alone)
        order = torch.cat([epoch_permutations(n_train, [act], EXPERIMENT, f"{name}-d{depth}", epoch)
                           for name, act in runs]).to(target)
        n_batches = 0
        for start in range(0, n_train, batch):
            step(order[:, start:start + batch])
            n_batches += 1
        train_loss = (step.loss_sum / n_batches).cpu().numpy()
        train_acc = (step.correct.double() / n_train).cpu().numpy()
        stopped = alive & ~np.isfinite(train_loss)
        for r in np.flatnonzero(stopped & (epoch <= run_epochs)):
            name, act = runs[r]
            log.warning("%s d=%d %s: non-finite loss in epoch %d; run stopped", name, depth, act, epoch)
            frames.append(pd.DataFrame([(name, depth, act, epoch, -1, "stopped", float(epoch))], columns=COLUMNS))
        alive &= ~stopped
        recorded = alive & (epoch <= run_epochs)  # a capped run trains on in the stack, unrecorded
        test_loss, test_acc = evaluate(model, test_x, test_y, eval_batch, run_data)
        values = {"train_loss": train_loss, "train_acc": train_acc, "test_loss": test_loss, "test_acc": test_acc}
        frames.append(_epoch_rows(runs, depth, epoch, values, recorded))
        record = epoch in measure_epochs
        target_model = copy.deepcopy(model) if cfg["measure_on_copy"] else model
        measured = measure(target_model, m_x, m_y, record=record)
        if record:
            frames.append(_layer_rows(runs, depth, epoch, measured, recorded))
        log.info("%s d=%d epoch %d/%d: train acc %s, %.1f s", dataset, depth, epoch, epochs,
                 np.round(train_acc, 4).tolist(), time.perf_counter() - started)
        if path is not None and (epoch % int(cfg["checkpoint_every"]) == 0 or epoch == epochs):
            rows = pd.concat(frames, ignore_index=True)
            save_checkpoint(path, {"fingerprint": fingerprint, "epoch": epoch, "alive": alive.tolist(),
                                   "model": model.state_dict(), "rows": rows.to_dict("list")})
            frames = [rows]
    frame = pd.concat(frames, ignore_index=True)
    frame = frame.astype({"depth": "int64", "epoch": "int64", "layer": "int64", "value": "float64"})
    return frame[COLUMNS]


__all__ = ["train_grid_job", "stack_members", "evaluate", "measure", "epochs_for", "model_config", "EPOCH_METRICS",
           "LAYER_METRICS"]
