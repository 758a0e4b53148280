"""The report as ``snakemake --report report.zip`` packs it (architecture §3, "The Snakemake report archive").

Snakemake's HTML report plugin stores every file marked with ``report()`` at ``data/raw/<id>/<name>`` inside the
archive: ``<id>`` hashes the path of the marked output, ``<name>`` is the file's path relative to that output
(a marked folder with ``patterns``) or its base name (a marked file). The paper page ``<report>/lu2024.html``
and its folder ``<report>/lu2024/`` are two outputs, so marked one by one they land in two folders, and the
page's relative links (``lu2024/lu2024-fig2.png``) find nothing. Nor can the report root itself be marked:
other rules write into it, and in the paper configuration it holds the other presets' reports too.

So the index rule lays the finished site out once more in one folder of its own, ``<report>/_archive/``, with
hard links (no second copy on disk), and marks that folder with ``patterns``: every page, figure and table
then lands under the one ``data/raw/<id>/`` in the site's own layout, and every link of every page resolves
in the unpacked archive. The functions below, given to ``report()`` in rules/report.smk, file each entry of the
report under its paper (category) and item id (subcategory), with its format as a label.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..sources import link_or_copy  # a hard link, or a copy where the file system has none
from ..verdicts.ids import is_slug

# Underscored, to stand apart from the paper folders and, in the paper configuration's report/, from the other
# presets' report roots beside them.
ARCHIVE_DIR = "_archive"
# Pages at the top (index, scoreboard, one per paper), each paper's files one level down, named <item>.<ext>.
# The two patterns never match the same file, so no file is registered twice.
ARCHIVE_PATTERNS = ["{page,[^/]+}.html", "{slug,[^/]+}/{item,[^/]+}.{ext,[^./]+}"]
# The category of the index page, the scoreboard page and results/<preset>/scoreboard.csv; it sorts before
# the paper slugs in the report's menu.
ALL_PAPERS = "all papers"
OVERVIEW = "index and scoreboard"
# The subcategory of a paper's page, beside its item ids: "lu2024 page" sorts before "lu2024-fig2" in the menu.
PAPER_PAGE = "{slug} page"
FORMATS = {"png": "PNG", "pdf": "PDF", "svg": "SVG", "csv": "CSV", "md": "Markdown", "tex": "LaTeX"}


def _wildcard(wildcards: Any, name: str) -> str | None:
    """A pattern wildcard, or None when the file's pattern has no such wildcard."""
    return wildcards.get(name)


def archive_category(wildcards: Any) -> str:
    """A paper's page and files go under the paper's slug; the index and scoreboard pages under ALL_PAPERS."""
    slug = _wildcard(wildcards, "slug") or _wildcard(wildcards, "page")
    return slug if is_slug(slug) else ALL_PAPERS


def archive_subcategory(wildcards: Any) -> str:
    """A figure's or table's files go under the item id they render (the page's element id for it)."""
    item = _wildcard(wildcards, "item")
    if item is not None:
        return item
    page = _wildcard(wildcards, "page")
    return PAPER_PAGE.format(slug=page) if is_slug(page) else OVERVIEW


def archive_labels(wildcards: Any) -> dict[str, str]:
    """The format of an item's file (one entry per format of the item); a page's file name. Labels must differ
    between the entries of one subcategory: the report keys its table rows by them."""
    ext = _wildcard(wildcards, "ext")
    if ext is not None:
        return {"format": FORMATS.get(ext, ext)}
    return {"file": f"{_wildcard(wildcards, 'page')}.html"}


def site_files(report_dir: str | Path, papers: Iterable[Mapping[str, str]]) -> list[Path]:
    """The files of the site, relative to ``report_dir``: index and scoreboard pages, each paper page that
    exists and every file of its folder (``<slug>/``; hidden files left out)."""
    report_dir = Path(report_dir)
    files = [Path(name) for name in ("index.html", "scoreboard.html") if (report_dir / name).is_file()]
    for paper in papers:
        if not (report_dir / paper["html"]).is_file():
            continue
        files.append(Path(paper["html"]))
        folder = report_dir / paper["slug"]
        if folder.is_dir():
            files += sorted(p.relative_to(report_dir) for p in folder.rglob("*")
                            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    return files


def lay_out_archive(report_dir: str | Path, papers: Iterable[Mapping[str, str]]) -> Path:
    """Replace ``report_dir/ARCHIVE_DIR`` with hard links to every file of ``site_files``, in the same layout;
    return the folder. Built beside it and renamed into place, so a killed job leaves no half-built folder."""
    report_dir = Path(report_dir)
    target = report_dir / ARCHIVE_DIR
    building = report_dir / f".{ARCHIVE_DIR}.{os.getpid()}.tmp"  # a dot: never part of the site it mirrors
    shutil.rmtree(building, ignore_errors=True)  # left by a killed job of the same pid
    building.mkdir()  # (not mkdtemp: its mode 0700 would keep the folder from others reading the report)
    try:
        for name in site_files(report_dir, papers):
            (building / name).parent.mkdir(parents=True, exist_ok=True)
            link_or_copy(report_dir / name, building / name)
        if target.exists():
            shutil.rmtree(target)
        building.rename(target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return target
