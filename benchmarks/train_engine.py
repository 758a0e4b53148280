"""Epoch time of the stacked training engine against the eager loop of the original notebooks (architecture §8).

Same model in every method: the daneshmand2021 Fig. 4b MLP (20 Linear layers, width 800, no bias, ReLU,
Xavier-uniform gain √2) on CIFAR-10-shaped random data (3×32×32 uint8 images, 10 classes), batch 500,
SGD lr 0.01 (daneshmand2021-fig4a/daneshmand2021-fig4b setup). Methods:

- ``naive``: what the notebooks did: a torchvision-style dataset that turns each uint8 image into a PIL
  image and applies ToTensor + Normalize(0.5, 0.5) per sample, a shuffling DataLoader (num_workers 0),
  ``loss.item()`` every batch, and the runs trained one after another.
- ``eager``: the same loop over preprocessed device-resident tensors (index slices of a permutation), runs
  one after another: separates the data-pipeline cost from the stacking gain.
- ``engine``: ``isonorm.train.train_stacked`` with all runs stacked into one batched computation.

Reported: seconds per epoch for all runs together, and the ratio naive / engine. A JSON copy goes to
benchmarks/results/<device>-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader
from torchvision import transforms
from torchvision.datasets import VisionDataset

from isonorm.models.mlp import mlp
from isonorm.provenance import provenance
from isonorm.atomic import write_text_atomically
from isonorm.runtime import generator, resolve_device
from isonorm.train import OptimizerConfig, TrainConfig, train_stacked

RESULTS = Path(__file__).parent / "results"
CLASSES = 10
BATCH_SIZE = 500  # daneshmand2021-fig4a "batch 500"
LR = 0.01  # same setup, "SGD lr 0.01 (no momentum, no weight decay)"
MEAN = STD = (0.5, 0.5, 0.5)  # same setup, "ToTensor + Normalize(0.5, 0.5)"


class CifarLikeImages(VisionDataset):
    """Random uint8 images stored and served exactly like ``torchvision.datasets.CIFAR10``."""

    def __init__(self, n_samples: int, transform) -> None:
        super().__init__(root="", transform=transform)
        rng = np.random.default_rng(0)
        self.data = rng.integers(0, 256, size=(n_samples, 32, 32, 3), dtype=np.uint8)  # CIFAR10.data layout
        self.targets = rng.integers(0, CLASSES, size=n_samples).tolist()

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        return self.transform(Image.fromarray(self.data[index])), self.targets[index]


def widths(width: int, depth: int) -> list[int]:
    return [3 * 32 * 32] + [width] * (depth - 1) + [CLASSES]


def models(args, n_runs: int) -> list[torch.nn.Module]:
    return [mlp(widths(args.width, args.depth), generator=generator("benchmark", run)) for run in range(n_runs)]


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def naive(args, device, dataset) -> float:
    """The notebooks' loop; returns its final epoch's mean loss over runs."""
    final = []
    for model in models(args, args.runs):
        model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        loader = DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=True)
        for _ in range(args.epochs):
            total, batches = 0.0, 0
            for images, labels in loader:
                images, labels = images.to(device).view(images.shape[0], -1), labels.to(device)
                loss = F.cross_entropy(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total, batches = total + loss.item(), batches + 1
        final.append(total / batches)
    return float(np.mean(final))


def eager(args, device, x, y) -> float:
    """The same loop over device tensors, runs one after another."""
    final = []
    for run, model in enumerate(models(args, args.runs)):
        model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        for epoch in range(args.epochs):
            order = torch.randperm(x.shape[0], generator=generator("benchmark", run, epoch)).to(device)
            total = torch.zeros((), device=device)
            starts = range(0, x.shape[0], BATCH_SIZE)
            for start in starts:
                index = order[start : start + BATCH_SIZE]
                loss = F.cross_entropy(model(x[index]), y[index])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.detach()
        final.append(total.item() / len(starts))
    return float(np.mean(final))


def engine(args, device, x, y) -> float:
    config = TrainConfig("benchmark", "train_engine", epochs=args.epochs, batch_size=BATCH_SIZE,
                         optimizer=OptimizerConfig("sgd", lr=LR), measure_at_init=False, device=str(device))
    history = train_stacked(models(args, args.runs), x, y, config).history
    return float(history[history.epoch == args.epochs].train_loss.mean())


def preprocess(dataset: CifarLikeImages, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The same ToTensor + Normalize, done once for the whole set and kept on the device."""
    images = torch.from_numpy(dataset.data).to(device).permute(0, 3, 1, 2).float().div(255)
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1)
    x = ((images - mean) / std).reshape(len(dataset), -1)
    return x, torch.tensor(dataset.targets, device=device)


