"""Page-specific parts of the browser check (``browser_check``): links, the index, the scoreboard, paper pages.

Functions here take the Selenium driver or a page's collected state (``browser_check._COLLECT``) and return
problems, one line each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from isonorm.report.scoreboard_page import ROW_COUNT, TABLE_ID, VERDICT_FILTER
from isonorm.report.verdict_figure import FIGURE_ID

INDEX, SCOREBOARD = "index.html", "scoreboard.html"

# What the scoreboard page shows: the verdict of every row, which rows are visible, the row-count line.
_TABLE_STATE = """
const rows = Array.from(document.querySelectorAll('#%(table)s tbody tr'));
const verdictOf = row => {
  const cell = row.querySelector('td[class^="verdict-"]');
  return cell ? cell.textContent : '';
};
const count = document.getElementById('%(count)s');
return {
  verdicts: rows.map(verdictOf),
  visible: rows.map(row => row.getClientRects().length > 0),
  count: count ? count.textContent.trim() : null,
};
""" % {"table": TABLE_ID, "count": ROW_COUNT}


class PageIds(Protocol):
    def ids_of(self, page: Path) -> set[str]:
        """The ids a page carries (loading it when not yet read); TimeoutError when it does not load."""


def local_target(base_url: str, reference: str) -> tuple[Path, str] | None:
    """(file, fragment) a link or src points to, or None when it is not a local file (http, mailto, data)."""
    url = urlsplit(urljoin(base_url, reference))
    if url.scheme != "file":
        return None
    return Path(url2pathname(url.path)), unquote(url.fragment)


def link_problem(reader: PageIds, report_dir: Path, base_url: str, href: str) -> str | None:
    """Why a local link is dead, or None when it resolves (or is not a local file)."""
    target = local_target(base_url, href)
    if target is None:
        return None
    path, fragment = target
    if not path.exists():
        return f"dead link {href!r} (no file {path})"
    if not path.resolve().is_relative_to(report_dir):
        return f"link {href!r} leaves the report directory"
    if fragment and path.suffix in (".html", ".htm"):
        try:
            if fragment not in reader.ids_of(path):
                return f"dead link {href!r} (no id {fragment!r} in {path.name})"
        except TimeoutError as err:
            return f"link {href!r}: target {err}"
    return None


def check_index(reader: PageIds, report_dir: Path, found: dict) -> list[str]:
    """The verdict figure renders; every tile links to its own item id on a page that has it."""
    figure, problems = found["figure"], []
    if figure is None:
        problems.append(f"{INDEX}: no verdict figure (no element with id {FIGURE_ID!r})")
    elif not figure["svg"]:
        problems.append(f"{INDEX}: the verdict figure has no inline SVG")
    elif not (figure["width"] > 0 and figure["height"] > 0):
        problems.append(f"{INDEX}: the verdict figure is not rendered ({figure['width']} x {figure['height']} px)")
    for item, href in found["tiles"]:
        if href is None:
            continue  # an item of the scoreboard that no page shows: plain text by design
        target = local_target(found["url"], href)
        if target is not None and target[1] != item:
            problems.append(f"{INDEX}: tile {item!r} links to {href!r}, not to its own id")
        problem = link_problem(reader, report_dir, found["url"], href)
        if problem:
            problems.append(f"{INDEX}: tile {item!r}: {problem}")
    return problems


def check_scoreboard_filter(driver: object) -> list[str]:
    """Filtering the scoreboard by ``mismatch`` shows exactly the mismatch rows and updates the count; "all"
    shows every row again."""
    from selenium.common.exceptions import NoSuchElementException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    try:
        element = driver.find_element(By.ID, VERDICT_FILTER)
    except NoSuchElementException:
        return [f"{SCOREBOARD}: no verdict filter (no element with id {VERDICT_FILTER!r})"]
    if not element.is_displayed():
        return [f"{SCOREBOARD}: the verdict filter is not shown (did the page's script run?)"]
    problems = []
    for choice in ("mismatch", ""):
        Select(element).select_by_value(choice)
        state = driver.execute_script(_TABLE_STATE)
        total, wanted = len(state["verdicts"]), choice or "all"
        shown = [v for v, visible in zip(state["verdicts"], state["visible"]) if visible]
        expected = [v for v in state["verdicts"] if not choice or v == choice]
        if sorted(shown) != sorted(expected):
            others = sum(v != choice for v in shown) if choice else 0
            rows = f"the {len(expected)} {choice} rows" if choice else f"all {total} rows"
            problems.append(f"{SCOREBOARD}: verdict filter {wanted!r} shows {len(shown)} of {total} rows "
                            f"({others} of another verdict), expected {rows}")
        if state["count"] != f"{len(shown)} of {total} rows shown":
            problems.append(f"{SCOREBOARD}: with verdict filter {wanted!r} the row count reads {state['count']!r}, "
                            f"expected '{len(shown)} of {total} rows shown'")
    return problems


def count_paper_points(name: str, found: dict) -> tuple[int, list[str]]:
    """How many item figures of a paper page drew the paper's values (``data-paper-points`` > 0)."""
    drawn, problems = 0, []
    for item, value in found["paperPoints"]:
        if not (value or "").strip().isdigit():
            problems.append(f"{name}: figure {item!r} has data-paper-points={value!r}, not a whole number >= 0")
        elif int(value) > 0:
            drawn += 1
    return drawn, problems
