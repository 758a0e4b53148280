"""Check the built report in a real headless Chromium (architecture §10): images load, ids exist, links resolve.

A static parse would miss what a reader sees: an ``<img>`` whose file is corrupt, a path that only works
from another working directory, a fragment that no element carries, a figure that does not render, a filter
whose script does nothing. So every page is opened by Chromium (Debian packages ``chromium`` and
``chromium-driver``) through Selenium, from ``file://`` URLs. The index also gets its verdict figure and
item tiles checked, the scoreboard page its filter, and the paper pages' figures are counted for the
paper-value overlays they draw (``data-paper-points``).
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from .browser_pages import (
    INDEX, SCOREBOARD, check_index, check_scoreboard_filter, count_paper_points, link_problem, local_target,
)
from isonorm.report.markup import CAPTION_LINES
from isonorm.report.verdict_figure import FIGURE_ID

# Debian's packages put them here; `shutil.which` is the fallback for other layouts.
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL_HINT = "install them with `apt-get install -y chromium chromium-driver` and `pip install selenium`"

# Headless, no sandbox (containers and CI run as root), and nothing that phones home: the check must be
# deterministic and work offline.
CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
)
PAGE_LOAD_TIMEOUT_S = 60
# The window every page is read in: a laptop's screen. No page may scroll sideways in it (a wide table scrolls
# inside its own box instead).
WINDOW = (1280, 1080)

# How far the page reaches right of the window, and the widest elements that reach past it (the culprits).
_OVERFLOW = """
const width = window.innerWidth, page = document.documentElement.scrollWidth;
if (page <= width) return null;
const wide = Array.from(document.body.querySelectorAll('*'))
  .filter(e => e.getBoundingClientRect().right > width + 1)
  .filter(e => !e.parentElement || e.parentElement.getBoundingClientRect().right <= width + 1)
  .slice(0, 3)
  .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string'
        ? '.' + e.className.trim().split(/\\s+/).join('.') : '') + ' (' + Math.round(e.getBoundingClientRect().right) + ' px)');
return {page: page, width: width, wide: wide};
"""

# Waits until every <img> has either loaded or failed, so `naturalWidth` is final.
_SETTLE_IMAGES = """
const done = arguments[arguments.length - 1];
const pending = Array.from(document.images).filter(img => !img.complete);
let left = pending.length;
if (left === 0) { done(); return; }
const settle = () => { left -= 1; if (left === 0) done(); };
pending.forEach(img => { img.addEventListener('load', settle); img.addEventListener('error', settle); });
"""

_COLLECT = """
return {
  url: document.URL,
  images: Array.from(document.images).map(img => [img.getAttribute('src') || '', img.complete, img.naturalWidth]),
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id)
         .concat(Array.from(document.querySelectorAll('a[name]')).map(e => e.getAttribute('name'))),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href')),
  tiles: Array.from(document.querySelectorAll('.tile[data-item]'))
           .map(t => [t.getAttribute('data-item'), t.tagName === 'A' ? t.getAttribute('href') : null]),
  figure: (() => {
    const figure = document.getElementById('%(figure)s');
    if (!figure) return null;
    const svg = figure.querySelector('svg'), box = (svg || figure).getBoundingClientRect();
    return {svg: svg !== null, width: box.width, height: box.height};
  })(),
  captionLines: Array.from(document.querySelectorAll('figure.item figcaption > span.caption'))
                  .map(c => [c.closest('figure').id, c.getClientRects().length]),
  paperPoints: Array.from(document.querySelectorAll('figure.item[data-paper-points]'))
                 .map(f => [f.id, f.getAttribute('data-paper-points')]),
};
""" % {"figure": FIGURE_ID}


class BrowserUnavailable(RuntimeError):
    """Chromium, its driver or Selenium is not installed."""


def _executable(preferred: str, name: str) -> str | None:
    return preferred if Path(preferred).is_file() else shutil.which(name)


def browser_unavailable_reason() -> str | None:
    """Why the browser check cannot run here, or None when it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return f"selenium is not installed; {INSTALL_HINT}"
    if _executable(CHROMIUM, "chromium") is None:
        return f"Chromium not found at {CHROMIUM} or on PATH; {INSTALL_HINT}"
    if _executable(CHROMEDRIVER, "chromedriver") is None:
        return f"chromedriver not found at {CHROMEDRIVER} or on PATH; {INSTALL_HINT}"
    return None


@contextmanager
def headless_chromium() -> Iterator[object]:
    """A Selenium driver for a fresh headless Chromium profile; quits and removes the profile afterwards."""
    reason = browser_unavailable_reason()
    if reason is not None:
        raise BrowserUnavailable(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="isonorm-chromium-") as profile:
        options = Options()
        options.binary_location = _executable(CHROMIUM, "chromium")
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
        driver = webdriver.Chrome(service=Service(executable_path=_executable(CHROMEDRIVER, "chromedriver")),
                                  options=options)
        try:
            driver.set_window_size(*WINDOW)
            driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT_S)
            driver.set_script_timeout(PAGE_LOAD_TIMEOUT_S)
            yield driver
        finally:
            driver.quit()


