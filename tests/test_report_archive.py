"""The report as `snakemake --report report.zip` packs it (architecture §3, "The Snakemake report archive"): the
folder the index rule lays out for it, how each file is filed, and the archive built from the quick run, opened
in headless Chromium from the unpacked zip."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from snakemake.io import apply_wildcards, glob_wildcards
from snakemake.iocontainers import Wildcards

from conftest import PAPERS as RUN_PAPERS  # the config's papers: the quick run's pages
from conftest import QUICK, snakemake
from isonorm.report.archive import (
    ALL_PAPERS, ARCHIVE_DIR, ARCHIVE_PATTERNS, OVERVIEW, PAPER_PAGE, archive_category, archive_labels,
    archive_subcategory, lay_out_archive, site_files,
)

PAPERS = [{"slug": "lu2024", "title": "t", "html": "lu2024.html"},
          {"slug": "meterez2024", "title": "t", "html": "meterez2024.html"}]  # no page yet: left out


@pytest.fixture
def site(tmp_path) -> Path:
    """A report root with the site's files, a hidden file, another preset's report and a stray zip beside them."""
    report = tmp_path / "report"
    for name in ("index.html", "scoreboard.html", "lu2024.html", "lu2024/lu2024-fig2.png", "lu2024/lu2024-fig2.pdf",
                 "lu2024/lu2024-table5.csv", "lu2024/.snakemake_timestamp", "quick/index.html",
                 "snakemake-report.zip"):
        (report / name).parent.mkdir(parents=True, exist_ok=True)
        (report / name).write_text(name)
    return report


def test_the_archive_folder_holds_the_site_as_hard_links(site):
    archive = lay_out_archive(site, PAPERS)
    assert archive == site / ARCHIVE_DIR
    laid_out = sorted(str(p.relative_to(archive)) for p in archive.rglob("*") if p.is_file())
    assert laid_out == ["index.html", "lu2024.html", "lu2024/lu2024-fig2.pdf", "lu2024/lu2024-fig2.png",
                        "lu2024/lu2024-table5.csv", "scoreboard.html"]
    assert laid_out == sorted(str(p) for p in site_files(site, PAPERS))
    assert all((archive / name).samefile(site / name) for name in laid_out)  # no second copy on disk
    assert [p.name for p in site.iterdir() if p.name.startswith(f".{ARCHIVE_DIR}")] == []  # no building folder left


def test_laying_out_again_replaces_the_folder(site):
    lay_out_archive(site, PAPERS)
    (site / "lu2024" / "lu2024-fig2.pdf").unlink()  # a rerun of the paper's notebook that no longer makes it
    (site / "lu2024" / "lu2024-fig2.png").write_text("redrawn")
    archive = lay_out_archive(site, PAPERS)
    assert not (archive / "lu2024" / "lu2024-fig2.pdf").exists()
    assert (archive / "lu2024" / "lu2024-fig2.png").read_text() == "redrawn"


def test_every_file_of_the_archive_folder_matches_one_pattern_and_is_filed_by_paper_and_item(site):
    """What report() registers: each file once, under its paper and item, labelled so entries differ."""
    archive = lay_out_archive(site, PAPERS)
    filed = {}
    for pattern in ARCHIVE_PATTERNS:
        found = glob_wildcards(str(archive / pattern))._asdict()
        for values in zip(*found.values()):
            wildcards = Wildcards(fromdict=dict(zip(found, values)))
            path = Path(apply_wildcards(pattern, wildcards))  # as Snakemake names the file it registers
            assert str(path) not in filed, f"{path} matched twice"
            filed[str(path)] = (archive_category(wildcards), archive_subcategory(wildcards), archive_labels(wildcards))
    assert filed == {
        "index.html": (ALL_PAPERS, OVERVIEW, {"file": "index.html"}),
        "scoreboard.html": (ALL_PAPERS, OVERVIEW, {"file": "scoreboard.html"}),
        "lu2024.html": ("lu2024", "lu2024 page", {"file": "lu2024.html"}),
        "lu2024/lu2024-fig2.png": ("lu2024", "lu2024-fig2", {"format": "PNG"}),
        "lu2024/lu2024-fig2.pdf": ("lu2024", "lu2024-fig2", {"format": "PDF"}),
        "lu2024/lu2024-table5.csv": ("lu2024", "lu2024-table5", {"format": "CSV"}),
    }


# --- the archive of the quick run ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def unpacked(quick_run, tmp_path_factory) -> Path:
    """``snakemake --report`` of the quick run, unpacked; the folder holding report.html."""
    target = tmp_path_factory.mktemp("archive")
    done = snakemake(quick_run, "--cores", "1", "--configfile", "presets/quick.yaml", "--report",
                     str(target / "report.zip"))
    if done.returncode != 0:
        pytest.fail(f"snakemake --report failed:\n{done.stderr[-5000:]}")
    with zipfile.ZipFile(target / "report.zip") as archive:
        archive.extractall(target)
    return target / "report"


def report_data(unpacked: Path, name: str) -> dict:
    """A JSON object the Snakemake report assigns to ``var <name> = ...;`` in report.html."""
    text = (unpacked / "report.html").read_text()
    found = re.search(rf"var {name} = (\{{.*?\}});\n", text)
    assert found, f"no `var {name}` in report.html"
    return json.loads(found.group(1))


def site_folder(unpacked: Path) -> Path:
    (index,) = unpacked.glob("data/raw/*/index.html")
    return index.parent


@pytest.mark.integration
def test_archive_holds_the_whole_site_in_its_layout(quick_run, unpacked):
    site = site_folder(unpacked)
    report = quick_run / QUICK["report"]
    expected = {str(p) for p in site_files(report, [{"slug": s, "html": f"{s}.html"} for s in RUN_PAPERS])}
    assert {str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()} == expected
    assert {"index.html", "scoreboard.html", *(f"{slug}.html" for slug in RUN_PAPERS)} <= expected


@pytest.mark.integration
def test_archive_files_every_result_by_paper_and_item(unpacked):
    categories = report_data(unpacked, "categories")
    assert set(categories) == {ALL_PAPERS, *RUN_PAPERS}
    assert "Other" not in {sub for subs in categories.values() for sub in subs}
    assert sorted(Path(p).name for p in categories[ALL_PAPERS][OVERVIEW]) == ["index.html", "scoreboard.csv",
                                                                               "scoreboard.html"]
    for slug in RUN_PAPERS:
        page = PAPER_PAGE.format(slug=slug)
        assert [Path(p).name for p in categories[slug][page]] == [f"{slug}.html"]
        items = {sub: paths for sub, paths in categories[slug].items() if sub != page}
        assert items and all(sub.startswith(f"{slug}-") for sub in items)
        assert all(Path(p).stem == sub for sub, paths in items.items() for p in paths)


@pytest.mark.integration
@pytest.mark.browser
def test_pages_of_the_unpacked_archive_show_their_figures(unpacked):
    from tools.browser_check import browser_unavailable_reason, check_report, headless_chromium

    reason = browser_unavailable_reason()
    if reason:
        pytest.skip(reason)
    site = site_folder(unpacked)
    page = "daneshmand2021.html"
    with headless_chromium() as driver:
        driver.get((site / page).as_uri())
        driver.execute_async_script(
            "const done = arguments[0]; window.addEventListener('load', () => done()); "
            "if (document.readyState === 'complete') done();")
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth]);")
    assert len(images) > 5 and [src for src, width in images if not width > 0] == []
    # Then as the report itself is checked: every image and link of the page, and the index (verdict figure,
    # tiles followed to every paper page's ids) and the scoreboard page (its filter driven).
    result = check_report(site, {page: [], "index.html": ["verdict-figure", "items"],
                                 "scoreboard.html": ["scoreboard-table"]})
    assert result == [], result
