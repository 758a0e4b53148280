"""The checkpoint stage offline: tiny/local/huggingface sources, markers, Hub errors and corrupt folders.

Hub failures are simulated by replacing ``snapshot_download`` with functions raising huggingface_hub's own
exception classes, and the Hub by :class:`FakeHub` (tests/test_checkpoints_cache.py, which also tests the
Hugging Face cache itself); every model here is a tiny random GPT-2 written by the ``tiny`` source, and every
test has a Hugging Face cache of its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx2
import pytest
import torch
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from isonorm.checkpoints import (
    CHECKPOINTS,
    CorruptCheckpointError,
    MissingCheckpointFilesError,
    checkpoint_record,
    fetch_checkpoint,
    load_checkpoint_model,
    load_checkpoint_tokenizer,
)
from isonorm.checkpoints.validate import check_safetensors
from isonorm.sources import GatedRepoAccessError, HubNotFoundError, HubUnreachableError
from test_checkpoints_cache import REAL_SNAPSHOT_DOWNLOAD, FakeHub, hub_cache  # noqa: F401 (a fixture)

SPEC = CHECKPOINTS["gpt2"]


@pytest.fixture(autouse=True)
def own_cache(hub_cache):
    """No test reads or writes the user's own Hugging Face cache."""
    return hub_cache


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return fetch_checkpoint("gpt2", tmp_path_factory.mktemp("ckpt"), source="tiny")


def files_of(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in SPEC.files}


def copy_files(source: Path, target: Path, skip: tuple[str, ...] = ()) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in SPEC.files:
        if name not in skip:
            shutil.copyfile(source / name, target / name)
    return target


def hub_error(cls, status: int = 404, message: str = "simulated"):
    response = httpx2.Response(status, request=httpx2.Request("GET", "https://huggingface.co/api/models/x"))
    return cls(message, response=response)


def failing_hub(monkeypatch, error) -> list[int]:
    """Replace snapshot_download by one raising ``error()``; returns the list its attempts are counted in."""
    attempts: list[int] = []

    def snapshot_download(**kwargs):
        if kwargs.get("local_files_only"):  # the look-up in the (empty) cache that precedes any download
            return REAL_SNAPSHOT_DOWNLOAD(**kwargs)
        attempts.append(1)
        raise error()

    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    return attempts


# ---- registry ---------------------------------------------------------------------------------------------

def test_gpt2_is_pinned_to_a_commit_and_allow_lists_safetensors_only():
    assert SPEC.repo == "openai-community/gpt2"
    assert len(SPEC.revision) == 40 and int(SPEC.revision, 16) >= 0  # a full commit sha, never a branch
    assert "model.safetensors" in SPEC.files and not any(f.endswith((".bin", ".h5", ".msgpack")) for f in SPEC.files)
    assert SPEC.model_class == "GPT2Model"  # joudaki2023-figb5: no LM head


def test_tiny_sizes_are_options_of_the_tiny_source_only(tmp_path):
    """(Unknown names and sources, `path`: tests/test_sources.py, for every kind.)"""
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['n_layers'\]; known: .*'n_layer'"):
        fetch_checkpoint("gpt2", tmp_path, source="tiny", n_layers=3)
    with pytest.raises(ValueError, match=r"\['n_layer'\] size only the `tiny` source"):
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", n_layer=3)


# ---- tiny -------------------------------------------------------------------------------------------------

def test_tiny_has_the_real_layout_and_loads_with_the_same_code(tiny_dir):
    assert SPEC.missing_files(tiny_dir) == []
    record = checkpoint_record(tiny_dir)
    assert record["source"] == "tiny" and set(record["files"]) == set(SPEC.files)
    model = load_checkpoint_model(tiny_dir)
    tokenizer = load_checkpoint_tokenizer(tiny_dir)
    assert type(model).__name__ == "GPT2Model" and not model.training
    assert model.config._attn_implementation == "eager"
    ids = tokenizer("A lighthouse is a tall tower.", return_tensors="pt")["input_ids"]
    assert int(ids.max()) < model.config.vocab_size
    assert tokenizer.decode(ids[0]) == "A lighthouse is a tall tower."  # byte-level BPE round-trips
    out = model(input_ids=ids).last_hidden_state
    assert out.shape == (1, ids.shape[1], model.config.n_embd)


def test_tiny_is_deterministic_per_seed(tmp_path, tiny_dir):
    again = fetch_checkpoint("gpt2", tmp_path / "a", source="tiny")
    assert files_of(again) == files_of(tiny_dir)
    other = fetch_checkpoint("gpt2", tmp_path / "b", source="tiny", seed=1)
    assert (other / "model.safetensors").read_bytes() != (tiny_dir / "model.safetensors").read_bytes()
    assert (other / "tokenizer.json").read_bytes() == (tiny_dir / "tokenizer.json").read_bytes()


