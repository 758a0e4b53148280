"""Table 5 (b) PLMs and (c) LLMs of Lu et al. 2024: PII of one layer's attention and FFN matrices of checkpoints.

No model is built: each matrix is read alone from the safetensors files (:mod:`isonorm.checkpoints.streamed`)
and its PII computed in blocks (:func:`isonorm.metrics.pii.pii_chunked`), so a 7B model's layer costs about
1 GB of memory. The name maps below are keyed on config.json ``model_type`` (lu2024-table5 (b)/lu2024-table5 (c)):

- BERT/RoBERTa [code PLM.py]: Q/K/V = ``attention.self.{query,key,value}``; Atten_Output =
  ``attention.output.dense``; Linear_1 = ``intermediate.dense``; Linear_2 = ``output.dense``.
- GPT-2 [I, lu2024-table5 (b)]: Conv1D weights stored (in, out) are transposed to (out, in); ``attn.c_attn`` is
  split along ``out`` into Q, K, V; ``attn.c_proj``, ``mlp.c_fc``, ``mlp.c_proj``.
- T5 [decision A11]: encoder and decoder self-attention ``SelfAttention.{q,k,v,o}``; encoder FFN
  ``layer.1.DenseReluDense.{wi,wo}``; the decoder's FFN is ``layer.2`` (``layer.1`` is cross-attention): the
  table keeps the paper's "-" and the real values are a supplementary row.
- LLaMA [decision A12]: ``self_attn.{q,k,v,o}_proj``; Linear_1 = ``mlp.up_proj``, Linear_2 = ``mlp.gate_proj``.
- Qwen v1 [code qwen_lora.py]: ``attn.c_attn`` (12288×4096) split into three 4096-row blocks Q, K, V;
  ``attn.c_proj``; Linear_1 = ``mlp.w1``, Linear_2 = ``mlp.w2``. Qwen2 (the tiny stand-in): as LLaMA.

Orientation (decision A1): PII_col everywhere except PLM.py's rows for Atten_Output/Linear_1/Linear_2 of
BERT/RoBERTa and, by analogy, GPT-2/T5. Both orientations are always computed and stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ...checkpoints.load import describe_checkpoint
from ...checkpoints.streamed import TensorIndex, model_type
from ...metrics.pii import pii_chunked
from ...runtime import resolve_device

CELLS = ("Query", "Keys", "Values", "Atten_Output", "Linear_1", "Linear_2")  # Table 5 columns [paper]
ORIENTATIONS = ("columns", "rows")
# Table 5 row labels of the checkpoint entries (config names of checkpoints: models:) [paper Table 5].
ROW_LABELS = {
    "bert": "Bert", "roberta": "Roberta", "gpt2": "GPT-2", "t5": "T5", "llama": "LLama", "llama2": "LLama 2",
    "qwen": "Qwen (before LoRA)",
}
DTYPES = {"float32": torch.float32, "float64": torch.float64}


@dataclass(frozen=True)
class MatrixSpec:
    """One Table 5 cell of one checkpoint: which tensor, how to cut it, which orientation the table reports."""

    part: str  # "" for one-stack models; "encoder" / "decoder" for T5
    cell: str  # one of CELLS
    tensor: str  # the parameter name (a suffix of the full name is enough, see TensorIndex.resolve)
    table_orientation: str  # "columns" | "rows" (decision A1)
    block: int | None = None  # packed Q/K/V: which of `blocks` equal row blocks of the (out, in) matrix
    blocks: int = 1
    conv1d: bool = False  # GPT-2's Conv1D stores (in, out): transpose to PyTorch's (out, in) first
    in_table: bool = True  # False: a supplementary value the paper's table does not show (T5 decoder FFN)


# Per model_type: the layer's prefix, then (cell, tensor suffix, table orientation) per Table 5 cell. A packed
# Q/K/V tensor is listed once under "QKV" and cut into three equal row blocks. Orientations: decision A1.
_BERT_LIKE = ("encoder.layer.{layer}.", (
    ("Query", "attention.self.query.weight", "columns"), ("Keys", "attention.self.key.weight", "columns"),
    ("Values", "attention.self.value.weight", "columns"), ("Atten_Output", "attention.output.dense.weight", "rows"),
    ("Linear_1", "intermediate.dense.weight", "rows"), ("Linear_2", "output.dense.weight", "rows"),
))
_LLAMA = ("layers.{layer}.", (
    ("Query", "self_attn.q_proj.weight", "columns"), ("Keys", "self_attn.k_proj.weight", "columns"),
    ("Values", "self_attn.v_proj.weight", "columns"), ("Atten_Output", "self_attn.o_proj.weight", "columns"),
    ("Linear_1", "mlp.up_proj.weight", "columns"), ("Linear_2", "mlp.gate_proj.weight", "columns"),
))
NAME_MAPS = {
    "bert": _BERT_LIKE,
    "roberta": _BERT_LIKE,
    "gpt2": ("h.{layer}.", (
        ("QKV", "attn.c_attn.weight", "columns"), ("Atten_Output", "attn.c_proj.weight", "rows"),
        ("Linear_1", "mlp.c_fc.weight", "rows"), ("Linear_2", "mlp.c_proj.weight", "rows"),
    )),
    "llama": _LLAMA,
    "qwen2": _LLAMA,
    "qwen": ("h.{layer}.", (
        ("QKV", "attn.c_attn.weight", "columns"), ("Atten_Output", "attn.c_proj.weight", "columns"),
        ("Linear_1", "mlp.w1.weight", "columns"), ("Linear_2", "mlp.w2.weight", "columns"),
    )),
    # T5: self-attention in layer.0; the encoder's FFN is layer.1, the decoder's layer.2 (layer.1 is its
    # cross-attention), shown as a supplementary row beside the table's "-" (decision A11).
    "t5": ("{part}.block.{layer}.layer.", (
        ("Query", "0.SelfAttention.q.weight", "columns"), ("Keys", "0.SelfAttention.k.weight", "columns"),
        ("Values", "0.SelfAttention.v.weight", "columns"), ("Atten_Output", "0.SelfAttention.o.weight", "rows"),
        ("Linear_1", "{ffn}.DenseReluDense.wi.weight", "rows"), ("Linear_2", "{ffn}.DenseReluDense.wo.weight", "rows"),
    )),
}
T5_PARTS = (("encoder", 1), ("decoder", 2))  # (stack, index of its FFN sub-layer)
CONV1D = frozenset({"gpt2"})  # GPT-2's Conv1D stores (in, out): transposed to PyTorch's (out, in) first


def _specs(kind: str, layer: int, part: str = "", ffn: int = 1) -> list[MatrixSpec]:
    prefix, cells = NAME_MAPS[kind]
    prefix = prefix.format(layer=layer, part=part)
    conv1d = kind in CONV1D
    specs = []
    for cell, suffix, orientation in cells:
        tensor = prefix + suffix.format(ffn=ffn)
        if cell == "QKV":
            specs += [MatrixSpec(part, c, tensor, orientation, block=i, blocks=3, conv1d=conv1d)
                      for i, c in enumerate(CELLS[:3])]
        else:
            in_table = part != "decoder" or not cell.startswith("Linear")
            specs.append(MatrixSpec(part, cell, tensor, orientation, conv1d=conv1d, in_table=in_table))
    return specs


def matrix_specs(kind: str, layer: int) -> list[MatrixSpec]:
    """The Table 5 matrices of layer ``layer`` of a checkpoint whose config.json model_type is ``kind``."""
    if kind not in NAME_MAPS:
        raise ValueError(
            f"no Table 5 name map for model_type {kind!r}; known: {sorted(NAME_MAPS)}. Add one to "
            "isonorm.experiments.lu2024.checkpoint_pii.NAME_MAPS"
        )
    if kind == "t5":
        return [spec for part, ffn in T5_PARTS for spec in _specs(kind, int(layer), part, ffn)]
    return _specs(kind, int(layer))


def cut_matrix(spec: MatrixSpec, W: torch.Tensor) -> torch.Tensor:
    """The (out, in) matrix of ``spec`` from its stored tensor: Conv1D transposed, packed Q/K/V block cut out."""
    if W.ndim != 2:
        raise ValueError(f"{spec.tensor} has shape {tuple(W.shape)}; a Table 5 matrix must be 2-D")
    if spec.conv1d:
        W = W.T
    if spec.block is not None:
        rows = W.shape[0]
        if rows % spec.blocks:
            raise ValueError(f"{spec.tensor}: {rows} output rows do not split into {spec.blocks} equal Q/K/V blocks")
        size = rows // spec.blocks
        W = W[spec.block * size:(spec.block + 1) * size]
    return W


def matrix(spec: MatrixSpec, tensors: TensorIndex, *, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """The (out, in) matrix of ``spec``, read alone from the checkpoint's files."""
    return cut_matrix(spec, tensors.read(spec.tensor, device=device, dtype=dtype))


