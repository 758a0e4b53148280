"""Check the built report in a real headless Chromium (architecture §10): images load, ids exist, links resolve.

A static parse would miss what a reader sees: an ``<img>`` whose file is corrupt, a path that only works
from another working directory, a fragment that no element carries. So every page is opened by Chromium
(Debian packages ``chromium`` and ``chromium-driver``) through Selenium, from ``file://`` URLs.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

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
};
"""


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
        driver = webdriver.Chrome(service=Service(executable_path=_executable(CHROMEDRIVER, "chromedriver")),
                                  options=options)
        try:
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


def _local_target(base_url: str, reference: str) -> tuple[Path, str] | None:
    """(file, fragment) a link or src points to, or None when it is not a local file (http, mailto, data)."""
    url = urlsplit(urljoin(base_url, reference))
    if url.scheme != "file":
        return None
    return Path(url2pathname(url.path)), unquote(url.fragment)


def _check_page(reader: _PageReader, report_dir: Path, name: str, expected: Sequence[str]) -> list[str]:
    page = report_dir / name
    if not page.is_file():
        return [f"{name}: page does not exist"]
    try:
        found = reader.read(page)
    except TimeoutError as err:
        return [f"{name}: {err}"]
    problems = []
    for src, complete, width in found["images"]:
        if not (complete and width > 0):
            problems.append(f"{name}: broken image {src!r} (did not load)")
        target = _local_target(found["url"], src)
        if target is not None and not target[0].resolve().is_relative_to(report_dir):
            problems.append(f"{name}: image {src!r} lies outside the report directory")
    problems += [f"{name}: missing id {item!r}" for item in expected if item not in found["ids"]]
    for href in found["links"]:
        target = _local_target(found["url"], href)
        if target is None:
            continue
        path, fragment = target
        if not path.exists():
            problems.append(f"{name}: dead link {href!r} (no file {path})")
        elif not path.resolve().is_relative_to(report_dir):
            problems.append(f"{name}: link {href!r} leaves the report directory")
        elif fragment and path.suffix in (".html", ".htm"):
            try:
                if fragment not in reader.ids_of(path):
                    problems.append(f"{name}: dead link {href!r} (no id {fragment!r} in {path.name})")
            except TimeoutError as err:
                problems.append(f"{name}: link {href!r}: target {err}")
    return problems


def check_report(report_dir: str | Path, expected_ids: Mapping[str, Sequence[str]]) -> list[str]:
    """Problems found in the report, one line each; an empty list means it is fine.

    ``expected_ids`` maps a page (relative to ``report_dir``, e.g. ``index.html``, ``lu2024.html``) to the
    ids it must carry (its items). Every listed page is opened in headless Chromium and checked for
    images that do not load, missing ids, and local links to a missing file or fragment. Raises
    BrowserUnavailable (with the install command) when Chromium, chromedriver or Selenium is missing.
    """
    report_dir = Path(report_dir).resolve()
    with headless_chromium() as driver:
        reader = _PageReader(driver)
        problems: list[str] = []
        for name, expected in expected_ids.items():
            problems += _check_page(reader, report_dir, name, expected)
        return problems