def test_tiny_sizes_are_configurable(tmp_path):
    folder = fetch_checkpoint("gpt2", tmp_path, source="tiny", n_layer=1, n_embd=32, n_head=4)
    config = json.loads((folder / "config.json").read_text())
    assert (config["n_layer"], config["n_embd"], config["n_head"]) == (1, 32, 4)


def test_a_complete_checkpoint_is_never_rewritten(tmp_path):
    folder = fetch_checkpoint("gpt2", tmp_path, source="tiny")
    marker = (folder / ".ready").read_text()
    assert fetch_checkpoint("gpt2", tmp_path, source="tiny") == folder
    assert (folder / ".ready").read_text() == marker
    with pytest.raises(RuntimeError, match="never overwritten"):
        fetch_checkpoint("gpt2", tmp_path, source="tiny", seed=3)


# ---- local ------------------------------------------------------------------------------------------------

def test_local_stages_a_complete_folder(tmp_path, tiny_dir):
    staged = copy_files(tiny_dir, tmp_path / "staged")
    folder = fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=staged)
    assert files_of(folder) == files_of(tiny_dir)
    assert checkpoint_record(folder)["path"] == str(staged.resolve())
    a, b = load_checkpoint_model(folder), load_checkpoint_model(tiny_dir)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_local_names_the_missing_files(tmp_path, tiny_dir):
    staged = copy_files(tiny_dir, tmp_path / "staged", skip=("merges.txt", "model.safetensors"))
    with pytest.raises(MissingCheckpointFilesError, match="lacks 2 file.*model.safetensors.*merges.txt"):
        fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=staged)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=tmp_path / "nowhere")


# ---- huggingface (the Hub simulated: FakeHub) ---------------------------------------------------------------

def test_huggingface_downloads_the_pinned_allow_list_into_the_cache(tmp_path, tiny_dir, hub_cache, monkeypatch):
    hub = FakeHub(tiny_dir)
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    folder = fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    assert hub.calls == [list(SPEC.files)] and hub.asked == {(SPEC.repo, SPEC.revision)}
    assert files_of(folder) == files_of(tiny_dir)
    snapshot = hub_cache / "models--openai-community--gpt2" / "snapshots" / SPEC.revision
    assert all((folder / name).resolve() == (snapshot / name).resolve() for name in SPEC.files)  # links, no copy
    record = checkpoint_record(folder)
    assert (record["source"], record["repo"], record["revision"]) == ("huggingface", SPEC.repo, SPEC.revision)
    with pytest.raises(RuntimeError, match="never overwritten"):  # another revision under the same root
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", revision="0" * 40)


def test_huggingface_retries_a_transient_error(tmp_path, tiny_dir, monkeypatch):
    hub = FakeHub(tiny_dir, fail=[httpx2.ConnectError("connection reset") for _ in range(2)])
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    fetch_checkpoint("gpt2", tmp_path, source="huggingface", retries=3, backoff_s=0)
    assert len(hub.calls) == 3


@pytest.mark.parametrize("error, expected, words", [
    (lambda: hub_error(RepositoryNotFoundError, 401), HubNotFoundError, ["not found", "revision"]),
    (lambda: hub_error(RevisionNotFoundError, 404), HubNotFoundError, ["607a30d783dfa663caf39e06633721c8d4cfcd7e"]),
    (lambda: hub_error(GatedRepoError, 403), GatedRepoAccessError,
     ["gated", "https://huggingface.co/openai-community/gpt2", "HF_TOKEN"]),
])
def test_hub_refusals_fail_at_once_with_the_fix(tmp_path, monkeypatch, error, expected, words):
    attempts = failing_hub(monkeypatch, error)
    with pytest.raises(expected) as caught:
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", retries=3, backoff_s=0)
    assert len(attempts) == 1  # not retried: waiting cannot fix it
    for word in words:
        assert word in str(caught.value)
    assert not (tmp_path / "gpt2" / ".ready").exists()


@pytest.mark.parametrize("error", [
    lambda: LocalEntryNotFoundError("cannot reach the Hub and nothing is cached"),
    lambda: httpx2.ConnectError("name resolution failed"),
    lambda: hub_error(HfHubHTTPError, 503),  # a server outage
])
def test_an_unreachable_hub_names_the_offline_ways(tmp_path, monkeypatch, error):
    attempts = failing_hub(monkeypatch, error)
    with pytest.raises(HubUnreachableError) as caught:
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", retries=2, backoff_s=0)
    assert len(attempts) == 3
    message = str(caught.value)
    assert "presets/quick.yaml" in message and "`local`" in message and "`tiny`" in message


def test_a_revision_without_the_needed_files_is_reported(tmp_path, tiny_dir, monkeypatch):
    hub = FakeHub(copy_files(tiny_dir, tmp_path / "hub", skip=("tokenizer.json",)))
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    with pytest.raises(MissingCheckpointFilesError, match="has no tokenizer.json in its Hugging Face cache snapshot"):
        fetch_checkpoint("gpt2", tmp_path / "root", source="huggingface")


