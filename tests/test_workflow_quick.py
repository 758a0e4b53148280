"""Integration: the quick preset end to end in a temporary copy, its report, and the workflow's contracts."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import PAPER, PAPERS, QUICK, REPO, snakemake
from isonorm.verdicts import SCOREBOARD_COLUMNS, load_references
from isonorm.verdicts.comparison import SMOKE_VERDICTS
from isonorm.verdicts.ids import named_items

pytestmark = pytest.mark.integration
# Every item a paper's notebook names (each item cell names its id literally; tests/test_report_pages.py checks
# that the notebook names every item its reference lists)
NOTEBOOKS = {slug: (REPO / "notebooks" / f"{slug}.py").read_text(encoding="utf-8") for slug in PAPERS}
ITEM_IDS = {slug: named_items(text, slug) for slug, text in NOTEBOOKS.items()}
# The items a page says cannot be reproduced (render.not_reproducible): no figure or table of theirs
NOT_REPRODUCIBLE = {item for text in NOTEBOOKS.values()
                    for item in re.findall(r"""render\.not_reproducible\(\s*["']([a-z0-9-]+)["']""", text)}


@pytest.mark.parametrize("slug", sorted(ITEM_IDS))
def test_quick_report_has_every_item_with_a_rendered_figure_or_table(quick_run, slug):
    page = (quick_run / QUICK["report"] / f"{slug}.html").read_text()
    for item in ITEM_IDS[slug]:
        assert f'id="{item}"' in page, f"{item} missing from the report"
    for src in re.findall(r'<img src="([^"]+)"', page):
        assert (quick_run / QUICK["report"] / src).is_file(), src
    figures = {p.stem for p in (quick_run / QUICK["report"] / slug).glob("*.png")}
    tables = {p.stem for p in (quick_run / QUICK["report"] / slug).glob("*.csv")}
    assert figures | tables >= set(ITEM_IDS[slug]) - NOT_REPRODUCIBLE
    assert "quick" in page  # the preset badge


def test_scoreboard_has_a_row_for_every_reference_value(quick_run):
    board = pd.read_csv(quick_run / QUICK["results"] / "scoreboard.csv")
    assert list(board.columns) == list(SCOREBOARD_COLUMNS)
    assert set(board.provenance.dropna()) <= {"printed", "read-off", "derived"}
    keys = set(zip(board["item"], board["quantity"]))
    for slug in ITEM_IDS:
        references = load_references(quick_run / "notebooks" / "reference" / f"{slug}.yaml")
        assert set(zip(references["item"], references["quantity"])) <= keys
    assert (board.preset == "quick").all()
    # A smoke run is not compared to the papers: a quantity is computed, failed (NaN or infinite, or its job failed),
    # not produced at these sizes (named after a paper-size setting, e.g. meterez2024's depth-1000 read-offs) or not
    # run. Every paper computes part of what it reported, and nothing comes out NaN or infinite.
    assert set(board.verdict) <= set(SMOKE_VERDICTS), set(board.verdict)
    assert not (board.verdict == "failed").any(), board[board.verdict == "failed"][["item", "quantity", "note"]]
    computed = board.verdict.eq("computed")
    assert (computed.groupby(board.paper).mean() > 0.25).all(), computed.groupby(board.paper).mean()
    assert computed.mean() > 0.5


def test_the_smoke_index_reports_on_the_pipeline_not_against_the_papers(quick_run):
    index = (quick_run / QUICK["report"] / "index.html").read_text()
    headline = re.search(r'<p id="headline" class="headline"><strong>(.*?)</strong>', index).group(1)
    assert headline.startswith("Smoke run (quick preset), not compared to the papers: ")
    assert re.search(r"\d+ of \d+ quantities computed; 0 failed \(its job failed, or NaN or infinite\); "
                     r"\d+ not produced", headline)
    assert "match" not in headline and "match rates" not in index
    assert 'class="swatch verdict-match"' not in index and 'class="swatch verdict-computed"' in index
    board = (quick_run / QUICK["report"] / "scoreboard.html").read_text()
    assert "no row is compared with the paper" in board and "A row matches" not in board


def test_results_are_tidy_parquet_with_provenance(quick_run):
    from isonorm.results import read_metadata

    path = next((quick_run / QUICK["results"] / "daneshmand2021" / "fig1").glob("*.parquet"))
    meta = read_metadata(path)
    assert {"config", "git_commit", "packages", "device"} <= set(meta)
    assert meta["config"]["function"].endswith("warmup_cosine")


def test_index_page_has_one_linked_tile_per_item_and_shows_provenance(quick_run):
    index = (quick_run / QUICK["report"] / "index.html").read_text()
    tiles = re.findall(r'<a class="tile [^"]*" data-item="([^"]+)" title="[^"]*" href="([^"]+)"', index)
    linked = [item for item, _ in tiles]
    assert len(linked) == len(set(linked)) and set(linked) >= {i for ids in ITEM_IDS.values() for i in ids}
    for item, href in tiles:  # a page may show an item in parts (lu2024-table5-transformer): each part is a tile
        page, anchor = href.split("#")
        assert page == f"{item.split('-')[0]}.html" and anchor == item
        assert f'id="{item}"' in (quick_run / QUICK["report"] / page).read_text()
    assert 'id="verdict-figure"' in index and "<svg" in index
    assert "torch" in index and "quick" in index


def screenshot_folder(tmp_path_factory) -> Path:
    """Where the browser check keeps its screenshots: $ISONORM_TEST_ARTIFACTS (a CI's artefact folder), else this
    session's temporary folder (its path is printed)."""
    folder = Path(os.environ.get("ISONORM_TEST_ARTIFACTS") or tmp_path_factory.mktemp("artifacts")) / "screenshots"
    print(f"screenshots of the quick report: {folder}")
    return folder


@pytest.mark.browser
def test_report_in_headless_chromium(quick_run, tmp_path_factory):
    """Every page of the quick report in a 1280 x 1080 window: images load, ids and links resolve, no page scrolls
    sideways (tools.browser_check); the first screen of each page is kept."""
    from tools.browser_check import browser_unavailable_reason, check_report

    reason = browser_unavailable_reason()
    if reason:
        pytest.skip(reason)
    pages = {f"{slug}.html": ids for slug, ids in ITEM_IDS.items()}
    expected = {**pages, "index.html": ["verdict-figure", "items"], "scoreboard.html": ["scoreboard-table"]}
    shots = screenshot_folder(tmp_path_factory)
    problems = check_report(quick_run / QUICK["report"], expected, expect_paper_points=True, screenshots=shots)
    assert problems == [], problems
    assert {p.name for p in shots.glob("*.png")} == {f"{Path(page).stem}.png" for page in expected}


@pytest.mark.browser
def test_a_data_free_page_at_the_papers_settings_fits_the_screen(workflow_dir, paper_root_run, tmp_path_factory):
    """The paper configuration's data-free run (conftest.PAPER_ROOT_RUN: lu2024's page, scored against the paper,
    its trained items not run): the same browser check, in the same 1280 x 1080 window."""
    from tools.browser_check import browser_unavailable_reason, check_report

    reason = browser_unavailable_reason()
    if reason:
        pytest.skip(reason)
    problems = check_report(workflow_dir / PAPER["report"], {"lu2024.html": ITEM_IDS["lu2024"]},
                            screenshots=screenshot_folder(tmp_path_factory) / "data-free")
    # that run makes the page alone (PAPER_ROOT_RUN's targets): its link back to the index has nothing to open yet
    assert [p for p in problems if "dead link 'index.html'" not in p] == [], problems


def test_rerun_after_a_plot_change_does_not_recompute(quick_run):
    done = snakemake(quick_run, "--cores", "1", "--configfile", "presets/quick.yaml", "-n", "--forcerun",
                     "paper_notebook")
    assert done.returncode == 0
    assert "daneshmand2021_depth_training" not in done.stdout


def test_training_logs_show_rate_and_time_left(quick_run):
    """Every epoch line of a training job's log ends with its time, the mean per epoch and the time left
    (isonorm.train.progress), so that a long job is seen to move."""
    logs = sorted((quick_run / QUICK["logs"] / "meterez2024").glob("training-*.log"))
    assert logs
    epochs = [line for log in logs for line in log.read_text().splitlines() if " epoch " in line and "train loss" in line]
    assert epochs and all(re.search(r"s/epoch\); (.+ left|done)$", line) for line in epochs), epochs[:3]
    assert any(line.endswith(" left") for line in epochs)
