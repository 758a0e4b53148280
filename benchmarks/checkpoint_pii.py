"""Streamed PII of one layer of a LLaMA-7B-shaped checkpoint against building the whole model (Table 5 (c)).

Writes, locally and without any download, a sharded fp16 safetensors checkpoint with LLaMA-7B's shapes
(hidden 4096, intermediate 11008, 32 heads, vocabulary 32000; lu2024-table5 (c)) and ``--layers`` layers
(default 32, the real model: 13.5 GB), split into shards of at most ``--shard-gb`` (default 10 GB, as
huggyllama/llama-7b's first shard). Each tensor is written as soon as it is drawn, so writing needs no more
memory than the largest tensor. Then, each in a fresh subprocess (its own peak RSS, ``ru_maxrss``):

- ``streamed``: :func:`isonorm.experiments.lu2024.checkpoint_pii.checkpoint_pii` on the layer ``--layer``
  (default 8, decision A12): six matrices read alone from the memory-mapped shard, PII in blocks, both
  orientations (what the Table 5 (c) rule runs);
- ``naive``: ``LlamaForCausalLM.from_pretrained`` of the whole model (fp16), then the same metric on the same
  six matrices;
- ``metric``: the memory :func:`isonorm.metrics.pii.pii_chunked` itself needs beyond its input, for the
  layer's largest matrix (``mlp.gate_proj``, 11008 × 4096) in both orientations: the peak resident memory
  (``VmHWM``, reset just before) minus the resident memory with the matrix loaded; and the largest PII
  difference between float32 and float64 products.

Reported: wall seconds (whole subprocess, and load + metric alone) and peak resident memory; the PII values of
both paths must agree. A JSON copy goes to benchmarks/results/checkpoint_pii-<device>-<date>.json. The
target: streamed ≤ 1 min and ≤ 2 GB resident once the shards are local.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

RESULTS = Path(__file__).parent / "results"
# LLaMA-7B (huggyllama/llama-7b config.json): the shapes of lu2024-table5 (c).
LLAMA_7B = {"hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32, "vocab_size": 32000}


def llama_shapes(layers: int) -> list[tuple[str, tuple[int, ...]]]:
    """Parameter names and shapes of LlamaForCausalLM with LLaMA-7B's sizes, in the Hub's order."""
    h, f, v = LLAMA_7B["hidden_size"], LLAMA_7B["intermediate_size"], LLAMA_7B["vocab_size"]
    shapes = [("model.embed_tokens.weight", (v, h))]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [(p + f"self_attn.{m}_proj.weight", (h, h)) for m in "qkvo"]
        shapes += [(p + "mlp.gate_proj.weight", (f, h)), (p + "mlp.up_proj.weight", (f, h)),
                   (p + "mlp.down_proj.weight", (h, f)), (p + "input_layernorm.weight", (h,)),
                   (p + "post_attention_layernorm.weight", (h,))]
    return shapes + [("model.norm.weight", (h,)), ("lm_head.weight", (v, h))]


def write_shard(path: Path, tensors: list[tuple[str, tuple[int, ...]]], generator: torch.Generator) -> None:
    """One safetensors file (format: 8-byte header length, JSON header, data), tensor by tensor."""
    header, offset = {}, 0
    for name, shape in tensors:
        size = 2 * int(torch.tensor(shape).prod())
        header[name] = {"dtype": "F16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # the format pads the header to 8 bytes
    with path.open("wb") as stream:
        stream.write(struct.pack("<Q", len(blob)) + blob)
        for name, shape in tensors:
            if len(shape) == 1:
                values = torch.ones(shape, dtype=torch.float16)  # RMSNorm weights start at 1
            else:
                values = (torch.randn(shape, generator=generator) * 0.02).to(torch.float16)
            stream.write(values.numpy().tobytes())


def write_checkpoint(folder: Path, layers: int, shard_gb: float) -> None:
    """A LLaMA-7B-shaped sharded checkpoint (config.json, index, shards) in ``folder``."""
    from transformers import LlamaConfig

    folder.mkdir(parents=True, exist_ok=True)
    LlamaConfig(**LLAMA_7B, num_hidden_layers=layers, dtype="float16").save_pretrained(folder)
    groups, current, size = [], [], 0
    for name, shape in llama_shapes(layers):
        nbytes = 2 * int(torch.tensor(shape).prod())
        if current and size + nbytes > shard_gb * 1e9:
            groups.append(current)
            current, size = [], 0
        current.append((name, shape))
        size += nbytes
    groups.append(current)
    generator = torch.Generator().manual_seed(0)
    weight_map = {}
    for i, group in enumerate(groups, start=1):
        shard = f"model-{i:05d}-of-{len(groups):05d}.safetensors"
        write_shard(folder / shard, group, generator)
        weight_map.update({name: shard for name, _ in group})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))


def child(method: str, folder: str, layer: int, dtype: str, device: str) -> None:
    """Run one method and print a JSON line: seconds, peak RSS (bytes), PII values."""
    start = time.perf_counter()
    if method == "streamed":
        from isonorm.experiments.lu2024.checkpoint_pii import checkpoint_pii

        frame = checkpoint_pii(folder, "llama", layer, device=device, dtype=dtype)
        values = {f"{r.cell}/{r.orientation}": r.pii for r in frame.itertuples()}
    else:
        from transformers import LlamaForCausalLM

        from isonorm.experiments.lu2024.checkpoint_pii import DTYPES, ORIENTATIONS, matrix_specs
        from isonorm.metrics.pii import pii_chunked

        model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.float16).to(device)
        state = model.state_dict()
        values = {}
        for spec in matrix_specs("llama", layer):
            W = state["model." + spec.tensor].to(DTYPES[dtype])
            for orientation in ORIENTATIONS:
                values[f"{spec.cell}/{orientation}"] = float(pii_chunked(W, orientation, dtype=DTYPES[dtype]))
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports kB
    print(json.dumps({"seconds": seconds, "peak_rss_bytes": peak, "pii": values}))


def _status_bytes(field: str) -> int:
    """A memory field of /proc/self/status (VmRSS, VmHWM) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def metric_child(folder: str, layer: int, dtype: str) -> None:
    """pii_chunked's own memory on the largest matrix of the layer, and float32 against float64."""
    from isonorm.checkpoints.streamed import TensorIndex
    from isonorm.experiments.lu2024.checkpoint_pii import DTYPES, ORIENTATIONS
    from isonorm.metrics.pii import pii_chunked

    W = TensorIndex(folder).read(f"model.layers.{layer}.mlp.gate_proj.weight", dtype=DTYPES[dtype])
    before = _status_bytes("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS (Linux ≥ 4.0)
    start = time.perf_counter()
    values = {o: float(pii_chunked(W, o, dtype=DTYPES[dtype])) for o in ORIENTATIONS}
    seconds = time.perf_counter() - start
    extra = _status_bytes("VmHWM") - before
    other = "float32" if dtype == "float64" else "float64"
    gap = max(abs(values[o] - float(pii_chunked(W, o, dtype=DTYPES[other]))) for o in ORIENTATIONS)
    print(json.dumps({"seconds": seconds, "extra_bytes": extra, "shape": list(W.shape), "pii": values,
                      "float32_float64_gap": gap}))


def measure(method: str, folder: Path, args) -> dict:
    """``method`` in a fresh interpreter; the naive one volunteers for the OOM killer first."""
    command = [sys.executable, __file__, "--child", method, "--folder", str(folder), "--layer", str(args.layer),
               "--dtype", args.dtype, "--device", args.device]
    prefix = "echo 1000 > /proc/self/oom_score_adj 2>/dev/null; exec " if method == "naive" else "exec "
    start = time.perf_counter()
    done = subprocess.run(["sh", "-c", prefix + " ".join(f"'{c}'" for c in command)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        return {"method": method, "failed": done.stderr.strip().splitlines()[-3:], "wall_s": wall}
    record = json.loads(done.stdout.strip().splitlines()[-1])
    if method == "metric":
        return {"method": method, "wall_s": wall, "compute_s": record["seconds"], "shape": record["shape"],
                "extra_mb": record["extra_bytes"] / 1e6, "float32_float64_gap": record["float32_float64_gap"]}
    return {"method": method, "wall_s": wall, "compute_s": record["seconds"],
            "peak_rss_gb": record["peak_rss_bytes"] / 1e9, "pii": record["pii"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32, help="layers of the generated checkpoint (LLaMA-7B: 32)")
    parser.add_argument("--layer", type=int, default=8, help="the measured layer (decision A12: 8)")
    parser.add_argument("--shard-gb", type=float, default=10.0, help="largest shard (huggyllama: ~10 GB)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"], help="metric precision")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--methods", nargs="+", default=["streamed", "naive", "metric"],
                        choices=["streamed", "naive", "metric"])
    parser.add_argument("--workdir", type=Path, default=None, help="where the checkpoint goes (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated checkpoint")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--folder", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "metric":
        return metric_child(args.folder, args.layer, args.dtype)
    if args.child:
        return child(args.child, args.folder, args.layer, args.dtype, args.device)
    if args.layer >= args.layers:
        parser.error(f"--layer {args.layer} needs --layers > {args.layer}")

    from isonorm.atomic import write_text_atomically
    from isonorm.checkpoints import fetch_checkpoint
    from isonorm.provenance import provenance

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="checkpoint_pii_"))
    generated = workdir / "generated"
    start = time.perf_counter()
    if not (generated / "model.safetensors.index.json").is_file():
        write_checkpoint(generated, args.layers, args.shard_gb)
    write_s = time.perf_counter() - start
    # Stage it as source `local` with the Table 5 (c) tensor patterns: the same checks as a real fetch.
    folder = fetch_checkpoint("llama", workdir / "checkpoints", "local", path=generated,
                              tensors=[f"model.layers.{args.layer}.*"])
    size_gb = sum(p.stat().st_size for p in generated.glob("*.safetensors")) / 1e9
    print(f"checkpoint: {args.layers} layers, {size_gb:.1f} GB fp16, written in {write_s:.0f} s ({generated})")
    # the naive build needs every shard: it reads the generated folder, the streamed path the staged one
    results = [measure(method, generated if method == "naive" else folder, args) for method in args.methods]
    for r in results:
        if "failed" in r:
            print(f"{r['method']:>8}: FAILED after {r['wall_s']:.0f} s: {r['failed']}")
        elif r["method"] == "metric":
            print(f"  metric: pii_chunked on {r['shape']} in both orientations, {r['compute_s']:.1f} s, "
                  f"{r['extra_mb']:.0f} MB beyond its input; float32 vs float64 PII: {r['float32_float64_gap']:.1e}")
        else:
            print(f"{r['method']:>8}: {r['wall_s']:6.1f} s wall ({r['compute_s']:6.1f} s load + metric), "
                  f"peak RSS {r['peak_rss_gb']:5.2f} GB")
    ok = [r for r in results if "pii" in r]  # streamed and naive
    if len(ok) == 2:
        gap = max(abs(ok[0]["pii"][k] - ok[1]["pii"][k]) for k in ok[0]["pii"])
        print(f"largest PII difference between the methods: {gap:.2e}")
    record = {"benchmark": "checkpoint_pii", "date": dt.date.today().isoformat(),
              "args": {k: v for k, v in vars(args).items() if k not in ("child", "folder", "workdir")} | {
                  "checkpoint_gb": size_gb, "write_s": write_s}, "results": results,
              "provenance": provenance(args.device)}
    path = RESULTS / f"checkpoint_pii-{args.device}-{record['date']}.json"
    write_text_atomically(path, json.dumps(record, indent=2) + "\n")
    print(f"wrote {path}")
    if not args.keep:
        import shutil

        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
