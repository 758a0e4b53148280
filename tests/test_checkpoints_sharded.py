"""Sharded checkpoints offline: the Table 5 registry entries, the tiny families, shard selection and checks.

The Hub is simulated by :class:`FakeHub` (tests/test_checkpoints_cache.py), which copies the allow-listed files
of a tiny stand-in written by the ``tiny`` source into the test's own Hugging Face cache (and records what was
asked for).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx2
import pytest
from huggingface_hub.errors import GatedRepoError

from isonorm.checkpoints import (CHECKPOINTS, CheckpointError, CorruptCheckpointError, MissingCheckpointFilesError,
                                 checkpoint_record, fetch_checkpoint, load_checkpoint_model, load_checkpoint_tokenizer)
from isonorm.checkpoints.registry import INDEX
from isonorm.checkpoints.shards import check_shards, read_index, select_shards
from isonorm.checkpoints.streamed import TensorIndex, model_type
from isonorm.checkpoints.tiny import TINY_FAMILIES, tiny_model_class
from isonorm.sources import GatedRepoAccessError
from test_checkpoints_cache import REAL_SNAPSHOT_DOWNLOAD, FakeHub, hub_cache  # noqa: F401 (a fixture)

LAYER_1 = ["model.layers.1.*"]


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    for name in ("bert", "roberta", "t5", "llama", "qwen"):
        fetch_checkpoint(name, root, source="tiny")
    return root


@pytest.fixture(autouse=True)
def own_cache(hub_cache):
    """No test reads or writes the user's own Hugging Face cache."""
    return hub_cache


def hub_refusing_downloads(refuse):
    """Cache look-ups as usual (the test's cache is empty); a download calls ``refuse(**kwargs)``."""
    return lambda **kw: REAL_SNAPSHOT_DOWNLOAD(**kw) if kw.get("local_files_only") else refuse(**kw)


# ---- registry -----------------------------------------------------------------------------------------------

def test_table5_checkpoints_are_pinned_and_sharded_where_the_hub_is():
    for name in ("bert", "roberta", "t5", "llama", "llama2", "qwen", "gpt2"):
        assert re.fullmatch(r"[0-9a-f]{40}", CHECKPOINTS[name].revision), name
    assert {n for n, s in CHECKPOINTS.items() if s.sharded} == {"llama", "llama2", "qwen"}
    assert {n for n, s in CHECKPOINTS.items() if s.gated} == {"llama2"}
    qwen = CHECKPOINTS["qwen"]
    assert qwen.remote_code and "qwen.tiktoken" in qwen.optional_files and "*.py" in qwen.optional_files
    assert all(".bin" not in pattern for spec in CHECKPOINTS.values() for pattern in (*spec.files, *spec.optional_files))


# ---- tiny families --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kind, sharded", [("bert", "bert", False), ("roberta", "roberta", False),
                                                 ("t5", "t5", False), ("llama", "llama", True), ("qwen", "qwen2", True)])
def test_tiny_families_have_the_real_class_and_layout(tiny_root, name, kind, sharded):
    folder = tiny_root / name
    record = checkpoint_record(folder)
    assert model_type(folder) == kind
    assert record["model_class"] == tiny_model_class(CHECKPOINTS[name].tiny_family)
    if sharded:
        shards = sorted(set(read_index(folder).values()))
        assert len(shards) >= 2 and record["shards"] == shards
    else:
        assert (folder / "model.safetensors").is_file() and not (folder / INDEX).exists()
    model = load_checkpoint_model(folder)  # refuses weights that miss parameters
    names = set(model.state_dict())
    expected = {  # parameter names of the real checkpoints' classes (one layer shown)
        "bert": "encoder.layer.0.attention.self.query.weight",
        "roberta": "encoder.layer.0.intermediate.dense.weight",
        "t5": "decoder.block.0.layer.2.DenseReluDense.wi.weight",
        "llama": "model.layers.1.mlp.up_proj.weight",
        "qwen": "model.layers.1.self_attn.q_proj.weight",
    }[name]
    assert expected in names


def test_tiny_causal_lms_ship_a_tokenizer(tiny_root):
    tokenizer = load_checkpoint_tokenizer(tiny_root / "qwen")
    assert tokenizer.eos_token is not None and len(tokenizer("some words").input_ids) > 0
    assert set(TINY_FAMILIES) >= {"gpt2", "bert", "roberta", "t5", "llama", "qwen2"}


# ---- huggingface: index first, then only the needed shards -------------------------------------------------