class _PageReader:
    """Loads pages in the browser and remembers the ids each one carries (link targets are shared)."""

    def __init__(self, driver: object) -> None:
        self.driver = driver
        self.ids: dict[Path, set[str]] = {}

    def read(self, page: Path) -> dict:
        from selenium.common.exceptions import TimeoutException

        try:
            self.driver.get(page.as_uri())
            self.driver.execute_async_script(_SETTLE_IMAGES)
        except TimeoutException:
            raise TimeoutError(f"did not finish loading within {PAGE_LOAD_TIMEOUT_S} s") from None
        found = self.driver.execute_script(_COLLECT)
        self.ids[page] = set(found["ids"])
        return found

    def ids_of(self, page: Path) -> set[str]:
        if page not in self.ids:
            self.read(page)
        return self.ids[page]


def _check_page(reader: _PageReader, report_dir: Path, name: str, expected: Sequence[str],
                paper_points: dict[str, int], screenshots: Path | None = None) -> list[str]:
    page = report_dir / name
    if not page.is_file():
        return [f"{name}: page does not exist"]
    try:
        found = reader.read(page)
    except TimeoutError as err:
        return [f"{name}: {err}"]
    problems = []
    overflow = reader.driver.execute_script(_OVERFLOW)
    if overflow:
        problems.append(f"{name}: scrolls sideways, {overflow['page']} px wide in a {overflow['width']} px window "
                        f"(reaching past it: {', '.join(overflow['wide']) or 'unknown'})")
    if screenshots is not None:  # the first screen, as a reader sees it
        screenshots.mkdir(parents=True, exist_ok=True)
        reader.driver.save_screenshot(str(screenshots / (Path(name).stem + ".png")))
    for src, complete, width in found["images"]:
        if not (complete and width > 0):
            problems.append(f"{name}: broken image {src!r} (did not load)")
        target = local_target(found["url"], src)
        if target is not None and not target[0].resolve().is_relative_to(report_dir):
            problems.append(f"{name}: image {src!r} lies outside the report directory")
    problems += [f"{name}: missing id {item!r}" for item in expected if item not in found["ids"]]
    problems += [f"{name}: the caption of {item!r} runs to {lines} lines (at most {CAPTION_LINES}: what is drawn and "
                 "the settings; the method goes to `method=`, folded under it)"
                 for item, lines in found["captionLines"] if lines > CAPTION_LINES]
    tile_links: set[str] = set()  # checked by check_index, with the tile's item in the message
    if name == INDEX:
        problems += check_index(reader, report_dir, found)
        tile_links = {href for _, href in found["tiles"] if href is not None}
    elif name == SCOREBOARD:
        problems += check_scoreboard_filter(reader.driver)  # while the page is loaded, before any link is followed
    else:
        paper_points[name], counted = count_paper_points(name, found)
        problems += counted
    for href in found["links"]:
        problem = None if href in tile_links else link_problem(reader, report_dir, found["url"], href)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


class ReportCheck(list):
    """The problems found, one line each (an empty list means the report is fine), plus ``paper_points``:
    for each paper page checked, how many of its item figures drew the paper's values (``data-paper-points``
    > 0)."""

    def __init__(self, problems: Sequence[str] = (), paper_points: Mapping[str, int] | None = None) -> None:
        super().__init__(problems)
        self.paper_points = dict(paper_points or {})


def check_report(report_dir: str | Path, expected_ids: Mapping[str, Sequence[str]],
                 expect_paper_points: bool = False, screenshots: str | Path | None = None) -> ReportCheck:
    """Problems found in the report, one line each; an empty list means it is fine.

    ``expected_ids`` maps a page (relative to ``report_dir``, e.g. ``index.html``, ``lu2024.html``) to the
    ids it must carry (its items). Every listed page is opened in headless Chromium and checked for
    images that do not load, missing ids, and local links to a missing file or fragment. ``index.html``
    also has its verdict figure checked (present, rendered) and every item tile's link (to its own id on
    a page that has it); ``scoreboard.html`` has its verdict filter driven (``mismatch``, then all). Every
    other page is a paper page: its ``<figure class="item" data-paper-points="N">`` with N > 0 are counted
    (``ReportCheck.paper_points``) and, with ``expect_paper_points``, it is a problem when no figure of
    any of them drew the paper's values. Every page is read in a ``WINDOW``-sized window (1280 x 1080 px), where
    a page that scrolls sideways is a problem naming the elements that reach past the window, and so is an item
    caption longer than ``CAPTION_LINES`` lines there; with
    ``screenshots``, the first screen of each page is saved there as ``<page>.png``. Raises BrowserUnavailable
    (with the install command) when Chromium, chromedriver or Selenium is missing.
    """
    report_dir = Path(report_dir).resolve()
    with headless_chromium() as driver:
        reader = _PageReader(driver)
        problems: list[str] = []
        paper_points: dict[str, int] = {}
        for name, expected in expected_ids.items():
            problems += _check_page(reader, report_dir, name, expected, paper_points,
                                    None if screenshots is None else Path(screenshots))
        if expect_paper_points and not any(paper_points.values()):
            pages = ", ".join(paper_points) or "none checked"
            problems.append("no figure of the report draws the paper's values: no <figure class=\"item\"> with "
                            f"data-paper-points > 0 on the paper pages ({pages})")
        return ReportCheck(problems, paper_points)
