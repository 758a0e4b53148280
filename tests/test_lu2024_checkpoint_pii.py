"""Table 5 (b)/(c): chunked PII, streamed tensors equal the model's own, name maps and orientations, summaries.

Mathematical facts only (chunked = dense PII; collinear → 1; orthogonal → 0; i.i.d. columns ≈ √(2/(π·dim))),
and equality of the streamed path with the whole-model path on tiny stand-ins; never a number of the paper.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import save_file

from isonorm.checkpoints import fetch_checkpoint, load_checkpoint_model
from isonorm.checkpoints.shards import read_index
from isonorm.checkpoints.streamed import TensorIndex
from isonorm.experiments.lu2024.checkpoint_pii import (
    CELLS,
    matrix,
    matrix_specs,
    table5_checkpoints,
)
from isonorm.experiments.lu2024.checkpoint_summaries import claims, quantity, t5_decoder_ffn, table5_rows
from isonorm.metrics.pii import pii, pii_chunked
from isonorm.results import write_results

PLMS = ["bert", "roberta", "gpt2", "t5"]
LLMS = ["llama", "qwen"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("checkpoints")
    for seed, name in enumerate([*PLMS, *LLMS]):
        fetch_checkpoint(name, root, source="tiny", seed=seed)
    return root


# ---- chunked PII ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", ["columns", "rows"])
@pytest.mark.parametrize("block_size", [1, 7, 64, 1000])
def test_chunked_pii_equals_the_dense_one(dim, block_size):
    W = torch.randn(48, 70, generator=torch.Generator().manual_seed(1))
    assert float(pii_chunked(W, dim, block_size=block_size)) == pytest.approx(float(pii(W, dim)), abs=1e-12)
    assert float(pii_chunked(W, dim, dtype=torch.float32)) == pytest.approx(float(pii(W, dim)), abs=1e-6)


def test_chunked_pii_computes_in_the_dtype_it_is_given():
    from torch.utils._python_dispatch import TorchDispatchMode

    class ProductDtypes(TorchDispatchMode):  # the dtypes of every matrix product dispatched
        def __init__(self):
            super().__init__()
            self.seen = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket.__name__ in ("mm", "bmm", "matmul", "addmm"):
                self.seen.add(args[0].dtype)
            return func(*args, **(kwargs or {}))

    W = torch.randn(40, 30, generator=torch.Generator().manual_seed(2), dtype=torch.float16)
    for dtype in (torch.float32, torch.float64):
        with ProductDtypes() as products:
            value = pii_chunked(W, "columns", block_size=8, dtype=dtype)
        assert products.seen == {dtype} and value.dtype == torch.float64  # sums are float64 either way
    single = float(pii_chunked(W, "columns", dtype=torch.float32))
    double = float(pii_chunked(W, "columns", dtype=torch.float64))
    assert single != double and single == pytest.approx(double, abs=1e-6)


def test_chunked_pii_of_collinear_orthogonal_and_random_vectors():
    direction = torch.randn(30, 1, dtype=torch.float64)
    scales = torch.tensor([[1.0, -2.0, 0.5, 3.0]], dtype=torch.float64)
    assert float(pii_chunked(direction * scales, "columns", block_size=3)) == pytest.approx(1.0)
    Q, _ = torch.linalg.qr(torch.randn(40, 40, dtype=torch.float64))
    assert float(pii_chunked(Q, "columns", block_size=16)) == pytest.approx(0.0, abs=1e-12)
    dim = 400  # E|cos| of two independent isotropic vectors ≈ √(2/(π·dim)) (A.1.1)
    W = torch.randn(dim, 300, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert float(pii_chunked(W, "columns", block_size=64)) == pytest.approx(math.sqrt(2 / (math.pi * dim)), rel=0.05)
    with pytest.raises(ValueError, match="two columns"):
        pii_chunked(torch.ones(5, 1), "columns")


# ---- streamed tensors equal the model's own ------------------------------------------------------------------------

def test_streamed_llama_matrices_equal_the_built_model(root):
    folder = root / "llama"
    params = load_checkpoint_model(folder).state_dict()
    tensors = TensorIndex(folder)
    weight_map = read_index(folder)
    specs = matrix_specs("llama", 1)
    assert len({weight_map[tensors.resolve(s.tensor)] for s in specs}) >= 2  # the layer spans several shards
    for spec in specs:
        W = matrix(spec, tensors, device=torch.device("cpu"), dtype=torch.float64)
        assert torch.equal(W, params["model." + spec.tensor].double())
        assert float(pii_chunked(W, "rows", block_size=16)) == pytest.approx(float(pii(params["model." + spec.tensor], "rows")))


def test_gpt2_conv1d_is_transposed_and_c_attn_split_into_q_k_v(root):
    model = load_checkpoint_model(root / "gpt2")
    tensors = TensorIndex(root / "gpt2")
    attn = model.h[0].attn.c_attn.weight.detach().double().T  # Conv1D (in, out) → (out, in)
    width = attn.shape[1]
    got = {s.cell: matrix(s, tensors, device=torch.device("cpu"), dtype=torch.float64) for s in matrix_specs("gpt2", 0)}
    for i, cell in enumerate(CELLS[:3]):
        assert torch.equal(got[cell], attn[i * width:(i + 1) * width])
    assert torch.equal(got["Linear_1"], model.h[0].mlp.c_fc.weight.detach().double().T)
    assert got["Linear_1"].shape == (4 * width, width)


def test_qwen_v1_packed_c_attn_is_split_into_three_row_blocks(tmp_path):
    hidden = 8
    weights = {f"transformer.h.2.attn.c_attn.weight": torch.randn(3 * hidden, hidden),
               "transformer.h.2.attn.c_proj.weight": torch.randn(hidden, hidden),
               "transformer.h.2.mlp.w1.weight": torch.randn(20, hidden),
               "transformer.h.2.mlp.w2.weight": torch.randn(20, hidden)}
    save_file(weights, tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen"}))
    tensors = TensorIndex(tmp_path, check=False)
    specs = matrix_specs("qwen", 2)
    assert [s.table_orientation for s in specs] == ["columns"] * 6  # LLMs: PII_col (decision A1)
    for i, spec in enumerate(specs[:3]):
        W = matrix(spec, tensors, device=torch.device("cpu"), dtype=torch.float64)
        assert torch.equal(W, weights["transformer.h.2.attn.c_attn.weight"][i * hidden:(i + 1) * hidden].double())


def test_orientations_follow_decision_A1():
    bert = {s.cell: s.table_orientation for s in matrix_specs("bert", 0)}
    assert bert == {"Query": "columns", "Keys": "columns", "Values": "columns",
                    "Atten_Output": "rows", "Linear_1": "rows", "Linear_2": "rows"}
    assert all(s.table_orientation == "columns" for s in matrix_specs("llama", 8))
    t5 = matrix_specs("t5", 0)
    assert [s.tensor for s in t5 if not s.in_table] == ["decoder.block.0.layer.2.DenseReluDense.wi.weight",
                                                       "decoder.block.0.layer.2.DenseReluDense.wo.weight"]
    with pytest.raises(ValueError, match="no Table 5 name map"):
        matrix_specs("mamba", 0)


# ---- experiment functions, summaries and claims ------------------------------------------------------------------

def test_table5_rows_and_claims_from_tiny_checkpoints(root, tmp_path):
    plms = table5_checkpoints({"models": PLMS, "layer": 0, "dtype": "float64", "block_size": 32},
                              checkpoint_root=root, device="cpu")
    llms = table5_checkpoints({"models": LLMS, "layer": 1, "dtype": "float64", "block_size": 1024},
                              checkpoint_root=root, device="cpu")
    # one row per (model part, matrix, orientation); exactly one orientation of each cell is the table's
    assert len(plms) == (3 * 6 + 2 * 6) * 2 and len(llms) == 2 * 6 * 2
    assert plms.groupby(["row_label", "cell"])["used_in_table"].sum().max() == 1
    assert plms["pii"].between(0, 1).all() and llms["pii"].between(0, 1).all()
    table = table5_rows(plms)
    assert list(table.columns) == ["model", *CELLS]
    assert list(table["model"]) == ["Bert", "Roberta", "GPT-2", "T5/Encoder", "T5/Decoder"]
    decoder = table.set_index("model").loc["T5/Decoder"]
    assert np.isnan(decoder["Linear_1"]) and np.isnan(decoder["Linear_2"]) and not np.isnan(decoder["Query"])
    assert list(t5_decoder_ffn(plms)["model"]) == ["T5/Decoder"]
    assert list(table5_rows(llms)["model"]) == ["LLama", "Qwen (before LoRA)"]

    paths = {}
    for key, frame in (("table5_plms", plms), ("table5_llms", llms)):
        paths[key] = [str(tmp_path / f"{key}.parquet")]
        write_results(frame, paths[key][0], config={})
    out = claims(paths, {})["lu2024-table5"]
    assert out[quantity("T5/Encoder", "Linear_1")] == pytest.approx(
        float(plms.query("row_label == 'T5/Encoder' and cell == 'Linear_1' and orientation == 'rows'")["pii"].iloc[0]))
    assert quantity("T5/Decoder", "Linear_1") not in out
    assert out["plm_pii_max"] == pytest.approx(np.nanmax(table[list(CELLS)].to_numpy(dtype=float)))
    llm = np.nanmean(table5_rows(llms)[list(CELLS)].to_numpy(dtype=float))
    assert out["llm_over_plm_mean_pii"] == pytest.approx(llm / np.nanmean(table[list(CELLS)].to_numpy(dtype=float)))
    assert claims({"table5_llms": paths["table5_llms"]}, {})["lu2024-table5"].keys().isdisjoint({"plm_pii_max"})
    assert claims({}, {}) == {}