def test_only_the_shards_holding_the_needed_tensors_are_downloaded(tmp_path, tiny_root, monkeypatch):
    hub = FakeHub(tiny_root / "llama")
    calls = hub.calls
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    folder = fetch_checkpoint("llama", tmp_path, source="huggingface", tensors=LAYER_1)
    weight_map = read_index(tiny_root / "llama")
    needed = sorted({s for n, s in weight_map.items() if n.startswith("model.layers.1.")})
    others = sorted(set(weight_map.values()) - set(needed))
    assert calls[0] == ["config.json", INDEX]  # the index alone first
    assert [p for p in calls[1] if p.endswith(".safetensors")] == needed
    assert others and not any((folder / s).exists() for s in others)
    record = checkpoint_record(folder)
    assert record["tensors"] == LAYER_1 and record["shards"] == needed
    tensors = TensorIndex(folder)
    assert tensors.read("layers.1.self_attn.q_proj.weight").shape == (64, 64)
    outside = next(n for n, s in weight_map.items() if s in others)
    with pytest.raises(MissingCheckpointFilesError, match="tensors:"):
        tensors.read(outside)
    with pytest.raises(CheckpointError, match="only the shards"):
        load_checkpoint_model(folder)


def test_without_tensors_every_shard_is_fetched(tmp_path, tiny_root, monkeypatch):
    hub = FakeHub(tiny_root / "qwen")
    calls = hub.calls
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    folder = fetch_checkpoint("qwen", tmp_path, source="huggingface")
    assert sorted(checkpoint_record(folder)["shards"]) == sorted(set(read_index(folder).values()))
    assert "qwen.tiktoken" in calls[1] and "*.py" in calls[1]  # the LoRA part's model build needs them
    load_checkpoint_model(folder)


def test_patterns_that_match_nothing_are_named(tmp_path, tiny_root, monkeypatch):
    monkeypatch.setattr("huggingface_hub.snapshot_download", FakeHub(tiny_root / "llama"))
    with pytest.raises(ValueError, match="no tensor of the checkpoint matches"):
        fetch_checkpoint("llama", tmp_path, source="huggingface", tensors=["transformer.h.8.*"])
    with pytest.raises(ValueError, match="sharded"):
        fetch_checkpoint("bert", tmp_path, source="huggingface", tensors=["encoder.*"])


# ---- gated repository ---------------------------------------------------------------------------------------------

def test_a_gated_repository_without_token_names_the_licence_page(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    monkeypatch.setattr("huggingface_hub.snapshot_download",
                        hub_refusing_downloads(lambda **kw: pytest.fail("no download without token")))
    with pytest.raises(GatedRepoAccessError) as err:
        fetch_checkpoint("llama2", tmp_path, source="huggingface", tensors=["model.layers.8.*"])
    assert "https://huggingface.co/meta-llama/Llama-2-7b-hf" in str(err.value) and "HF_TOKEN" in str(err.value)


def test_a_refused_token_names_the_licence_page(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.get_token", lambda: "hf_simulated")
    response = httpx2.Response(403, request=httpx2.Request("GET", "https://huggingface.co/api/models/x"))

    def refuse(**kwargs):
        raise GatedRepoError("simulated", response=response)

    monkeypatch.setattr("huggingface_hub.snapshot_download", hub_refusing_downloads(refuse))
    with pytest.raises(GatedRepoAccessError, match="https://huggingface.co/meta-llama/Llama-2-7b-hf"):
        fetch_checkpoint("llama2", tmp_path, source="huggingface")


# ---- local staging and corrupt shards ---------------------------------------------------------------------------

def test_local_stages_only_the_needed_shards(tmp_path, tiny_root):
    folder = fetch_checkpoint("llama", tmp_path / "a", source="local", path=tiny_root / "llama", tensors=LAYER_1)
    assert set(checkpoint_record(folder)["shards"]) < set(read_index(folder).values())
    staged = tmp_path / "staged"
    shutil.copytree(tiny_root / "llama", staged)
    shard = read_index(staged)["model.layers.1.mlp.up_proj.weight"]
    (staged / shard).unlink()
    with pytest.raises(MissingCheckpointFilesError, match=shard):
        fetch_checkpoint("llama", tmp_path / "b", source="local", path=staged, tensors=LAYER_1)


def test_a_truncated_shard_is_named(tmp_path, tiny_root):
    folder = tmp_path / "llama"
    fetch_checkpoint("llama", tmp_path, source="local", path=tiny_root / "llama")
    shard = folder / checkpoint_record(folder)["shards"][0]
    data = shard.read_bytes()
    shard.unlink()
    shard.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptCheckpointError, match=shard.name):
        checkpoint_record(folder)


def test_an_index_that_disagrees_with_its_shard_is_named(tmp_path, tiny_root):
    folder = tmp_path / "copy"
    shutil.copytree(tiny_root / "llama", folder)
    index = json.loads((folder / INDEX).read_text())
    shards = sorted(set(index["weight_map"].values()))
    index["weight_map"]["model.layers.0.extra.weight"] = shards[0]
    (folder / INDEX).write_text(json.dumps(index))
    with pytest.raises(CorruptCheckpointError, match="different revisions"):
        check_shards(folder, shards, read_index(folder))
    (folder / INDEX).write_text("{}")
    with pytest.raises(CorruptCheckpointError, match="weight_map"):
        read_index(folder)
    assert select_shards({"a.b": "s1.safetensors", "c.d": "s2.safetensors"}, None, what="x") == [
        "s1.safetensors", "s2.safetensors"]
