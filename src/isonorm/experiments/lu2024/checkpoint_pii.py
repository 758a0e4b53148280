"""Table 5 (b) PLMs and (c) LLMs of Lu et al. 2024: PII of one layer's attention and FFN matrices of checkpoints.

No model is built: each matrix is read alone from the safetensors files (:mod:`isonorm.checkpoints.streamed`)
and its PII computed in blocks (:func:`isonorm.metrics.pii.pii_chunked`), so a 7B model's layer costs about
1 GB of memory. The name maps below are keyed on config.json ``model_type`` (spec lu2024 (5b)/(5c)):

- BERT/RoBERTa [code PLM.py]: Q/K/V = ``attention.self.{query,key,value}``; Atten_Output =
  ``attention.output.dense``; Linear_1 = ``intermediate.dense``; Linear_2 = ``output.dense``.
- GPT-2 [assumption (5b)]: Conv1D weights stored (in, out) are transposed to (out, in); ``attn.c_attn`` is
  split along ``out`` into Q, K, V; ``attn.c_proj``, ``mlp.c_fc``, ``mlp.c_proj``.
- T5 [decision 11]: encoder and decoder self-attention ``SelfAttention.{q,k,v,o}``; encoder FFN
  ``layer.1.DenseReluDense.{wi,wo}``; the decoder's FFN is ``layer.2`` (``layer.1`` is cross-attention): the
  table keeps the paper's "-" and the real values are a supplementary row.
- LLaMA [decision 12]: ``self_attn.{q,k,v,o}_proj``; Linear_1 = ``mlp.up_proj``, Linear_2 = ``mlp.gate_proj``.
- Qwen v1 [code qwen_lora.py]: ``attn.c_attn`` (12288×4096) split into three 4096-row blocks Q, K, V;
  ``attn.c_proj``; Linear_1 = ``mlp.w1``, Linear_2 = ``mlp.w2``. Qwen2 (the tiny stand-in): as LLaMA.

Orientation (decision 1): PII_col everywhere except PLM.py's rows for Atten_Output/Linear_1/Linear_2 of
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
    table_orientation: str  # "columns" | "rows" (decision 1)
    block: int | None = None  # packed Q/K/V: which of `blocks` equal row blocks of the (out, in) matrix
    blocks: int = 1
    conv1d: bool = False  # GPT-2's Conv1D stores (in, out): transpose to PyTorch's (out, in) first
    in_table: bool = True  # False: a supplementary value the paper's table does not show (T5 decoder FFN)


def _bert_like(layer: int) -> list[MatrixSpec]:
    p = f"encoder.layer.{layer}."
    return [
        MatrixSpec("", "Query", p + "attention.self.query.weight", "columns"),
        MatrixSpec("", "Keys", p + "attention.self.key.weight", "columns"),
        MatrixSpec("", "Values", p + "attention.self.value.weight", "columns"),
        MatrixSpec("", "Atten_Output", p + "attention.output.dense.weight", "rows"),
        MatrixSpec("", "Linear_1", p + "intermediate.dense.weight", "rows"),
        MatrixSpec("", "Linear_2", p + "output.dense.weight", "rows"),
    ]


def _gpt2(layer: int) -> list[MatrixSpec]:
    p = f"h.{layer}."
    qkv = [MatrixSpec("", c, p + "attn.c_attn.weight", "columns", block=i, blocks=3, conv1d=True)
           for i, c in enumerate(CELLS[:3])]
    return qkv + [
        MatrixSpec("", "Atten_Output", p + "attn.c_proj.weight", "rows", conv1d=True),
        MatrixSpec("", "Linear_1", p + "mlp.c_fc.weight", "rows", conv1d=True),
        MatrixSpec("", "Linear_2", p + "mlp.c_proj.weight", "rows", conv1d=True),
    ]


def _t5(layer: int) -> list[MatrixSpec]:
    specs = []
    for part, ffn_index, in_table in (("encoder", 1, True), ("decoder", 2, False)):
        p = f"{part}.block.{layer}.layer."
        specs += [
            MatrixSpec(part, "Query", p + "0.SelfAttention.q.weight", "columns"),
            MatrixSpec(part, "Keys", p + "0.SelfAttention.k.weight", "columns"),
            MatrixSpec(part, "Values", p + "0.SelfAttention.v.weight", "columns"),
            MatrixSpec(part, "Atten_Output", p + "0.SelfAttention.o.weight", "rows"),
            MatrixSpec(part, "Linear_1", p + f"{ffn_index}.DenseReluDense.wi.weight", "rows", in_table=in_table),
            MatrixSpec(part, "Linear_2", p + f"{ffn_index}.DenseReluDense.wo.weight", "rows", in_table=in_table),
        ]
    return specs


def _llama(layer: int) -> list[MatrixSpec]:
    p = f"layers.{layer}."
    return [
        MatrixSpec("", "Query", p + "self_attn.q_proj.weight", "columns"),
        MatrixSpec("", "Keys", p + "self_attn.k_proj.weight", "columns"),
        MatrixSpec("", "Values", p + "self_attn.v_proj.weight", "columns"),
        MatrixSpec("", "Atten_Output", p + "self_attn.o_proj.weight", "columns"),
        MatrixSpec("", "Linear_1", p + "mlp.up_proj.weight", "columns"),
        MatrixSpec("", "Linear_2", p + "mlp.gate_proj.weight", "columns"),
    ]


def _qwen(layer: int) -> list[MatrixSpec]:
    p = f"h.{layer}."
    qkv = [MatrixSpec("", c, p + "attn.c_attn.weight", "columns", block=i, blocks=3) for i, c in enumerate(CELLS[:3])]
    return qkv + [
        MatrixSpec("", "Atten_Output", p + "attn.c_proj.weight", "columns"),
        MatrixSpec("", "Linear_1", p + "mlp.w1.weight", "columns"),
        MatrixSpec("", "Linear_2", p + "mlp.w2.weight", "columns"),
    ]


NAME_MAPS = {"bert": _bert_like, "roberta": _bert_like, "gpt2": _gpt2, "t5": _t5, "llama": _llama,
             "qwen": _qwen, "qwen2": _llama}


def matrix_specs(kind: str, layer: int) -> list[MatrixSpec]:
    """The Table 5 matrices of layer ``layer`` of a checkpoint whose config.json model_type is ``kind``."""
    try:
        return NAME_MAPS[kind](int(layer))
    except KeyError:
        raise ValueError(
            f"no Table 5 name map for model_type {kind!r}; known: {sorted(NAME_MAPS)}. Add one to "
            "isonorm.experiments.lu2024.checkpoint_pii.NAME_MAPS"
        ) from None


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


def _table5_part(cfg: Mapping[str, Any], checkpoint_root: str | Path, device: str) -> pd.DataFrame:
    missing = sorted({"models", "layer"} - set(cfg))
    if missing:
        raise ValueError(f"Table 5 checkpoint config lacks {missing}; see config.yaml lu2024: table5:")
    frames = [
        checkpoint_pii(Path(checkpoint_root) / name, name, cfg["layer"], device=device,
                       dtype=cfg.get("dtype", "float64"), block_size=int(cfg.get("block_size", 1024)))
        for name in cfg["models"]
    ]
    return pd.concat(frames, ignore_index=True)


def table5_plms(cfg: Mapping[str, Any], *, checkpoint_root: str | Path, device: str = "cpu") -> pd.DataFrame:
    """Table 5 (b): BERT, RoBERTa, GPT-2, T5 (encoder, decoder) at ``cfg['layer']`` (0, decision 11)."""
    return _table5_part(cfg, checkpoint_root, device)


def table5_llms(cfg: Mapping[str, Any], *, checkpoint_root: str | Path, device: str = "cpu") -> pd.DataFrame:
    """Table 5 (c): LLaMA, LLaMA 2, Qwen (before LoRA) at ``cfg['layer']`` (8, decision 12)."""
    return _table5_part(cfg, checkpoint_root, device)
