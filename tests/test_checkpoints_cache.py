"""The `huggingface` checkpoint source and the user's Hugging Face cache, offline.

A tiny model written by the ``tiny`` source is laid out in a cache folder exactly as huggingface_hub lays out
a download (``models--<org>--<name>/blobs/<hash>``, ``snapshots/<commit>/<file>`` linking to the blob,
``refs/main``), with ``HF_HUB_CACHE`` pointing at it. The HTTP layer fails the test on any request, so "found
in the cache" means found with no network call at all. The Hub itself, where a test needs one, is
:class:`FakeHub`: the real ``snapshot_download`` for cache look-ups, a folder copy into the cache for
downloads. tests/test_checkpoints.py and tests/test_checkpoints_sharded.py use these helpers too.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterable

import httpx2
import huggingface_hub
import pytest
import torch
from huggingface_hub import constants

from conftest import REPO
from isonorm.checkpoints import (
    CHECKPOINTS,
    CorruptCheckpointError,
    MissingCheckpointFilesError,
    checkpoint_record,
    fetch_checkpoint,
    load_checkpoint_model,
)
from isonorm.checkpoints.shards import read_index
from isonorm.checkpoints.streamed import TensorIndex
from isonorm.sources import HubUnreachableError

REAL_SNAPSHOT_DOWNLOAD = huggingface_hub.snapshot_download  # before any test replaces it
GPT2 = CHECKPOINTS["gpt2"]
OTHER = "1" * 40  # a commit that is not the pinned one


# ---- helpers shared with the other checkpoint tests -------------------------------------------------------------

def put_in_cache(cache: Path, repo: str, commit: str, source: Path, names: Iterable[str], ref: str = "main") -> Path:
    """Files of ``source`` laid out as huggingface_hub caches a download of ``repo`` at ``commit``: each content
    once under ``blobs/<sha256>``, ``snapshots/<commit>/<name>`` a relative link to it, ``refs/<ref>`` naming the
    commit. Returns the snapshot folder."""
    storage = cache / f"models--{repo.replace('/', '--')}"
    snapshot = storage / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    (storage / "blobs").mkdir(exist_ok=True)
    for name in names:
        data = (source / name).read_bytes()
        blob = storage / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        entry = snapshot / name
        entry.unlink(missing_ok=True)
        entry.symlink_to(Path("../../blobs") / blob.name)
    (storage / "refs").mkdir(exist_ok=True)
    (storage / "refs" / ref).write_text(commit)
    return snapshot


def files_matching(source: Path, patterns: Iterable[str]) -> list[str]:
    return sorted(p.name for p in source.iterdir() if p.is_file() and not p.name.startswith(".")
                  and any(fnmatch.fnmatchcase(p.name, pattern) for pattern in patterns))


class FakeHub:
    """``huggingface_hub.snapshot_download`` with the Hub replaced by the folder ``source``: a cache look-up
    (``local_files_only``) is the real function; a download copies the allow-listed files of ``source`` into the
    cache, as the real one would, records its patterns in ``calls`` and returns the snapshot. ``fail`` (a list of
    exceptions) is raised by the next downloads, one each."""

    def __init__(self, source: Path, fail: Iterable[BaseException] = ()):
        self.source = source
        self.calls: list[list[str]] = []  # the allow_patterns of each download
        self.asked: set[tuple[str, str]] = set()  # (repository, revision) of the downloads
        self.fail = list(fail)

    def __call__(self, *, repo_id, revision, allow_patterns, local_files_only=False, **kwargs):
        assert kwargs.get("local_dir") is None and kwargs.get("cache_dir") is None  # the user's cache, always
        if local_files_only:
            return REAL_SNAPSHOT_DOWNLOAD(repo_id=repo_id, revision=revision, allow_patterns=allow_patterns,
                                          local_files_only=True, **kwargs)
        self.calls.append(list(allow_patterns))
        self.asked.add((repo_id, revision))
        if self.fail:
            raise self.fail.pop(0)
        return str(put_in_cache(Path(constants.HF_HUB_CACHE), repo_id, revision, self.source,
                                files_matching(self.source, allow_patterns)))


def downloads_refused(monkeypatch) -> None:
    """Cache look-ups as usual; any download fails the test."""
    def snapshot_download(**kwargs):
        if not kwargs.get("local_files_only"):
            pytest.fail(f"a download was attempted: {kwargs}")
        return REAL_SNAPSHOT_DOWNLOAD(**kwargs)

    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> Path:
    """An empty Hugging Face cache of this test: HF_HUB_CACHE, and huggingface_hub's constant read from it at
    import (so that no test reads or writes the user's own cache)."""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture
def no_network(monkeypatch) -> None:
    """Every HTTP request that reaches the network layer of huggingface_hub's client (httpx2's transports) fails
    the test (huggingface_hub's own offline check, HF_HUB_OFFLINE, runs before it, in the client)."""
    def send(self, request, *args, **kwargs):
        pytest.fail(f"network call attempted: {request.method} {request.url}")

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", send)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", send)


