"""The papers of a run, in the order the report lists them (the config's `papers:`; slugs: architecture §2)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..verdicts.references import paper_title


def paper_pages(papers: Sequence[str], references: Sequence[str | Path]) -> list[dict[str, str]]:
    """One entry per paper for the index page, titled as its reference file names it (:func:`paper_title`);
    ``references``: the papers' reference files, in the order of ``papers`` (the index rule's inputs)."""
    if len(papers) != len(references):
        raise ValueError(f"{len(papers)} papers but {len(references)} reference files: one each, in paper order")
    return [{"slug": slug, "title": paper_title(reference), "html": f"{slug}.html"}
            for slug, reference in zip(papers, references)]
