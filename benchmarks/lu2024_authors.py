"""The authors' own ``MLP.py`` (lu2024, model (F) on MNIST) run on this machine: the check of the real-data rows.

``kinglzx2023/orthogonality-of-weight`` publishes ``MLP.py``, the script behind lu2024 Tables 1 and 3 and App.
Table 4 (docs/decisions/lu2024.md, A.1.4 (F)). This benchmark runs that file itself, never a copy kept here: give
it a checkout of the authors' repository (``--authors-repo``; e.g. ``git clone
https://github.com/kinglzx2023/orthogonality-of-weight``) and a torchvision root that holds ``MNIST/raw``
(``--data``). Each run is the script with a few named text substitutions, every one checked to match exactly
once (:data:`SUBSTITUTIONS`), so that a change of the authors' file fails loudly instead of running something
else:

- ``cpu``: the script pins ``cuda:0`` and moves test batches with ``.cuda()``; on a machine without a GPU both
  become no-ops (a prelude patches ``torch.cuda.set_device`` and ``Tensor.cuda``), nothing else changes;
- ``seed``: ``seed_torch()`` (42) becomes ``seed_torch(<seed>)``;
- ``epochs``, ``lr``: the file's ``num_epochs`` and ``learning_rate``;
- ``optimizer``: the shipped Adam line becomes SGD with the file's commented momentum 0.9, AdamW or RMSprop with
  torch's defaults (decision A3);
- ``activation``: ``nn.GELU()`` becomes Sigmoid, Tanh or ReLU (Table 3);
- ``block``: the shipped post-norm residual block ``x = self.norm(x+x_in)`` becomes Original (no BN, no residual),
  Normalization only ``self.norm(x)`` or Residual only ``x + x_in`` (Table 3, App. Table 4, decision A9);
- ``constant``: ``linearH[1]``'s constant 0.1 init is kept (Table 1, as shipped) or dropped (Table 3, A4).

From the script's own outputs (``acc.txt``: test accuracy and last loss per epoch; ``cos_sim.txt``: PII of rows
and columns per layer at init and after training, its ``Mean``) each run records the accuracies per epoch and the
PII per layer; and its seconds: the training loop's (a timer the harness puts around the script's epoch loop)
and the whole process's (with the script's own O(n²) SciPy PII loops). The script names linearH.3 and linearH.4's
files after other layers; the values read here come from ``cos_sim.txt``, which names every layer.

    python benchmarks/lu2024_authors.py --authors-repo ../orthogonality-of-weight --data /data/torchvision \\
        --runs table1-adam table3-gelu-sgd-original --seeds 42 43 44

Runs are named ``<table>-...`` (:func:`parse_run`); ``--lr`` sets one learning rate for all of them. Writes
``results/lu2024-authors-<device>-<date>.json`` (one record per run and seed, appended as each run ends).
``--project`` runs the same runs with this project's job function on the same files instead (the config's settings
of the run's item, one seed per process; ``--lr`` and ``--momentum`` for a learning-rate sweep), and writes
``results/lu2024-project-...``: the two sides of the CPU ratio
in benchmarks/README.md, timed as whole processes in turn (A B A B ...) by an external timer.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from isonorm.atomic import write_text_atomically
from isonorm.provenance import provenance

RESULTS = Path(__file__).resolve().parent / "results"
OPTIMIZERS = {
    "adam": "torch.optim.Adam(model.parameters(), lr = learning_rate)",  # as shipped
    "sgd": "torch.optim.SGD(model.parameters(), lr = learning_rate, momentum = 0.9)",  # the file's commented line
    "adamw": "torch.optim.AdamW(model.parameters(), lr = learning_rate)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr = learning_rate)",
}
ACTIVATIONS = {"gelu": "nn.GELU()", "sigmoid": "nn.Sigmoid()", "tanh": "nn.Tanh()", "relu": "nn.ReLU()"}
BLOCKS = {"norm_res": "x = self.norm(x+x_in)", "original": "pass", "norm": "x = self.norm(x)", "res": "x = x + x_in"}
# Runs of an MLP.py script on CPU: the prelude turns the hard-coded CUDA calls into no-ops (nothing else changes).
PRELUDE = """\
import runpy, sys, torch
torch.cuda.set_device = lambda *args, **kwargs: None
torch.Tensor.cuda = lambda self, *args, **kwargs: self
torch.set_num_threads(int(sys.argv[2]))
runpy.run_path(sys.argv[1], run_name="__main__")
"""


@dataclass(frozen=True)
class Run:
    """One configuration of MLP.py: the table it stands for and the settings of the substitutions."""

    name: str
    optimizer: str = "adam"
    activation: str = "gelu"
    block: str = "norm_res"
    constant: bool = True


def parse_run(name: str) -> Run:
    """``table1-<optimizer>`` (shipped block, constant layer), ``table3-<activation>-<optimizer>-<block>`` and
    ``apptable4-<block>`` (GELU, Adam; both without the constant layer, decisions A4, A9)."""
    parts = name.split("-")
    if parts[0] == "table1" and len(parts) == 2:
        return Run(name, optimizer=parts[1])
    if parts[0] == "table3" and len(parts) == 4:
        return Run(name, activation=parts[1], optimizer=parts[2], block=parts[3], constant=False)
    if parts[0] == "apptable4" and len(parts) == 2:
        return Run(name, block=parts[1], constant=False)
    raise ValueError(f"run {name!r}: use table1-<optimizer>, table3-<activation>-<optimizer>-<block> or "
                     f"apptable4-<block>")


def substitutions(run: Run, seed: int, epochs: int, lr: float | None) -> list[tuple[str, str]]:
    """(text in MLP.py, its replacement) for ``run``; each must occur exactly once in the file."""
    for key, table in (("optimizer", OPTIMIZERS), ("activation", ACTIVATIONS), ("block", BLOCKS)):
        if getattr(run, key) not in table:
            raise ValueError(f"{run.name}: unknown {key} {getattr(run, key)!r}; known: {sorted(table)}")
    pairs = [
        ("\nseed_torch()\n", f"\nseed_torch({seed})\n"),
        ("num_epochs = 20", f"num_epochs = {epochs}"),
        ("optimizer = torch.optim.Adam(model.parameters(), lr = learning_rate)",
         f"optimizer = {OPTIMIZERS[run.optimizer]}"),
        ("self.r = nn.GELU()", f"self.r = {ACTIVATIONS[run.activation]}"),
        ("x = self.norm(x+x_in)", BLOCKS[run.block]),
        ("for epoch in range(num_epochs):", "import time as _time\n_start = _time.perf_counter()\n"
                                            "for epoch in range(num_epochs):"),
        ("file1.writelines('Trained parameters'+'\\n')",
         "print('TRAIN_SECONDS', _time.perf_counter() - _start)\nfile1.writelines('Trained parameters'+'\\n')"),
    ]
    if lr is not None:
        pairs.append(("learning_rate = 0.001", f"learning_rate = {lr!r}"))
    if not run.constant:
        pairs += [("nn.init.constant_(self.linearH[1].weight, 0.1)", "pass"),
                  ("nn.init.constant_(self.linearH[1].bias, 0.1)", "pass")]
    return pairs


def patched_source(source: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        count = source.count(old)
        if count != 1:
            raise ValueError(f"MLP.py: expected {old!r} exactly once, found it {count} times: the authors' file "
                             "is not the one this harness was written for (commit a9f2316)")
        source = source.replace(old, new)
    return source


def stage_mnist(data_root: Path, work: Path) -> None:
    """``work/Datasets/MNIST/raw`` with the four idx files uncompressed, as torchvision's MNIST finds them without
    downloading (it checks only that the uncompressed files exist)."""
    raw, target = data_root / "MNIST" / "raw", work / "Datasets" / "MNIST" / "raw"
    target.mkdir(parents=True)
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        if (raw / stem).is_file():
            shutil.copyfile(raw / stem, target / stem)
        elif (raw / f"{stem}.gz").is_file():
            with gzip.open(raw / f"{stem}.gz") as packed, open(target / stem, "wb") as out:
                shutil.copyfileobj(packed, out)
        else:
            raise FileNotFoundError(f"{raw} lacks {stem}[.gz]: --data must be a torchvision root holding MNIST/raw")


def parse_pii(text: str) -> dict[str, dict[str, dict[str, float]]]:
    """cos_sim.txt → {"init"|"trained": {layer: {"rows": PII, "columns": PII}}} (the script's ``Mean``)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    stage, layer = None, None
    for line in text.splitlines():
        if line.startswith("Initial parameters"):
            stage = "init"
        elif line.startswith("Trained parameters"):
            stage = "trained"
        elif line.startswith("Parameter name: "):
            layer = line.removeprefix("Parameter name: ").removesuffix(".weight")
        elif line.strip() and stage and layer:
            rows, columns = (float(v) for v in line.split(","))
            out.setdefault(stage, {})[layer] = {"rows": rows, "columns": columns}
    return out


def run_once(script: Path, data_root: Path, run: Run, seed: int, epochs: int, lr: float | None,
             threads: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="mlp-") as tmp:
        work = Path(tmp)
        stage_mnist(data_root, work)
        (work / "MLP_run.py").write_text(patched_source(script.read_text(), substitutions(run, seed, epochs, lr)))
        (work / "prelude.py").write_text(PRELUDE)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "prelude.py", "MLP_run.py", str(threads)], cwd=work,
                              capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)})
        seconds = time.perf_counter() - start
        if proc.returncode:
            raise RuntimeError(f"{run.name} seed {seed}: MLP.py exited with {proc.returncode}:\n{proc.stderr[-3000:]}")
        accuracies = [float(line.split()[0]) for line in (work / "acc.txt").read_text().splitlines() if line.strip()]
        pii = parse_pii((work / "cos_sim.txt").read_text())
    train = re.search(r"TRAIN_SECONDS (\S+)", proc.stdout)
    return {**asdict(run), "side": "authors", "seed": seed, "epochs": epochs, "lr": lr if lr is not None else 0.001,
            "test_accuracy": accuracies, "pii": pii, "train_seconds": float(train.group(1)) if train else None,
            "process_seconds": seconds, "threads": threads}