# ---- corrupt folders ----------------------------------------------------------------------------------------

def test_loading_an_unfetched_folder_says_to_fetch(tmp_path, tiny_dir):
    with pytest.raises(MissingCheckpointFilesError, match="does not exist.*fetch_checkpoint"):
        load_checkpoint_model(tmp_path / "nothing")
    unfinished = copy_files(tiny_dir, tmp_path / "unfinished")
    with pytest.raises(MissingCheckpointFilesError, match="no .ready marker"):
        load_checkpoint_model(unfinished)


def test_a_truncated_weights_file_is_named(tmp_path, tiny_dir):
    folder = tmp_path / "gpt2"
    shutil.copytree(tiny_dir, folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1000])
    with pytest.raises(CorruptCheckpointError, match=r"model\.safetensors.*Delete .*gpt2 and run snakemake again"):
        load_checkpoint_model(folder)
    with pytest.raises(CorruptCheckpointError, match="truncated"):
        check_safetensors(weights)


def test_a_truncated_download_is_caught_at_fetch(tmp_path, tiny_dir):
    staged = copy_files(tiny_dir, tmp_path / "staged")
    weights = staged / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-10])
    with pytest.raises(CorruptCheckpointError, match="truncated"):
        fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=staged)
    assert not (tmp_path / "root" / "gpt2" / ".ready").exists()


@pytest.mark.parametrize("name, garbage", [("model.safetensors", b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all"),
                                           ("config.json", b"{\"n_layer\": ")])
def test_garbled_files_are_named(tmp_path, tiny_dir, name, garbage):
    staged = copy_files(tiny_dir, tmp_path / "staged")
    (staged / name).write_bytes(garbage)
    with pytest.raises(CorruptCheckpointError, match=name.replace(".", r"\.")):
        fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=staged)


def fetched_copy(tiny_dir: Path, target: Path) -> Path:
    """A fetched folder of its own (marker included): damaging it leaves the module's tiny_dir intact."""
    shutil.copytree(tiny_dir, target)
    return target


def test_a_config_garbled_after_the_fetch_names_the_folder_to_delete(tmp_path, tiny_dir):
    folder = fetched_copy(tiny_dir, tmp_path / "gpt2")
    config = folder / "config.json"
    config.write_bytes(b"#" * config.stat().st_size)  # same size: only parsing finds it
    with pytest.raises(CorruptCheckpointError) as caught:
        load_checkpoint_model(folder)
    message = str(caught.value)
    assert f"{config} is not valid JSON" in message
    assert f"Delete {folder} and run snakemake again, which fetches the checkpoint anew." in message


def test_a_header_the_size_check_lets_through_is_still_named(tmp_path, tiny_dir):
    """An unknown dtype keeps every size and offset right, so only safetensors notices; its SafetensorError
    (no OSError or ValueError) is translated by both readers of weights."""
    from isonorm.checkpoints.streamed import TensorIndex

    folder = fetched_copy(tiny_dir, tmp_path / "gpt2")
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data.replace(b'"dtype":"F32"', b'"dtype":"Q32"', 1))
    with pytest.raises(CorruptCheckpointError, match=f"could not load {folder}: a file there is damaged"):
        load_checkpoint_model(folder)
    with pytest.raises(CorruptCheckpointError, match=r"model\.safetensors is damaged: cannot read wte\.weight"):
        TensorIndex(folder).read("wte.weight")


def test_a_damaged_local_checkpoint_names_the_pre_staged_copy(tmp_path, tiny_dir):
    staged = copy_files(tiny_dir, tmp_path / "staged")
    folder = fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=staged)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-10])
    with pytest.raises(CorruptCheckpointError, match=f"staged \\(source `local`\\) from {staged.resolve()}"):
        checkpoint_record(folder)
    (staged / "model.safetensors").write_bytes(weights.read_bytes())  # damaged at the source, linked or not
    with pytest.raises(CorruptCheckpointError, match=f"pre-staged copy {staged.resolve()} .*replace it there first"):
        fetch_checkpoint("gpt2", tmp_path / "again", source="local", path=staged)


def test_weights_that_miss_parameters_are_refused(tmp_path, tiny_dir):
    from safetensors.torch import load_file, save_file

    staged = copy_files(tiny_dir, tmp_path / "staged")
    tensors = load_file(staged / "model.safetensors")
    dropped = min(tensors)
    kept = {k: v for k, v in tensors.items() if k != dropped}
    save_file(kept, staged / "model.safetensors", metadata={"format": "pt"})
    folder = fetch_checkpoint("gpt2", tmp_path / "root", source="local", path=staged)
    with pytest.raises(CorruptCheckpointError, match="lacks 1 parameter"):
        load_checkpoint_model(folder)