@pytest.fixture
def offline(monkeypatch, no_network) -> None:
    """HF_HUB_OFFLINE=1, as huggingface_hub reads it at import (and no HTTP request either)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    for name in ("gpt2", "llama"):
        fetch_checkpoint(name, root, source="tiny")
    return root


def links_of(folder: Path) -> dict[str, Path]:
    return {p.name: Path(os.readlink(p)) for p in folder.iterdir() if p.is_symlink()}


# ---- a model already in the cache ------------------------------------------------------------------------------

def test_a_cached_checkpoint_is_found_without_any_network_call(tmp_path, tiny_models, hub_cache, no_network,
                                                                monkeypatch):
    downloads_refused(monkeypatch)
    snapshot = put_in_cache(hub_cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2", GPT2.files)
    folder = fetch_checkpoint("gpt2", tmp_path / "root", source="huggingface")
    assert links_of(folder) == {name: snapshot / name for name in GPT2.files}  # links, no copy
    assert not [p for p in folder.iterdir() if not p.is_symlink() and p.name != ".ready"]
    record = checkpoint_record(folder)
    assert (record["source"], record["repo"], record["revision"]) == ("huggingface", GPT2.repo, GPT2.revision)
    assert record["snapshot"] == str(snapshot)
    cached, tiny = load_checkpoint_model(folder), load_checkpoint_model(tiny_models / "gpt2")
    assert all(torch.equal(a, b) for a, b in zip(cached.state_dict().values(), tiny.state_dict().values()))
    assert TensorIndex(folder).read("wte.weight").shape == tiny.wte.weight.shape
    assert fetch_checkpoint("gpt2", tmp_path / "root", source="huggingface") == folder  # complete: kept


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME"])
def test_the_cache_is_taken_from_the_environment(tmp_path, tiny_models, variable):
    """In a fresh process, as a Snakemake job runs: huggingface_hub reads HF_HUB_CACHE, else HF_HOME/hub."""
    cache = tmp_path / "cache" if variable == "HF_HUB_CACHE" else tmp_path / "home" / "hub"
    snapshot = put_in_cache(cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2", GPT2.files)
    script = (
        "import sys, httpx2\n"
        "def send(*a, **k): sys.exit('network call attempted')\n"
        "httpx2.HTTPTransport.handle_request = send\n"
        "from isonorm.checkpoints import fetch_checkpoint, checkpoint_record\n"
        "print(checkpoint_record(fetch_checkpoint('gpt2', sys.argv[1], source='huggingface'))['snapshot'])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "XDG_CACHE"))}
    env[variable] = str(tmp_path / "cache" if variable == "HF_HUB_CACHE" else tmp_path / "home")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "root")], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(snapshot.resolve())


def test_a_gated_model_in_the_cache_needs_no_token_and_links_only_the_needed_shards(tmp_path, tiny_models, hub_cache,
                                                                                   no_network, monkeypatch):
    llama2 = CHECKPOINTS["llama2"]
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    downloads_refused(monkeypatch)
    source = tiny_models / "llama"
    snapshot = put_in_cache(hub_cache, llama2.repo, llama2.revision, source, files_matching(source, ["*"]))
    folder = fetch_checkpoint("llama2", tmp_path, source="huggingface", tensors=["model.layers.1.*"])
    weight_map = read_index(snapshot)
    needed = sorted({s for n, s in weight_map.items() if n.startswith("model.layers.1.")})
    assert checkpoint_record(folder)["shards"] == needed
    assert {n for n in links_of(folder) if n.endswith(".safetensors")} == set(needed)  # the cache holds them all
    assert TensorIndex(folder).read("layers.1.mlp.up_proj.weight").shape[1] == 64


def test_what_the_cache_lacks_is_downloaded_into_it_and_nothing_else(tmp_path, tiny_models, hub_cache, monkeypatch):
    source = tiny_models / "gpt2"
    put_in_cache(hub_cache, GPT2.repo, GPT2.revision, source, ["config.json"])  # an interrupted download
    hub = FakeHub(source)
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    folder = fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    assert hub.calls == [list(GPT2.files)]
    assert links_of(folder) == {n: hub_cache / f"models--openai-community--gpt2/snapshots/{GPT2.revision}/{n}"
                                for n in GPT2.files}
    assert not (folder / ".cache").exists()  # no local_dir download and its metadata


def list_in_cache(cache: Path, repo: str, commit: str, source: Path, names: Iterable[str]) -> None:
    """The file listing of ``repo`` at ``commit`` that huggingface_hub caches beside a snapshot_download (its
    ``trees/<commit>.json``), naming ``names``: what it uses to tell a complete cached snapshot from a partial one."""
    from huggingface_hub._tree_cache import TreeCacheEntry, write_tree_cache

    entries = {n: TreeCacheEntry(size=(source / n).stat().st_size, blob_id="0" * 40) for n in names}
    write_tree_cache(str(cache / f"models--{repo.replace('/', '--')}"), commit, entries)


def test_optional_files_the_cached_listing_names_are_completed_online_and_skipped_offline(
        tmp_path, tiny_models, hub_cache, no_network, monkeypatch, caplog):
    llama, source = CHECKPOINTS["llama"], tiny_models / "llama"
    optional = files_matching(source, llama.optional_files)
    weights = [*llama.files, *sorted(set(read_index(source).values()))]
    assert optional  # the tiny LLaMA has tokenizer files, as the real one
    put_in_cache(hub_cache, llama.repo, llama.revision, source, weights)  # no tokenizer
    list_in_cache(hub_cache, llama.repo, llama.revision, source, [*weights, *optional])
    with monkeypatch.context() as offline_here:  # offline: the weights are enough, with a warning
        offline_here.setattr(constants, "HF_HUB_OFFLINE", True)
        folder = fetch_checkpoint("llama", tmp_path / "offline", source="huggingface", retries=0)
    assert set(links_of(folder)) == set(weights) and "lacks optional files" in caplog.text
    hub = FakeHub(source)
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    folder = fetch_checkpoint("llama", tmp_path / "online", source="huggingface")
    assert len(hub.calls) == 1 and set(links_of(folder)) == {*weights, *optional}


# ---- the pinned revision ---------------------------------------------------------------------------------------

def test_a_cached_snapshot_of_another_revision_is_refused_offline(tmp_path, tiny_models, hub_cache, offline):
    put_in_cache(hub_cache, GPT2.repo, OTHER, tiny_models / "gpt2", GPT2.files)  # refs/main -> OTHER
    with pytest.raises(HubUnreachableError) as caught:
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", retries=0)
    message = str(caught.value)
    assert f"holds {GPT2.repo} only at revision(s) {OTHER}, not at the pinned {GPT2.revision}" in message
    assert "never used in its place" in message and f"hf download {GPT2.repo}" in message
    assert not (tmp_path / "gpt2" / ".ready").exists() and not links_of(tmp_path / "gpt2")


def test_with_the_hub_reachable_the_pinned_revision_is_downloaded_beside_another(tmp_path, tiny_models, hub_cache,
                                                                                 monkeypatch):
    put_in_cache(hub_cache, GPT2.repo, OTHER, tiny_models / "gpt2", GPT2.files)
    hub = FakeHub(tiny_models / "gpt2")
    monkeypatch.setattr("huggingface_hub.snapshot_download", hub)
    folder = fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    assert len(hub.calls) == 1
    assert Path(checkpoint_record(folder)["snapshot"]).name == GPT2.revision


def test_a_branch_name_is_refused(tmp_path, hub_cache, no_network):
    with pytest.raises(ValueError, match="revision 'main' of openai-community/gpt2 is not a full commit sha"):
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", revision="main")


def test_a_link_to_another_snapshot_is_refused_at_load(tmp_path, tiny_models, hub_cache, no_network, monkeypatch):
    downloads_refused(monkeypatch)
    put_in_cache(hub_cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2", GPT2.files)
    other = put_in_cache(hub_cache, GPT2.repo, OTHER, tiny_models / "gpt2", GPT2.files)
    folder = fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    link = folder / "model.safetensors"
    link.unlink()
    link.symlink_to(other / "model.safetensors")  # same bytes, another revision: still refused
    with pytest.raises(CorruptCheckpointError, match=f"links to {other / 'model.safetensors'}, not to .*"
                                                     f"pinned revision {GPT2.revision}"):
        checkpoint_record(folder)


# ---- incomplete, corrupt or vanished cache ---------------------------------------------------------------------

def test_an_incomplete_cached_snapshot_offline_names_what_it_lacks(tmp_path, tiny_models, hub_cache, offline):
    snapshot = put_in_cache(hub_cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2",
                            [f for f in GPT2.files if f != "model.safetensors"])
    with pytest.raises(HubUnreachableError) as caught:
        fetch_checkpoint("gpt2", tmp_path, source="huggingface", retries=0)
    message = str(caught.value)
    assert f"({snapshot}), but without model.safetensors" in message and "HF_HUB_OFFLINE is set" in message
    assert f"hf download {GPT2.repo} " in message and f"--revision {GPT2.revision}" in message


def test_a_truncated_file_in_the_cache_names_the_cache_and_the_fix(tmp_path, tiny_models, hub_cache, no_network,
                                                                  monkeypatch):
    downloads_refused(monkeypatch)
    snapshot = put_in_cache(hub_cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2", GPT2.files)
    blob = (snapshot / "model.safetensors").resolve()
    blob.write_bytes(blob.read_bytes()[:-100])
    with pytest.raises(CorruptCheckpointError) as caught:
        fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    message = str(caught.value)
    assert "truncated" in message and f"Hugging Face cache snapshot {snapshot}" in message
    assert f"hf cache rm hf://models/{GPT2.repo}/model.safetensors --cache-dir {hub_cache.resolve()}" in message
    assert not (tmp_path / "gpt2" / ".ready").exists()


def test_a_cache_cleaned_after_the_fetch_is_named_at_load(tmp_path, tiny_models, hub_cache, no_network, monkeypatch):
    downloads_refused(monkeypatch)
    snapshot = put_in_cache(hub_cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2", GPT2.files)
    folder = fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    shutil.rmtree(snapshot.parent.parent)  # `hf cache rm model/openai-community/gpt2`
    with pytest.raises(MissingCheckpointFilesError, match=f"snapshot {snapshot}, which is gone.*HF_HUB_CACHE"):
        load_checkpoint_model(folder)


def test_a_file_damaged_in_the_cache_after_the_fetch_names_the_cache(tmp_path, tiny_models, hub_cache, no_network,
                                                                     monkeypatch):
    downloads_refused(monkeypatch)
    snapshot = put_in_cache(hub_cache, GPT2.repo, GPT2.revision, tiny_models / "gpt2", GPT2.files)
    folder = fetch_checkpoint("gpt2", tmp_path, source="huggingface")
    config = (snapshot / "config.json").resolve()
    config.write_bytes(b"#" * config.stat().st_size)  # same size: only parsing finds it
    with pytest.raises(CorruptCheckpointError) as caught:
        load_checkpoint_model(folder)
    message = str(caught.value)
    assert f"{folder / 'config.json'} is not valid JSON" in message
    assert f"hf cache rm hf://models/{GPT2.repo}/config.json" in message and f"delete {folder}" in message
    assert json.loads((tiny_models / "gpt2" / "config.json").read_text())  # the source is intact