def run_project(data_root: Path, run: Run, seed: int, epochs: int, lr: float | None, threads: int,
                momentum: float | None = None) -> dict:
    """The same run by this project's job function (``isonorm.experiments.lu2024.trained_nets.fnn``, the config's
    settings of the run's item), on the same files staged by the ``local`` source: the other side of the ratio."""
    import torch
    import yaml

    from isonorm.data import fetch_dataset
    from isonorm.experiments.lu2024.trained_nets import fnn

    torch.set_num_threads(threads)
    lu2024 = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())["lu2024"]
    item = run.name.split("-")[0]
    settings = {**lu2024["fnn"], **lu2024[item], "seeds": [seed], "epochs": epochs}
    overrides = {"lr": lr} if lr is not None else {}
    if momentum is not None:
        overrides["momentum"] = momentum
    settings["optimizers"] = {**settings["optimizers"],
                              run.optimizer: {**settings["optimizers"][run.optimizer], **overrides}}
    with tempfile.TemporaryDirectory(prefix="mlp-project-") as tmp:
        start = time.perf_counter()
        fetch_dataset("mnist", tmp, "local", path=data_root)
        frame = fnn(settings, item=item, optimizer=run.optimizer, variant=run.block, activation=run.activation,
                    data_root=tmp, dataset="mnist", device="cpu")
        seconds = time.perf_counter() - start
    accuracy = frame[frame.metric == "test_accuracy"].sort_values("epoch").value.tolist()[1:]
    return {**asdict(run), "side": "project", "seed": seed, "epochs": epochs, "lr": lr if lr is not None else 0.001,
            "test_accuracy": accuracy, "process_seconds": seconds, "threads": threads}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors-repo", type=Path, help="a checkout of the authors' repository")
    parser.add_argument("--project", action="store_true",
                        help="run the same runs with this project's job function instead (the ratio's other side)")
    parser.add_argument("--data", type=Path, required=True, help="a torchvision root holding MNIST/raw")
    parser.add_argument("--runs", nargs="+", default=["table1-adam"], help="see parse_run")
    parser.add_argument("--seeds", nargs="+", type=int, default=[42])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=None, help="one learning rate for every run (default: 1e-3)")
    parser.add_argument("--momentum", type=float, default=None,
                        help="SGD's momentum (--project; default: the config's)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    script = None if args.project else (args.authors_repo or Path("-")) / "MLP.py"
    if script is not None and not script.is_file():
        sys.exit(f"{script} not found: --authors-repo must be a checkout of kinglzx2023/orthogonality-of-weight")
    runs = [parse_run(name) for name in args.runs]
    side = "project" if args.project else "authors"
    out = args.out or RESULTS / f"lu2024-{side}-cpu-{dt.date.today():%Y-%m-%d}.json"
    record = {"benchmark": "lu2024_authors", "provenance": provenance("cpu"), "records": []}
    for run in runs:
        for seed in args.seeds:
            if script is None:
                result = run_project(args.data, run, seed, args.epochs, args.lr, args.threads, args.momentum)
            else:
                result = run_once(script, args.data, run, seed, args.epochs, args.lr, args.threads)
            record["records"].append(result)
            print(json.dumps({k: result.get(k) for k in ("name", "seed", "lr", "process_seconds")}),
                  f"acc {result['test_accuracy'][-1]:.2f}", flush=True)
            write_text_atomically(out, json.dumps(record, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
