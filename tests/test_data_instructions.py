"""The instruction-set stage offline: synthetic, local and (simulated) Hugging Face sources of instructions.json.

``hf_hub_download`` is replaced by a function writing a tiny parquet in tatsu-lab/alpaca's columns
(instruction, input, output, text), or raising huggingface_hub's own exception classes.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError

from isonorm.data.instructions import (
    INSTRUCTION_SETS,
    describe_instructions,
    fetch_instructions,
    load_instructions,
    read_instructions,
    synthetic_examples,
)
from isonorm.sources import HubNotFoundError, HubUnreachableError

ALPACA = INSTRUCTION_SETS["alpaca"]
ROWS = [{"instruction": f"Task {i}.", "input": "" if i % 2 else f"context {i}", "output": f"Answer {i}."}
        for i in range(12)]


def write_parquet(path: Path, rows=ROWS, row_group_size: int = 5) -> None:
    table = pa.table({
        "instruction": [r["instruction"] for r in rows],
        "input": [r["input"] for r in rows],
        "output": [r["output"] for r in rows],
        "text": [f"### Instruction:\n{r['instruction']}" for r in rows],
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)


@pytest.fixture
def fake_hub(monkeypatch):
    calls: list[dict] = []
    fail: dict = {}

    def download(repo_id, filename, *, repo_type, revision, local_dir, **kwargs):
        calls.append({"repo_id": repo_id, "filename": filename, "repo_type": repo_type, "revision": revision})
        if repo_id in fail:
            raise fail[repo_id]()
        target = Path(local_dir) / filename
        write_parquet(target)
        return str(target)

    monkeypatch.setattr("huggingface_hub.hf_hub_download", download)
    return calls, fail


def test_the_registry_pins_a_full_revision_and_one_parquet_file():
    assert len(ALPACA.hub.revision) == 40 and ALPACA.hub.file.endswith(".parquet")
    assert ALPACA.hub.repo == "tatsu-lab/alpaca"


def test_synthetic_pairs_are_deterministic_and_use_both_templates(tmp_path):
    assert synthetic_examples(9, seed=1) == synthetic_examples(9, seed=1)
    assert synthetic_examples(9, seed=1) != synthetic_examples(9, seed=2)
    folder = fetch_instructions("alpaca", tmp_path, source="synthetic", n_examples=9, seed=1)
    examples = load_instructions(folder)
    assert examples == synthetic_examples(9, seed=1) and (folder / ".ready").is_file()
    assert any(e["input"] == "" for e in examples) and any(e["input"] for e in examples)
    assert load_instructions(folder, n_examples=4) == examples[:4]
    assert describe_instructions(folder) == "synthetic"


def test_huggingface_keeps_the_first_examples_in_dataset_order(tmp_path, fake_hub):
    calls, _ = fake_hub
    folder = fetch_instructions("alpaca", tmp_path, source="huggingface", n_examples=7)
    assert calls == [{"repo_id": ALPACA.hub.repo, "filename": ALPACA.hub.file, "repo_type": "dataset",
                      "revision": ALPACA.hub.revision}]
    record = read_instructions(folder)
    assert record["examples"] == ROWS[:7]  # across row groups, in file order; the `text` column dropped
    assert record["source"]["revision"] == ALPACA.hub.revision and "CC BY-NC 4.0" in record["attribution"]
    assert not (folder / ".download").exists()
    assert describe_instructions(folder) == f"{ALPACA.hub.repo}@{ALPACA.hub.revision}:{ALPACA.hub.file}"


def test_a_missing_repository_or_an_offline_hub_fail_clearly(tmp_path, fake_hub):
    _, fail = fake_hub
    response = httpx2.Response(404, request=httpx2.Request("GET", "https://huggingface.co/x"))
    fail[ALPACA.hub.repo] = lambda: RepositoryNotFoundError("simulated", response=response)
    with pytest.raises(HubNotFoundError, match="tatsu-lab/alpaca"):
        fetch_instructions("alpaca", tmp_path, source="huggingface", n_examples=2)
    fail[ALPACA.hub.repo] = lambda: LocalEntryNotFoundError("offline")
    with pytest.raises(HubUnreachableError, match="`synthetic`"):
        fetch_instructions("alpaca", tmp_path, source="huggingface", n_examples=2, retries=0)
    assert not (tmp_path / "alpaca" / ".ready").exists()


def test_too_few_rows_and_a_bad_size_are_rejected(tmp_path, fake_hub):
    """(Unknown names and sources, `path`, complete folders: tests/test_sources.py, for every kind.)"""
    with pytest.raises(ValueError, match="lower `n_examples`"):
        fetch_instructions("alpaca", tmp_path, source="huggingface", n_examples=13)
    with pytest.raises(ValueError, match="n_examples must be a positive integer"):
        fetch_instructions("alpaca", tmp_path, source="synthetic", n_examples=0)


@pytest.mark.parametrize("kind", ["alpaca_json", "instructions_json", "jsonl", "parquet"])
def test_local_stages_every_supported_format(tmp_path, kind):
    staged = tmp_path / "staged"
    staged.mkdir()
    if kind == "alpaca_json":
        file = staged / "alpaca_data.json"
        file.write_text(json.dumps(ROWS))
    elif kind == "instructions_json":
        file = staged  # the folder of an instructions.json written by this stage
        (staged / "instructions.json").write_text(json.dumps({"examples": ROWS}))
    elif kind == "jsonl":
        file = staged / "data.jsonl"
        file.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    else:
        file = staged / "train.parquet"
        write_parquet(file)
    folder = fetch_instructions("alpaca", tmp_path / "root", source="local", path=file, n_examples=5)
    assert load_instructions(folder) == ROWS[:5]
    assert read_instructions(folder)["source"]["kind"] == "local"


def test_local_rejects_missing_files_and_bad_records(tmp_path):
    with pytest.raises(FileNotFoundError, match="do not exist"):
        fetch_instructions("alpaca", tmp_path / "root", source="local", path=tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"instruction": "x", "input": "", "output": ""}]))
    with pytest.raises(ValueError, match="empty `instruction` or `output`"):
        fetch_instructions("alpaca", tmp_path / "root", source="local", path=bad, n_examples=1)


def test_loading_an_unfetched_set_says_to_fetch(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch_instructions"):
        load_instructions(tmp_path / "alpaca")
