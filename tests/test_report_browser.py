"""The headless-Chromium check of the report (architecture §10) on tiny fake sites: a good one and a bad one."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import tools.browser_check as browser_check
import isonorm.report.notebook as notebook
from tools.browser_check import BrowserUnavailable, browser_unavailable_reason, check_report, headless_chromium
from isonorm.report.notebook import ItemRenderer
from isonorm.verdicts.scoreboard import SCOREBOARD_COLUMNS, write_scoreboard
from isonorm.report.site import build_index

# Skips only where Chromium, chromedriver or Selenium is not installed, saying which.
requires_browser = pytest.mark.skipif(
    browser_unavailable_reason() is not None, reason=str(browser_unavailable_reason())
)


def paper_page(report_dir, monkeypatch) -> list[str]:
    """``lu2024.html`` made of ItemRenderer output, as the executed notebook would hold it; its item ids."""
    shown: list[str] = []
    monkeypatch.setattr(notebook, "display", lambda obj: shown.append(obj.data))
    renderer = ItemRenderer("lu2024", report_dir, None, None, preset="quick")
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [1, 0])
    renderer.figure(fig, "lu2024-fig2", "a line")
    renderer.table(pd.DataFrame({"x": [1.0]}), "lu2024-table5", "a table")
    renderer.not_reproducible("lu2024-apptable3", "no data")
    (report_dir / "lu2024.html").write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        + "".join(shown)
        + '<a href="index.html#scoreboard">back</a></body></html>'
    )
    return list(renderer.rendered)


@pytest.fixture
def good_site(tmp_path, monkeypatch):
    report = tmp_path / "report"
    report.mkdir()
    ids = paper_page(report, monkeypatch)
    nan = float("nan")
    board = pd.DataFrame([
        ["lu2024", "lu2024-fig2", "a", 1.0, 1.0, 0.1, "match", "printed", "quick"],
        ["lu2024", "lu2024-fig2", "b", 5.0, 1.0, 0.1, "mismatch", "read-off", "quick"],
        ["lu2024", "lu2024-table5", "a", 3.0, nan, 0.1, "not-run", "printed", "quick"],
        ["lu2024", "lu2024-apptable3", "a", 2.0, nan, 0.1, "not-run", "printed", "quick"],
        ["meterez2024", "meterez2024-fig1", "a", 0.5, 0.5, 0.1, "match", "derived", "quick"],  # no page
    ], columns=["paper", "item", "quantity", "reported", "reproduced", "tolerance", "verdict", "provenance", "preset"])
    board = board.reindex(columns=list(SCOREBOARD_COLUMNS)).assign(reading="default", check="reproduction", weak=False)
    # origins as long as they come: the pages shorten them, the CSV keeps them whole
    board["origin"] = ["imported from real-data-cuda-nvidia-h200-2026-12-02 (cuda:NVIDIA H200, 2026-11-30 to "
                       "2026-12-02, c3fb5af+dirty); computed (cpu:x86_64, 2026-12-01, b5ab422)",
                       "stale, imported from an-older-bundle-2026-11-01 (cpu:x86_64, 2026-11-01, 1a2b3c4)",
                       "not run", "failed (log: results/quick/logs/lu2024/lu2024_apptable3/a-very-long-name.log)",
                       "computed (cpu:x86_64, 2026-12-01, b5ab422)"]
    papers = [{"slug": "lu2024", "title": "t", "html": "lu2024.html"},
              {"slug": "meterez2024", "title": "t", "html": "meterez2024.html"}]
    build_index(report, write_scoreboard(board, tmp_path / "scoreboard.csv"), papers, {"a": 1}, [],
                {"git_commit": "x"}, preset="quick")
    expected = {"index.html": ["papers", "verdict-figure", "items", "scoreboard", "provenance"],
                "scoreboard.html": ["scoreboard-table"], "lu2024.html": ids}
    return report, expected


def edit(path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def set_paper_points(page, item: str, value: str) -> None:
    """Give ``<figure id="item">`` the attribute ``data-paper-points="value"`` (replacing one it has)."""
    def retag(match: re.Match) -> str:
        tag = re.sub(r'\s+data-paper-points="[^"]*"', "", match.group(0))
        return tag[:-1] + f' data-paper-points="{value}">'

    text, n = re.subn(rf'<figure id="{item}"[^>]*>', retag, page.read_text())
    assert n == 1
    page.write_text(text)


@pytest.mark.browser
@requires_browser
def test_good_site_has_no_problems(good_site):
    report, expected = good_site
    result = check_report(report, expected)
    assert result == [] and result.paper_points == {"lu2024.html": 0}


@pytest.mark.browser
@requires_browser
def test_bad_site_reports_each_problem(good_site):
    report, expected = good_site
    (report / "lu2024" / "lu2024-fig2.png").write_bytes(b"not a png")  # corrupt image
    page = report / "lu2024.html"
    page.write_text(
        page.read_text()
        .replace('id="lu2024-table5"', 'id="lu2024-table5-renamed"')  # missing id; its tile's link is dead
        .replace('href="index.html#scoreboard"', 'href="index.html#nowhere"')  # dead fragment
        .replace('<span class="caption">a line</span>', f'<span class="caption">{"a method in the caption " * 40}'
                 '</span>')  # about 6 lines at 1280 px
        .replace("</body>", '<a href="missing.html">gone</a><img src="lu2024/absent.png">'  # dead files
                 '<a href="../scoreboard.csv">csv</a></body>')  # exists, but not where the report is published
    )
    edit(report / "index.html", '<figure id="verdict-figure" class="verdict-figure">',
         '<figure id="verdict-figure" class="verdict-figure" style="display: none">')  # not rendered
    edit(report / "scoreboard.html", "row.hidden = !keep;", "row.hidden = false;")  # the filter hides nothing
    problems = check_report(report, {**expected, "lu2023.html": []})
    assert sorted(problems) == sorted([
        "lu2024.html: broken image 'lu2024/lu2024-fig2.png' (did not load)",
        "lu2024.html: broken image 'lu2024/absent.png' (did not load)",
        "lu2024.html: missing id 'lu2024-table5'",
        "lu2024.html: the caption of 'lu2024-fig2' runs to 6 lines (at most 4: what is drawn and the settings; the "
        "method goes to `method=`, folded under it)",
        "lu2024.html: dead link 'index.html#nowhere' (no id 'nowhere' in index.html)",
        f"lu2024.html: dead link 'missing.html' (no file {report.resolve() / 'missing.html'})",
        "lu2024.html: link '../scoreboard.csv' leaves the report directory",
        "lu2023.html: page does not exist",
        "index.html: the verdict figure is not rendered (0 x 0 px)",
        "index.html: tile 'lu2024-table5': dead link 'lu2024.html#lu2024-table5' (no id 'lu2024-table5' in "
        "lu2024.html)",
        "scoreboard.html: dead link 'lu2024.html#lu2024-table5' (no id 'lu2024-table5' in lu2024.html)",
        "scoreboard.html: verdict filter 'mismatch' shows 5 of 5 rows (4 of another verdict), expected the 1 "
        "mismatch rows",
        "scoreboard.html: with verdict filter 'mismatch' the row count reads '1 of 5 rows shown', expected "
        "'5 of 5 rows shown'",
    ])


@pytest.mark.browser
@requires_browser
def test_missing_figure_tile_to_a_wrong_id_and_a_dead_script_are_reported(good_site):
    report, expected = good_site
    index = report / "index.html"
    start = index.read_text().index('<figure id="verdict-figure"')
    end = index.read_text().index("</figure>", start) + len("</figure>")
    index.write_text(index.read_text()[:start] + index.read_text()[end:])  # no figure at all
    edit(index, 'href="lu2024.html#lu2024-fig2"', 'href="lu2024.html#lu2024-table5"')  # resolves, wrong item
    edit(report / "scoreboard.html", "<script>", "<script>throw new Error('broken');")  # the script dies
    problems = check_report(report, {"index.html": [], "scoreboard.html": []})
    assert sorted(problems) == sorted([
        "index.html: no verdict figure (no element with id 'verdict-figure')",
        "index.html: tile 'lu2024-fig2' links to 'lu2024.html#lu2024-table5', not to its own id",
        "scoreboard.html: the verdict filter is not shown (did the page's script run?)",
    ])


@pytest.mark.browser
@requires_browser
def test_paper_points_are_counted_and_can_be_required(good_site):
    report, expected = good_site
    result = check_report(report, expected, expect_paper_points=True)
    assert result == ["no figure of the report draws the paper's values: no <figure class=\"item\"> with "
                      "data-paper-points > 0 on the paper pages (lu2024.html)"]
    page = report / "lu2024.html"
    set_paper_points(page, "lu2024-fig2", "4")
    result = check_report(report, expected, expect_paper_points=True)
    assert result == [] and result.paper_points == {"lu2024.html": 1}
    set_paper_points(page, "lu2024-fig2", "0")  # a figure that drew none does not count
    assert check_report(report, {"lu2024.html": []}).paper_points == {"lu2024.html": 0}
    set_paper_points(page, "lu2024-fig2", "many")
    assert check_report(report, {"lu2024.html": []}) == [
        "lu2024.html: figure 'lu2024-fig2' has data-paper-points='many', not a whole number >= 0"
    ]


@pytest.mark.browser
@requires_browser
def test_scoreboard_sorts_numerically_and_filters_by_text(good_site):
    from selenium.webdriver.common.by import By

    report, _ = good_site
    reported = ("return Array.from(document.querySelectorAll('#scoreboard-table tbody tr'))"
                ".filter(r => !r.hidden).map(r => r.cells[3].dataset.value);")
    with headless_chromium() as driver:
        driver.get((report / "scoreboard.html").as_uri())
        header = driver.find_element(By.CSS_SELECTOR, "#scoreboard-table th:nth-child(4) button")
        assert header.text.startswith("reported")
        header.click()
        assert driver.execute_script(reported) == ["0.5", "1.0", "2.0", "3.0", "5.0"]  # numerically
        header.click()
        assert driver.execute_script(reported) == ["5.0", "3.0", "2.0", "1.0", "0.5"]
        reproduced = driver.find_element(By.CSS_SELECTOR, "#scoreboard-table th:nth-child(5) button")
        reproduced.click()  # missing values last
        assert driver.execute_script(reported.replace("cells[3]", "cells[4]")) == ["0.5", "1.0", "1.0", "", ""]
        driver.find_element(By.ID, "filter-text").send_keys("TABLE")  # item id or quantity, any case
        assert driver.execute_script(reported) == ["3.0", "2.0"]  # the two tables, in the last (stable) order
        assert driver.find_element(By.ID, "row-count").text == "2 of 5 rows shown"


def test_missing_browser_raises_with_install_hint(tmp_path, monkeypatch):
    monkeypatch.setattr(browser_check, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr(browser_check.shutil, "which", lambda name: None)
    with pytest.raises(BrowserUnavailable, match="apt-get install -y chromium chromium-driver"):
        check_report(tmp_path, {"index.html": []})


@pytest.mark.browser
@requires_browser
def test_scoreboard_filters_by_reading_weak_and_origin(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from isonorm.report.scoreboard_page import ORIGIN_FILTER, READING_FILTER, ROW_COUNT, WEAK_FILTER, scoreboard_page

    imported = "imported from real-data-cpu-2026-12-02 (cpu:x86_64, 2026-12-02, c3fb5af)"
    board = pd.DataFrame({
        "paper": ["lu2024"] * 4, "item": ["lu2024-fig2"] * 4, "quantity": ["a", "a_offset", "a_d300", "b"],
        "reported": [1.0] * 4, "reproduced": [1.0, 1.1, 1.0, 1.6], "tolerance": [0.1, 0.1, 0.1, 0.9],
        "verdict": ["match", "match", "fitted", "match"], "reading": ["default", "alternative", "fitted", "default"],
        "weak": [False, False, False, True], "basis_detail": [""] * 4,
        "origin": ["computed (cpu:x86_64, 2026-12-01, b5ab422)", imported, imported, "computed"],
    }).reindex(columns=list(SCOREBOARD_COLUMNS))
    page = tmp_path / "scoreboard.html"
    page.write_text(scoreboard_page(board, {}, "t", "", "scoreboard.csv"))
    shown = ("return Array.from(document.querySelectorAll('#scoreboard-table tbody tr'))"
             ".filter(r => !r.hidden).map(r => r.dataset.text);")
    with headless_chromium() as driver:
        driver.get(page.as_uri())
        Select(driver.find_element(By.ID, READING_FILTER)).select_by_value("default")
        assert driver.execute_script(shown) == ["lu2024-fig2 a", "lu2024-fig2 b"]
        Select(driver.find_element(By.ID, WEAK_FILTER)).select_by_value("yes")
        assert driver.execute_script(shown) == ["lu2024-fig2 b"]
        assert driver.find_element(By.ID, ROW_COUNT).text == "1 of 4 rows shown"
        Select(driver.find_element(By.ID, READING_FILTER)).select_by_value("fitted")
        Select(driver.find_element(By.ID, WEAK_FILTER)).select_by_value("")
        assert driver.execute_script(shown) == ["lu2024-fig2 a_d300"]
        Select(driver.find_element(By.ID, READING_FILTER)).select_by_value("")
        Select(driver.find_element(By.ID, ORIGIN_FILTER)).select_by_value("imported")
        assert driver.execute_script(shown) == ["lu2024-fig2 a_offset", "lu2024-fig2 a_d300"]
        Select(driver.find_element(By.ID, ORIGIN_FILTER)).select_by_value("computed")
        assert driver.execute_script(shown) == ["lu2024-fig2 a", "lu2024-fig2 b"]
