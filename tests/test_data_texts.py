"""The text-corpus stage offline: shipped, local and (simulated) Hugging Face sources of ``texts.json``.

``hf_hub_download`` is replaced by a function writing a small parquet in the dataset's columns, or raising
huggingface_hub's own exception classes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import httpx2
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError, RemoteEntryNotFoundError, RepositoryNotFoundError

from isonorm.data import TEXT_CORPORA, fetch_texts, load_texts, read_texts, shipped_texts
from isonorm.sources import HubNotFoundError, HubUnreachableError

SIMPLEWIKI = TEXT_CORPORA["simplewiki"]
ARTICLES = [f"Article {i}. " + "word " * (40 + i) for i in range(12)]  # 250+ characters each


def write_parquet(path: Path, n_rows: int = 12, row_group_size: int = 5) -> None:
    """A parquet in the Wikipedia datasets' columns (id, url, title, text), in several row groups."""
    table = pa.table({
        "id": [str(i) for i in range(n_rows)],
        "url": [f"https://simple.wikipedia.org/wiki?curid={i}" for i in range(n_rows)],
        "title": [f"Title {i}" for i in range(n_rows)],
        "text": ARTICLES[:n_rows],
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)


def hub_error(cls, status: int = 404):
    return cls("simulated", response=httpx2.Response(status, request=httpx2.Request("GET", "https://huggingface.co/x")))


@pytest.fixture
def fake_hub(monkeypatch):
    """hf_hub_download writing a parquet; ``fake_hub.fail[repo]`` = an exception factory for that repo."""
    class Hub:
        calls: ClassVar[list[dict]] = []
        fail: ClassVar[dict] = {}

    def download(repo_id, filename, *, repo_type, revision, local_dir, **kwargs):
        Hub.calls.append({"repo_id": repo_id, "filename": filename, "repo_type": repo_type, "revision": revision})
        if repo_id in Hub.fail:
            raise Hub.fail[repo_id]()
        target = Path(local_dir) / filename
        write_parquet(target)
        return str(target)

    Hub.calls, Hub.fail = [], {}
    monkeypatch.setattr("huggingface_hub.hf_hub_download", download)
    return Hub


# ---- shipped ----------------------------------------------------------------------------------------------

def test_shipped_texts_ship_with_the_package():
    texts = shipped_texts()
    assert len(texts) >= 4 and all(isinstance(t, str) and len(t) > 100 for t in texts)


def test_shipped_source_freezes_the_first_texts_cut_to_max_chars(tmp_path):
    folder = fetch_texts("simplewiki", tmp_path, source="shipped", n_texts=3, max_chars=50)
    assert folder == tmp_path / "simplewiki" and (folder / ".ready").is_file()
    assert load_texts(folder) == [t[:50] for t in shipped_texts()[:3]]
    assert load_texts(folder, n_texts=2, max_chars=10) == [t[:10] for t in shipped_texts()[:2]]
    assert read_texts(folder)["source"]["kind"] == "shipped"


def test_asking_for_more_texts_than_there_are_fails_clearly(tmp_path):
    with pytest.raises(ValueError, match="lower `n_texts`"):
        fetch_texts("simplewiki", tmp_path, source="shipped", n_texts=len(shipped_texts()) + 1)
    folder = fetch_texts("simplewiki", tmp_path, source="shipped", n_texts=2)
    with pytest.raises(ValueError, match="holds 2 text"):
        load_texts(folder, n_texts=3)


def test_sizes_must_be_positive(tmp_path):
    """(Unknown names and sources, `path`, complete folders: tests/test_sources.py, for every kind.)"""
    with pytest.raises(ValueError, match="max_chars must be a positive integer"):
        fetch_texts("simplewiki", tmp_path, source="shipped", max_chars=0)


def test_loading_unfetched_texts_says_to_fetch(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch_texts"):
        load_texts(tmp_path / "simplewiki")


# ---- huggingface (hf_hub_download simulated) ----------------------------------------------------------------

def test_huggingface_keeps_the_first_articles_in_dataset_order(tmp_path, fake_hub):
    folder = fetch_texts("simplewiki", tmp_path, source="huggingface", n_texts=10, max_chars=64)
    preferred = SIMPLEWIKI.candidates[0]
    assert fake_hub.calls == [{"repo_id": preferred.repo, "filename": preferred.file, "repo_type": "dataset",
                               "revision": preferred.revision}]
    record = read_texts(folder)
    assert record["texts"] == [a[:64] for a in ARTICLES[:10]]  # across row groups, in file order
    assert record["titles"] == [f"Title {i}" for i in range(10)]
    source = record["source"]
    assert (source["repo"], source["revision"], source["file"], source["fallback"]) == (
        preferred.repo, preferred.revision, preferred.file, False)
    assert "CC BY-SA 3.0" in record["attribution"] and preferred.revision in record["attribution"]
    assert not (folder / ".download").exists()  # the parquet is not kept, only the strings


def test_the_revision_and_file_can_be_overridden(tmp_path, fake_hub):
    fetch_texts("simplewiki", tmp_path, source="huggingface", n_texts=2, revision="a" * 40, file="x.parquet")
    assert fake_hub.calls[0]["revision"] == "a" * 40 and fake_hub.calls[0]["filename"] == "x.parquet"


@pytest.mark.parametrize("error", [lambda: hub_error(RepositoryNotFoundError),
                                   lambda: hub_error(RemoteEntryNotFoundError)])
def test_a_missing_preferred_source_falls_back_and_says_so(tmp_path, fake_hub, error):
    fake_hub.fail[SIMPLEWIKI.candidates[0].repo] = error
    folder = fetch_texts("simplewiki", tmp_path, source="huggingface", n_texts=3)
    source = read_texts(folder)["source"]
    assert source["repo"] == SIMPLEWIKI.candidates[1].repo and source["fallback"] is True
    assert [c["repo_id"] for c in fake_hub.calls] == [c.repo for c in SIMPLEWIKI.candidates]


def test_without_fallback_a_missing_source_is_an_error(tmp_path, fake_hub):
    fake_hub.fail[SIMPLEWIKI.candidates[0].repo] = lambda: hub_error(RepositoryNotFoundError)
    with pytest.raises(HubNotFoundError, match="legacy-datasets/wikipedia"):
        fetch_texts("simplewiki", tmp_path, source="huggingface", fallback=False)
    assert not (tmp_path / "simplewiki" / ".ready").exists()


def test_an_unreachable_hub_names_the_offline_sources(tmp_path, fake_hub):
    fake_hub.fail[SIMPLEWIKI.candidates[0].repo] = lambda: LocalEntryNotFoundError("offline")
    with pytest.raises(HubUnreachableError) as caught:
        fetch_texts("simplewiki", tmp_path, source="huggingface", retries=1, backoff_s=0)
    assert len(fake_hub.calls) == 2  # retried, and no fallback tried: it would be unreachable too
    assert "`shipped`" in str(caught.value) and "presets/quick.yaml" in str(caught.value)


def test_a_corrupt_download_is_removed_and_reported(tmp_path, monkeypatch):
    def garbage(repo_id, filename, *, local_dir, **kwargs):
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"PAR1 this is not parquet")
        return str(target)

    monkeypatch.setattr("huggingface_hub.hf_hub_download", garbage)
    with pytest.raises(ValueError, match="unreadable as parquet.*run the fetch again"):
        fetch_texts("simplewiki", tmp_path, source="huggingface")
    assert not list((tmp_path / "simplewiki").rglob("*.parquet"))


# ---- local ------------------------------------------------------------------------------------------------

def test_local_stages_a_texts_file(tmp_path):
    staged = tmp_path / "staged" / "texts.json"
    staged.parent.mkdir()
    staged.write_text(json.dumps({"texts": ["one text", "two texts", "three"], "source": {"kind": "huggingface"}}))
    folder = fetch_texts("simplewiki", tmp_path / "root", source="local", path=staged.parent, n_texts=2, max_chars=3)
    assert load_texts(folder) == ["one", "two"]
    assert read_texts(folder)["staged_from"] == str(staged.resolve())


def test_local_rejects_a_file_that_is_not_a_texts_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"texts": ["fine", ""]}))
    with pytest.raises(ValueError, match=r"texts \[1\] are empty"):
        fetch_texts("simplewiki", tmp_path / "root", source="local", path=bad, n_texts=1)
    with pytest.raises(FileNotFoundError, match="do not exist"):
        fetch_texts("simplewiki", tmp_path / "root", source="local", path=tmp_path / "none.json")
