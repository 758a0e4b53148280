"""The papers of a run, in the order the report lists them (the config's `papers:`; slugs: architecture §2)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from .notebook import REFERENCE_DIR
from .references import paper_title


def paper_pages(papers: Iterable[str], reference_dir: str | Path = REFERENCE_DIR) -> list[dict[str, str]]:
    """One entry per paper for the index page, titled as its reference file names it (:func:`paper_title`)."""
    return [{"slug": slug, "title": paper_title(Path(reference_dir) / f"{slug}.yaml"), "html": f"{slug}.html"}
            for slug in papers]