def timed(function, device, *args) -> tuple[float, float]:
    synchronize(device)
    started = time.perf_counter()
    result = function(*args)
    synchronize(device)
    return time.perf_counter() - started, result


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (``argv``, default ``sys.argv[1:]``); benchmarks/gpu_acceptance.py --dry-run checks its own."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:1, ...")
    parser.add_argument("--n-samples", type=int, default=None, help="default 50000 on GPU (CIFAR-10), 5000 on CPU")
    parser.add_argument("--runs", type=int, default=4, help="runs: stacked by the engine, one by one otherwise")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--width", type=int, default=800, help="daneshmand2021-fig4a: width 800")
    parser.add_argument("--depth", type=int, default=20, help="Linear layers; daneshmand2021-fig4b: 20")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_arguments()
    device = resolve_device(args.device)
    if args.n_samples is None:
        args.n_samples = 50_000 if device.type == "cuda" else 5_000
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)

    dataset = CifarLikeImages(args.n_samples, transforms.Compose([transforms.ToTensor(),
                                                                  transforms.Normalize(MEAN, STD)]))
    preprocess_s, (x, y) = timed(preprocess, device, dataset, device)
    eager(argparse.Namespace(**{**vars(args), "runs": 1, "epochs": 1, "n_samples": BATCH_SIZE}),
          device, x[:BATCH_SIZE], y[:BATCH_SIZE])  # warm-up: CUDA context, kernels, allocator

    rows = []
    for name, description, function, inputs in [
        ("naive", "DataLoader + per-sample ToTensor/Normalize, runs one by one", naive, (dataset,)),
        ("eager", "device tensors, index slices, runs one by one", eager, (x, y)),
        ("engine", "isonorm.train.train_stacked, runs stacked", engine, (x, y)),
    ]:
        seconds, final_loss = timed(function, device, args, device, *inputs)
        rows.append({"method": name, "description": description, "seconds_per_epoch": seconds / args.epochs,
                     "final_loss": final_loss})
    naive_s = rows[0]["seconds_per_epoch"]
    for row in rows:
        row["speedup_vs_naive"] = naive_s / row["seconds_per_epoch"]

    print(f"device {device}, {args.n_samples} samples, {args.runs} runs, {args.epochs} epochs, "
          f"MLP depth {args.depth} width {args.width}, batch {BATCH_SIZE}; one-off preprocessing {preprocess_s:.2f} s")
    print(f"{'method':<8} {'s/epoch (all runs)':>19} {'speed-up':>9} {'final loss':>11}  description")
    for row in rows:
        print(f"{row['method']:<8} {row['seconds_per_epoch']:>19.2f} {row['speedup_vs_naive']:>8.2f}x "
              f"{row['final_loss']:>11.4f}  {row['description']}")
    ratio = rows[0]["seconds_per_epoch"] / rows[2]["seconds_per_epoch"]
    print(f"ratio naive / engine: {ratio:.2f}")

    record = {"benchmark": "train_engine", "date": dt.date.today().isoformat(), "args": vars(args),
              "batch_size": BATCH_SIZE, "lr": LR, "preprocess_seconds": preprocess_s, "results": rows,
              "ratio_naive_over_engine": ratio, "provenance": provenance(str(device))}
    path = RESULTS / f"{device.type}-{record['date']}.json"
    write_text_atomically(path, json.dumps(record, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
