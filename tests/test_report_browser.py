"""The headless-Chromium check of the report (architecture §10) on tiny fake sites: a good one and a bad one."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import isonorm.report.browser_check as browser_check
import isonorm.report.notebook as notebook
from isonorm.report.browser_check import BrowserUnavailable, browser_unavailable_reason, check_report
from isonorm.report.notebook import ItemRenderer
from isonorm.report.scoreboard import SCOREBOARD_COLUMNS, write_scoreboard
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
    board = pd.DataFrame([["lu2024", "lu2024-fig2", "a", 1.0, 1.0, 0.1, "match", "printed", "quick"]],
                         columns=list(SCOREBOARD_COLUMNS))
    papers = [{"slug": "lu2024", "title": "t", "html": "lu2024.html"},
              {"slug": "meterez2024", "title": "t", "html": "meterez2024.html"}]
    build_index(report, write_scoreboard(board, tmp_path / "scoreboard.csv"), papers, {"a": 1}, [],
                {"git_commit": "x"}, preset="quick")
    return report, {"index.html": ["papers", "scoreboard", "provenance"], "lu2024.html": ids}


@pytest.mark.browser
@requires_browser
def test_good_site_has_no_problems(good_site):
    report, expected = good_site
    assert check_report(report, expected) == []


@pytest.mark.browser
@requires_browser
def test_bad_site_reports_each_problem(good_site):
    report, expected = good_site
    (report / "lu2024" / "lu2024-fig2.png").write_bytes(b"not a png")  # corrupt image
    page = report / "lu2024.html"
    page.write_text(
        page.read_text()
        .replace('id="lu2024-table5"', 'id="lu2024-table5-renamed"')  # missing id
        .replace('href="index.html#scoreboard"', 'href="index.html#nowhere"')  # dead fragment
        .replace("</body>", '<a href="missing.html">gone</a><img src="lu2024/absent.png">'  # dead files
                 '<a href="../scoreboard.csv">csv</a></body>')  # exists, but not where the report is published
    )
    problems = check_report(report, {**expected, "lu2023.html": []})
    assert sorted(problems) == sorted([
        "lu2024.html: broken image 'lu2024/lu2024-fig2.png' (did not load)",
        "lu2024.html: broken image 'lu2024/absent.png' (did not load)",
        "lu2024.html: missing id 'lu2024-table5'",
        "lu2024.html: dead link 'index.html#nowhere' (no id 'nowhere' in index.html)",
        f"lu2024.html: dead link 'missing.html' (no file {report.resolve() / 'missing.html'})",
        "lu2024.html: link '../scoreboard.csv' leaves the report directory",
        "lu2023.html: page does not exist",
    ])


def test_missing_browser_raises_with_install_hint(tmp_path, monkeypatch):
    monkeypatch.setattr(browser_check, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr(browser_check.shutil, "which", lambda name: None)
    with pytest.raises(BrowserUnavailable, match="apt-get install -y chromium chromium-driver"):
        check_report(tmp_path, {"index.html": []})
