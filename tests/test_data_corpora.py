"""The word-level corpus stage offline: synthetic, local and (simulated) Hugging Face sources, tokenisation.

``hf_hub_download`` is replaced by a function writing small parquet files in WikiText's layout (one row per
line, column ``text``), or raising huggingface_hub's own exception classes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import httpx2
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError

from isonorm.data.corpora import (
    CORPORA,
    EOS,
    SPLITS,
    UNK,
    build_vocabulary,
    encode,
    fetch_corpus,
    lm_windows,
    load_corpus,
    read_split,
    split_words,
    synthetic_lines,
    tail_window,
)
from isonorm.sources import HubNotFoundError, HubUnreachableError

WIKITEXT2 = CORPORA["wikitext2"]
HUB_LINES = {  # rows as the Hub files hold them: each line with its newline, empty lines as ""
    "train": ["", " = Title = \n", "", " the cat sat on the mat . \n", " the dog sat . \n"],
    "valid": ["", " the cat ran . \n"],
    "test": [" a dog sat . \n"],
}
HUB_SPLIT = {"train": "train", "validation": "valid", "test": "test"}
SMALL_ROWS = {split: len(lines) for split, lines in HUB_LINES.items()}


@pytest.fixture
def fake_hub(monkeypatch):
    """hf_hub_download writing a WikiText-like parquet; ``fake_hub.fail`` = an exception factory, or None."""
    class Hub:
        calls: ClassVar[list[dict]] = []
        fail: ClassVar[list] = []

    def download(repo_id, filename, *, repo_type, revision, local_dir, **kwargs):
        Hub.calls.append({"repo_id": repo_id, "filename": filename, "repo_type": repo_type, "revision": revision})
        if Hub.fail:
            raise Hub.fail[0]()
        split = HUB_SPLIT[Path(filename).name.split("-")[0]]
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"text": HUB_LINES[split]}), target)
        return str(target)

    Hub.calls, Hub.fail = [], []
    monkeypatch.setattr("huggingface_hub.hf_hub_download", download)
    # The real row counts describe the full data set; the fake files are small.
    monkeypatch.setitem(CORPORA, "wikitext2", type(WIKITEXT2)(
        name=WIKITEXT2.name, title=WIKITEXT2.title, license=WIKITEXT2.license, license_url=WIKITEXT2.license_url,
        hub=type(WIKITEXT2.hub)(repo=WIKITEXT2.hub.repo, revision=WIKITEXT2.hub.revision,
                                config=WIKITEXT2.hub.config, files=WIKITEXT2.hub.files, rows=SMALL_ROWS),
    ))
    return Hub


def hub_error(cls, status: int = 404):
    return cls("simulated", response=httpx2.Response(status, request=httpx2.Request("GET", "https://huggingface.co/x")))


# --- registry ----------------------------------------------------------------------------------------------


def test_registry_pins_a_full_commit_and_the_three_wikitext2_raw_files():
    hub = WIKITEXT2.hub
    assert hub.repo == "Salesforce/wikitext" and hub.config == "wikitext-2-raw-v1"
    assert len(hub.revision) == 40 and all(c in "0123456789abcdef" for c in hub.revision)
    assert hub.files == {"train": "wikitext-2-raw-v1/train-00000-of-00001.parquet",
                         "valid": "wikitext-2-raw-v1/validation-00000-of-00001.parquet",
                         "test": "wikitext-2-raw-v1/test-00000-of-00001.parquet"}


# --- tokenisation (word_language_model data.py) ------------------------------------------------------------


def test_words_split_on_whitespace_with_eos_per_line_including_empty_lines():
    assert split_words([" a  b\tc ", "", "d"]) == ["a", "b", "c", EOS, EOS, "d", EOS]


def test_vocabulary_in_first_appearance_order_and_unknown_words_map_to_unk():
    vocabulary = build_vocabulary(["b", "a", "b", EOS])
    assert vocabulary == ["b", "a", EOS, UNK]
    assert encode(["a", "zzz", "b"], vocabulary).tolist() == [1, 3, 0]
    assert build_vocabulary(["x", UNK]) == ["x", UNK]  # an existing <unk> is not added twice


def test_windows_are_consecutive_and_targets_are_the_next_tokens():
    ids = torch.arange(20)
    x, y = lm_windows(ids, 6)
    assert x.shape == y.shape == (3, 6)
    assert torch.equal(x.flatten(), ids[:18]) and torch.equal(y.flatten(), ids[1:19])
    tx, ty = tail_window(ids, 6)
    assert torch.equal(tx.flatten(), ids[18:19]) and torch.equal(ty.flatten(), ids[19:20])
    # windows plus tail cover every target exactly once
    assert x.numel() + tx.numel() == ids.numel() - 1
    assert tail_window(torch.arange(13), 6) is None
    with pytest.raises(ValueError, match="lower bptt"):
        lm_windows(torch.arange(5), 6)


# --- synthetic -----------------------------------------------------------------------------------------------


def test_synthetic_corpus_is_deterministic_zipf_like_and_split_specific():
    a = synthetic_lines("c", "train", 50, 200, 20)
    assert a == synthetic_lines("c", "train", 50, 200, 20)
    assert a != synthetic_lines("c", "valid", 50, 200, 20)
    counts = torch.bincount(torch.tensor([int(w[1:]) for line in a for w in line.split()]), minlength=50)
    assert counts[:5].sum() > counts[-5:].sum()  # frequent head, rare tail
    assert all(10 <= len(line.split()) <= 30 for line in a)


def test_fetch_synthetic_writes_splits_and_marker_and_is_idempotent(tmp_path):
    folder = fetch_corpus("wikitext2", tmp_path, "synthetic", synthetic={"vocab_size": 30})
    assert all((folder / f"{split}.txt").is_file() for split in SPLITS)
    marker = json.loads((folder / ".ready").read_text())
    assert marker["request"]["source"] == "synthetic" and marker["source"]["vocab_size"] == 30
    before = (folder / "train.txt").stat().st_mtime_ns
    fetch_corpus("wikitext2", tmp_path, "synthetic", synthetic={"vocab_size": 30})  # complete: untouched
    assert (folder / "train.txt").stat().st_mtime_ns == before
    with pytest.raises(RuntimeError, match="never overwritten"):
        fetch_corpus("wikitext2", tmp_path, "synthetic", synthetic={"vocab_size": 31})
    corpus = load_corpus(folder)
    assert corpus.n_tokens <= 30 + 2 and corpus.ids["train"].max() < corpus.n_tokens


def test_bad_requests_fail_with_clear_messages(tmp_path):
    """(Unknown names and sources, `path`: tests/test_sources.py, for every kind.)"""
    with pytest.raises(ValueError, match="unknown synthetic corpus settings"):
        fetch_corpus("wikitext2", tmp_path, "synthetic", synthetic={"vocab": 3})
    with pytest.raises(FileNotFoundError, match="fetch_corpus"):
        read_split(tmp_path / "absent", "train")


# --- local ---------------------------------------------------------------------------------------------------


def test_local_source_accepts_the_original_release_names_and_keeps_lines(tmp_path):
    staged = tmp_path / "staged"
    staged.mkdir()
    for split in SPLITS:
        (staged / f"wiki.{split}.raw").write_text(" = T = \n\n the cat . \n", encoding="utf-8")
    folder = fetch_corpus("wikitext2", tmp_path / "data", "local", path=staged)
    assert read_split(folder, "valid") == [" = T = ", "", " the cat . "]
    corpus = load_corpus(folder)
    assert corpus.vocabulary == ["=", "T", EOS, "the", "cat", ".", UNK]
    assert corpus.ids["train"].numel() == (3 + 1) + 1 + (3 + 1)  # each line: words + <eos>


def test_local_source_without_a_split_names_what_is_needed(tmp_path):
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "train.txt").write_text("a b\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="valid"):
        fetch_corpus("wikitext2", tmp_path / "data", "local", path=staged)
    assert not (tmp_path / "data" / "wikitext2" / ".ready").exists()


# --- Hugging Face (simulated) --------------------------------------------------------------------------------


def test_hub_source_downloads_the_pinned_files_and_tokenises_like_the_example(tmp_path, fake_hub):
    folder = fetch_corpus("wikitext2", tmp_path, "huggingface", backoff_s=0)
    assert [c["filename"] for c in fake_hub.calls] == [WIKITEXT2.hub.files[s] for s in SPLITS]
    assert {c["revision"] for c in fake_hub.calls} == {WIKITEXT2.hub.revision}
    assert {c["repo_type"] for c in fake_hub.calls} == {"dataset"}
    assert not (folder / ".download").exists()
    marker = json.loads((folder / ".ready").read_text())
    assert marker["source"]["lines"] == SMALL_ROWS and marker["license"] == "CC BY-SA 3.0"
    corpus = load_corpus(folder)
    # train: "" -> <eos>; " = Title = " -> = Title = <eos>; ...
    assert corpus.vocabulary[:4] == [EOS, "=", "Title", "the"]
    assert corpus.ids["train"].numel() == 1 + (3 + 1) + 1 + (7 + 1) + (4 + 1)
    assert corpus.unknown == {"train": 0, "valid": 1, "test": 1}  # "ran" and "a" are not in train
    assert corpus.vocabulary[corpus.ids["valid"][3]] == UNK


def test_hub_row_count_mismatch_is_reported(tmp_path, fake_hub, monkeypatch):
    hub = CORPORA["wikitext2"].hub
    monkeypatch.setitem(CORPORA, "wikitext2", type(CORPORA["wikitext2"])(
        name="wikitext2", title="x", license="x", license_url="x",
        hub=type(hub)(repo=hub.repo, revision=hub.revision, config=hub.config, files=hub.files,
                      rows={**SMALL_ROWS, "train": 99}),
    ))
    with pytest.raises(ValueError, match="expected 99"):
        fetch_corpus("wikitext2", tmp_path, "huggingface", backoff_s=0)
    assert not (tmp_path / "wikitext2" / ".ready").exists()


def test_hub_errors_become_actionable_messages(tmp_path, fake_hub):
    fake_hub.fail.append(lambda: hub_error(RepositoryNotFoundError))
    with pytest.raises(HubNotFoundError, match="revision"):
        fetch_corpus("wikitext2", tmp_path, "huggingface", backoff_s=0)
    fake_hub.fail[0] = lambda: LocalEntryNotFoundError("offline")
    with pytest.raises(HubUnreachableError, match="`local`"):
        fetch_corpus("wikitext2", tmp_path, "huggingface", retries=1, backoff_s=0)
    assert len(fake_hub.calls) == 1 + 2  # not-found: no retry; unreachable: first try + 1 retry
