"""A damaged results or claims file names itself and the command that rebuilds it (architecture §5)."""

from __future__ import annotations

import pandas as pd
import pytest

from isonorm.verdicts.claims import read_claims, write_claims
from isonorm.results import DamagedResultError, read_metadata, read_results, write_results


def truncate(path, keep: float = 0.5):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


@pytest.fixture
def results_file(tmp_path):
    path = tmp_path / "fig1" / "w64.parquet"
    write_results(pd.DataFrame({"depth": range(50), "value": [0.5] * 50}), path, config={"width": 64})
    return path


def test_a_valid_file_reads_back(results_file):
    assert len(read_results(results_file)) == 50 and read_metadata(results_file)["config"] == {"width": 64}


@pytest.mark.parametrize("read", [read_results, read_metadata])
def test_a_truncated_results_file_says_how_to_rebuild_it(results_file, read):
    truncate(results_file)
    with pytest.raises(DamagedResultError) as caught:
        read(results_file)
    text = str(caught.value)
    assert f"{results_file} is damaged (" in text and "magic bytes" in text  # pyarrow's reason, one line
    assert f"snakemake --cores all --forcerun {results_file}" in text and "--configfile" in text
    assert "\n" not in text


def test_a_garbled_footer_is_damage_too(results_file):
    data = results_file.read_bytes()
    results_file.write_bytes(data[:-60] + b"\xff" * 52 + data[-8:])  # the footer's thrift, magic bytes kept
    with pytest.raises(DamagedResultError, match="--forcerun"):
        read_results(results_file)


def test_a_truncated_claims_file_says_how_to_rebuild_it(tmp_path):
    path = tmp_path / "claims.parquet"
    frame = pd.DataFrame({"item": ["lu2024-table1"], "quantity": ["gap"], "value": [0.1], "note": [""]})
    write_claims(frame, path, "lu2024")
    truncate(path, keep=0.9)
    with pytest.raises(DamagedResultError, match=f"--forcerun {path}"):
        read_claims(path)


def test_a_missing_file_is_not_called_damaged(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_results(tmp_path / "absent.parquet")