def checkpoint_pii(folder: str | Path, name: str, layer: int, *, device: str | torch.device = "cpu",
                   dtype: str = "float64", block_size: int = 1024) -> pd.DataFrame:
    """One row per (matrix, orientation) of layer ``layer`` of the checkpoint in ``folder`` (config name ``name``)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    target = resolve_device(str(device)) if not isinstance(device, torch.device) else device
    tensors = TensorIndex(folder)
    kind = model_type(folder)
    rows: list[dict[str, Any]] = []
    for spec in matrix_specs(kind, layer):
        W = matrix(spec, tensors, device=target, dtype=DTYPES[dtype])
        label = ROW_LABELS.get(name, name) + (f"/{spec.part.capitalize()}" if spec.part else "")
        for orientation in ORIENTATIONS:
            value = float(pii_chunked(W, orientation, block_size=block_size, dtype=DTYPES[dtype]))
            k, length = (W.shape[1], W.shape[0]) if orientation == "columns" else W.shape
            rows.append({
                "model": name, "row_label": label, "model_type": kind, "part": spec.part, "cell": spec.cell,
                "tensor": tensors.resolve(spec.tensor), "block": -1 if spec.block is None else spec.block,
                "layer": int(layer), "orientation": orientation, "table_orientation": spec.table_orientation,
                "in_table": spec.in_table, "used_in_table": spec.in_table and orientation == spec.table_orientation,
                "n_vectors": int(k), "vector_length": int(length), "pii": value,
                "checkpoint": describe_checkpoint(tensors.record),
            })
        del W
    return pd.DataFrame(rows)


def table5_checkpoints(cfg: Mapping[str, Any], *, checkpoint_root: str | Path, device: str = "cpu") -> pd.DataFrame:
    """lu2024-table5 (b) or (c): PII of one layer's matrices of every checkpoint in ``cfg['models']`` (the PLMs BERT,
    RoBERTa, GPT-2, T5 at layer 0, decision A11; the LLMs LLaMA, LLaMA 2, Qwen at layer 8, decision A12)."""
    frames = [
        checkpoint_pii(Path(checkpoint_root) / name, name, cfg["layer"], device=device, dtype=cfg["dtype"],
                       block_size=int(cfg["block_size"]))
        for name in cfg["models"]
    ]
    return pd.concat(frames, ignore_index=True)
