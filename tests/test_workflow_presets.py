"""Presets never overwrite each other: each writes under its own output root (architecture §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import PAPER, PAPER_ROOT_RUN, QUICK, RESULT_ROOTS, file_digests, snakemake
from isonorm.outputs import RESERVED_PRESET_NAMES, output_roots


def test_the_paper_configuration_writes_the_top_level_folders():
    assert output_roots("paper") == {"results": Path("results"), "report": Path("report"), "logs": Path("logs")}


def test_every_other_preset_writes_under_its_own_name():
    assert output_roots("budget") == {kind: Path(kind, "budget") for kind in ("results", "report", "logs")}


@pytest.mark.parametrize("name", [*RESERVED_PRESET_NAMES, "lu2024", "example2099", "smith1998b"])
def test_a_preset_named_like_a_paper_folder_is_refused(name):
    with pytest.raises(ValueError, match="rename the preset"):
        output_roots(name)


@pytest.mark.integration
def test_quick_run_leaves_the_paper_roots_files_byte_identical(workflow_dir, paper_root_run, quick_run):
    assert str(PAPER["results"] / "lu2024" / "claims.parquet") in paper_root_run
    assert any(name.startswith(str(PAPER["report"] / "lu2024")) for name in paper_root_run)
    assert file_digests(quick_run, RESULT_ROOTS, skip=QUICK) == paper_root_run
    # ... and the quick run wrote its own copies of the same names under its root (and no scoreboard above).
    assert (quick_run / QUICK["results"] / "lu2024" / "claims.parquet").is_file()
    assert (quick_run / QUICK["report"] / "lu2024.html").is_file()
    assert (quick_run / QUICK["results"] / "scoreboard.csv").is_file()
    assert not (quick_run / PAPER["results"] / "scoreboard.csv").exists()


@pytest.mark.integration
def test_snakemake_metadata_does_not_rerun_across_presets(quick_run):
    """After the quick run, the paper root's run is still complete, and the other way round."""
    for args in (PAPER_ROOT_RUN, ("--configfile", "presets/quick.yaml")):
        done = snakemake(quick_run, "--cores", "1", "-n", *args)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Nothing to be done" in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]


@pytest.mark.integration
def test_a_preset_named_like_a_paper_is_refused_at_parse_time(workflow_dir):
    done = snakemake(workflow_dir, "-n", "--config", "preset=lu2024")
    assert done.returncode != 0
    assert "preset" in done.stdout + done.stderr
