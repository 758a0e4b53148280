"""The ``random`` source: random weights at the real checkpoint's sizes, names, shapes and dtype, Hub layout.

It lets the readers of real checkpoints (the streamed layer reader of Table 5 (b)/(c), the LoRA build, the
GPT-2 probe) run at full size offline, to measure what a job costs. The full model is never built in memory
(LLaMA-7B in fp32 is 28 GB): its tensor names and shapes come from the model built on the meta device, and
the tensors are generated one shard at a time. Each tensor has its own generator, seeded from (seed, name),
so the same seed gives the same bytes whatever subset of shards is written (``tensors:``), as a partial
download of the real checkpoint holds the same tensors as a full one.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from .full_size import FULL_DTYPES, full_sizes
from .registry import INDEX, CheckpointSpec
from .shards import select_shards
from .tiny import SHARDED_FAMILIES, tiny_model_class, write_causal_tokenizer, write_gpt2_tokenizer

WEIGHTS = "model.safetensors"
_LAYER = re.compile(r"\.layers\.(\d+)\.")  # the block of a tensor of the sharded (LLaMA/Qwen2) families


@dataclass(frozen=True)
class TensorPlan:
    shape: tuple[int, ...]
    fill: str  # "normal" (weights, embeddings), "ones" (norm weights), "zeros" (biases)


def build_config(family: str, sizes: dict, dtype: torch.dtype):
    """The ``transformers`` config of the class of ``family`` at ``sizes``, recording class and dtype."""
    import transformers

    name = tiny_model_class(family)
    config_class = getattr(transformers, name).config_class
    config = config_class(**sizes)
    config.architectures = [name]
    config.dtype = dtype  # written as config.json "dtype", as save_pretrained of the real weights would
    return config


def tensor_plan(family: str, config) -> dict[str, TensorPlan]:
    """{name: (shape, fill)} of every tensor ``save_pretrained`` of the class would write, from a meta model."""
    import transformers

    with torch.device("meta"):  # shapes only: no memory, no initialisation cost
        model = getattr(transformers, tiny_model_class(family))(config)
    # save_pretrained drops the tied copies (T5's encoder/decoder embed_tokens = shared) and the ignored keys
    dropped = set(getattr(model, "all_tied_weights_keys", None) or {}) | set(model._keys_to_ignore_on_save or ())
    params = dict(model.named_parameters(remove_duplicate=False))
    names = [n for n in model.state_dict() if n not in dropped]
    buffers = [n for n in names if n not in params]
    if buffers:  # a persistent buffer (e.g. position ids) must not be random: refuse rather than guess
        raise ValueError(f"random {family}: the model class saves buffers {buffers[:3]}, which this writer "
                         "cannot fill; extend isonorm.checkpoints.random_weights.tensor_plan")
    norms = {f"{m}.weight" for m, module in model.named_modules() if "Norm" in type(module).__name__}
    return {
        n: TensorPlan(tuple(params[n].shape),
                      "ones" if n in norms else "zeros" if n.rsplit(".", 1)[-1] == "bias" else "normal")
        for n in names
    }


def shard_map(names: Sequence[str], sharded: bool) -> dict[str, str]:
    """{tensor: file}: one file, or one shard per transformer block (≈ 0.4 GB for a 7B model) with the tensors
    before and after the blocks (embeddings; final norm and output layer) in shards of their own."""
    if not sharded:
        return dict.fromkeys(names, WEIGHTS)
    groups: list[list[str]] = []
    last = object()
    for name in names:  # state_dict order: consecutive tensors of one block (or outside blocks) share a shard
        match = _LAYER.search(name)
        key = match.group(1) if match else None
        if key != last or not groups:
            groups.append([])
        groups[-1].append(name)
        last = key
    total = len(groups)
    return {n: f"model-{i:05d}-of-{total:05d}.safetensors" for i, group in enumerate(groups, 1) for n in group}


def _tensor(plan: TensorPlan, name: str, seed: int, std: float, dtype: torch.dtype) -> torch.Tensor:
    if plan.fill != "normal":
        return (torch.ones if plan.fill == "ones" else torch.zeros)(plan.shape, dtype=dtype)
    # sha256, not hash(): Python's string hash changes between processes
    digest = hashlib.sha256(f"{seed}/{name}".encode()).digest()
    generator = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)
    return torch.empty(plan.shape, dtype=dtype).normal_(0.0, std, generator=generator)


def write_tokenizer(family: str, folder: str | Path, texts: Sequence[str], config) -> None:
    """The tokenizer files of a stand-in of ``family`` in ``folder``, learnt from ``texts`` at ``config``'s
    vocabulary and length, its special-token ids set in ``config``; none for a family that needs none."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if family == "gpt2":  # the probe tokenizes texts: GPT-2's four tokenizer files, as the tiny GPT-2
        config.bos_token_id = config.eos_token_id = write_gpt2_tokenizer(folder, texts, config.vocab_size,
                                                                         config.n_positions)
    elif family in SHARDED_FAMILIES:  # the LoRA build needs a tokenizer, as the tiny causal LMs
        end_id = write_causal_tokenizer(folder, texts, config.vocab_size, config.max_position_embeddings)
        config.bos_token_id = config.eos_token_id = config.pad_token_id = end_id


def write_random(spec: CheckpointSpec, folder: str | Path, texts: Sequence[str], *, seed: int = 0,
                 tensors: Sequence[str] | None = None, sizes: dict | None = None) -> list[str]:
    """Write the ``random`` stand-in of ``spec`` into ``folder``; returns the weight files written.

    ``tensors``: glob patterns; a sharded checkpoint then gets only the shards holding a match (its index
    still lists every tensor). ``sizes``: the config keyword arguments (default: the real ones,
    :func:`~.full_size.full_sizes`, which also cuts the depth); tests pass smaller ones.
    """
    family, folder = spec.tiny_family, Path(folder)
    sizes = dict(sizes) if sizes is not None else full_sizes(spec.name)
    dtype = FULL_DTYPES[spec.name]
    config = build_config(family, sizes, dtype)
    plan = tensor_plan(family, config)
    weight_map = shard_map(list(plan), spec.sharded)
    # patterns matching nothing fail here, before anything is written
    files = select_shards(weight_map, tensors, what=f"checkpoint {spec.name}") if spec.sharded else [WEIGHTS]

    write_tokenizer(family, folder, texts, config)
    config.save_pretrained(folder)
    if spec.sharded:  # the index lists every tensor, whichever shards are written
        total = sum(math.prod(p.shape) for p in plan.values()) * dtype.itemsize
        index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        (folder / INDEX).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    std = getattr(config, "initializer_range", 0.02)  # T5 has only initializer_factor: 0.02 keeps it finite
    from safetensors.torch import save_file  # deferred, as transformers

    for file in files:  # one shard in memory at a time
        shard = {n: _tensor(plan[n], n, seed, std, dtype) for n, f in weight_map.items() if f == file}
        save_file(shard, str(folder / file), metadata={"format": "pt"})  # "pt": what from_pretrained expects
        del shard
    return files
