"""The ``random`` checkpoint source: the real sizes, names, shapes, dtypes and Hub layout, offline.

Full sizes are checked on the name/shape plan alone (meta tensors, no data); files are written at reduced
widths (the real class, vocabulary and depth, ``FULL_SIZES`` patched), so the whole file runs in seconds.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
import torch
import transformers

from isonorm.checkpoints import (CHECKPOINTS, CheckpointError, MissingCheckpointFilesError, checkpoint_record,
                                 describe_checkpoint, fetch_checkpoint, load_checkpoint_model)
from isonorm.checkpoints.full_size import FULL_DTYPES, FULL_SIZES, full_sizes
from isonorm.checkpoints.random_weights import build_config, shard_map, tensor_plan
from isonorm.checkpoints.registry import INDEX
from isonorm.checkpoints.shards import read_index
from isonorm.checkpoints.streamed import TensorIndex
from isonorm.checkpoints.tiny import tiny_model_class
from isonorm.experiments.lu2024.checkpoint_pii import checkpoint_pii

NAMES = ("gpt2", "bert", "roberta", "t5", "llama", "llama2", "qwen")
# Known parameter counts of the real models' classes (GPT-2 small 124M, BERT-base 110M, RoBERTa-base 125M,
# T5-base 223M, LLaMA-7B 6.74B, Qwen-7B 7.72B) and one tensor each with its real shape.
PARAMS = {"gpt2": 124_439_808, "bert": 109_482_240, "roberta": 124_645_632, "t5": 222_903_552,
          "llama": 6_738_415_616, "llama2": 6_738_415_616, "qwen": 7_721_324_544}
SHAPES = {"gpt2": ("h.11.attn.c_attn.weight", (768, 2304)), "bert": ("encoder.layer.11.intermediate.dense.weight",
          (3072, 768)), "roberta": ("embeddings.token_type_embeddings.weight", (1, 768)),
          "t5": ("shared.weight", (32128, 768)), "llama": ("model.layers.8.mlp.up_proj.weight", (11008, 4096)),
          "llama2": ("lm_head.weight", (32000, 4096)), "qwen": ("model.embed_tokens.weight", (151936, 4096))}
SAFETENSORS_DTYPE = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
NARROW = {  # reduced widths for written files; depth, vocabulary and positions stay real
    "gpt2": {"n_embd": 32, "n_head": 2, "n_layer": 2},
    "t5": {"d_model": 32, "d_ff": 64, "num_heads": 2, "d_kv": 16, "num_layers": 2},
    "bert": {"hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64, "num_hidden_layers": 2},
    "llama": {"hidden_size": 32, "num_attention_heads": 2, "num_key_value_heads": 2, "intermediate_size": 64},
}
LAYER_8 = ["model.layers.8.*"]


def narrow(name: str) -> dict:
    family = CHECKPOINTS[name].tiny_family
    return {**FULL_SIZES[name], **NARROW[{"roberta": "bert", "qwen2": "llama"}.get(family, family)]}


@pytest.fixture
def narrow_sizes(monkeypatch):
    for name in NAMES:
        monkeypatch.setitem(FULL_SIZES, name, narrow(name))


def header(path: Path) -> dict:
    with path.open("rb") as stream:
        (length,) = struct.unpack("<Q", stream.read(8))
        return {k: v for k, v in json.loads(stream.read(length)).items() if k != "__metadata__"}


def written(folder: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """{tensor: (shape, safetensors dtype)} over every weight file in ``folder``."""
    return {n: (tuple(v["shape"]), v["dtype"]) for f in sorted(folder.glob("*.safetensors"))
            for n, v in header(f).items()}


def weight_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name != ".ready"}


# ---- (a) real sizes: the plan equals the class's meta model --------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_the_plan_at_full_size_is_the_meta_model_of_the_real_class(name):
    family = CHECKPOINTS[name].tiny_family
    plan = tensor_plan(family, build_config(family, full_sizes(name), FULL_DTYPES[name]))
    cls = getattr(transformers, tiny_model_class(family))
    with torch.device("meta"):
        model = cls(cls.config_class(**FULL_SIZES[name]))
    tied = set(getattr(model, "all_tied_weights_keys", None) or {})
    assert {n: p.shape for n, p in plan.items()} == {n: tuple(t.shape) for n, t in model.state_dict().items()
                                                      if n not in tied}
    assert sum(math.prod(p.shape) for p in plan.values()) == PARAMS[name]
    tensor, shape = SHAPES[name]
    assert plan[tensor].shape == shape
    if family == "t5":  # the shared embedding is saved once, as save_pretrained does
        assert "encoder.embed_tokens.weight" not in plan and "decoder.embed_tokens.weight" not in plan
    fills = {n: p.fill for n, p in plan.items()}
    assert {fills[n] for n in plan if n.endswith(".bias")} <= {"zeros"} and "ones" in fills.values()
    if CHECKPOINTS[name].sharded:  # one 0.4 GB shard per layer; the 1.2 GB embedding shards of Qwen the largest
        files = shard_map(list(plan), True)
        per_file: dict[str, int] = {}
        for n, f in files.items():
            per_file[f] = per_file.get(f, 0) + math.prod(plan[n].shape) * FULL_DTYPES[name].itemsize
        layer_8 = {files[n] for n in plan if n.startswith("model.layers.8.")}
        assert len(per_file) == 34 and len(layer_8) == 1 and 0.40e9 < per_file[layer_8.pop()] < 0.41e9
        assert max(per_file.values()) < 1.25e9


def test_num_hidden_layers_cuts_the_depth_key_of_each_family():
    assert full_sizes("gpt2", 2)["n_layer"] == 2 and full_sizes("llama", 3)["num_hidden_layers"] == 3
    t5 = full_sizes("t5", 4)
    assert (t5["num_layers"], t5["num_decoder_layers"], t5["d_model"]) == (4, 4, 768)
    with pytest.raises(ValueError, match=r"num_hidden_layers.*1\.\.32"):
        full_sizes("qwen", 33)


# ---- written files at reduced widths: names, shapes and dtypes as save_pretrained writes them ------------------

@pytest.mark.parametrize("name", NAMES)
def test_written_files_are_what_save_pretrained_of_the_class_writes(tmp_path, narrow_sizes, name):
    spec = CHECKPOINTS[name]
    folder = fetch_checkpoint(name, tmp_path / "random", source="random", seed=3)
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == [tiny_model_class(spec.tiny_family)]
    cls = getattr(transformers, tiny_model_class(spec.tiny_family))
    cls(cls.config_class.from_pretrained(folder)).save_pretrained(tmp_path / "reference", max_shard_size="10GB")
    reference = {n: shape for n, (shape, _) in written(tmp_path / "reference").items()}
    files = written(folder)
    assert {n: shape for n, (shape, _) in files.items()} == reference
    assert {dtype for _, dtype in files.values()} == {SAFETENSORS_DTYPE[FULL_DTYPES[name]]}
    assert (folder / INDEX).is_file() == spec.sharded
    record = checkpoint_record(folder)
    assert record["source"] == "random" and record["repo"] is None and set(record["files"]) == set(weight_bytes(folder))


# ---- (b) same seed, same bytes ----------------------------------------------------------------------------------

def test_the_same_seed_writes_the_same_bytes_whatever_shards_are_written(tmp_path, narrow_sizes):
    first = weight_bytes(fetch_checkpoint("llama", tmp_path / "a", source="random", seed=7))
    assert first == weight_bytes(fetch_checkpoint("llama", tmp_path / "b", source="random", seed=7))
    other = weight_bytes(fetch_checkpoint("llama", tmp_path / "c", source="random", seed=8))
    assert other.keys() == first.keys() and other != first
    partial = weight_bytes(fetch_checkpoint("llama", tmp_path / "d", source="random", seed=7, tensors=LAYER_8))
    assert all(first[f] == data for f, data in partial.items())  # a partial write holds the same tensors


# ---- (c) tensors: only the shard holding layer 8, read by the Table 5 (c) layer reader --------------------------

def test_tensors_writes_only_the_layer_8_shard_and_the_layer_reader_reads_it(tmp_path, narrow_sizes):
    folder = fetch_checkpoint("llama", tmp_path, source="random", tensors=LAYER_8)
    weight_map = read_index(folder)
    family = CHECKPOINTS["llama"].tiny_family
    assert set(weight_map) == set(tensor_plan(family, build_config(family, full_sizes("llama"), torch.float16)))
    holding = sorted({f for n, f in weight_map.items() if n.startswith("model.layers.8.")})
    assert sorted(p.name for p in folder.glob("*.safetensors")) == holding
    assert checkpoint_record(folder)["shards"] == holding and len(set(weight_map.values())) == 34
    rows = checkpoint_pii(folder, "llama", 8)
    assert len(rows) and rows["pii"].notna().all() and set(rows["layer"]) == {8}
    assert "random LlamaForCausalLM" in rows["checkpoint"].iloc[0]
    with pytest.raises(MissingCheckpointFilesError, match="tensors:"):
        TensorIndex(folder).read("model.layers.7.mlp.up_proj.weight")
    with pytest.raises(CheckpointError, match="only the shards"):
        load_checkpoint_model(folder)


# ---- (d) num_hidden_layers: truncated depth, loadable ---------------------------------------------------------

def test_num_hidden_layers_is_recorded_and_the_folder_loads(tmp_path, narrow_sizes):
    folder = fetch_checkpoint("qwen", tmp_path, source="random", num_hidden_layers=2)
    assert json.loads((folder / "config.json").read_text())["num_hidden_layers"] == 2
    assert len(set(read_index(folder).values())) == 4  # embeddings, 2 layers, norm + output layer
    model = load_checkpoint_model(folder)
    assert type(model).__name__ == "Qwen2ForCausalLM" and model.config.num_hidden_layers == 2
    logits = model(input_ids=torch.tensor([[1, 2, 3]])).logits
    assert logits.shape == (1, 3, 151936) and torch.isfinite(logits).all()
    assert "num_hidden_layers': 2" in describe_checkpoint(checkpoint_record(folder))


# ---- (e) options with the wrong source ------------------------------------------------------------------------

def test_options_of_the_wrong_source_are_named_with_the_fix(tmp_path):
    with pytest.raises(ValueError, match=r"\['hidden_size'\] size only the `tiny` source; `random` has the real"):
        fetch_checkpoint("llama", tmp_path, source="random", hidden_size=64)
    with pytest.raises(ValueError, match=r"\['num_hidden_layers'\] size only the `tiny` source \(`num_hidden_layers`"
                                         r" also truncates the `random` source\)"):
        fetch_checkpoint("bert", tmp_path, source="huggingface", num_hidden_layers=2)
    with pytest.raises(ValueError, match="tiny GPT-2's depth is `n_layer`"):
        fetch_checkpoint("gpt2", tmp_path, source="tiny", num_hidden_layers=2)
    with pytest.raises(ValueError, match="`tensors` chooses shards of a sharded checkpoint"):
        fetch_checkpoint("t5", tmp_path, source="random", tensors=["encoder.*"])
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['num_layers'\]"):
        fetch_checkpoint("t5", tmp_path, source="random", num_layers=2)
    with pytest.raises(ValueError, match="no tensor of the checkpoint matches"):
        fetch_checkpoint("llama", tmp_path, source="random", tensors=["transformer.h.8.*"])
    assert not any((tmp_path / "llama").glob("*"))  # refused before anything is written
    with pytest.raises(ValueError, match="1..12"):
        fetch_checkpoint("gpt2", tmp_path, source="random", num_hidden_layers=13)
    assert not (tmp_path / "gpt2").exists()
