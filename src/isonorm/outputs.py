"""Where a run writes: one output root per preset, so that no run overwrites another's (architecture §4).

The paper configuration (preset ``paper``) writes ``results/``, ``report/`` and ``logs/``; every other preset
writes into a folder of its own name inside each (``results/quick/``, ``report/quick/``, ``logs/quick/``). A
quick or budget run in the same checkout therefore leaves a day of paper-settings results untouched, and
Snakemake, whose metadata is kept per output file, never sees one preset's files as another's outputs.
"""

from __future__ import annotations

import re
from pathlib import Path

PAPER_PRESET = "paper"
# A paper's slug: the first author's name and the year, lower case (architecture §2), e.g. lu2024.
PAPER_SLUG = re.compile(r"[a-z]+[0-9]{4}[a-z]?")
# Names a preset cannot take besides a slug: it would write into the benchmark files of the paper configuration
# (results/benchmarks/), as a slug would into a paper's results folder (results/<slug>/).
RESERVED_PRESET_NAMES = ("benchmarks",)
OUTPUT_KINDS = ("results", "report", "logs")


def is_paper_slug(name: object) -> bool:
    """Whether ``name`` is written as a paper's slug (:data:`PAPER_SLUG`)."""
    return isinstance(name, str) and PAPER_SLUG.fullmatch(name) is not None


def output_roots(preset: str) -> dict[str, Path]:
    """``{"results": …, "report": …, "logs": …}`` of the run made with ``preset``."""
    if preset in RESERVED_PRESET_NAMES or is_paper_slug(preset):
        raise ValueError(
            f"preset {preset!r} would write into results/{preset}/, which the paper configuration uses; "
            "rename the preset (the `preset:` key of its file) so that it does not look like a paper's slug"
        )
    inner = () if preset == PAPER_PRESET else (preset,)
    return {kind: Path(kind, *inner) for kind in OUTPUT_KINDS}
