"""The four papers of the project, in the order the report lists them (slugs: architecture §2)."""

from __future__ import annotations

from pathlib import Path

from .ids import PAPER_SLUGS

PAPER_TITLES = {
    "lu2024": "Lu et al. (IJCAI 2024): The Orthogonality of Weight Vectors: The Key Characteristics of "
    "Normalization and Residual Connections",
    "daneshmand2021": "Daneshmand, Joudaki, Bach (NeurIPS 2021): Batch Normalization Orthogonalizes "
    "Representations in Deep Random Networks",
    "meterez2024": "Meterez et al. (ICLR 2024): Towards Training Without Depth Limits: Batch Normalization "
    "Without Gradient Explosion",
    "joudaki2023": "Joudaki, Daneshmand, Bach (NeurIPS 2023): On the impact of activation and normalization in "
    "obtaining isometric embeddings at initialization",
}


def paper_pages(report_dir: str | Path) -> list[dict[str, str]]:
    """One entry per paper for the index page; ones without a page yet are listed as not reproduced."""
    assert set(PAPER_TITLES) == set(PAPER_SLUGS)
    return [{"slug": slug, "title": PAPER_TITLES[slug], "html": f"{slug}.html"} for slug in PAPER_SLUGS]
